"""mpcp-vcp-scenarios, MPCP §4.1: "we also evaluate the performance of DPCP in various scenarios
similar to those presented in [18]. In all experiments, DPCP achieves slightly better bandwidth
utilizations in steady status and significant better convergence speeds than VCP". [18] is the
VCP paper (Xia et al., "One More Bit Is Enough"); its simulations vary the bottleneck capacity,
the round-trip delay and the number of long-lived flows, and add short-lived web traffic. Its
text is not among racc's seeds, so the points are racc's, at a smaller scale
(scenarios/mpcp-vcp-scenarios.toml): from a base of 20 Mb/s, 80 ms and 10 flows, one axis at a
time, capacity 5 / 80 Mb/s, RTT 20 / 320 ms, 2 / 40 flows, and web-like sources on top.

VCP and DPCP run side by side at every point under both AI laws (`ai_laws`: "seed001", the law
MPCP prints and racc's default, and "ns2", the VCP reference code's law with router γ 0.95).
Windows, written from the paper's words before measuring, per law and point:
- "slightly better bandwidth utilizations in steady status": DPCP's mean bottleneck utilisation
  over the run's second half minus VCP's in [0, 0.03] (at least VCP's; "slightly": no more than
  the "comparable" rule's 0.03 above it);
- "significant better convergence speeds": VCP's transition time (to 90 % of its steady
  utilisation, mpcp-dumbbell's reading of "transition time") at least 1.5 times DPCP's (the
  "much better" rule).
Steady queue and drops are measured per case (MPCP gives no number for them in §4.1).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from racc.experiments import ai_laws
from racc.experiments.base import MUCH, SAME_UTILISATION, Case, Cause, Claim, Experiment, explain, judged, register
from racc.experiments.causes import claim_named, open_shortfalls, other_configuration
from racc.experiments.figures import save, subplots
from racc.experiments.mpcp_dumbbell import transition_time
from racc.experiments.protocols import PROTOCOLS, protocol_overrides

BOTTLENECK = "r0->r1"
LINK = "topology.bottleneck"
SCENARIO = "mpcp-vcp-scenarios.toml"
WEB_SCENARIO = "mpcp-vcp-scenarios-web.toml"
#: the access links' one-way delay (two on each path)
ACCESS_DELAY = 0.001
BASE = (20e6, 0.080, 10)
#: point -> (capacity b/s, round-trip propagation delay s, long-lived flows, web sources on top)
POINTS: dict[str, tuple[float, float, int, bool]] = {
    "base": (*BASE, False),
    "c5": (5e6, BASE[1], BASE[2], False),
    "c80": (80e6, BASE[1], BASE[2], False),
    "r20": (BASE[0], 0.020, BASE[2], False),
    "r320": (BASE[0], 0.320, BASE[2], False),
    "n2": (BASE[0], BASE[1], 2, False),
    "n40": (BASE[0], BASE[1], 40, False),
    "web": (*BASE, True),
}
#: the axes of the VCP paper's evaluation and the points along each (base included)
AXES = {
    "capacity (Mb/s)": (["c5", "base", "c80"], lambda p: POINTS[p][0] / 1e6),
    "RTT (ms)": (["r20", "base", "r320"], lambda p: POINTS[p][1] * 1e3),
    "long-lived flows": (["n2", "base", "n40"], lambda p: POINTS[p][2]),
    "web traffic": (["base", "web"], lambda p: 1.0 if POINTS[p][3] else 0.0),
}
SERIES = ("vcp", "dpcp", "vcp-ns2", "dpcp-ns2")


def case_name(series: str, point: str) -> str:
    return f"{series}-{point}"


def parse(name: str) -> tuple[str, str, str]:
    """(protocol, law, point) of a case named by :func:`case_name`."""
    series, point = name.rsplit("-", 1)
    protocol, law = ai_laws.split_case(series)
    return protocol, law, point


def cases() -> list[Case]:
    out = []
    for law in ai_laws.LAWS:
        for p in ("vcp", "dpcp"):
            for point, (cap, rtt, n, web) in POINTS.items():
                ov: dict[str, Any] = protocol_overrides(p, 1, [LINK])
                ov.update(
                    {
                        "flows.0.count": n,
                        f"{LINK}.capacity": f"{cap:.6g}bps",
                        f"{LINK}.delay": f"{(rtt / 2 - 2 * ACCESS_DELAY) * 1e3:.6g}ms",
                    }
                )
                if web:
                    ov["traffic.0.protocol"] = PROTOCOLS[p][0]
                if law == "ns2":
                    ov.update(ai_laws.ns2_overrides(1, [LINK]))
                    if web:
                        ov["traffic.0.params.ai_law"] = "ns2"
                series = p if law == "seed001" else f"{p}-ns2"
                out.append(Case(case_name(series, point), WEB_SCENARIO if web else SCENARIO, ov, requires=PROTOCOLS[p]))
    return out


def measure(res: Any) -> dict[str, float | None]:
    """Steady (second-half) utilisation, mean queue and drops at the bottleneck; the transition
    time; the whole run's drops."""
    df = res.links.filter(pl.col("name") == BOTTLENECK).sort("time_s")
    end = float(df["time_s"].max())
    steady = df.filter(pl.col("time_s") > end / 2)
    info = res.port_info.filter(pl.col("name") == BOTTLENECK)
    buffer = info["limit_pkts"][0] if info.height else None
    return {
        "util": float(steady["utilisation"].mean()),
        "queue": float(steady["queue_pkts"].mean()),
        "buffer": float(buffer) if buffer else None,
        "drops_steady": int(steady["drops"].sum()),
        "drops": int(df["drops"].sum()),
        "t90": transition_time(res),
        "end": end,
    }


def _law_label(law: str) -> str:
    return "ns2 law" if law == "ns2" else "seed001 law"


def claim_names(law: str, point: str) -> tuple[str, str]:
    head = f"{_law_label(law)}, {point}"
    return (
        f"{head}: DPCP steady utilisation slightly above VCP's",
        f"{head}: DPCP converges significantly faster than VCP",
    )


def claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    m = {parse(n): measure(r) for n, r in results.items()}
    out = []
    for law in ai_laws.LAWS:
        for point in POINTS:
            v, d = m.get(("vcp", law, point)), m.get(("dpcp", law, point))
            if v is None or d is None:
                continue
            util_name, conv_name = claim_names(law, point)
            diff = d["util"] - v["util"]
            out.append(
                judged(
                    util_name,
                    "slightly better in steady status",
                    diff,
                    f"DPCP {d['util']:.1%} vs VCP {v['util']:.1%} ({diff * 100:+.1f} points) over "
                    f"({d['end'] / 2:g}, {d['end']:g}] s",
                    (0.0, SAME_UTILISATION),
                    f"DPCP's steady utilisation minus VCP's in [0, {SAME_UTILISATION}] (at least VCP's; 'slightly': "
                    "within the 'comparable' rule above it)",
                )
            )
            tv, td = v["t90"], d["t90"]
            ratio = None if td is None else (float("inf") if tv is None else tv / max(td, 1e-9))
            seen = f"VCP {'never' if tv is None else f'{tv:.1f} s'}, DPCP {'never' if td is None else f'{td:.1f} s'}"
            out.append(
                judged(
                    conv_name,
                    "significantly better convergence speed",
                    ratio,
                    seen + ("" if ratio is None else f" (×{ratio:.2f})"),
                    (MUCH, None),
                    f"VCP's transition time (to 90 % of steady utilisation) at least {MUCH}× DPCP's (the 'much "
                    "better' rule)",
                )
            )
    for name in results:
        x = m[parse(name)]
        buf = f" of {x['buffer']:.0f}" if x["buffer"] else ""
        out.append(
            Claim(
                f"{name}: steady queue and drops",
                "not given (MPCP §4.1)",
                f"mean queue {x['queue']:.1f}{buf} pkts, {x['drops_steady']} drops in the steady state, "
                f"{x['drops']} over the run",
                "measured",
            )
        )
    return out


def causes(results: Mapping[str, Any], claims: list[Claim], quick: bool) -> None:
    # The same claim under the other AI law, run beside it: a "configuration" cause when it holds there.
    for point in POINTS:
        for i in range(2):
            for law, other in (("seed001", "ns2"), ("ns2", "seed001")):
                name, other_name = claim_names(law, point)[i], claim_names(other, point)[i]
                if claim_named(claims, name) is not None:
                    other_configuration(claims, name, other_name, ai_laws.LAW_NAMES[other])
    # The same claim along the axis its point lies on, run in this sweep: "unspecified" when it holds
    # at another value of that axis (MPCP §4.1 does not say at which capacity, RTT or flow count).
    for point in POINTS:
        axis = next((a for a, (pts, _x) in AXES.items() if point in pts and point != "base"), None)
        if axis is None:
            continue
        for law in ai_laws.LAWS:
            for i in range(2):
                c = claim_named(claims, claim_names(law, point)[i])
                if c is None or c.verdict != "differs" or c.cause is not None:
                    continue
                along = [(p, claim_named(claims, claim_names(law, p)[i])) for p in AXES[axis][0]]
                along = [(p, o) for p, o in along if o is not None]
                holds = [p for p, o in along if o.verdict == "consistent"]
                if holds:
                    explain(
                        claims,
                        c.claim,
                        Cause(
                            "unspecified",
                            f"MPCP §4.1 does not give its scenarios' {axis.split(' (')[0]}; the claim holds at "
                            f"{', '.join(holds)} and not at {point}",
                            "this run's sweep along that axis: "
                            + "; ".join(f"{p} {o.measured} ({o.verdict})" for p, o in along),
                        ),
                    )

    def both_laws(c: Claim) -> str:
        law = "ns2" if c.claim.startswith("ns2 law") else "seed001"
        other = "seed001" if law == "ns2" else "ns2"
        o = claim_named(claims, c.claim.replace(_law_label(law), _law_label(other), 1))
        return f"this run: {c.claim.split(':')[0]} {c.measured}" + (
            f"; {o.claim.split(':')[0]} {o.measured} ({o.verdict})" if o is not None else ""
        )

    open_shortfalls(
        claims,
        lambda name: "steady utilisation" in name,
        "DPCP's steady utilisation misses VCP's +[0, 0.03] under both AI laws and all along this axis",
        lambda c: (
            both_laws(c) + "; not searched here; on few-flow dumbbells (docs/PROTOCOLS.md, DPCP 'Steady state') "
            "md_hold 2t_p+rtt, md_on_msp_only, latch_lsp, xi_cap and ns-2's RTT sampling were tried"
        ),
    )
    open_shortfalls(
        claims,
        lambda name: "converges" in name,
        "DPCP's transition time is not 1.5× shorter than VCP's under either AI law nor along this axis",
        lambda c: both_laws(c) + "; no cause search done yet",
    )


def headline(results: Mapping[str, Any], claims: list[Claim]) -> str:
    """The AI law under which most of MPCP §4.1's claims hold, named first, with each law's count."""
    score: dict[str, list[tuple[int, int]]] = {}
    for law in ai_laws.LAWS:
        for i in range(2):
            judged_ = [claim_named(claims, claim_names(law, p)[i]) for p in POINTS]
            judged_ = [c for c in judged_ if c is not None and c.verdict in ("consistent", "differs")]
            if judged_:
                score.setdefault(law, []).append((sum(c.verdict == "consistent" for c in judged_), len(judged_)))
    if not score:
        return ""
    order = sorted(score, key=lambda law: -sum(ok for ok, _n in score[law]))

    def counts(law: str) -> str:
        (u, nu), (t, nt) = score[law]
        return f"steady utilisation at {u}/{nu} points, faster convergence at {t}/{nt}"

    best = order[0]
    text = f"MPCP §4.1's claims hold best under {ai_laws.LAW_NAMES[best]}: {counts(best)}"
    return text + "".join(f"; under {ai_laws.LAW_NAMES[law]}: {counts(law)}" for law in order[1:])


def figures(results: Mapping[str, Any], out: Path) -> list[Path]:
    m = {parse(n): measure(r) for n, r in results.items()}
    rows = (
        ("steady utilisation", lambda x: x["util"]),
        ("transition time (s)", lambda x: x["t90"] if x["t90"] is not None else float("nan")),
        ("steady mean queue (pkts)", lambda x: x["queue"]),
        ("drops (whole run)", lambda x: float(x["drops"])),
    )
    fig, axes = subplots(len(rows), len(AXES), figsize=(4.2 * len(AXES), 2.7 * len(rows)), squeeze=False)
    styles = {
        "vcp": ("tab:blue", "-"),
        "dpcp": ("tab:orange", "-"),
        "vcp-ns2": ("tab:blue", "--"),
        "dpcp-ns2": ("tab:orange", "--"),
    }
    for col, (axis, (points, xval)) in enumerate(AXES.items()):
        for row, (label, f) in enumerate(rows):
            ax = axes[row][col]
            for s in SERIES:
                p, law = ai_laws.split_case(s)
                pts = [pt for pt in points if (p, law, pt) in m]
                if pts:
                    color, ls = styles[s]
                    ax.plot(
                        [xval(pt) for pt in pts],
                        [f(m[(p, law, pt)]) for pt in pts],
                        marker="o",
                        color=color,
                        ls=ls,
                        label=s,
                    )
            if axis.startswith(("capacity", "RTT")):
                ax.set_xscale("log")
                ax.minorticks_off()
                ax.set_xticks([xval(pt) for pt in points], [f"{xval(pt):g}" for pt in points])
            if axis == "web traffic":
                ax.set_xticks([0, 1], ["none", "web"])
            ax.grid(alpha=0.3)
            if col == 0:
                ax.set_ylabel(label)
            if row == len(rows) - 1:
                ax.set_xlabel(axis)
    axes[0][0].legend(fontsize=7)
    fig.suptitle("mpcp-vcp-scenarios: VCP vs DPCP along the VCP paper's axes (solid: seed001 law, dashed: ns2)")
    paths = [save(fig, out / "fig-vcp-scenarios.png")]
    base = {s: results[case_name(s, "base")] for s in SERIES if case_name(s, "base") in results}
    if base:
        fig2, axs = subplots(1, 1, figsize=(8, 3.4), squeeze=False)
        ax = axs[0][0]
        for s, r in base.items():
            df = r.links.filter(pl.col("name") == BOTTLENECK).sort("time_s")
            u = df["utilisation"].rolling_mean(window_size=10, min_samples=1)
            color, ls = styles[s]
            ax.plot(df["time_s"].to_list(), u.to_list(), color=color, ls=ls, lw=0.9, label=s)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("utilisation (1 s mean)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig2.suptitle("mpcp-vcp-scenarios, base point (20 Mb/s, 80 ms, 10 flows)")
        paths.append(save(fig2, out / "fig-vcp-scenarios-base.png"))
    return paths


register(
    Experiment(
        name="mpcp-vcp-scenarios",
        source="MPCP §4.1 (scenarios similar to the VCP paper's)",
        description="VCP vs DPCP under both AI laws along the VCP paper's axes: capacity, RTT, flows, web traffic",
        cases=cases(),
        quick={"duration": "30s"},
        figures=figures,
        claims=claims,
        causes=causes,
        headline=headline,
    )
)
