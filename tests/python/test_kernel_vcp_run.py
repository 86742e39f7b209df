"""VCP end to end through ``racc kernel run`` (issue 36): the scenario's VCP router as the BPF
router module at the bottleneck, its flows on the kernel's TCP under the struct_ops ``racc_vcp``,
the codes echoed in a TCP option; ``--compare`` runs the simulator beside it.

Two VCP flows share 10 Mb/s, RTT 2 x (1 + 18 + 1) = 40 ms, a one-BDP buffer (50 packets of
1000 B), 5 s. The window starts at 20 packets (``iw``) so that MI at x1.0625 per t_p fills the
25-packet share within ~1 s. VCP's claims (VCP-DCCP §4): utilisation near gamma = 0.98 of the
capacity, and no loss at the router. Checked over (2 s, 5 s]: utilisation >= 0.85, no drop at the
bottleneck, and the kernel within 10 % of the simulator in utilisation (both measured here:
0.915 kernel, 0.943 simulator). Root, BTF and the BPF toolchain; skipped with the reason
printed elsewhere. About 10 s of wall time.
"""

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
name = "kernel-vcp"
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
router = "vcp"

[[flows]]
protocol = "vcp"
src = "s{i}"
dst = "d{i}"
count = 2
params = { iw = 20 }

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


def test_vcp_through_racc_kernel_run_keeps_its_claims(tmp_path):
    _skip_unless_kernel_bpf()
    import kernel_path

    sc = tmp_path / "kernel-vcp.toml"
    sc.write_text(SCENARIO)
    out = tmp_path / "out"
    with kernel_path.exclusive():
        assert main(["kernel", "run", str(sc), "--out", str(out), "--compare"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    k = summary["kernel"]
    assert set(k["controllers_seen"].values()) == {bpf.CC_NAME}, k["controllers_seen"]
    hosts, router = k["bpf_hosts"]["vcp"], k["bpf"][BOTTLENECK]
    print(f"controller {hosts}\nrouter {router}")
    assert hosts["sent_ect1"] > 1000 and hosts["echo_written"] > 1000, "the code must travel (ECN 01, echo)"
    assert router["marked"] > 1000, "the router module must write codes"
    assert hosts["echo_malformed"] == 0

    util, drops = _bottleneck(out / "links.parquet")
    sim_util, sim_drops = _bottleneck(out / "simulated" / "links.parquet")
    port = next(p for p in summary["ports"] if p["name"] == BOTTLENECK)
    print(
        f"utilisation over ({FROM_S} s, end]: kernel {util:.3f}, simulator {sim_util:.3f}; drops {drops} / {sim_drops}"
    )
    assert drops == 0 and port["drops"] == 0, "VCP must not drop with a one-BDP buffer"
    assert util >= 0.85, f"utilisation {util:.3f}"
    assert abs(util - sim_util) <= 0.10 * sim_util, f"kernel {util:.3f} vs simulator {sim_util:.3f}"
    cmp = json.loads((out / "compare.json").read_text())
    assert all(f["protocol"] == "vcp" for f in cmp["flows"]) and len(cmp["flows"]) == 2
