"""mpcp-queue, MPCP §5 (Fig. 5): the bottleneck queue of VCP, DPCP and TPCP on the
mpcp-dumbbell set-up."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from racc.experiments.base import ABOUT, Claim, Experiment, about_claim, register, verdict
from racc.experiments.figures import panels, port_series
from racc.experiments.protocols import protocol_cases

BOTTLENECK = "r0->r1"


def figures(results: Mapping[str, Any], out: Path) -> list[Path]:
    return [
        panels(
            results,
            out / "fig5-queue.png",
            "Fig. 5: bottleneck queue",
            "queue (packets)",
            lambda r: port_series(r, BOTTLENECK, "queue_pkts"),
        )
    ]


def claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    out = []
    q = {}
    for n, r in results.items():
        end = float(r.links["time_s"].max())
        t, ys = port_series(r, BOTTLENECK, "queue_pkts")
        tail = [y for ti, y in zip(t, ys) if ti > end / 2]
        q[n] = (sum(tail) / max(len(tail), 1), (pl.Series(tail).std() or 0.0))
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
    return out


register(
    Experiment(
        name="mpcp-queue",
        source="MPCP §5 (Fig. 5)",
        description="bottleneck queue of VCP, DPCP and TPCP on the mpcp-dumbbell set-up",
        cases=protocol_cases("mpcp-queue.toml", ["vcp", "dpcp", "tpcp"], 1, ["topology.bottleneck"]),
        quick={"duration": "30s"},
        figures=figures,
        claims=claims,
    )
)
