"""mpcp-queue, MPCP §5 (Fig. 5): the bottleneck queue of VCP, DPCP and TPCP on the
mpcp-dumbbell set-up, and DPCP's queue against its transition time as the cap on its MI factor ξ
(`xi_cap`, docs/PROTOCOLS.md) varies (issue 13): the trade-off shown instead of one chosen point."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from racc.experiments.base import ABOUT, Case, Claim, Experiment, about_claim, register, verdict
from racc.experiments.figures import panels, port_series, save, subplots
from racc.experiments.mpcp_dumbbell import transition_time
from racc.experiments.protocols import PROTOCOLS, protocol_cases, protocol_overrides

BOTTLENECK = "r0->r1"
PROTOCOL_CASES = ("vcp", "dpcp", "tpcp")
#: DPCP's ξ caps swept, largest first. None (no cap: ξ = h(1/ρ_ub − 1) up to 1.0) is the plain
#: "dpcp" case; 0.0625 = 1/16 is the VCP reference code's multi-bit MI factor.
XI_CAPS: tuple[float | None, ...] = (None, 0.5, 0.25, 0.125, 0.0625)
#: MPCP §4.2's transition-time claim for DPCP (judged by mpcp-dumbbell on the same set-up)
TRANSITION_CLAIM_S = 4.0
#: MPCP §5's queue claim: DPCP's standing queue about 3x VCP's
QUEUE_CLAIM_X = 3.0


def xi_case_name(cap: float | None) -> str:
    return "dpcp" if cap is None else f"dpcp-xi-{cap:g}"


def xi_cases() -> list[Case]:
    """One DPCP case per capped ξ (the uncapped point is the "dpcp" protocol case)."""
    base = protocol_overrides("dpcp", 1, ["topology.bottleneck"])
    return [
        Case(xi_case_name(c), "mpcp-queue.toml", {**base, "flows.0.params.xi_cap": c}, requires=PROTOCOLS["dpcp"])
        for c in XI_CAPS
        if c is not None
    ]


def standing_queue(res: Any) -> tuple[float, float]:
    """Mean and standard deviation of the bottleneck queue (packets) over the run's second half."""
    end = float(res.links["time_s"].max())
    t, ys = port_series(res, BOTTLENECK, "queue_pkts")
    tail = [y for ti, y in zip(t, ys) if ti > end / 2]
    return sum(tail) / max(len(tail), 1), (pl.Series(tail).std() or 0.0)


def xi_sweep(results: Mapping[str, Any]) -> list[tuple[float | None, float, float | None]]:
    """(ξ cap, standing queue in packets, transition time in s or None) for each cap run."""
    rows = []
    for cap in XI_CAPS:
        res = results.get(xi_case_name(cap))
        if res is not None:
            rows.append((cap, standing_queue(res)[0], transition_time(res)))
    return rows


def cap_label(cap: float | None) -> str:
    return "none" if cap is None else f"{cap:g}"


def tradeoff_figure(results: Mapping[str, Any], path: Path) -> Path:
    """DPCP's standing queue against its transition time, one point per ξ cap, with VCP and TPCP
    for reference and the paper's two claims marked: transition time under 4 s (MPCP §4.2) and a
    queue about 3x VCP's (MPCP §5, the 'about' rule's ±25 % band)."""
    fig, ax = subplots(figsize=(6.4, 4.4))
    rows = [r for r in xi_sweep(results) if r[2] is not None]
    ax.plot([r[2] for r in rows], [r[1] for r in rows], "o-", color="C0", label="DPCP, ξ cap swept")
    for cap, q, t in rows:
        ax.annotate(f"ξ cap {cap_label(cap)}", (t, q), textcoords="offset points", xytext=(5, 4), fontsize=8)
    for n, color in (("vcp", "C2"), ("tpcp", "C3")):
        if n in results and (t := transition_time(results[n])) is not None:
            ax.plot([t], [standing_queue(results[n])[0]], "s", color=color, label=n.upper())
    ax.axvline(TRANSITION_CLAIM_S, color="k", ls="--", lw=0.9, label="MPCP §4.2: transition < 4 s")
    if "vcp" in results:
        qv = standing_queue(results["vcp"])[0]
        ax.axhspan(
            (1 - ABOUT) * QUEUE_CLAIM_X * qv,
            (1 + ABOUT) * QUEUE_CLAIM_X * qv,
            color="0.6",
            alpha=0.3,
            label="MPCP §5: queue ≈3x VCP's (±25 %)",
        )
    ax.set_xlabel("transition time to 90 % of steady utilisation (s)")
    ax.set_ylabel("standing queue, second half (packets)")
    ax.set_title("DPCP: queue vs transition time as ξ's cap varies")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return save(fig, path)


def figures(results: Mapping[str, Any], out: Path) -> list[Path]:
    paths = [
        panels(
            {n: r for n, r in results.items() if n in PROTOCOL_CASES},
            out / "fig5-queue.png",
            "Fig. 5: bottleneck queue",
            "queue (packets)",
            lambda r: port_series(r, BOTTLENECK, "queue_pkts"),
        )
    ]
    if len(xi_sweep(results)) > 1:
        paths.append(tradeoff_figure(results, out / "fig-xi-cap-tradeoff.png"))
    return paths


def sweep_claims(results: Mapping[str, Any]) -> list[Claim]:
    """The ξ sweep's table: one measured row per cap (the paper picks no cap; it is the trade-off
    between its two claims, queue and transition time)."""
    return [
        Claim(
            f"dpcp, ξ cap {cap_label(cap)}: standing queue / transition time",
            "",
            f"{q:.0f} pkts / {'never' if t is None else f'{t:.1f} s'}",
            "measured",
            "queue: mean over the second half; transition: to 90 % of steady utilisation (mpcp-dumbbell's rule)",
        )
        for cap, q, t in xi_sweep(results)
    ]


def claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    out = []
    q = {n: standing_queue(r) for n, r in results.items() if n in PROTOCOL_CASES}
    if "vcp" in q:
        for n in ("dpcp", "tpcp"):
            if n in q:
                ratio = q[n][0] / max(q["vcp"][0], 1e-9)
                out.append(
                    about_claim(
                        f"{n} standing queue / VCP's",
                        "≈3x",
                        3.0,
                        ratio,
                        f"{ratio:.1f}x ({q[n][0]:.0f} vs {q['vcp'][0]:.0f} pkts)",
                        fmt=lambda x: f"{x:.3g}x",
                    )
                )
    if "dpcp" in q and "tpcp" in q:
        out.append(
            Claim(
                "TPCP's queue smoother than DPCP's (s.d.)",
                "smoother",
                f"{q['tpcp'][1]:.1f} vs {q['dpcp'][1]:.1f} pkts",
                verdict(q["tpcp"][1] < q["dpcp"][1]),
                rule="TPCP's queue standard deviation below DPCP's",
            )
        )
        out.append(
            Claim(
                "TPCP's standing queue slightly higher than DPCP's",
                "slightly higher",
                f"{q['tpcp'][0]:.0f} vs {q['dpcp'][0]:.0f} pkts",
                verdict(q["dpcp"][0] <= q["tpcp"][0] <= (1 + ABOUT) * q["dpcp"][0]),
                f"'slightly higher': higher, by at most {ABOUT:.0%} (the 'about' rule)",
            )
        )
    return out + sweep_claims(results)


register(
    Experiment(
        name="mpcp-queue",
        source="MPCP §5 (Fig. 5)",
        description="bottleneck queue of VCP, DPCP and TPCP on the mpcp-dumbbell set-up; "
        "DPCP's queue vs transition time as ξ's cap varies",
        cases=protocol_cases("mpcp-queue.toml", list(PROTOCOL_CASES), 1, ["topology.bottleneck"]) + xi_cases(),
        quick={"duration": "30s"},
        figures=figures,
        claims=claims,
    )
)
