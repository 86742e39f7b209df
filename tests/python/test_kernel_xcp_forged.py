"""Forged and malformed XCP echoes at the sender (docs/KERNEL-BPF.md, "The congestion header"):
the receiver forges every echo in turn (kernel/bpf/test_xcc_forger.bpf.c): our kind and echo
ExID with length 6, 10 and 4; another experiment's ExID carrying a large negative feedback;
none. The XCP router module rewrites the forward headers as usual. The sender must count the
three malformed ones, apply none of the four, and keep its window at the route's initial window
(10 packets on tests/python/kernel_path.py's path: 10 packets per 20 ms is 6 Mb/s, no loss).
Root only; skipped with `bpf.available()`'s reason. A few seconds."""

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


def test_forged_and_malformed_xcp_echoes_are_counted_and_change_no_window(path):
    cg_send, cg_recv = path.new_cgroup("xcp"), path.new_cgroup("forge")
    with (
        bpf.attach_hosts(str(cg_send), "xcp", {}) as hosts,
        bpf.attach_router(path.NS_R, "r1", "xcp", {}, RATE) as router,
        bpf.attach_sockops(str(cg_recv), "test_xcc_forger", "xcc_echo_forger"),
    ):
        r = path.bulk(cg_send, cg_recv, hosts.cc_name, secs=3.0, measure_from=1.0)
        h, rc = hosts.counters(), router.counters()
    windows = {c for _, c, _, _ in r["trace"]}
    print(f"forged: windows {sorted(windows)}\nhosts {h}\nrouter {rc}")
    assert rc["fb_written"] > 100, "the router must still rewrite the forward headers"
    assert h["echo_malformed"] > 100, "the malformed echoes must be seen and counted"
    assert h["fb_applied"] == 0 and h["echo_parsed"] == 0, "no forged echo may reach the window"
    assert len(windows) == 1, f"the window moved: {sorted(windows)}"
