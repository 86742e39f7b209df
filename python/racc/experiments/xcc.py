"""What the six explicit-congestion-control experiments of XCC-Linux share: the four protocols
compared (each a sender protocol and the router module of the same name, swapped into every
flow group, arrival process and listed link), the reduced-scale (quick) rule, the side-by-side
rate-and-queue figure of the slides, and the windowed measurements their claims read.

Quick runs keep every time of the scenario and divide every capacity (and buffer) by ten: the
four controllers are scale-free in capacity (XCP's and RCP's laws are relative to C, JetMax's
and PIQI-RCP's fair shares proportional to it), so times to fill, overshoot ratios and rate
ratios keep their meaning, and packet counts (queues) scale with C; claims scale the slides'
packet counts by the capacity the run had.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from racc.experiments.base import Case
from racc.experiments.figures import save, subplots

#: the slides' order
PROTOCOLS = ["xcp", "jetmax", "rcp", "piqi-rcp"]
#: congestion-header bytes per packet (docs/PROTOCOLS.md §1), beside 40 of IPv4 + TCP: a flow's
#: goodput counts payload only, its share of a link is on the wire
HEADER_BYTES = {"xcp": 20, "jetmax": 20, "rcp": 12, "piqi-rcp": 12}
#: the slides' link speed; quick runs use a tenth
GBPS = 1e9
QUICK_SCALE = 0.1


def cases(
    scenario: str,
    flow_groups: int,
    links: Sequence[str],
    traffic: int = 0,
    router_params: Mapping[str, Any] | None = None,
) -> list[Case]:
    """One case per protocol: every flow group, arrival process and listed link (override key
    prefixes such as "topology.bottleneck") set to it; ``router_params`` on every listed link."""
    out = []
    for p in PROTOCOLS:
        ov: dict[str, Any] = {f"flows.{i}.protocol": p for i in range(flow_groups)}
        ov.update({f"traffic.{i}.protocol": p for i in range(traffic)})
        for link in links:
            ov[f"{link}.router"] = p
            if router_params:
                ov[f"{link}.router_params"] = dict(router_params)
        out.append(Case(p, scenario, ov, requires=(p,)))
    return out


def quick(links: Mapping[str, tuple[float, int]]) -> dict[str, Any]:
    """Quick overrides: each listed link (key prefix -> (capacity b/s, buffer pkts)) at a tenth."""
    ov: dict[str, Any] = {}
    for link, (cap, buf) in links.items():
        ov[f"{link}.capacity"] = f"{cap * QUICK_SCALE:.6g}bps"
        ov[f"{link}.buffer"] = f"{max(int(buf * QUICK_SCALE), 1)}pkt"
    return ov


def capacity(res: Any, port: str) -> float:
    info = res.port_info.filter(pl.col("name") == port)
    return float(info["capacity_bps"][0])


def link_rows(res: Any, port: str, start: float = 0.0, end: float = float("inf")) -> pl.DataFrame:
    """The port's samples with time in (start, end]."""
    return res.links.filter((pl.col("name") == port) & (pl.col("time_s") > start) & (pl.col("time_s") <= end)).sort(
        "time_s"
    )


def utilisation(res: Any, port: str, start: float, end: float) -> float:
    rows = link_rows(res, port, start, end)
    return float(rows["utilisation"].mean()) if rows.height else 0.0


def drops(res: Any, port: str, start: float = 0.0, end: float = float("inf")) -> int:
    return int(link_rows(res, port, start, end)["drops"].sum())


def peak_queue(res: Any, port: str, start: float = 0.0, end: float = float("inf")) -> int:
    """The largest sampled queue in the window (the whole run's exact maximum is in the summary)."""
    rows = link_rows(res, port, start, end)
    return int(rows["queue_pkts"].max()) if rows.height else 0


def peak_offered(res: Any, port: str, packet_size: int, start: float, end: float) -> float:
    """The largest arrival rate at the port over one sample, as a multiple of its capacity."""
    rows = link_rows(res, port, start, end)
    if rows.height < 2:
        return 0.0
    dt = rows["time_s"].diff().fill_null(strategy="backward")
    rate = rows["arrivals"].cast(pl.Float64) * packet_size * 8 / dt
    return float(rate.max()) / capacity(res, port)


def settle_time(res: Any, port: str, start: float, end: float, level: float = 0.95, avg_s: float = 1.0) -> float | None:
    """Seconds from ``start`` until the link's utilisation, averaged over ``avg_s``, reaches
    ``level`` and never falls below it again before ``end``; None if it never settles."""
    rows = link_rows(res, port, start, end)
    if rows.height == 0:
        return None
    dt = float(rows["time_s"].diff().drop_nulls().median() or 0.1)
    k = max(round(avg_s / dt), 1)
    avg = rows["utilisation"].rolling_mean(window_size=k, min_samples=1).to_list()
    times = rows["time_s"].to_list()
    last_below = None
    for t, u in zip(times, avg):
        if u < level:
            last_below = t
    if last_below is None:
        return times[0] - start
    if last_below >= times[-1]:
        return None
    return last_below - start


def flow_goodput(res: Any, start: float, end: float) -> dict[int, float]:
    """Each flow's mean goodput (b/s) over samples in (start, end]."""
    df = res.flows.filter((pl.col("time_s") > start) & (pl.col("time_s") <= end))
    g = df.group_by("flow").agg(pl.col("goodput_bps").mean()).sort("flow")
    return dict(zip(g["flow"].to_list(), g["goodput_bps"].to_list()))


def steady_against_maxmin(res: Any, steady: float) -> tuple[float, dict[int, float], dict[int, float], dict]:
    """(the run's end, each flow's wire rate over (``steady``, end], its max-min share on the
    run's links and paths (racc.maxmin), each flow's group)."""
    from racc.maxmin import from_results, max_min

    end = float(res.links["time_s"].max())
    cap, paths, groups = from_results(res)
    return end, wire_rate(res, steady, end), max_min(cap, paths), groups


def wire_rate(res: Any, start: float, end: float) -> dict[int, float]:
    """Each flow's mean rate on the wire (b/s) over (start, end]: its goodput scaled by packet
    size / payload, to set against link capacities (max-min shares are of the wire)."""
    size = int(res.resolved["packet_size"])
    proto = dict(zip(res.flow_info["flow"].to_list(), res.flow_info["protocol"].to_list()))
    g = flow_goodput(res, start, end)
    return {f: x * size / (size - 40 - HEADER_BYTES.get(proto[f], 0)) for f, x in g.items()}


def group_of(res: Any) -> dict[int, str]:
    fi = res.flow_info
    return dict(zip(fi["flow"].to_list(), fi["group"].to_list()))


def rates_and_queue(
    results: Mapping[str, Any],
    path: Path,
    title: str,
    port: str,
    flows: Sequence[int] | None = None,
) -> Path:
    """The slides' figure: one row per protocol, its flows' rates (Mb/s) on the left and the
    port's queue (packets) on the right, over time."""
    names = list(results)
    fig, axes = subplots(len(names), 2, figsize=(11, 2.6 * len(names)), sharex=True, squeeze=False)
    for (ax_rate, ax_q), name in zip(axes, names):
        res = results[name]
        groups = group_of(res)
        df = res.flows.sort("time_s")
        shown = flows if flows is not None else sorted(groups)
        for f in shown:
            d = df.filter(pl.col("flow") == f)
            if d.height:
                ax_rate.plot(d["time_s"].to_list(), (d["goodput_bps"] / 1e6).to_list(), lw=0.8, label=f"{groups[f]}")
        c = capacity(res, port) / 1e6
        ax_rate.axhline(c, color="k", ls="--", lw=0.6)
        ax_rate.set_ylabel(f"{name}\nrate (Mb/s)")
        if len(shown) <= 6:
            ax_rate.legend(fontsize=7, loc="upper right")
        q = link_rows(res, port)
        ax_q.plot(q["time_s"].to_list(), q["queue_pkts"].to_list(), lw=0.8, color="tab:red")
        ax_q.set_ylabel("queue (pkts)")
        for ax in (ax_rate, ax_q):
            ax.grid(alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    axes[0][0].set_title("per-flow rate")
    axes[0][1].set_title(f"queue at {port}")
    fig.suptitle(title)
    return save(fig, path)
