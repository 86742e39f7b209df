"""xcc-scalability, XCC-Linux ("Summary of Experimental Results I"): "All methods are scalable
with increase in link capacity and round-trip delay, and admit low queuing delay and almost zero
packet loss in the steady state". XCP, JetMax, RCP and PIQI-RCP on one bottleneck shared by five
long-lived flows, over a capacity × round-trip-delay grid (scenarios/xcc-scalability.toml):
10 Mb/s, 100 Mb/s and 1 Gb/s × 20, 100 and 400 ms. Every grid point is judged on its own, over
the run's second half (the steady state).

Windows, written from the slides' words before measuring:
- "scalable" (the link is used at every capacity and delay, as the slides' single-link
  experiments show it at 1 Gb/s): steady utilisation at least 90 % of capacity (the "high
  utilisation" rule, base.HIGH_UTILISATION);
- "low queuing delay": the steady mean queue delays a packet by at most a tenth of the round-trip
  propagation delay (mean queue ≤ 0.1 BDP);
- "almost zero packet loss in the steady state": at most 0.1 % of the packets arriving at the
  bottleneck in the steady window dropped.

Quick runs (the test) keep the whole grid and every capacity for 20 s, judging the last 10 s,
and judge only the points of at most 100 ms: at 400 ms that window starts 25 RTTs into the run,
before RCP has filled the link (the slides' RCP takes "nearly 10 sec initially" at 30/200 ms).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from racc.experiments import xcc
from racc.experiments.base import (
    HIGH_UTILISATION,
    Case,
    Claim,
    Experiment,
    judged,
    not_judged_quick,
    port_summary,
    register,
)
from racc.experiments.causes import open_shortfalls
from racc.experiments.figures import save, subplots

BOTTLENECK = "r0->r1"
LINK = "topology.bottleneck"
SCENARIO = "xcc-scalability.toml"
FLOWS = 5
#: the grid (b/s, seconds of round-trip propagation delay)
CAPACITIES = (10e6, 100e6, 1e9)
RTTS = (0.020, 0.100, 0.400)
#: the access links' one-way delay (two on each path)
ACCESS_DELAY = 0.001
#: "low queuing delay": the steady mean queue at most this fraction of the BDP
LOW_QUEUE = 0.10
#: "almost zero packet loss": steady drops at most this fraction of the arrivals
ALMOST_ZERO_LOSS = 0.001
#: quick runs judge only the points of at most this RTT (the module's text says why)
QUICK_MAX_RTT = 0.100


def point_name(protocol: str, capacity: float, rtt: float) -> str:
    """A case's name: protocol, capacity in Mb/s and RTT in ms ("xcp-100m-100ms")."""
    return f"{protocol}-{capacity / 1e6:g}m-{rtt * 1e3:g}ms"


def parse(name: str) -> tuple[str, float, float]:
    """(protocol, capacity b/s, RTT s) of a case named by :func:`point_name`."""
    head, cap, rtt = name.rsplit("-", 2)
    return head, float(cap[:-1]) * 1e6, float(rtt[:-2]) / 1e3


def cases() -> list[Case]:
    out = []
    for p in xcc.PROTOCOLS:
        for cap in CAPACITIES:
            for rtt in RTTS:
                ov: dict[str, Any] = {
                    "flows.0.protocol": p,
                    f"{LINK}.router": p,
                    f"{LINK}.capacity": f"{cap:.6g}bps",
                    f"{LINK}.delay": f"{(rtt / 2 - 2 * ACCESS_DELAY) * 1e3:.6g}ms",
                }
                out.append(Case(point_name(p, cap, rtt), SCENARIO, ov, requires=(p,)))
    return out


def measure(res: Any) -> dict[str, float]:
    """Over the run's second half at the bottleneck: mean utilisation, mean queue (packets), drops
    and drops over arrivals."""
    end = float(res.links["time_s"].max())
    rows = xcc.link_rows(res, BOTTLENECK, end / 2, end)
    size = int(res.resolved["packet_size"])
    arrivals = int(rows["arrivals"].sum()) if rows.height else 0
    drops = int(rows["drops"].sum()) if rows.height else 0
    return {
        "util": float(rows["utilisation"].mean()) if rows.height else 0.0,
        "queue_pkts": float(rows["queue_pkts"].mean()) if rows.height else 0.0,
        "drop_rate": drops / arrivals if arrivals else 0.0,
        "drops": drops,
        "end": end,
        "size": size,
    }


def _bdp_pkts(cap: float, rtt: float, size: int) -> float:
    return cap * rtt / (8 * size)


def claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    out = []
    for name, r in results.items():
        p, cap, rtt = parse(name)
        x = measure(r)
        bdp = _bdp_pkts(cap, rtt, x["size"])
        point = f"{p} {cap / 1e6:g} Mb/s × {rtt * 1e3:g} ms"
        window = f"over ({x['end'] / 2:g}, {x['end']:g}] s"
        if quick and rtt > QUICK_MAX_RTT:
            why = f"the quick run's steady window starts {x['end'] / 2 / rtt:.0f} RTTs in, before RCP fills the link"
            for what in ("high utilisation", "low queuing delay", "almost zero packet loss"):
                out.append(not_judged_quick(f"{point}: {what} in the steady state", "", "", why))
            continue
        out.append(
            judged(
                f"{point}: high utilisation in the steady state",
                f"scalable: high (≥ {HIGH_UTILISATION:.0%} by the rule)",
                x["util"],
                f"{x['util']:.1%} {window}",
                (HIGH_UTILISATION, None),
                f"mean utilisation at least {HIGH_UTILISATION:.0%} (the 'high utilisation' rule)",
            )
        )
        qf = x["queue_pkts"] / bdp
        out.append(
            judged(
                f"{point}: low queuing delay in the steady state",
                "low queuing delay",
                qf,
                f"mean queue {x['queue_pkts']:.1f} pkts = {qf:.3f} BDP ({qf * rtt * 1e3:.1f} ms) {window}",
                (None, LOW_QUEUE),
                f"mean queue at most {LOW_QUEUE} BDP ({LOW_QUEUE * bdp:.1f} pkts: a tenth of the RTT in delay)",
            )
        )
        out.append(
            judged(
                f"{point}: almost zero packet loss in the steady state",
                "almost zero packet loss",
                x["drop_rate"],
                f"{x['drops']} drops, {x['drop_rate']:.3%} of arrivals {window}",
                (None, ALMOST_ZERO_LOSS),
                f"at most {ALMOST_ZERO_LOSS:.1%} of the bottleneck's arrivals dropped",
            )
        )
    for name, r in results.items():
        # The slides' buffering requirement (summary: JetMax least, RCP very high): the whole run's
        # peak queue, start-up included, against the two-BDP buffer.
        p, cap, rtt = parse(name)
        port = port_summary(r, BOTTLENECK)
        bdp = _bdp_pkts(cap, rtt, int(r.resolved["packet_size"]))
        out.append(
            Claim(
                f"{p} {cap / 1e6:g} Mb/s × {rtt * 1e3:g} ms: buffering over the whole run",
                "not given per point",
                f"peak queue {port['max_queue_pkts']} pkts ({port['max_queue_pkts'] / bdp:.2f} BDP), "
                f"{port['drops']} drops",
                "measured",
            )
        )
    return out


def causes(results: Mapping[str, Any], claims: list[Claim], quick: bool) -> None:
    open_shortfalls(
        claims,
        lambda name: " × " in name,
        "racc's controller misses the slides' steady state at this grid point",
        lambda c: f"measured in this run: {c.measured} ({c.rule_text()}); no cause search done yet",
    )


METRICS = (
    ("util", "utilisation", HIGH_UTILISATION, "≥"),
    ("queue", "mean queue / BDP", LOW_QUEUE, "≤"),
    ("drop_rate", "drop rate", ALMOST_ZERO_LOSS, "≤"),
)


def figures(results: Mapping[str, Any], out: Path) -> list[Path]:
    """One heat map per protocol (columns) and measure (rows) over the grid, each cell annotated
    with its number, red where it misses its window."""
    table: dict[tuple[str, float, float], dict[str, float]] = {}
    for name, r in results.items():
        p, cap, rtt = parse(name)
        x = measure(r)
        x["queue"] = x["queue_pkts"] / _bdp_pkts(cap, rtt, x["size"])
        table[(p, cap, rtt)] = x
    protocols = [p for p in xcc.PROTOCOLS if any(k[0] == p for k in table)]
    fig, axes = subplots(
        len(METRICS), len(protocols), figsize=(3.3 * len(protocols), 2.9 * len(METRICS)), squeeze=False
    )
    for col, p in enumerate(protocols):
        for row, (key, label, bound, sense) in enumerate(METRICS):
            ax = axes[row][col]
            grid = [[table.get((p, cap, rtt), {}).get(key, float("nan")) for rtt in RTTS] for cap in CAPACITIES]
            vmin, vmax = (0.5, 1.0) if key == "util" else (0.0, 2 * bound)
            ax.imshow(grid, origin="lower", cmap="viridis" if key == "util" else "magma_r", vmin=vmin, vmax=vmax)
            for i, cap in enumerate(CAPACITIES):
                for j, rtt in enumerate(RTTS):
                    v = grid[i][j]
                    if math.isnan(v):
                        continue
                    ok = v >= bound if sense == "≥" else v <= bound
                    text = f"{v:.0%}" if key == "util" else (f"{v:.2f}" if key == "queue" else f"{v:.2%}")
                    ax.text(
                        j,
                        i,
                        text,
                        ha="center",
                        va="center",
                        fontsize=8,
                        color="k" if ok else "red",
                        bbox={"facecolor": "white", "alpha": 0.6, "lw": 0},
                    )
            ax.set_xticks(range(len(RTTS)), [f"{t * 1e3:g}" for t in RTTS])
            ax.set_yticks(range(len(CAPACITIES)), [f"{c / 1e6:g}" for c in CAPACITIES])
            ax.set_title(f"{p}: {label} ({sense} {bound:g})", fontsize=9)
            if row == len(METRICS) - 1:
                ax.set_xlabel("RTT (ms)")
            if col == 0:
                ax.set_ylabel("capacity (Mb/s)")
    fig.suptitle("xcc-scalability: steady state (second half) over capacity × RTT, 5 flows")
    return [save(fig, out / "fig-scalability.png")]


register(
    Experiment(
        name="xcc-scalability",
        source="XCC-Linux (Summary of Experimental Results I)",
        description="XCP, JetMax, RCP, PIQI-RCP, 5 flows: capacity 10 Mb/s-1 Gb/s × RTT 20-400 ms, steady state",
        cases=cases(),
        quick={"duration": "20s"},
        figures=figures,
        claims=claims,
        causes=causes,
    )
)
