"""dcpew-parking-lot, DCP-EW §IV: the mpcp-parking-lot topology with 5 %
Gilbert–Elliott loss on every link, VCP vs DPCP vs DCP-EW. Judged by MPCP §4.1's claims
(mpcp-parking-lot's) and by utilisation, which the loss is there to test. Run under both AI
laws, as mpcp-parking-lot (the ns2 law's cases with router γ = 0.95; `ai_laws`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from racc.experiments import mpcp_parking_lot
from racc.experiments.ai_laws import LAW_NAMES, by_law, law_cases
from racc.experiments.base import Claim, Experiment, port_summary, register, verdict
from racc.experiments.causes import claim_named, other_configuration, shortfall
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
                efficiency_name(law),
                "DCP-EW > DPCP",
                f"{u['dcpew']:.1%} vs {u['dpcp']:.1%}",
                verdict(u["dcpew"] > u["dpcp"]),
                rule="DCP-EW's mean utilisation above DPCP's",
            )
        )
    return out


#: the mean loss rate of each link's Gilbert-Elliott model (DCP-EW §IV: "an average loss rate 5%")
LINK_LOSS = 0.05


def causes(results: Mapping[str, Any], claims: list[Claim], quick: bool) -> None:
    """As mpcp-parking-lot's (the other AI law first), with what the long flows' path loss is;
    DCP-EW's own shortfall (its loss differentiation does not restore the fair split) stays open."""
    path_loss = 1 - (1 - LINK_LOSS) ** len(PL_PORTS)
    tried = (
        f"computed: the long flows cross {len(PL_PORTS)} links of {LINK_LOSS:.0%} loss each, "
        f"{path_loss:.1%} path loss against {LINK_LOSS:.0%} for a local flow; DCP-EW's loss differentiation "
        "is to stop cuts on that loss (issue 35 item 4, open)"
    )
    for law, other in (("seed001", "ns2"), ("ns2", "seed001")):
        name, other_name = (efficiency_name(x) for x in (law, other))
        if claim_named(claims, name) is not None:
            other_configuration(claims, name, other_name, LAW_NAMES[other])
    mpcp_parking_lot.causes(results, claims, quick, tried)
    for law in ("seed001", "ns2"):
        shortfall(
            claims,
            efficiency_name(law),
            "DCP-EW no more efficient than DPCP here, under either AI law",
            tried,
        )


def efficiency_name(law: str) -> str:
    return ("" if law == "seed001" else f"{law} law: ") + "DCP-EW efficient where DPCP under-utilises"


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
        causes=causes,
        headline=lambda results, claims: mpcp_parking_lot.headline_for(
            "DCP-EW Figs. 4-5 (the fair split)", results, claims
        ),
    )
)
