"""RCP end to end through ``racc kernel run`` (issue 36, the congestion-header family): the RCP
router module as the BPF program at the bottleneck, writing min(rate, R) into the RCP option of
every data segment; the flows on the kernel's TCP under the struct_ops ``racc_rcp``, paced by
TCP's internal pacing at the rate echoed in a TCP option; ``--compare`` runs the simulator beside
it, with the router stamping at arrival (``stamp = "arrival"``) as the tc hook does.

Two RCP flows share 10 Mb/s, RTT 2 x (1 + 18 + 1) = 40 ms, a one-BDP buffer (50 packets of
1000 B), 5 s. RCP's claims (docs/PROTOCOLS.md §6): the rate converges to the fair share, and with
the queue term no drops. Checked over (2 s, 5 s]: utilisation >= 0.85, no drop at the bottleneck,
the kernel within 10 % of the simulator in utilisation and per-flow goodput (measured over 10 s:
kernel 0.973, simulator 0.936). Root, BTF and the BPF toolchain; skipped with the reason printed
elsewhere. About 15 s of wall time.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
import pytest
from racc.cli import main
from racc.kernel import bpf, machine, xcc
from racc.kernel import run as krun

os.environ.setdefault("RACC_KERNEL_TAG", "pytest")

SCENARIO = """
name = "kernel-rcp"
duration = "5s"
seed = 1
packet_size = 1000
min_rto = "200ms"

[topology]
kind = "dumbbell"
pairs = 2
access = { capacity = "100Mbps", delay = "1ms" }

[topology.bottleneck]
capacity = "10Mbps"
delay = "18ms"
buffer = "1bdp"
router = "rcp"
router_params = { stamp = "arrival" }

[[flows]]
protocol = "rcp"
src = "s{i}"
dst = "d{i}"
count = 2

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


def _after(out: Path) -> tuple[float, int, list[float]]:
    links = pl.read_parquet(out / "links.parquet").filter((pl.col("name") == BOTTLENECK) & (pl.col("time_s") > FROM_S))
    assert len(links) > 0, f"no samples of {BOTTLENECK} after {FROM_S} s in {out.name}"
    flows = pl.read_parquet(out / "flows.parquet").filter(pl.col("time_s") > FROM_S)
    goodput = flows.group_by("flow").agg(pl.col("goodput_bps").mean()).sort("flow")["goodput_bps"].to_list()
    return float(links["utilisation"].mean()), int(links["drops"].sum()), goodput


def test_rcp_through_racc_kernel_run_keeps_its_claims(tmp_path):
    _skip_unless_kernel_bpf()
    import kernel_path

    sc = tmp_path / "kernel-rcp.toml"
    sc.write_text(SCENARIO)
    out = tmp_path / "out"
    with kernel_path.exclusive():
        assert main(["kernel", "run", str(sc), "--out", str(out), "--compare", "--no-plots"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    k = summary["kernel"]
    assert set(k["controllers_seen"].values()) == {xcc.RCP_CC_NAME}, k["controllers_seen"]
    hosts, router = k["bpf_hosts"]["rcp"], k["bpf"][BOTTLENECK]
    print(f"controller {hosts}\nrouter {router}")
    assert hosts["hdr_written"] > 1000 and hosts["echo_written"] > 1000, "the header must travel both ways"
    assert hosts["rate_updates"] > 10 and hosts["unrouted"] == 0, "every echo must carry a router's rate"
    assert router["stamped"] > 1000 and router["intervals"] > 100, "the router module must write its rate"
    assert router["malformed"] == 0 and router["csum_fail"] == 0 and hosts["echo_malformed"] == 0

    util, drops, goodput = _after(out)
    sim_util, sim_drops, sim_goodput = _after(out / "simulated")
    port = next(p for p in summary["ports"] if p["name"] == BOTTLENECK)
    print(
        f"over ({FROM_S} s, end]: utilisation kernel {util:.3f}, simulator {sim_util:.3f}; drops {drops} / {sim_drops}"
    )
    print(f"goodput kernel {goodput}, simulator {sim_goodput}")
    assert drops == 0 and port["drops"] == 0, "RCP must not drop with a one-BDP buffer"
    assert util >= 0.85, f"utilisation {util:.3f}"
    assert abs(util - sim_util) <= 0.10 * sim_util, f"kernel {util:.3f} vs simulator {sim_util:.3f}"
    assert len(goodput) == len(sim_goodput) == 2
    for g, s in zip(goodput, sim_goodput):
        assert abs(g - s) <= 0.10 * s, f"flow goodput {g / 1e6:.2f} vs simulator {s / 1e6:.2f} Mb/s"
