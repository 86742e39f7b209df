"""xcc-multilink, XCC-Linux ("Multi-Link Topology"): a parking lot of 970 and 800 Mb/s links, one
long flow across both and one local flow per link."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from racc.experiments import xcc
from racc.experiments.base import FAIR, Claim, Experiment, register, verdict

L1, L2 = "r0->r1", "r1->r2"
LINKS = ["topology.links.0", "topology.links.1"]
STEADY = 30.0
#: "stable": each flow's 1 s mean rate stays within this of its steady-state mean
STABLE = 0.10


def figures(results: Mapping[str, Any], out: Path) -> list[Path]:
    return [xcc.rates_and_queue(results, out / "fig-multilink.png", "xcc-multilink: 970 / 800 Mb/s", L2)]


def claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    import polars as pl

    out = []
    for n, r in results.items():
        end, g, mm, groups = xcc.steady_against_maxmin(r, STEADY)
        gp = xcc.flow_goodput(r, STEADY, end)
        worst = max(abs(g[f] / mm[f] - 1.0) for f in g)
        # Stability: 1 s means of each flow's rate against its steady-state mean.
        df = r.flows.filter(pl.col("time_s") > STEADY).with_columns((pl.col("time_s").ceil()).alias("sec"))
        sec = df.group_by(["flow", "sec"]).agg(pl.col("goodput_bps").mean())
        swing = max(float((sec.filter(pl.col("flow") == f)["goodput_bps"] / gp[f] - 1.0).abs().max() or 0.0) for f in g)
        out.append(
            Claim(
                f"{n}: max-min fair",
                f"every flow within ±{FAIR:.0%} of max-min",
                ", ".join(f"{groups[f]} {g[f] / 1e6:.0f}/{mm[f] / 1e6:.0f}" for f in sorted(g))
                + f" Mb/s (worst {worst:.1%})",
                verdict(worst <= FAIR),
                rule=f"every rate within ±{FAIR:.0%} of its max-min share (the 'fair' rule)",
            )
        )
        out.append(
            Claim(
                f"{n}: stable",
                f"1 s rates within ±{STABLE:.0%} of their mean after {STEADY:.0f} s",
                f"largest swing {swing:.1%}",
                verdict(swing <= STABLE),
                rule=f"rate swing at most {STABLE:.0%}",
            )
        )
    return out


register(
    Experiment(
        name="xcc-multilink",
        source="XCC-Linux (Multi-Link Topology)",
        description="parking lot 970 / 800 Mb/s, one long and one local flow per link: XCP, JetMax, RCP, PIQI-RCP",
        cases=xcc.cases("xcc-multilink.toml", 3, LINKS),
        quick=xcc.quick({LINKS[0]: (970e6, 20000), LINKS[1]: (800e6, 20000)}),
        figures=figures,
        claims=claims,
    )
)
