"""dccp-vcp-t3, VCP-DCCP (VCP on DCCP) §4: 200 flows through a T3 bottleneck, four cases
TCP/RED, DCCP/RED, TCP/VCP, DCCP/VCP (Figs. 5-7)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from racc.experiments.base import (
    Case,
    Claim,
    Experiment,
    about_claim,
    not_judged_quick,
    port_summary,
    register,
    verdict,
)
from racc.experiments.figures import drop_rate_series, flow_series, panels, port_series

BOTTLENECK = "r0->r1"
SCENARIO = "dccp-vcp-t3-tcp-red.toml"
VCP_ROUTER = {"topology.bottleneck.router": "vcp", "topology.bottleneck.router_params": {}}

# Paper values (VCP-DCCP §4): mean queue (Fig. 6), average drop rate (Fig. 7).
PAPER_QUEUE = {"tcp-red": 180, "dccp-red": 125, "tcp-vcp": 105, "dccp-vcp": 80}
PAPER_DROP = {"tcp-red": 0.07, "dccp-red": 0.03}
PAPER_ZERO_DROP_AFTER = {"tcp-vcp": 30.0, "dccp-vcp": 10.0}
#: the quick run's buffer and RED thresholds over the full run's (140 / 1400 packets, 15 / 150, 70 / 700)
QUICK_QUEUE_SCALE = 0.1
#: sender of the flow drawn in Fig. 5: subnet 0 (senders s0..s19) has the 60 ms RTPD
FLOW_60MS_SRC = "s0"


def flow_60ms(res: Any) -> int:
    """The id of the 60 ms RTPD flow, looked up by its sender in ``flow_info`` (the engine numbers
    flows by start time, so flow 0 is whichever started first)."""
    return int(res.flow_info.filter(pl.col("src") == FLOW_60MS_SRC).get_column("flow").min())


def zero_drop_after(res: Any) -> float | None:
    """The time after which the bottleneck never drops again (None if it drops in the last sample)."""
    df = res.links.filter(pl.col("name") == BOTTLENECK).sort("time_s")
    dropping = df.filter(pl.col("drops") > 0)
    if dropping.height == 0:
        return 0.0
    last = dropping["time_s"].max()
    return None if last >= df["time_s"].max() else float(last)


def figures(results: Mapping[str, Any], out: Path) -> list[Path]:
    return [
        panels(
            results,
            out / "fig5-throughput-60ms-flow.png",
            "Fig. 5: throughput of a 60 ms RTPD flow",
            "throughput (kb/s)",
            lambda r: flow_series(r, flow_60ms(r), "goodput_bps", 1e-3),
            hline=220.8,
            hline_label="Eq. 9: 220.8 kb/s",
        ),
        panels(
            results,
            out / "fig6-queue.png",
            "Fig. 6: bottleneck queue",
            "queue (packets)",
            lambda r: port_series(r, BOTTLENECK, "queue_pkts"),
        ),
        panels(
            results,
            out / "fig7-drop-rate.png",
            "Fig. 7: bottleneck packet drop rate",
            "drops / arrivals",
            lambda r: drop_rate_series(r, BOTTLENECK),
        ),
    ]


def claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    out = []
    # Quick runs shrink the buffer and RED's thresholds to a tenth (see `quick` below): queues in
    # packets scale with them, drop rates and times do not.
    qscale = QUICK_QUEUE_SCALE if quick else 1.0
    for case, res in results.items():
        bn = port_summary(res, BOTTLENECK)
        q = bn["mean_queue_pkts"]
        if case in PAPER_QUEUE:
            want = PAPER_QUEUE[case] * qscale
            out.append(
                about_claim(
                    f"{case}: mean bottleneck queue",
                    f"≈{PAPER_QUEUE[case]} pkts" + (f" ({want:.1f} at the quick scale)" if quick else ""),
                    want,
                    q,
                    f"{q:.0f} pkts",
                    fmt=lambda x: f"{x:.1f} pkts",
                )
            )
        if case in PAPER_DROP:
            d = bn["drop_rate"]
            out.append(
                about_claim(
                    f"{case}: drop rate",
                    f"≈{PAPER_DROP[case]:.0%}",
                    PAPER_DROP[case],
                    d,
                    f"{d:.1%}",
                    fmt=lambda x: f"{x:.2%}",
                )
            )
        if case in PAPER_ZERO_DROP_AFTER:
            t = zero_drop_after(res)
            end = float(res.links["time_s"].max())
            claimed = PAPER_ZERO_DROP_AFTER[case]
            if end < 2 * claimed:
                why = f"needs a run of at least {2 * claimed:.0f} s to tell (this one: {end:.0f} s)"
                seen = "" if t is None else f"last drop at {t:.1f} s of {end:.0f}"
                out.append(
                    not_judged_quick(f"{case}: drops stop", f"after ≈{claimed:.0f} s", seen, why)
                    if quick
                    else Claim(f"{case}: drops stop", f"after ≈{claimed:.0f} s", seen, "not run", why)
                )
            else:
                out.append(
                    about_claim(
                        f"{case}: drops stop",
                        f"after ≈{claimed:.0f} s",
                        claimed,
                        t,
                        "never" if t is None else f"after {t:.1f} s",
                        fmt=lambda x: f"{x:.1f} s",
                    )
                )
    if "tcp-red" in results and "tcp-vcp" in results:
        qr = port_summary(results["tcp-red"], BOTTLENECK)["mean_queue_pkts"]
        qv = port_summary(results["tcp-vcp"], BOTTLENECK)["mean_queue_pkts"]
        out.append(
            Claim(
                "VCP keeps a smaller queue than RED (TCP)",
                "105 < 180 pkts",
                f"{qv:.0f} vs {qr:.0f}",
                verdict(qv < qr),
                rule="TCP/VCP's mean queue below TCP/RED's",
            )
        )
    if "dccp-vcp" in results:
        dv = results["dccp-vcp"]
        df = dv.flows.filter(pl.col("flow") == flow_60ms(dv))
        end = df["time_s"].max()
        r = df.filter(pl.col("time_s") > end / 2)["goodput_bps"].mean()
        out.append(
            about_claim(
                "DCCP/VCP 60 ms flow rate (Eq. 9)",
                "220.8 kb/s",
                220.5e3,
                r,
                f"{(r or 0) / 1e3:.1f} kb/s",
                fmt=lambda x: f"{x / 1e3:.1f} kb/s",
                rel=0.10,
                source="the oracle γC/N, docs/PROTOCOLS.md §2",
            )
        )
    return out


register(
    Experiment(
        name="dccp-vcp-t3",
        source="VCP-DCCP §4 (Figs. 5-7)",
        description="200 flows (10 subnets x 20, RTPD 60-220 ms) through a 45 Mb/s T3 bottleneck: "
        "TCP/RED, DCCP/RED, TCP/VCP, DCCP/VCP",
        cases=[
            Case("tcp-red", SCENARIO),
            Case("dccp-red", SCENARIO, {"flows.0.protocol": "dccp"}, requires=("dccp",)),
            Case("tcp-vcp", SCENARIO, {"flows.0.protocol": "vcp", **VCP_ROUTER}, requires=("vcp",)),
            Case("dccp-vcp", SCENARIO, {"flows.0.protocol": "dccp-vcp", **VCP_ROUTER}, requires=("dccp-vcp", "vcp")),
        ],
        # A tenth of the flows on a tenth of the capacity keeps each flow's share; 30 s of it
        # (QUICK_QUEUE_SCALE: buffer and RED thresholds shrink with it).
        quick={
            "duration": "30s",
            "topology.pairs": 20,
            "flows.0.count": 20,
            "topology.bottleneck.capacity": "4.5Mbps",
            "topology.bottleneck.buffer": "140pkt",
            "topology.bottleneck.router_params.min_th": 15,
            "topology.bottleneck.router_params.max_th": 70,
        },
        figures=figures,
        claims=claims,
    )
)
