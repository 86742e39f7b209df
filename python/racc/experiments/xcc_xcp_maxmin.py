"""xcc-xcp-maxmin, XCC-Linux ("Max-Min Fairness in XCP", after Low, Andrew and Wydrowski,
INFOCOM 2005): XCP is not max-min fair on two links where one flow is held elsewhere; the
others are. Theory: docs/PROTOCOLS.md §15's two-link oracle."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from racc.experiments import xcc
from racc.experiments.base import FAIR, Claim, Experiment, register, verdict
from racc.experiments.xcp_maxmin_n import theory

L1, L2 = "r1->r2", "r2->r3"
LINKS = ["topology.links.0", "topology.links.1"]
#: short flows on l1 only (m) and XCP's constants (docs/PROTOCOLS.md §5)
M, ALPHA, GAMMA = 2, 0.4, 0.1
#: "aligns perfectly": l1's utilisation within this of the theory (absolute), and the short
#: flows nearer the theory's rate than max-min's (the deviation goes the predicted way)
V_TOL = 0.01
STEADY = 30.0


def xcp_theory(c: float, m: int = M, alpha: float = ALPHA, gamma: float = GAMMA) -> float:
    """l1's utilisation v under XCP: the root in (c, 1] of
    gamma v^2/(m+1) = (gamma v - alpha (1-v)) (v - c)/m, xcp-maxmin-n's theory with one long flow."""
    return theory(c, m, 1, alpha, gamma)


def figures(results: Mapping[str, Any], out: Path) -> list[Path]:
    return [xcc.rates_and_queue(results, out / "fig-xcp-maxmin.png", "xcc-xcp-maxmin: l1 155 Mb/s, l2 C1/6", L1)]


def claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    out = []
    for n, r in results.items():
        end, g, mm, groups = xcc.steady_against_maxmin(r, STEADY)
        short = [f for f in g if groups[f] == "short"]
        c1, c2 = xcc.capacity(r, L1), xcc.capacity(r, L2)
        v = xcc.utilisation(r, L1, STEADY, end)
        mean_short = sum(g[f] for f in short) / max(len(short), 1)
        if n == "xcp":
            c = c2 / c1
            vt = xcp_theory(c)
            short_t = (vt - c) * c1 / M
            short_mm = (1 - c) * c1 / M
            out.append(
                Claim(
                    "XCP: l1 utilisation matches the theory",
                    f"v = {vt:.3f} (±{V_TOL})",
                    f"{v:.3f}",
                    verdict(abs(v - vt) <= V_TOL),
                    rule=f"within {V_TOL} of the theory's utilisation",
                )
            )
            out.append(
                Claim(
                    "XCP: short flows below max-min as the theory predicts",
                    f"{short_t / 1e6:.2f} Mb/s each (max-min {short_mm / 1e6:.2f})",
                    f"{mean_short / 1e6:.2f} Mb/s",
                    verdict(abs(mean_short - short_t) < abs(mean_short - short_mm)),
                    rule="short flows' mean rate closer to the theory than to max-min",
                )
            )
        else:
            worst = max(abs(g[f] / mm[f] - 1.0) for f in g)
            out.append(
                Claim(
                    f"{n}: max-min fair",
                    f"every flow within ±{FAIR:.0%} of max-min",
                    ", ".join(f"{groups[f]} {g[f] / 1e6:.2f}/{mm[f] / 1e6:.2f}" for f in sorted(g))
                    + f" Mb/s (worst {worst:.1%})",
                    verdict(worst <= FAIR),
                    rule=f"every rate within ±{FAIR:.0%} of its max-min share (the 'fair' rule)",
                )
            )
    return out


register(
    Experiment(
        name="xcc-xcp-maxmin",
        source="XCC-Linux (Max-Min Fairness in XCP); Low, Andrew and Wydrowski 2005",
        description="l1 155 Mb/s with 2 short flows and a long flow held by l2 = C1/6: XCP's unfairness vs theory",
        cases=xcc.cases("xcc-xcp-maxmin.toml", 2, LINKS),
        quick=xcc.quick({LINKS[0]: (155e6, 20000), LINKS[1]: (155e6 / 6, 20000)}),
        figures=figures,
        claims=claims,
    )
)
