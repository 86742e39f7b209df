"""qfcp-wlan-fairness, QFCP §III.B (Fig. 2): twelve flows, six downloading through the access
point and six uploading from their own stations, over one shared 802.11b-like medium
(``topology.media``), with RTPDs from 40 to 370 ms; TCP Reno against QFCP whose routers on the
medium are not told its real capacity and probe it (eq. 4).

Figures: Jain's fairness index of the twelve flows' throughputs every 1 s (Fig. 2(c)) and each
flow's congestion window over time for both protocols (Fig. 2(a), (b)). The medium's own
counters (frames, collisions, retry drops, airtime per member) are in each case's ``links``
table as named metrics of the members' ports.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from racc.experiments.base import (
    ABOUT,
    FAIR,
    MUCH,
    Case,
    Claim,
    Experiment,
    about_claim,
    judged,
    register,
)
from racc.experiments.causes import open_shortfalls
from racc.experiments.figures import save, subplots
from racc.summary import jain

SCENARIO = "qfcp-wlan-fairness.toml"
#: case -> (sender protocol, router module on the medium, its parameters)
PROTOCOLS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "reno": ("reno", "droptail", {}),
    # "the inability to set the exact capacity of a wireless link": the router probes (eq. 4),
    # from the 1 Mb/s §III.C starts from "since we do not know the exact bandwidth capacity for
    # each wireless node" (docs/PROTOCOLS.md §9, "The start on the medium")
    "qfcp": ("qfcp", "qfcp", {"capacity": "probe", "initial_capacity_bps": 1e6}),
}
#: case -> what one router module of the medium manages. QFCP §III.B: its controller "takes
#: control of all packets in both directions on simplex wireless links", so one module for the
#: whole medium (every member's packets, the members' queues summed); DropTail is the same
#: either way.
ROUTER_SCOPE = {"reno": "member", "qfcp": "medium"}
#: case -> the senders' parameters. QFCP's first window (feedback·RTT from the SYN-ACK) is paced
#: at the granted rate over its first RTT, as Quick-Start's sender paces its approved rate (RFC
#: 4782 §4), whose rate-request-and-grant QFCP §II extends: here the twelve flows "start
#: transferring data at time 0" and all get the fair rate of a port that has not counted them yet
#: (docs/PROTOCOLS.md §9, "The start on the medium").
FLOW_PARAMS: dict[str, dict[str, Any]] = {"qfcp": {"pace_first_window": True}}
LABELS = {"reno": "TCP Reno", "qfcp": "QFCP"}
#: "its effect is alleviated shortly after 2-3 seconds": steady-state claims read from here on
SETTLE_S = 3.0
#: the flow groups of the scenario
DOWN, UP = "down", "up"


def cases() -> list[Case]:
    out = []
    for name, (sender, router, params) in PROTOCOLS.items():
        ov: dict[str, Any] = {"flows.0.protocol": sender, "flows.1.protocol": sender}
        ov["topology.media.0.router"] = router
        ov["topology.media.0.router_scope"] = ROUTER_SCOPE[name]
        if params:
            ov["topology.media.0.router_params"] = params
        if name in FLOW_PARAMS:
            ov["flows.0.params"] = ov["flows.1.params"] = FLOW_PARAMS[name]
        out.append(Case(name, SCENARIO, ov, requires=(sender, router)))
    return out


def per_second(res: Any) -> pl.DataFrame:
    """Each flow's goodput in each 1 s sample, with its group (download or upload)."""
    info = res.flow_info.select("flow", "group")
    return res.flows.select("time_s", "flow", "goodput_bps", "cwnd_bytes").join(info, on="flow")


def jain_series(res: Any) -> pl.DataFrame:
    """Jain's index of every flow's throughput in each sample interval (1 s): ``time_s``, ``jain``.
    A flow that delivered nothing in an interval counts as 0, as it does in the paper's index."""
    n = res.flow_info.height
    rows = []
    for (t,), g in per_second(res).group_by("time_s", maintain_order=True):
        xs = g["goodput_bps"].to_list() + [0.0] * (n - g.height)
        rows.append((float(t), jain(xs)))
    return pl.DataFrame(rows, schema={"time_s": pl.Float64, "jain": pl.Float64}, orient="row").sort("time_s")


def steady(res: Any) -> pl.DataFrame:
    """The rows after the probe has settled (sample intervals ending after ``SETTLE_S``)."""
    return per_second(res).filter(pl.col("time_s") > SETTLE_S + 1e-9)


def mean_jain(res: Any) -> float:
    """Mean of the per-second Jain's index after ``SETTLE_S``, over the intervals in which some
    flow delivered data (the index is undefined when none did: see :func:`silent_intervals`)."""
    j = jain_series(res).filter(pl.col("time_s") > SETTLE_S + 1e-9)["jain"].drop_nans()
    return float(j.mean()) if j.len() else float("nan")


def silent_intervals(res: Any) -> int:
    """Intervals after ``SETTLE_S`` in which no flow delivered anything."""
    return int(jain_series(res).filter(pl.col("time_s") > SETTLE_S + 1e-9)["jain"].is_nan().sum())


def flow_rates(res: Any) -> pl.DataFrame:
    """Each flow's mean goodput after ``SETTLE_S`` (b/s), with its group."""
    return steady(res).group_by("flow", "group").agg(pl.col("goodput_bps").mean().alias("bps")).sort("flow")


def group_rate(res: Any, group: str) -> float:
    """Mean per-flow goodput of a group after ``SETTLE_S`` (b/s)."""
    r = flow_rates(res).filter(pl.col("group") == group)["bps"]
    return float(r.mean()) if r.len() else float("nan")


def settling_time(res: Any, floor: float) -> float:
    """The end of the last 1 s interval whose Jain's index is below ``floor`` (0 if none): from
    then on every interval is at least ``floor``."""
    j = jain_series(res).with_columns(pl.col("jain").fill_nan(0.0))  # a silent interval is not fair
    low = j.filter(pl.col("jain") < floor)["time_s"]
    return float(low.max()) if low.len() else 0.0


def figures(results: Mapping[str, Any], out: Path) -> list[Path]:
    paths = []
    fig, axes = subplots(1, len(results), figsize=(5.5 * len(results), 4.0), squeeze=False)
    for k, (ax, (name, res)) in enumerate(zip(axes[0], results.items(), strict=True)):
        info = res.flow_info.select("flow", "group", "rtt_prop_s")
        for (flow,), g in res.flows.sort("time_s").group_by("flow", maintain_order=True):
            row = info.filter(pl.col("flow") == flow).row(0, named=True)
            style = "-" if row["group"] == DOWN else "--"
            ax.plot(
                g["time_s"].to_list(),
                (g["cwnd_bytes"] / 1000).to_list(),
                style,
                lw=0.8,
                label=f"{row['group']} {row['rtt_prop_s'] * 1000:.0f} ms",
            )
        ax.set_title(f"({'abcdef'[k]}) {LABELS.get(name, name)}")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("congestion window (KB)")
        ax.set_yscale("log")  # windows from one MSS to the feedback × RTT of a probe gone far above the channel
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=6, ncol=2)
    fig.suptitle("qfcp-wlan-fairness: cwnd of 12 flows (QFCP Fig. 2(a), (b); solid: downloads, dashed: uploads)")
    paths.append(save(fig, out / "fig2ab-cwnd.png"))
    fig, ax = subplots(figsize=(6.5, 4.0))
    for name, res in results.items():
        j = jain_series(res)
        ax.plot(j["time_s"].to_list(), j["jain"].to_list(), marker=".", lw=1, label=LABELS.get(name, name))
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("Jain's fairness index (1 s)")
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title("qfcp-wlan-fairness: Jain's index every 1 s (QFCP Fig. 2(c))")
    paths.append(save(fig, out / "fig2c-jain.png"))
    return paths


def claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    out: list[Claim] = []
    for n, r in results.items():
        out.append(
            Claim(
                f"{LABELS.get(n, n)}: throughput per flow after {SETTLE_S:g} s",
                "",
                f"downloads {group_rate(r, DOWN) / 1e6:.3f} Mb/s, uploads {group_rate(r, UP) / 1e6:.3f} Mb/s, "
                f"all {flow_rates(r)['bps'].sum() / 1e6:.2f} Mb/s; mean of the 1 s Jain's indices {mean_jain(r):.3f} "
                f"({silent_intervals(r)} intervals in which no flow delivered anything); Jain's index of the "
                f"flows' mean throughputs {jain(flow_rates(r)['bps'].to_list()):.3f}",
                "measured",
            )
        )
    q, t = results.get("qfcp"), results.get("reno")
    if q is not None:
        jq = mean_jain(q)
        out.append(
            about_claim(
                "QFCP achieves good fairness on the throughput once its probe finds the bandwidth",
                "Jain's index near 1 (Fig. 2(c))",
                1.0,
                jq,
                f"mean of the 1 s Jain's indices after {SETTLE_S:g} s: {jq:.3f}",
                note="'near 1' read as 'nearly X'",
            )
        )
        # "alleviated shortly after 2-3 seconds": every interval fair (the 'about 1' floor) from
        # 3 s on, with the 'about' rule's +25 % on the time
        floor = 1.0 - ABOUT
        ts = settling_time(q, floor)
        out.append(
            judged(
                "QFCP's probe finds the wireless bandwidth shortly after 2-3 seconds",
                "2-3 s",
                ts,
                f"every 1 s Jain's index ≥ {floor:g} from {ts:g} s on"
                if ts < float(jain_series(q)["time_s"].max())
                else f"some 1 s Jain's index below {floor:g} up to the end of the run ({ts:g} s)",
                (None, SETTLE_S * (1 + ABOUT)),
                f"the last interval with Jain's index below {floor:g} ends by {SETTLE_S * (1 + ABOUT):g} s "
                f"(3 s with the 'about' rule's +{ABOUT:.0%})",
            )
        )
        rates = flow_rates(q)
        share = float(rates["bps"].mean())
        worst = float(((rates["bps"] - share).abs() / share).max()) if share > 0 else float("nan")
        out.append(
            judged(
                "QFCP allocates the bandwidth equally among the flows, downloads and uploads alike",
                "equal shares",
                worst,
                f"flows {', '.join(f'{x / 1e6:.2f}' for x in rates['bps'].to_list())} Mb/s; "
                f"worst {worst:.1%} from the mean {share / 1e6:.3f} Mb/s",
                (None, FAIR),
                f"every flow's mean throughput after {SETTLE_S:g} s within ±{FAIR:.0%} of the flows' mean "
                "(the 'fair' rule; the oracle of equal shares)",
            )
        )
    if t is not None:
        down, up = group_rate(t, DOWN), group_rate(t, UP)
        ratio = up / down if down > 0 else float("inf")
        out.append(
            judged(
                "under TCP the downloading flows are unable to gain their fair share and keep sending at very low rates",
                "downloads starved",
                ratio,
                f"per flow: uploads {up / 1e6:.3f} Mb/s, downloads {down / 1e6:.3f} Mb/s ({ratio:.2f}×)",
                (MUCH, None),
                f"an upload's mean throughput at least {MUCH}× a download's ('very low' read as the 'much' rule)",
            )
        )
    if q is not None and t is not None:
        jq, jt = mean_jain(q), mean_jain(t)
        ratio = jq / jt if jt > 0 else float("inf")
        out.append(
            judged(
                "TCP's fairness index is low in this scenario: its performance degrades significantly",
                "TCP's Jain's index low, QFCP's near 1",
                ratio,
                f"mean Jain after {SETTLE_S:g} s: QFCP {jq:.3f}, TCP {jt:.3f} ({ratio:.2f}×)",
                (MUCH, None),
                f"QFCP's mean Jain's index at least {MUCH}× TCP's (the rule for 'significantly')",
            )
        )
    return out


def causes(results: Mapping[str, Any], claims: list[Claim], quick: bool) -> None:
    open_shortfalls(
        claims,
        lambda name: name.startswith("QFCP"),
        "racc's QFCP shares the WLAN less evenly than QFCP Fig. 2 shows",
        lambda c: (
            "tried: the first windows paced (pace_first_window) and the probe from 1 Mb/s; with the "
            f"router's joins counted (count_joins, issue 39) the worst flow moved from 7.5 % to 10.9 %; measured: {c.measured}"
        ),
    )


register(
    Experiment(
        name="qfcp-wlan-fairness",
        source="QFCP §III.B (Fig. 2)",
        description="6 downloads + 6 uploads over one 802.11b-like medium: Jain's index and cwnd, TCP Reno vs QFCP",
        cases=cases(),
        # Quick: the same flows over 15 s (the claims read from 3 s on).
        quick={"duration": "15s"},
        figures=figures,
        claims=claims,
        causes=causes,
    )
)
