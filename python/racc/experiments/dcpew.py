"""Seed 003 (DCP-EW) §IV: the parking lot with Gilbert–Elliott loss on every link, VCP vs DPCP
vs DCP-EW."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from racc.experiments.base import Claim, Experiment, port_summary, register, verdict
from racc.experiments.mpcp import PL_LINKS, PL_PORTS, cases, parking_lot_claims, parking_lot_figures


def mean_utilisation(res: Any) -> float:
    """Mean utilisation of L0..L3 over the run."""
    return sum(port_summary(res, p)["utilisation"] for p in PL_PORTS.values()) / len(PL_PORTS)


def lossy_parking_lot_figures(results: Mapping[str, Any], out: Path) -> list[Path]:
    return parking_lot_figures(
        results,
        out,
        title="Seed 003 Figs. 4-5: long vs local flows on each link under 5 % Gilbert-Elliott loss",
        filename="fig-dcpew-parking-lot-shares.png",
    )


def lossy_parking_lot_claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    out = parking_lot_claims(results, quick)
    u = {n: mean_utilisation(r) for n, r in results.items()}
    for n, v in u.items():
        out.append(Claim(f"{n}: mean utilisation of L0..L3 under 5 % loss", "", f"{v:.1%}", "measured"))
    if "dcpew" in u and "dpcp" in u:
        out.append(
            Claim(
                "DCP-EW efficient where DPCP under-utilises",
                "DCP-EW > DPCP",
                f"{u['dcpew']:.1%} vs {u['dpcp']:.1%}",
                verdict(u["dcpew"] > u["dpcp"]),
            )
        )
    return out


register(
    Experiment(
        name="dcpew-parking-lot",
        source="seed 003 §IV",
        description="the mpcp-parking-lot topology with 5 % Gilbert-Elliott loss on every link: VCP, DPCP, DCP-EW",
        cases=cases("dcpew-parking-lot.toml", ["vcp", "dpcp", "dcpew"], 5, PL_LINKS),
        quick={"duration": "300s", "flows.3.start": "100s"},
        figures=lossy_parking_lot_figures,
        claims=lossy_parking_lot_claims,
    )
)


# --------------------------------------------------------------------------------------------
# dcpew-dumbbell-loss (seed 003 §IV): utilisation against Gilbert–Elliott loss up to 30 %

BOTTLENECK = "r0->r1"
GE_LOSSES = [0.0, 0.05, 0.10, 0.20, 0.30]


def loss_cases() -> list:
    from racc.experiments.base import Case

    out = []
    for p in ("vcp", "dpcp", "dcpew"):
        ov = {"topology.bottleneck.router": p, "flows.0.protocol": p}
        if p != "dcpew":
            ov["flows.0.params"] = {}  # the file's parameters are DCP-EW's
        for loss in GE_LOSSES:
            out.append(
                Case(
                    f"{p}-ge{loss:.2f}",
                    "dcpew-dumbbell-loss.toml",
                    {**ov, "topology.bottleneck.loss.loss": loss},
                    requires=(p,),
                )
            )
    return out


def utilisation_by_loss(results: Mapping[str, Any]) -> dict[str, dict[float, float]]:
    out: dict[str, dict[float, float]] = {}
    for name, res in results.items():
        proto, _, loss = name.partition("-ge")
        out.setdefault(proto, {})[float(loss)] = port_summary(res, BOTTLENECK)["utilisation"]
    return out


def loss_figures(results: Mapping[str, Any], out: Path) -> list[Path]:
    from racc.experiments.figures import save, subplots

    fig, ax = subplots(figsize=(7, 4))
    for proto, pts in utilisation_by_loss(results).items():
        xs = sorted(pts)
        ax.plot([x * 100 for x in xs], [pts[x] * 100 for x in xs], marker="o", label=proto.upper())
    ax.set_xlabel("Gilbert-Elliott average loss (%), burst 2")
    ax.set_ylabel("bottleneck utilisation (%)")
    ax.set_ylim(0, 105)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title("DCP-EW vs DPCP vs VCP under wireless-like loss")
    return [save(fig, out / "fig-utilisation-vs-loss.png")]


def loss_claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    u = utilisation_by_loss(results)
    out = []
    if {"vcp", "dpcp", "dcpew"} <= set(u):
        for loss in GE_LOSSES:
            if loss == 0.0 or any(loss not in u[p] for p in u):
                continue
            a, b, c = u["dcpew"][loss], u["dpcp"][loss], u["vcp"][loss]
            out.append(
                Claim(
                    f"utilisation at {loss:.0%} loss: DCP-EW > DPCP > VCP",
                    "DCP-EW well above DPCP > VCP",
                    f"{a:.1%} / {b:.1%} / {c:.1%}",
                    verdict(a > b > c),
                )
            )
        if 0.0 in u["dcpew"] and 0.0 in u["dpcp"]:
            a, b = u["dcpew"][0.0], u["dpcp"][0.0]
            out.append(
                Claim("loss-free: DCP-EW equals DPCP", "equal", f"{a:.1%} vs {b:.1%}", verdict(abs(a - b) < 0.03))
            )
    return out


register(
    Experiment(
        name="dcpew-dumbbell-loss",
        source="seed 003 §IV",
        description="4 flows, 4 Mb/s, 220 ms RTT dumbbell with Gilbert-Elliott loss 0-30 %: VCP, DPCP, DCP-EW",
        cases=loss_cases(),
        quick={"duration": "30s"},
        figures=loss_figures,
        claims=loss_claims,
    )
)


# --------------------------------------------------------------------------------------------
# dcpew-ipsec (seed 003 §III.C): the bottleneck inside an IPsec tunnel

IPSEC_ROUTERS = [f"topology.links.{i}.router" for i in range(4, 10)]


def ipsec_cases() -> list:
    from racc.experiments.base import Case

    out = [Case("dcpew", "dcpew-ipsec.toml", requires=("dcpew",))]
    for p in ("dpcp", "vcp"):
        ov = {k: p for k in IPSEC_ROUTERS}
        ov.update({"topology.links.5.router_params": {}, "flows.0.protocol": p})
        out.append(Case(p, "dcpew-ipsec.toml", ov, requires=(p,)))
    return out


def ipsec_figures(results: Mapping[str, Any], out: Path) -> list[Path]:
    from racc.experiments.figures import panels, port_series

    return [
        panels(
            results,
            out / "fig-ipsec-queue.png",
            "bottleneck queue inside the IPsec tunnel",
            "queue (packets)",
            lambda r: port_series(r, "r->g2", "queue_pkts"),
        )
    ]


def ipsec_claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    out = []
    s = {n: port_summary(r, "r->g2") for n, r in results.items()}
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
            )
        )
    return out


register(
    Experiment(
        name="dcpew-ipsec",
        source="seed 003 §III.C",
        description="4 flows through an IPsec tunnel whose inside holds the 10 Mb/s bottleneck: DCP-EW, DPCP, VCP",
        cases=ipsec_cases(),
        quick={"duration": "30s"},
        figures=ipsec_figures,
        claims=ipsec_claims,
    )
)
