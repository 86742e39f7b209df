"""dcpew-ipsec, DCP-EW §III.C: four flows through an IPsec tunnel whose inside holds
the 10 Mb/s bottleneck, DCP-EW vs DPCP vs VCP."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from racc.experiments.base import Case, Claim, Experiment, port_summary, register, verdict
from racc.experiments.figures import panels, port_series

#: the bottleneck, inside the tunnel (r -> g2)
BOTTLENECK = "r->g2"
#: the router module of every link that has one (the file's links 4..9: g1 -> r -> g2 -> d_i), as override keys
IPSEC_ROUTERS = [f"topology.links.{i}.router" for i in range(4, 10)]


def cases() -> list[Case]:
    out = [Case("dcpew", "dcpew-ipsec.toml", requires=("dcpew",))]
    for p in ("dpcp", "vcp"):
        ov = {k: p for k in IPSEC_ROUTERS}
        # The bottleneck's router parameters in the file are DCP-EW's.
        ov.update({"topology.links.5.router_params": {}, "flows.0.protocol": p})
        out.append(Case(p, "dcpew-ipsec.toml", ov, requires=(p,)))
    return out


def figures(results: Mapping[str, Any], out: Path) -> list[Path]:
    return [
        panels(
            results,
            out / "fig-ipsec-queue.png",
            "bottleneck queue inside the IPsec tunnel",
            "queue (packets)",
            lambda r: port_series(r, BOTTLENECK, "queue_pkts"),
        )
    ]


def claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    out = []
    s = {n: port_summary(r, BOTTLENECK) for n, r in results.items()}
    j = {n: (r.summary.get("flows") or {}).get("jain") for n, r in results.items()}
    for n in s:
        out.append(
            Claim(
                f"{n}: through the tunnel",
                "",
                f"utilisation {s[n]['utilisation']:.1%}, mean queue "
                f"{s[n]['mean_queue_pkts']:.1f} pkts, Jain {j[n] or 0:.3f}",
                "measured",
            )
        )
    if "dcpew" in s and "dpcp" in s:
        ok = s["dcpew"]["utilisation"] > s["dpcp"]["utilisation"] and (j["dcpew"] or 0) > (j["dpcp"] or 0)
        out.append(
            Claim(
                "DCP-EW works through the tunnel; DPCP cannot order its packets there",
                "DCP-EW better",
                f"utilisation {s['dcpew']['utilisation']:.1%} vs {s['dpcp']['utilisation']:.1%}, "
                f"Jain {j['dcpew'] or 0:.2f} vs {j['dpcp'] or 0:.2f}",
                verdict(ok),
                rule="DCP-EW's utilisation and Jain's index both above DPCP's",
            )
        )
    return out


register(
    Experiment(
        name="dcpew-ipsec",
        source="DCP-EW §III.C",
        description="4 flows through an IPsec tunnel whose inside holds the 10 Mb/s bottleneck: DCP-EW, DPCP, VCP",
        cases=cases(),
        quick={"duration": "30s"},
        figures=figures,
        claims=claims,
    )
)
