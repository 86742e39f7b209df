"""dcpew-parking-lot, DCP-EW §IV: the mpcp-parking-lot topology with 5 %
Gilbert–Elliott loss on every link, VCP vs DPCP vs DCP-EW. Judged by MPCP §4.1's claims
(mpcp-parking-lot's) and by utilisation, which the loss is there to test. Run under both AI
laws, as mpcp-parking-lot (the ns2 law's cases with router γ = 0.95; `ai_laws`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from racc.experiments import mpcp_parking_lot
from racc.experiments.ai_laws import by_law, law_cases
from racc.experiments.base import Claim, Experiment, port_summary, register, verdict
from racc.experiments.parking_lot import PL_LINKS, PL_PORTS


def mean_utilisation(res: Any) -> float:
    """Mean utilisation of L0..L3 over the run."""
    return sum(port_summary(res, p)["utilisation"] for p in PL_PORTS.values()) / len(PL_PORTS)


def figures(results: Mapping[str, Any], out: Path) -> list[Path]:
    return mpcp_parking_lot.figures(
        results,
        out,
        title="DCP-EW Figs. 4-5: long vs local flows on each link under 5 % Gilbert-Elliott loss",
        filename="fig-dcpew-parking-lot-shares.png",
    )


def claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    out = mpcp_parking_lot.claims(results, quick)
    u = {n: mean_utilisation(r) for n, r in results.items()}
    for n, v in u.items():
        out.append(Claim(f"{n}: mean utilisation of L0..L3 under 5 % loss", "", f"{v:.1%}", "measured"))
    for law, sub in by_law(dict(results)).items():
        out += efficiency_claim({p: mean_utilisation(r) for p, r in sub.items()}, law)
    return out


def efficiency_claim(u: Mapping[str, float], law: str) -> list[Claim]:
    """DCP-EW §IV's efficiency claim for one AI law's cases (keyed by protocol)."""
    out = []
    if "dcpew" in u and "dpcp" in u:
        out.append(
            Claim(
                ("" if law == "seed001" else f"{law} law: ") + "DCP-EW efficient where DPCP under-utilises",
                "DCP-EW > DPCP",
                f"{u['dcpew']:.1%} vs {u['dpcp']:.1%}",
                verdict(u["dcpew"] > u["dpcp"]),
                rule="DCP-EW's mean utilisation above DPCP's",
            )
        )
    return out


register(
    Experiment(
        name="dcpew-parking-lot",
        source="DCP-EW §IV",
        description="the mpcp-parking-lot topology with 5 % Gilbert-Elliott loss on every link: VCP, DPCP, DCP-EW, "
        "AI law seed001 vs ns2 (router γ 0.95)",
        cases=law_cases("dcpew-parking-lot.toml", ["vcp", "dpcp", "dcpew"], 5, PL_LINKS),
        quick={"duration": "300s", "flows.3.start": "100s"},
        figures=figures,
        claims=claims,
    )
)
