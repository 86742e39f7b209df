"""VCP on the kernel's own TCP end to end (issue 36, first slice; docs/KERNEL-BPF.md): one
bulk flow through a 10 Mb/s htb bottleneck with a 50-packet pfifo and a 20 ms base RTT
(tests/python/kernel_path.py), the VCP router module as a TCX egress program there, the
controller as the struct_ops `racc_vcp`, the echo as a TCP option. Root only; skipped with the
reason `bpf.available()` gives elsewhere. A few seconds each.

VCP promises no loss at the bottleneck and a utilisation near γ = 0.98 (VCP-DCCP §4); the
window starts at 10 packets (`iw`, so that MI at ×1.0625 per t_p reaches the 17-packet BDP
within ~2 s) and the utilisation is measured from 3 s to 8 s. Reno on the same path overflows
the pfifo (its slow start alone does)."""

from __future__ import annotations

import pytest
from racc.kernel import bpf

REASON = bpf.available()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"kernel BPF unavailable: {REASON}")

RATE = 10e6


@pytest.fixture
def path():
    import kernel_path

    with kernel_path.exclusive():
        kernel_path.build(rate="10mbit", buffer=50, delay=0.02)
        try:
            yield kernel_path
        finally:
            kernel_path.sweep()


def summary(trace: list) -> str:
    cw = [c for _, c, _, _ in trace]
    late = [c for t, c, _, _ in trace if t >= 3.0] or cw
    return (
        f"cwnd start {cw[0]}, max {max(cw)}, after 3 s min {min(late)} mean {sum(late) / len(late):.1f} "
        f"max {max(late)}; srtt at end {trace[-1][2] / 1000:.1f} ms; retransmits {trace[-1][3]}"
    )


@pytest.mark.parametrize("ai_law", ["seed001", "ns2"])
def test_vcp_fills_the_bottleneck_without_loss(path, ai_law):
    cg = path.new_cgroup("e2e")
    with (
        bpf.attach_hosts(str(cg), "vcp", {"iw": 10, "ai_law": ai_law}, host_ifaces=[(path.NS_S, "s0")]) as hosts,
        bpf.attach_router(path.NS_R, "r1", "vcp", {}, RATE) as router,
    ):
        r = path.bulk(cg, cg, hosts.cc_name, secs=8.0, measure_from=3.0)
        h, rc = hosts.counters(), router.counters()
    util = r["bytes"] * 8 / (RATE * r["secs"])
    print(f"{ai_law}: utilisation {util:.3f}, drops {r['drops']}; {summary(r['trace'])}")
    print(f"hosts {h}\nrouter {rc}")
    assert h["sent_ect1"] > 1000 and h["echo_written"] > 500, "the code must travel (ECN 01 out, echo back)"
    assert h["mi"] > 0 and rc["codes_low"] > 0, "MI while the load is low"
    assert rc["codes_overload"] + rc["codes_high"] > 0, "the router must see the load rise"
    assert h["echo_malformed"] == 0
    assert r["drops"] == 0, f"VCP dropped {r['drops']} packets at the bottleneck"
    assert util >= 0.85, f"utilisation {util:.3f}"


def test_reno_on_the_same_path_drops(path):
    cg = path.new_cgroup("reno")
    with bpf.attach_router(path.NS_R, "r1", "vcp", {}, RATE) as router:
        r = path.bulk(cg, cg, "reno", secs=4.0, measure_from=1.0)
        rc = router.counters()
    print(f"reno: utilisation {r['bytes'] * 8 / (RATE * r['secs']):.3f}, drops {r['drops']}; {summary(r['trace'])}")
    assert rc["not_ect"] > 1000 and rc["marked"] == 0, "Reno's Not-ECT packets are never marked"
    assert r["drops"] > 0


def test_forged_and_malformed_echoes_are_counted_and_change_no_window(path):
    """The receiver forges every echo in turn (kernel/bpf/test_echo_forger.bpf.c): our kind and
    ExID with length 6, with code 9, without the code byte; another experiment's ExID; none. The
    sender counts the malformed ones, finds no valid echo for any ACK, and its window stays at
    iw = 10 (10 packets per 20 ms is 6 Mb/s: no loss either)."""
    cg_send, cg_recv = path.new_cgroup("e2e"), path.new_cgroup("forge")
    with (
        bpf.attach_hosts(str(cg_send), "vcp", {"iw": 10}, host_ifaces=[(path.NS_S, "s0")]) as hosts,
        bpf.attach_sockops(str(cg_recv), "test_echo_forger", "echo_forger"),
    ):
        r = path.bulk(cg_send, cg_recv, hosts.cc_name, secs=3.0, measure_from=1.0)
        h = hosts.counters()
    print(f"forged: {summary(r['trace'])}\nhosts {h}")
    assert h["echo_malformed"] > 100, "the malformed options must be seen and counted"
    assert h["echo_absent"] == h["acks"] > 100, "no ACK carried a valid echo"
    assert h["mi"] == h["ai"] == h["md_events"] == h["md_held"] == h["bleached"] == 0
    assert {c for _, c, _, _ in r["trace"]} == {10}, "the window never moved"
