"""The comparison table: the same window metrics from racc's and ns-2's tables, seed by seed,
then seed means, ranges and a verdict per metric.

Every metric is read the same way from both sides (counters.py gives ns-2's counters racc's table
shapes), over the window (w0, w1]:

* per port: utilisation (bytes sent / capacity), mean waiting queue (the queue integral's
  increase / window), drops, marks and wire losses in the window;
* per flow group: goodput (acknowledged payload), retransmitted packets and timeouts (also over
  the whole run, where start-up losses count); a flow's counters are read at the last sample at
  or before w0 and w1 (racc samples a flow only while it runs, and so does the ns-2 script), its
  acknowledged bytes are its size once it has completed;
* flow completion time: mean FCT of the flows that arrived in [w0, w1) and completed, by size
  decade, and how many completed;
* Jain's index of per-flow goodput over the flows active through the whole window.

Verdict, with two seeds or more: the sides agree when their seed means differ by no more than the
larger of the two seed ranges (max - min over seeds); with one seed there is no spread to judge by.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import polars as pl

from racc import summary as _summary
from racc.results import Results
from racc.tables import fmt_bytes

EPS = 1e-6

# What makes a port worth a row (as tables.port_rows): busy, or dropping, marking or queueing.
MIN_UTILISATION = 0.1
MAX_PORT_ROWS = 20


@dataclass
class Side:
    """One engine's run of one seed: its tables and its queue integrals (time -> port -> pkt·s)."""

    engine: str
    seed: int
    res: Results
    queue_int: dict[float, dict[int, float]] = field(default_factory=dict)


def ns2_queue_integrals(res: Results, times: list[float]) -> dict[float, dict[int, float]]:
    """ns-2's queue integrals at ``times`` from its ``links`` table (0 at time 0)."""
    out: dict[float, dict[int, float]] = {}
    for t in times:
        rows = res.links.filter((pl.col("time_s") - t).abs() < EPS)
        out[t] = dict(zip(rows.get_column("port").to_list(), rows.get_column("queue_pkt_s").to_list()))
    return out


def metrics(side: Side, w0: float, w1: float) -> dict[tuple[str, str, str], float]:
    """Window metrics of one side, keyed by (section, metric, kind)."""
    out: dict[tuple[str, str, str], float] = {}
    out.update(_ports(side, w0, w1))
    out.update(_groups(side, w0, w1))
    out.update(_fct(side.res, w0, w1))
    j = _jain(side.res, w0, w1)
    if j is not None:
        out[("fairness", "Jain's index", "index")] = j
    return out


def _ports(side: Side, w0: float, w1: float) -> dict:
    res, span = side.res, w1 - w0
    rows = res.links.filter((pl.col("time_s") > w0 + EPS) & (pl.col("time_s") <= w1 + EPS))
    tot = rows.group_by("port").agg(pl.col(c).sum() for c in ("tx_bytes", "drops", "marks", "losses"))
    caps = dict(zip(res.port_info.get_column("port").to_list(), res.port_info.get_column("capacity_bps").to_list()))
    names = dict(zip(res.port_info.get_column("port").to_list(), res.port_info.get_column("name").to_list()))
    q0, q1 = side.queue_int.get(w0, {}), side.queue_int.get(w1, {})
    out = {}
    for r in tot.iter_rows(named=True):
        p = r["port"]
        sec = f"port {names[p]}"
        out[(sec, "utilisation", "util")] = r["tx_bytes"] * 8.0 / (caps[p] * span)
        if p in q1:
            out[(sec, "mean queue, pkts", "queue")] = (q1[p] - q0.get(p, 0.0)) / span
        out[(sec, "drops", "count")] = float(r["drops"])
        out[(sec, "marks", "count")] = float(r["marks"])
        out[(sec, "wire losses", "count")] = float(r["losses"])
    return out


def flow_counters_at(res: Results, t: float) -> pl.DataFrame:
    """Per flow: acked_bytes, retransmits, timeouts as of ``t`` (see module doc); all flows."""
    sampled = (
        res.flows.filter(pl.col("time_s") <= t + EPS)
        .sort("time_s")
        .group_by("flow")
        .agg(pl.col("acked_bytes", "retransmits", "timeouts").last())
    )
    done = res.completions.filter(pl.col("end_s") <= t + EPS).select("flow", pl.col("size_bytes").alias("size"))
    return (
        res.flow_info.select("flow", "group")
        .join(sampled, on="flow", how="left")
        .join(done, on="flow", how="left")
        .select(
            "flow",
            "group",
            pl.coalesce("size", "acked_bytes", pl.lit(0)).cast(pl.Float64).alias("acked_bytes"),
            pl.col("retransmits").fill_null(0).cast(pl.Float64),
            pl.col("timeouts").fill_null(0).cast(pl.Float64),
        )
        .sort("flow")
    )


def _window_deltas(res: Results, w0: float, w1: float) -> pl.DataFrame:
    a, b = flow_counters_at(res, w0), flow_counters_at(res, w1)
    return (
        b.join(a, on=["flow", "group"], suffix="_0")
        .select(
            "flow",
            "group",
            ((pl.col("acked_bytes") - pl.col("acked_bytes_0")) * 8.0 / (w1 - w0)).alias("goodput_bps"),
            (pl.col("retransmits") - pl.col("retransmits_0")).alias("retransmits"),
            (pl.col("timeouts") - pl.col("timeouts_0")).alias("timeouts"),
        )
        .sort("flow")
    )


def _groups(side: Side, w0: float, w1: float) -> dict:
    d = (
        _window_deltas(side.res, w0, w1)
        .group_by("group", maintain_order=True)
        .agg(pl.col("goodput_bps", "retransmits", "timeouts").sum())
    )
    # The whole run too: start-up losses are where recovery rules differ most.
    end = side.res.summary.get("sim_time_s") or w1
    run = flow_counters_at(side.res, end).group_by("group").agg(pl.col("retransmits", "timeouts").sum())
    whole = {r["group"]: r for r in run.iter_rows(named=True)}
    out = {}
    for r in d.iter_rows(named=True):
        sec = f"group {r['group']}"
        out[(sec, "goodput, Mb/s", "rate")] = r["goodput_bps"] / 1e6
        out[(sec, "retransmitted packets", "count")] = r["retransmits"]
        out[(sec, "timeouts", "count")] = r["timeouts"]
        out[(sec, "retransmitted packets, whole run", "count")] = whole[r["group"]]["retransmits"]
        out[(sec, "timeouts, whole run", "count")] = whole[r["group"]]["timeouts"]
    return out


def _fct(res: Results, w0: float, w1: float) -> dict:
    arrived = res.completions.filter((pl.col("start_s") >= w0 - EPS) & (pl.col("start_s") < w1 - EPS))
    out = {}
    for b in _summary.size_bins(arrived, 1).iter_rows(named=True):
        label = f"{fmt_bytes(b['size_lo'])} – {fmt_bytes(b['size_hi'])}"
        out[("completion time", f"mean FCT, {label}", "time")] = b["mean_fct_s"]
        out[("completion time", f"completed, {label}", "count")] = float(b["count"])
    return out


def _jain(res: Results, w0: float, w1: float) -> float | None:
    ids = _summary.active_flows(res.flow_info, res.completions, w0, w1)
    if not ids:
        return None
    d = _window_deltas(res, w0, w1).filter(pl.col("flow").is_in(ids))
    j = _summary.jain(d.get_column("goodput_bps").to_list())
    return None if math.isnan(j) else j


def table(pairs: list[tuple[Side, Side]], w0: float, w1: float) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(comparison, per-seed values) for (racc, ns-2) pairs of the same seeds."""
    long_rows = []
    order: dict[tuple[str, str, str], int] = {}
    for r, n in pairs:
        for side in (r, n):
            for key, v in metrics(side, w0, w1).items():
                order.setdefault(key, len(order))
                long_rows.append(
                    {
                        "seed": side.seed,
                        "engine": side.engine,
                        "section": key[0],
                        "metric": key[1],
                        "kind": key[2],
                        "value": float(v),
                    }
                )
    values = pl.DataFrame(
        long_rows,
        schema={
            "seed": pl.Int64,
            "engine": pl.Utf8,
            "section": pl.Utf8,
            "metric": pl.Utf8,
            "kind": pl.Utf8,
            "value": pl.Float64,
        },
    )
    rows = []
    for key in sorted(order, key=order.get):
        sel = values.filter((pl.col("section") == key[0]) & (pl.col("metric") == key[1]))
        a = sel.filter(pl.col("engine") == "racc").get_column("value").to_list()
        b = sel.filter(pl.col("engine") == "ns-2").get_column("value").to_list()
        rows.append(
            {
                "section": key[0],
                "metric": key[1],
                "kind": key[2],
                **_stats("racc", a),
                **_stats("ns2", b),
                "agree": verdict(a, b, len(pairs)),
            }
        )
    return _select_ports(pl.DataFrame(rows, infer_schema_length=None)), values


def _stats(prefix: str, xs: list[float]) -> dict[str, float | int | None]:
    """Seed mean, min, max and how many seeds had the metric (an FCT bin may be empty in some)."""
    if not xs:
        return {f"{prefix}_mean": None, f"{prefix}_min": None, f"{prefix}_max": None, f"{prefix}_n": 0}
    return {
        f"{prefix}_mean": sum(xs) / len(xs),
        f"{prefix}_min": min(xs),
        f"{prefix}_max": max(xs),
        f"{prefix}_n": len(xs),
    }


def verdict(a: list[float], b: list[float], seeds: int) -> bool | None:
    """Agree when the means differ by at most the larger seed range; None without two seeds a side."""
    if seeds < 2 or len(a) < 2 or len(b) < 2:
        return None
    spread = max(max(a) - min(a), max(b) - min(b))
    return abs(sum(a) / len(a) - sum(b) / len(b)) <= spread + 1e-12


def _select_ports(df: pl.DataFrame) -> pl.DataFrame:
    """Keep the ports worth a row (MIN_UTILISATION, or any drop, mark, loss or queue on either side),
    the busiest first, and only the count rows that are not zero on both sides."""
    if df.height == 0:
        return df
    ports = df.filter(pl.col("section").str.starts_with("port "))
    peak = pl.max_horizontal("racc_mean", "ns2_mean")
    util = ports.filter(pl.col("kind") == "util").select("section", peak.alias("util"))
    busy = (
        ports.filter(
            ((pl.col("kind") == "util") & (peak >= MIN_UTILISATION))
            | ((pl.col("kind") == "count") & (peak > 0))
            | ((pl.col("kind") == "queue") & (peak >= 1.0))
        )
        .get_column("section")
        .unique()
        .to_list()
    )
    keep = util.filter(pl.col("section").is_in(busy)).sort("util", descending=True).head(MAX_PORT_ROWS)
    rank = dict(zip(keep.get_column("section").to_list(), range(keep.height)))
    nonzero = ~((pl.col("kind") == "count") & (pl.col("racc_max") == 0) & (pl.col("ns2_max") == 0))
    is_port = pl.col("section").str.starts_with("port ")
    df = df.filter((~is_port | pl.col("section").is_in(list(rank))) & (nonzero | (pl.col("metric") == "drops")))
    port_rank = pl.col("section").replace_strict(rank, default=-1, return_dtype=pl.Int64)
    return (
        df.with_columns(pl.when(is_port).then(port_rank).otherwise(len(rank)).alias("_r"))
        .with_row_index("_i")
        .sort("_r", "_i")
        .drop("_r", "_i")
    )
