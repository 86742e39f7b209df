"""Router-assisted protocols end to end through ``racc kernel run`` (issue 36), one body for every
protocol: the scenario's router as the BPF router module at the bottleneck, its flows on the
kernel's TCP under the protocol's struct_ops, the feedback echoed in a TCP option; ``--compare``
runs the simulator beside it.

The dumbbell of every case: two flows share 10 Mb/s, RTT 2 x (1 + 18 + 1) = 40 ms, a one-BDP buffer
(50 packets of 1000 B), 5 s; checked over (2 s, 5 s]: no drop at the bottleneck (each protocol
promises none with a one-BDP buffer), a utilisation floor from the protocol's paper, the kernel
within 10 % of the simulator in utilisation, and, where stated, each flow within 10 % of the
simulator's goodput for it. Each case's counters show its feedback travelled.

- VCP (VCP-DCCP §4: utilisation near gamma = 0.98, no loss at the router): the window starts at 20
  packets (``iw``) so that MI at x1.0625 per t_p fills the 25-packet share within ~1 s;
  utilisation >= 0.85 (measured: 0.915 kernel, 0.943 simulator).
- XCP (Katabi et al. 2002 §4: near-full utilisation, an almost empty queue, no drops, a fair
  share): each flow starts at one packet; utilisation >= 0.9 and per-flow goodput (measured over
  10 s: kernel 0.994, simulator 1.000).
- RCP (docs/PROTOCOLS.md §6: the rate converges to the fair share, and with the queue term no
  drops): the router stamps at arrival (``stamp = "arrival"``) as the tc hook does, the senders
  pace through TCP's internal pacing; utilisation >= 0.85 and per-flow goodput (measured over
  10 s: kernel 0.973, simulator 0.936).
- PIQI-RCP (docs/PROTOCOLS.md §8: R converges to the target γC/N with γ = 0.95, no queue term,
  less buffering than RCP, max-min fair): RCP's senders under the PI router, newcomers not
  counted (``count_newcomers = false``: the kernel cannot tell a first request); utilisation >=
  0.85 (γ less 0.1) and per-flow goodput.
- JetMax (docs/PROTOCOLS.md §7: max-min fair (J2), zero loss (J3), least buffering (J4), the
  link filled almost at once (J6), at γ = 0.95): utilisation >= 0.85 (γ less 0.1) and per-flow
  goodput.

Root, BTF and the BPF toolchain; skipped with the reason printed elsewhere. 10-15 s of wall time
a case.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pytest
from racc.cli import main
from racc.kernel import bpf, machine, xcc
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
router = "{router}"
{router_params}
[[flows]]
protocol = "{protocol}"
src = "s{{i}}"
dst = "d{{i}}"
count = 2
{params}
[record]
interval = "100ms"
"""

BOTTLENECK = "r0->r1"
FROM_S = 2.0


def _vcp_counters(hosts: dict, router: dict) -> None:
    assert hosts["sent_ect1"] > 1000 and hosts["echo_written"] > 1000, "the code must travel (ECN 01, echo)"
    assert router["marked"] > 1000, "the router module must write codes"
    assert hosts["echo_malformed"] == 0


def _xcp_counters(hosts: dict, router: dict) -> None:
    assert hosts["hdr_written"] > 1000 and hosts["echo_written"] > 1000, "the header must travel both ways"
    assert hosts["fb_applied"] > 1000 and hosts["unrouted"] == 0, "every echo must carry a router's feedback"
    assert router["fb_written"] > 1000 and router["intervals"] > 10, "the router module must write feedback"
    assert router["malformed"] == 0 and router["csum_fail"] == 0 and hosts["echo_malformed"] == 0


def _jetmax_counters(hosts: dict, router: dict) -> None:
    assert hosts["hdr_written"] > 1000 and hosts["echo_written"] > 1000, "the header must travel both ways"
    assert hosts["updates"] > 10, "the senders must take the routers' fair share"
    assert router["stamped"] > 1000 and router["intervals"] > 100, "the router module must write its share"
    assert router["malformed"] == 0 and router["csum_fail"] == 0 and hosts["echo_malformed"] == 0


def _rcp_counters(hosts: dict, router: dict) -> None:
    assert hosts["hdr_written"] > 1000 and hosts["echo_written"] > 1000, "the header must travel both ways"
    assert hosts["rate_updates"] > 10 and hosts["unrouted"] == 0, "every echo must carry a router's rate"
    assert router["stamped"] > 1000 and router["intervals"] > 100, "the router module must write its rate"
    assert router["malformed"] == 0 and router["csum_fail"] == 0 and hosts["echo_malformed"] == 0


@dataclass(frozen=True)
class Case:
    protocol: str
    cc_name: str
    counters: Callable[[dict, dict], None]
    min_utilisation: float
    per_flow_goodput: bool
    router: str = ""
    router_params: str = ""
    params: str = ""
    cli: tuple[str, ...] = field(default=("--no-plots",))

    def scenario(self) -> str:
        rp = f"router_params = {self.router_params}\n" if self.router_params else ""
        fp = f"params = {self.params}\n" if self.params else ""
        return SCENARIO.format(protocol=self.protocol, router=self.router or self.protocol, router_params=rp, params=fp)


CASES = [
    Case("vcp", bpf.CC_NAME, _vcp_counters, 0.85, False, params="{ iw = 20 }", cli=()),
    Case("xcp", xcc.XCP_CC_NAME, _xcp_counters, 0.9, True),
    Case("rcp", xcc.RCP_CC_NAME, _rcp_counters, 0.85, True, router_params='{ stamp = "arrival" }'),
    Case("piqi-rcp", xcc.RCP_CC_NAME, _rcp_counters, 0.85, True, router_params="{ count_newcomers = false }"),
    Case("jetmax", xcc.JETMAX_CC_NAME, _jetmax_counters, 0.85, True),
]


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


@pytest.mark.parametrize("case", CASES, ids=[c.protocol for c in CASES])
def test_protocol_through_racc_kernel_run_keeps_its_claims(tmp_path, case: Case):
    _skip_unless_kernel_bpf()
    import kernel_path

    sc = tmp_path / f"kernel-{case.protocol}.toml"
    sc.write_text(case.scenario())
    out = tmp_path / "out"
    with kernel_path.exclusive():
        assert main(["kernel", "run", str(sc), "--out", str(out), "--compare", *case.cli]) == 0
    summary = json.loads((out / "summary.json").read_text())
    k = summary["kernel"]
    assert set(k["controllers_seen"].values()) == {case.cc_name}, k["controllers_seen"]
    hosts, router = k["bpf_hosts"][case.protocol], k["bpf"][BOTTLENECK]
    print(f"controller {hosts}\nrouter {router}")
    case.counters(hosts, router)

    util, drops, goodput = _after(out)
    sim_util, sim_drops, sim_goodput = _after(out / "simulated")
    port = next(p for p in summary["ports"] if p["name"] == BOTTLENECK)
    print(
        f"over ({FROM_S} s, end]: utilisation kernel {util:.3f}, simulator {sim_util:.3f}; drops {drops} / {sim_drops}"
    )
    print(f"goodput kernel {goodput}, simulator {sim_goodput}")
    assert drops == 0 and port["drops"] == 0, f"{case.protocol} must not drop with a one-BDP buffer"
    assert util >= case.min_utilisation, f"utilisation {util:.3f}"
    assert abs(util - sim_util) <= 0.10 * sim_util, f"kernel {util:.3f} vs simulator {sim_util:.3f}"
    cmp = json.loads((out / "compare.json").read_text())
    assert all(f["protocol"] == case.protocol for f in cmp["flows"]) and len(cmp["flows"]) == 2
    if case.per_flow_goodput:
        assert len(goodput) == len(sim_goodput) == 2
        for g, s in zip(goodput, sim_goodput):
            assert abs(g - s) <= 0.10 * s, f"flow goodput {g / 1e6:.2f} vs simulator {s / 1e6:.2f} Mb/s"
