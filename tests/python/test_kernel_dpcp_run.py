"""DPCP, TPCP and DCP-EW on the kernel's own TCP end to end (issue 36, the load-factor family; docs/KERNEL-BPF.md):
the DPCP router module as the BPF program at the bottleneck (ρ into MPCP Table 1's 4-bit code,
Alg. 2 over pairs told apart by the segment's index in the sequence space), the flows under the
struct_ops ``racc_dpcp`` (the decoder and Table 1's laws), one (code, position) echoed per ACK;
TPCP (MPCP §5) the same with chains of 3 (``racc_tpcp``), DCP-EW (DCP-EW §III) with pairs by
the IP ID's LSB and its loss differentiation (``racc_dcpew``).

Through ``racc kernel run --compare``: two DPCP flows share 10 Mb/s, RTT 40 ms, a one-BDP buffer
(50 packets of 1000 B), 5 s, ``iw`` 20 as VCP's test. MPCP's claims (MPCP §4): high utilisation
and no loss at the router. Checked over (2 s, 5 s]: utilisation >= 0.85, no drop at the
bottleneck, the kernel within 10 % of the simulator; chains arrive whole (exceptions below 1 % of
the ACKs, no GSO skb at the router). Measured here: 0.918 kernel, 0.938 simulator over (2 s, 10 s].

On a three-namespace path (tests/python/kernel_path.py): a receiver forging every echo (our
kind and ExID with a wrong length, a position past the pair, no code byte, another ExID) is
counted and ignored, and the window never moves. Root, BTF and the BPF toolchain; skipped with
the reason printed elsewhere."""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
import pytest
from racc.cli import main
from racc.kernel import bpf, machine
from racc.kernel import run as krun

os.environ.setdefault("RACC_KERNEL_TAG", "pytest")

SCENARIO = """
name = "kernel-{protocol}"
duration = "5s"
seed = 1
packet_size = 1000
min_rto = "200ms"

[topology]
kind = "dumbbell"
pairs = 2
access = {{ capacity = "100Mbps", delay = "1ms" }}

[topology.bottleneck]
capacity = "10Mbps"
delay = "18ms"
buffer = "1bdp"
router = "{protocol}"

[[flows]]
protocol = "{protocol}"
src = "s{{i}}"
dst = "d{{i}}"
count = 2
params = {{ iw = 20 }}

[record]
interval = "100ms"
"""

BOTTLENECK = "r0->r1"
FROM_S = 2.0


def _skip_unless_kernel_bpf() -> None:
    try:
        krun.check_environment()
    except machine.KernelUnavailable as exc:
        print(f"skipped: {exc}")
        pytest.skip(str(exc))
    reason = bpf.available()
    if reason is not None:
        print(f"skipped: kernel BPF unavailable: {reason}")
        pytest.skip(f"kernel BPF unavailable: {reason}")


def _bottleneck(links: Path) -> tuple[float, int]:
    rows = pl.read_parquet(links).filter((pl.col("name") == BOTTLENECK) & (pl.col("time_s") > FROM_S))
    assert len(rows) > 0, f"no samples of {BOTTLENECK} after {FROM_S} s in {links.name}"
    return float(rows["utilisation"].mean()), int(rows["drops"].sum())


@pytest.mark.parametrize("protocol", ["dpcp", "tpcp", "dcpew"])
def test_chain_protocol_through_racc_kernel_run_keeps_its_claims(tmp_path, protocol):
    _skip_unless_kernel_bpf()
    import kernel_path

    sc = tmp_path / f"kernel-{protocol}.toml"
    sc.write_text(SCENARIO.format(protocol=protocol))
    out = tmp_path / "out"
    with kernel_path.exclusive():
        assert main(["kernel", "run", str(sc), "--out", str(out), "--compare"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    k = summary["kernel"]
    assert set(k["controllers_seen"].values()) == {bpf.cc_name(protocol)}, k["controllers_seen"]
    hosts, router = k["bpf_hosts"][protocol], k["bpf"][BOTTLENECK]
    print(f"controller {hosts}\nrouter {router}")
    assert hosts["sent_ect1"] > 1000 and hosts["echo_written"] > 1000, "the code must travel (ECN 01, echo)"
    assert router["marked"] > 1000 and router["msp"] > 1000 and router["later"] > 1000
    assert router["gso"] == 0, "every data segment must reach the router as its own skb"
    assert hosts["echo_lsp"] > hosts["acks"] // 4, "later positions must be echoed"
    assert hosts["exceptions"] <= hosts["acks"] // 100, "chains must arrive whole"
    assert hosts["md_events"] > 0 and hosts["grow"] > 0
    assert hosts["echo_malformed"] == 0

    util, drops = _bottleneck(out / "links.parquet")
    sim_util, sim_drops = _bottleneck(out / "simulated" / "links.parquet")
    port = next(p for p in summary["ports"] if p["name"] == BOTTLENECK)
    print(
        f"utilisation over ({FROM_S} s, end]: kernel {util:.3f}, simulator {sim_util:.3f}; drops {drops} / {sim_drops}"
    )
    assert drops == 0 and port["drops"] == 0, f"{protocol} must not drop with a one-BDP buffer"
    assert util >= 0.85, f"utilisation {util:.3f}"
    assert abs(util - sim_util) <= 0.10 * sim_util, f"kernel {util:.3f} vs simulator {sim_util:.3f}"


@pytest.fixture
def path():
    if bpf.available() is not None:
        pytest.skip(f"kernel BPF unavailable: {bpf.available()}")
    import kernel_path

    with kernel_path.exclusive():
        kernel_path.build(rate="10mbit", buffer=50, delay=0.02)
        try:
            yield kernel_path
        finally:
            kernel_path.sweep()


@pytest.mark.parametrize("protocol", ["dpcp", "dcpew"])
def test_forged_and_malformed_echoes_are_counted_and_change_no_window(path, protocol):
    """kernel/bpf/test_echo_forger.bpf.c writes, in turn: length 6; the byte 9 (code 01 at
    position 2: past a pair); no code byte; another ExID; nothing. The sender counts the
    malformed ones, finds no valid echo for any ACK, and its window stays at iw = 10. (TPCP is
    not forged here: the byte 9, position 2, is a valid echo for chains of 3.)"""
    cg_send, cg_recv = path.new_cgroup("e2e"), path.new_cgroup("forge")
    with (
        bpf.attach_hosts(str(cg_send), protocol, {"iw": 10}, host_ifaces=[(path.NS_S, "s0")]) as hosts,
        bpf.attach_sockops(str(cg_recv), "test_echo_forger", "echo_forger"),
    ):
        r = path.bulk(cg_send, cg_recv, hosts.cc_name, secs=3.0, measure_from=1.0)
        h = hosts.counters()
    print(f"forged: hosts {h}")
    assert h["echo_malformed"] > 100, "the malformed options must be seen and counted"
    assert h["echo_absent"] == h["acks"] > 100, "no ACK carried a valid echo"
    assert h["grow"] == h["ai"] == h["md_events"] == h["md_held"] == h["bleached"] == 0
    assert {c for _, c, _, _ in r["trace"]} == {10}, "the window never moved"


def test_dcpew_keeps_its_window_through_random_loss_where_dpcp_halves(path):
    """DCP-EW §III.D: a loss that no run of overload echoes preceded is the wireless link's, and
    the window is kept. A tc program drops 1 % of the data segments on the link after the router
    module, at the bottleneck's egress ahead of its qdisc (kernel/bpf/test_random_drop.bpf.c):
    DCP-EW must count them as error losses and cut (almost) nothing for them, and fill the path
    where DPCP, halving on each, cannot."""
    paths = bpf.build()
    drop = bpf.build_object("test_random_drop")
    util = {}
    for protocol in ("dcpew", "dpcp"):
        cg = path.new_cgroup(f"loss-{protocol}")
        with (
            bpf.attach_hosts(str(cg), protocol, {"iw": 10}, host_ifaces=[(path.NS_S, "s0")]) as hosts,
            bpf.attach_router(path.NS_R, "r1", protocol, {}, 10e6),
        ):
            args = [str(paths["loader"]), "router", str(drop), path.NS_R, "r1", str(2**32 // 100), "data,dropped"]
            lossy = bpf.Handle(bpf._Loader(args, "random drop on r1"))  # after the router module
            try:
                r = path.bulk(cg, cg, hosts.cc_name, secs=8.0, measure_from=3.0)
                h, d = hosts.counters(), lossy.counters()
            finally:
                lossy.close()
        util[protocol] = r["bytes"] * 8 / (10e6 * r["secs"])
        print(f"{protocol}: utilisation {util[protocol]:.3f}, bottleneck drops {r['drops']}, link {d}\nhosts {h}")
        assert d["dropped"] > (20 if protocol == "dcpew" else 5), "the link must lose packets"
        assert r["drops"] == 0, "no loss at the bottleneck itself"
        if protocol == "dcpew":
            assert h["error_losses"] > 10, "the random losses must be told apart as errors"
            assert h["loss_mds"] <= h["error_losses"] // 10, "and cut (almost) nothing"
    assert util["dcpew"] >= 0.8, f"DCP-EW utilisation {util['dcpew']:.3f} through 1 % random loss"
    assert util["dcpew"] >= util["dpcp"] + 0.1, f"DCP-EW {util['dcpew']:.3f} vs DPCP {util['dpcp']:.3f}"
