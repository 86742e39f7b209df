"""mpcp-dumbbell, MPCP §4.2 (Fig. 3): transition time and utilisation of a 10 Mb/s,
500 ms RTT dumbbell, VCP vs DPCP."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from racc.experiments.base import (
    Case,
    Cause,
    Claim,
    Experiment,
    about_claim,
    explain,
    judged,
    port_summary,
    register,
    verdict,
)
from racc.experiments.causes import claim_named, shortfall
from racc.experiments.figures import panels, port_series
from racc.experiments.protocols import protocol_cases

BOTTLENECK = "r0->r1"
#: the case protocols (Fig. 3 draws VCP and DPCP)
PROTOCOLS = ("vcp", "dpcp")
#: the round-trip propagation delay of the scenario (2 x (1 + 248 + 1) ms); MPCP §4.2 does not give
#: its testbed's, only the target range "moderate bandwidth (2-10Mbps) high delay (200-1000ms)" (§4)
RTT_MS = 500
#: the other round trips VCP and DPCP are run at (one-way bottleneck delay RTT/2 - 2 ms): the
#: ends of MPCP §4's range and 100 ms, below it
RTTS_MS = (100, 200, 1000)


def rtt_case_name(protocol: str, rtt_ms: int) -> str:
    return f"{protocol}-rtt-{rtt_ms}ms"


def rtt_cases() -> list[Case]:
    out = []
    for case in protocol_cases("mpcp-dumbbell.toml", list(PROTOCOLS), 1, ["topology.bottleneck"]):
        for rtt in RTTS_MS:
            ov = {**case.overrides, "topology.bottleneck.delay": f"{rtt / 2 - 2:g}ms"}
            out.append(Case(rtt_case_name(case.name, rtt), case.scenario, ov, requires=case.requires))
    return out


def rtt_sweep(results: Mapping[str, Any]) -> list[tuple[int, float, float, bool]]:
    """(round trip ms, VCP's and DPCP's steady utilisation, whether both reached 90 % of it before
    the run's second half, where it is read) at each round trip both ran at, the scenario's own
    (the "vcp" and "dpcp" cases) included, in order of round trip."""
    rows = []
    for rtt in sorted({*RTTS_MS, RTT_MS}):
        names = PROTOCOLS if rtt == RTT_MS else tuple(rtt_case_name(p, rtt) for p in PROTOCOLS)
        if all(n in results for n in names):
            runs = [results[n] for n in names]
            half = float(runs[0].links["time_s"].max()) / 2
            settled = all((t := transition_time(r)) is not None and t <= half for r in runs)
            rows.append((rtt, steady_utilisation(runs[0]), steady_utilisation(runs[1]), settled))
    return rows


def _row(rtt: int, uv: float, ud: float, settled: bool) -> str:
    return f"{rtt} ms {ud:.1%} vs {uv:.1%}" + ("" if settled else " (not converged before the second half)")


def smoothed_utilisation(res: Any, window_s: float = 1.0) -> tuple[list[float], list[float]]:
    """Bottleneck utilisation averaged over `window_s` (a window sends in bursts once per RTT, so
    100 ms samples swing between 0 and 1 at a 500 ms RTT)."""
    t, u = port_series(res, BOTTLENECK, "utilisation")
    out_t, out_u, acc, n, edge = [], [], 0.0, 0, window_s
    for ti, ui in zip(t, u):
        acc, n = acc + ui, n + 1
        if ti >= edge - 1e-9:
            out_t.append(ti)
            out_u.append(acc / n)
            acc, n, edge = 0.0, 0, edge + window_s
    return out_t, out_u


def transition_time(res: Any, fraction: float = 0.9, window_s: float = 1.0) -> float | None:
    """First sample time t at which the utilisation averaged over (t − 1 s, t] reaches `fraction`
    of its steady level (the mean over the second half of the run). The paper does not define
    its "transition time"; this is our reading of Fig. 3 [reconstructed]. A sliding window read
    at every sample, not 1 s blocks, so the time has the samples' resolution (100 ms)."""
    t, u = port_series(res, BOTTLENECK, "utilisation")
    if not t:
        return None
    tail = [ui for ti, ui in zip(t, u) if ti > t[-1] / 2]
    steady = sum(tail) / len(tail)
    lo, acc = 0, 0.0
    for hi, (ti, ui) in enumerate(zip(t, u)):
        acc += ui
        while t[lo] <= ti - window_s + 1e-9:
            acc -= u[lo]
            lo += 1
        if ti >= window_s - 1e-9 and acc / (hi - lo + 1) >= fraction * steady:
            return ti
    return None


def steady_utilisation(res: Any) -> float:
    """Mean bottleneck utilisation over the samples of the run's second half."""
    t, u = port_series(res, BOTTLENECK, "utilisation")
    tail = [ui for ti, ui in zip(t, u) if ti > t[-1] / 2]
    return sum(tail) / len(tail) if tail else float("nan")


def figures(results: Mapping[str, Any], out: Path) -> list[Path]:
    return [
        panels(
            {n: r for n, r in results.items() if n in PROTOCOLS},
            out / "fig3-utilisation.png",
            "Fig. 3: bottleneck utilisation (1 s averages)",
            "utilisation",
            smoothed_utilisation,
            hline=0.9,
            hline_label="90 %",
        ),
    ]


def claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    out = []
    tt = {n: transition_time(r) for n, r in results.items() if n in PROTOCOLS}
    for n, t in tt.items():
        paper = {"vcp": "≈20 s", "dpcp": "< 4 s"}.get(n, "")
        # "under 4 s" (the sliding 1 s mean read every 100 ms sample)
        statement = f"{n}: transition time (to 90 % of steady utilisation)"
        seen = "never" if t is None else f"{t:.1f} s"
        if n == "dpcp":
            out.append(judged(statement, paper, t, seen, (None, 4.0), "at most 4 s"))
        else:
            out.append(about_claim(statement, paper, 20.0, t, seen, fmt=lambda x: f"{x:.1f} s"))
    if "vcp" in results and "dpcp" in results:
        # MPCP §4.1: "slightly better bandwidth utilizations in steady status": read once both
        # have converged (the second half of the run, as `transition_time`'s steady level), not
        # over the whole run, which would credit DPCP with VCP's slower start-up (issue 13).
        u = {n: steady_utilisation(results[n]) for n in ("vcp", "dpcp")}
        t, _ = port_series(results["dpcp"], BOTTLENECK, "utilisation")
        end = t[-1] if t else float("nan")
        out.append(
            Claim(
                "DPCP steady-state utilisation at least VCP's",
                "slightly better in steady state",
                f"{u['dpcp']:.1%} vs {u['vcp']:.1%} over ({end / 2:g}, {end:g}] s (the run's second half)",
                verdict(u["dpcp"] >= u["vcp"]),
                rule="DPCP's mean bottleneck utilisation over the second half of the run at least VCP's",
            )
        )
        whole = {n: port_summary(results[n], BOTTLENECK)["utilisation"] for n in ("vcp", "dpcp")}
        out.append(
            Claim(
                "DPCP whole-run utilisation higher than VCP's (start-up included)",
                "higher (Fig. 3)",
                f"{whole['dpcp']:.1%} vs {whole['vcp']:.1%}",
                verdict(whole["dpcp"] > whole["vcp"]),
                rule="DPCP's whole-run bottleneck utilisation above VCP's",
            )
        )
    for rtt, uv, ud, settled in rtt_sweep(results):
        out.append(
            Claim(
                f"steady utilisation at RTT {rtt} ms: DPCP / VCP",
                "",
                f"{ud:.1%} / {uv:.1%}" + ("" if settled else " (not converged before the second half)"),
                "measured",
                "mean over the run's second half; the round trip is the bottleneck's delay swept "
                f"(the scenario's is {RTT_MS} ms)",
            )
        )
    return out


def causes(results: Mapping[str, Any], claims: list[Claim], quick: bool) -> None:
    """DPCP's steady utilisation against VCP's is decided by the round trip, which MPCP does not
    give for its testbed (nor for the "[18]-like" scenarios §4.1 states the claim of): the sweep
    run here shows the claim's range; without the sweep, racc's shortfall."""
    rows = rtt_sweep(results)
    if len(rows) > 1:
        held = [f"{r[0]} ms" for r in rows if r[2] >= r[1] and r[3]]
        explain(
            claims,
            "DPCP steady-state utilisation at least VCP's",
            Cause(
                "unspecified",
                "MPCP gives no round-trip time for its testbed (only 200-1000 ms as the target range), and "
                "the round trip decides whether DPCP's steady utilisation reaches VCP's",
                "RTT sweep run here, DPCP vs VCP over the second half: "
                + "; ".join(_row(*r) for r in rows)
                + "; DPCP at least VCP's, both converged, at "
                + (", ".join(held) if held else "no round trip run"),
            ),
        )
    # MPCP §4.1 makes this claim of "scenarios similar to those presented in [18]" (the VCP
    # paper's), not of Fig. 3's dumbbell: `racc reproduce mpcp-vcp-scenarios` judges it there.
    c = claim_named(claims, "DPCP steady-state utilisation at least VCP's")
    if c is None or c.cause is not None:
        return
    shortfall(
        claims,
        "DPCP steady-state utilisation at least VCP's",
        "DPCP's steady utilisation stays below VCP's on this dumbbell",
        "tried ai_law ns2 with router γ 0.95 at full scale: VCP 91.1 %, DPCP 74.3 % over (30, 60] s "
        "(racc run mpcp-dumbbell.toml with flows.0.params.ai_law=ns2); the claim belongs to the VCP-paper "
        "scenarios (MPCP §4.1), judged in mpcp-vcp-scenarios",
    )


register(
    Experiment(
        name="mpcp-dumbbell",
        source="MPCP §4.2 (Fig. 3)",
        description="10 Mb/s, 500 ms RTT dumbbell: transition time and utilisation, VCP vs DPCP",
        cases=protocol_cases("mpcp-dumbbell.toml", list(PROTOCOLS), 1, ["topology.bottleneck"]) + rtt_cases(),
        quick={"duration": "30s"},
        figures=figures,
        claims=claims,
        causes=causes,
    )
)
