"""xcc-mice, XCC-Linux ("Performance with Mice Traffic"): one long flow plus Poisson mice (mean
inter-arrival 0.2 s, Pareto sizes shape 1.4, mean 100 packets) on 1 Gb/s."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from racc.experiments import xcc
from racc.experiments.base import HIGH_UTILISATION, Claim, Experiment, register, verdict

BOTTLENECK = "r0->r1"
LINK = "topology.bottleneck"
#: mice arrive from 1 s; measure from 10 s to the end
STEADY = 10.0


def figures(results: Mapping[str, Any], out: Path) -> list[Path]:
    return [
        xcc.rates_and_queue(
            results, out / "fig-mice.png", "xcc-mice: long flow (rate) with mice", BOTTLENECK, flows=[0]
        )
    ]


def claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    out = []
    u = {}
    for n, r in results.items():
        end = float(r.links["time_s"].max())
        u[n] = xcc.utilisation(r, BOTTLENECK, STEADY, end)
        mice = r.completions.height
        if n != "jetmax":
            out.append(
                Claim(
                    f"{n}: performs reasonably well with mice",
                    f"utilisation ≥ {HIGH_UTILISATION:.0%} (the rule for 'reasonably well')",
                    f"utilisation {u[n]:.1%}, {mice} mice finished",
                    verdict(u[n] >= HIGH_UTILISATION),
                    rule=f"utilisation at least {HIGH_UTILISATION:.0%} (the 'high utilisation' rule)",
                )
            )
    if "jetmax" in u:
        others = {n: x for n, x in u.items() if n != "jetmax"}
        out.append(
            Claim(
                "JetMax loses utilisation under mice",
                "low utilisation, below the others'",
                f"JetMax {u['jetmax']:.1%}" + "".join(f", {n} {x:.1%}" for n, x in others.items()),
                verdict(u["jetmax"] < HIGH_UTILISATION and all(u["jetmax"] < x for x in others.values())),
                rule=f"JetMax below {HIGH_UTILISATION:.0%} and below every other protocol",
            )
        )
    return out


register(
    Experiment(
        name="xcc-mice",
        source="XCC-Linux (Performance with Mice Traffic)",
        description="a long flow and Poisson/Pareto mice on 1 Gb/s: XCP, JetMax, RCP, PIQI-RCP",
        cases=xcc.cases("xcc-mice.toml", 1, [LINK], traffic=1),
        # Not a tenth of the capacity: mice sizes are in packets, so a slower link would make them
        # ten times larger a share of it and ten times longer-lived. Quick runs keep 1 Gb/s and
        # stop at 20 s (mice from 1 s, measured from 10 s).
        quick={"duration": "20s"},
        figures=figures,
        claims=claims,
    )
)
