"""dccp-vcp-subqueues, VCP-DCCP §4.4: VCP and TCP/RED traffic sharing one bottleneck through two
sub-queues ("VCP controlled traffic and TCP/RED controlled traffic can not share the same queue
... one can set up two sub-queues"). §4's T3 setting with its 200 long-lived flows split into 100
DCCP/VCP and 100 TCP NewReno flows (scenarios/dccp-vcp-subqueues.toml says why and how).

A new experiment rather than a case of dccp-vcp-t3: its flows mix two protocols in every case,
its router is another module, and its claims are §4.4's, not Figs. 5-7's; dccp-vcp-t3's cases and
results stay as they are.

Cases: ``subqueues`` (the `vcp-red` router, shares 0.5 / 0.5 as XCP's ns-2 router), ``share-0.3``
(the same with 0.3 for VCP: the split follows the weight), and ``one-queue`` (both kinds in one
VCP router's queue: what §4.4 says cannot work). §4.4 states no number; its claims are read with
§4's own for VCP (its queue, its drops, A1's target utilisation γ on the link it controls) and
racc's rules for "much smaller" (``MUCH``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from racc.experiments.base import (
    ABOUT,
    HIGH_UTILISATION,
    MUCH,
    Case,
    Cause,
    Claim,
    Experiment,
    about_claim,
    explain,
    judged,
    port_summary,
    register,
)
from racc.experiments.dccp_vcp_t3 import VCP_ROUTER, no_drop_claim
from racc.experiments.figures import panels, port_series

BOTTLENECK = "r0->r1"
SCENARIO = "dccp-vcp-subqueues.toml"
VCP_GROUP, TCP_GROUP = "vcp", "tcp"
#: VCP's target utilisation γ (VCP-DCCP App. A: 0.98), the scenario's
GAMMA = 0.98
#: when DCCP/VCP's drops stop in §4.3 (Fig. 7d: "at the moment of ... 10th second")
DROPS_STOP_S = 10.0
#: the quick run's flows, capacity, buffer and RED thresholds over the full run's (a fifth: at a
#: tenth, 10 + 10 flows on 4.5 Mb/s, the VCP sub-queue grew from 26 s on and dropped from 35 s,
#: the growth dccp-vcp-t3's own DCCP/VCP case shows at its tenth scale when run past its 30 s)
QUICK_SCALE = 0.2


def share_of(res: Any) -> float:
    """The VCP sub-queue's weight as this run resolved it (the bottleneck is the one `vcp-red` port)."""
    (link,) = [lk for lk in res.resolved["links"] if lk["router"] == "vcp-red"]
    return float(link["router_params"]["vcp_share"])


def group_rate(res: Any, group: str) -> float:
    """A flow group's throughput through the bottleneck over the second half of the run, b/s."""
    g = res.group_links.filter(pl.col("name") == BOTTLENECK)
    end = float(g["time_s"].max())
    late = g.filter((pl.col("group") == group) & (pl.col("time_s") > end / 2))
    return float(late["tx_bytes"].sum()) * 8 / (end / 2)


def series_mean(res: Any, column: str, after: float = 0.0) -> float:
    """A bottleneck column's mean over its samples after ``after`` seconds."""
    df = res.links.filter((pl.col("name") == BOTTLENECK) & (pl.col("time_s") > after))
    return float(df[column].mean())


def drops_after(res: Any, column: str, after: float) -> int:
    """Packets a cumulative drop counter of the bottleneck's module added after ``after`` seconds."""
    df = res.links.filter(pl.col("name") == BOTTLENECK).sort("time_s")
    before = df.filter(pl.col("time_s") <= after)[column]
    return int(df[column].max() - (before.max() if before.len() else 0))


def figures(results: Mapping[str, Any], out: Path) -> list[Path]:
    sub = {k: v for k, v in results.items() if k != "one-queue"}
    return [
        panels(
            sub,
            out / "subqueue-vcp-queue.png",
            "VCP sub-queue (packets)",
            "queue (packets)",
            lambda r: port_series(r, BOTTLENECK, "vcp_queue_pkts"),
        ),
        panels(
            sub,
            out / "subqueue-red-queue.png",
            "RED sub-queue (packets)",
            "queue (packets)",
            lambda r: port_series(r, BOTTLENECK, "red_queue_pkts"),
        ),
        panels(
            results,
            out / "bottleneck-queue.png",
            "Bottleneck queue, both sub-queues (packets)",
            "queue (packets)",
            lambda r: port_series(r, BOTTLENECK, "queue_pkts"),
        ),
    ]


def claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    out: list[Claim] = []
    for case in ("subqueues", "share-0.3"):
        if case not in results:
            continue
        res = results[case]
        bn = port_summary(res, BOTTLENECK)
        c, w = bn["capacity_bps"], share_of(res)
        vcp, tcp = group_rate(res, VCP_GROUP), group_rate(res, TCP_GROUP)
        out.append(
            about_claim(
                f"{case}: VCP traffic's rate (A1 on its share)",
                f"γ·w·C = {GAMMA} x {w:g} x {c / 1e6:g} Mb/s",
                GAMMA * w * c,
                vcp,
                f"{vcp / 1e6:.2f} Mb/s over the second half",
                fmt=lambda x: f"{x / 1e6:.2f} Mb/s",
                rel=0.10,
                source="A1's target utilisation γ on the sub-queue's share; ±10 % as the γC/N oracle, docs/PROTOCOLS.md §2",
            )
        )
        lo = HIGH_UTILISATION * (1 - w) * c
        out.append(
            judged(
                f"{case}: TCP traffic's rate (RED on its share)",
                f"its share (1 - w)·C = {(1 - w) * c / 1e6:g} Mb/s, or more (work-conserving)",
                tcp,
                f"{tcp / 1e6:.2f} Mb/s over the second half",
                (lo, None),
                f"at least {HIGH_UTILISATION:.0%} of (1 - w)·C: {lo / 1e6:.2f} Mb/s (racc's 'high utilisation' rule)",
            )
        )
        if case != "subqueues":
            continue
        qv, qr = series_mean(res, "vcp_queue_pkts"), series_mean(res, "red_queue_pkts")
        out.append(
            judged(
                "subqueues: VCP's sub-queue is smaller than RED's",
                "§4.2: VCP's queue below RED's (80-105 < 125-180 pkts)",
                qr - qv,
                f"{qv:.0f} vs {qr:.0f} pkts (means of the 100 ms samples)",
                (1e-9, None),
                "the VCP sub-queue's mean below the RED sub-queue's",
            )
        )
        end = float(res.links["time_s"].max())
        after = DROPS_STOP_S * (1 + ABOUT)
        name, paper = "subqueues: no VCP drop after start-up", f"0 from ≈{DROPS_STOP_S:.0f} s (§4.3, Fig. 7d)"

        def late_drops(res=res, after=after) -> tuple[int, str]:
            late = drops_after(res, "vcp_drops", after)
            return late, f"{late} VCP drops after {after:.1f} s ({int(res.links['vcp_drops'].max())} in all)"

        out.append(
            no_drop_claim(
                name,
                paper,
                end=end,
                needs=2 * after,
                after=after,
                claimed=DROPS_STOP_S,
                quick=quick,
                late=late_drops,
                what="drops of the VCP sub-queue",
            )
        )
        red_drops = int(res.links.filter(pl.col("name") == BOTTLENECK)["red_drops"].max())
        out.append(
            judged(
                "subqueues: RED regulates TCP by loss",
                "§4.4: RED employs packet loss",
                red_drops,
                f"{red_drops} drops in the RED sub-queue",
                (1, None),
                "the RED sub-queue drops",
            )
        )
    if "subqueues" in results and "one-queue" in results:
        own, shared = group_rate(results["subqueues"], VCP_GROUP), group_rate(results["one-queue"], VCP_GROUP)
        out.append(
            judged(
                "VCP and TCP/RED cannot share one queue",
                "§4.4: they 'can not share the same queue'",
                own - MUCH * shared,
                f"VCP {shared / 1e6:.2f} Mb/s in one shared VCP queue vs {own / 1e6:.2f} in its own sub-queue",
                (0, None),
                f"VCP's rate in one shared queue much smaller (x{MUCH}) than in its own sub-queue",
            )
        )
    if "subqueues" in results and "one-queue" in results:
        own = series_mean(results["subqueues"], "vcp_queue_pkts")
        shared = port_summary(results["one-queue"], BOTTLENECK)["mean_queue_pkts"]
        out.append(
            Claim(
                "one-queue: the queue VCP shares with TCP",
                "§4.4 gives no number",
                f"mean {shared:.0f} pkts in one shared VCP queue vs {own:.0f} in VCP's own sub-queue",
                "measured",
                rule="the one-queue bottleneck's mean queue beside the VCP sub-queue's mean",
            )
        )
    for case, res in results.items():
        bn = port_summary(res, BOTTLENECK)
        out.append(
            Claim(
                f"{case}: bottleneck utilisation and drops",
                "not given",
                f"{bn['utilisation']:.3f}, {int(bn['drops'])} drops, mean queue {bn['mean_queue_pkts']:.0f} pkts",
                "measured",
                rule="the bottleneck port's summary over the run",
            )
        )
    return out


def causes(results: Mapping[str, Any], claims: list[Claim], quick: bool) -> None:
    if "subqueues" not in results or "one-queue" not in results:
        return
    one = results["one-queue"]
    bn = port_summary(one, BOTTLENECK)
    vcp, tcp = group_rate(one, VCP_GROUP), group_rate(one, TCP_GROUP)
    explain(
        claims,
        "VCP and TCP/RED cannot share one queue",
        Cause(
            "racc",
            "this rule's reading of §4.4 (VCP loses its share to TCP in one queue) is the experiment's, not the "
            "paper's words, and racc shows the opposite: one shared queue fails by TCP holding it at the buffer",
            f"measured in one-queue: VCP {vcp / 1e6:.2f} Mb/s, TCP {tcp / 1e6:.2f} Mb/s, mean queue "
            f"{bn['mean_queue_pkts']:.0f} pkts, {int(bn['drops'])} drops; not tried: a RED queue shared by both, "
            "the paper's other single-queue reading",
        ),
    )


register(
    Experiment(
        name="dccp-vcp-subqueues",
        source="VCP-DCCP §4.4",
        description="100 DCCP/VCP and 100 TCP/RED flows through a T3 bottleneck: two sub-queues (VCP load "
        "factor on its share, RED) split by DRR 0.5/0.5 and 0.3/0.7, against one shared VCP queue",
        cases=[
            Case("subqueues", SCENARIO, requires=("dccp-vcp", "vcp-red")),
            Case(
                "share-0.3",
                SCENARIO,
                {"topology.bottleneck.router_params.vcp_share": 0.3},
                requires=("dccp-vcp", "vcp-red"),
            ),
            Case(
                "one-queue",
                SCENARIO,
                dict(VCP_ROUTER),  # the whole bottleneck one VCP router, as dccp-vcp-t3's VCP cases
                requires=("dccp-vcp", "vcp"),
            ),
        ],
        # A fifth of the flows on a fifth of the capacity keeps each flow's share; the buffer and
        # RED's thresholds shrink with it (QUICK_SCALE); 40 s, long enough for the drops claim. With
        # 40 pairs the scenario's 20 access delays come in blocks of two: each group keeps the ten.
        quick={
            "duration": "40s",
            "topology.pairs": 40,
            "flows.0.count": 20,
            "flows.1.count": 20,
            "flows.1.index_offset": 20,
            "topology.bottleneck.capacity": "9Mbps",
            "topology.bottleneck.buffer": "560pkt",
            "topology.bottleneck.router_params.red.min_th": 30,
            "topology.bottleneck.router_params.red.max_th": 140,
        },
        figures=figures,
        claims=claims,
        causes=causes,
    )
)
