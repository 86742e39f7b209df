"""Metrics computed in Python from the engine's columns (docs/PROTOCOLS.md §15).

* Jain's index J = (Σx)² / (n·Σx²) of per-flow goodput over a window that excludes
  start-up (default: the last half of the run), counting only flows active through
  the whole window; a flow with no sample in part of the window counts 0 there.
* Flow-completion statistics: count, mean, median, p95, p99 (linear interpolation),
  and mean FCT per logarithmic size bin.
* Aggregate goodput: over the whole run, the engine's count of payload bytes delivered
  (``goodput_bytes``), whether or not per-flow series were recorded; over the fairness window,
  the bytes in the flow series' samples of the window over the time those samples span.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import pairwise
from typing import Any

import polars as pl

EPS = 1e-9


def jain(values: Iterable[float]) -> float:
    """Jain's fairness index; NaN for no flows or all-zero values."""
    xs = [float(v) for v in values]
    n = len(xs)
    s2 = sum(x * x for x in xs)
    if n == 0 or s2 == 0.0:
        return math.nan
    s = sum(xs)
    return s * s / (n * s2)


def sample_times(df: pl.DataFrame) -> list[float]:
    """Distinct sample times, sorted."""
    if df.height == 0 or "time_s" not in df.columns:
        return []
    return df.get_column("time_s").unique().sort().to_list()


def sample_interval(times: Sequence[float]) -> float:
    """The sampling interval: median gap between sample times (the first time if only one)."""
    if not times:
        return math.nan
    if len(times) == 1:
        return float(times[0])
    gaps = sorted(b - a for a, b in pairwise(times))
    return float(gaps[len(gaps) // 2])


def run_end(flows: pl.DataFrame, links: pl.DataFrame, core_summary: dict | None = None) -> float:
    """End of the run: the engine's ``sim_time_s`` if given, else the last sample time."""
    if core_summary and isinstance(core_summary.get("sim_time_s"), (int, float)):
        return round(float(core_summary["sim_time_s"]), 9)  # the engine counts integer ns
    ends = [df.get_column("time_s").max() for df in (flows, links) if df.height and "time_s" in df.columns]
    return float(max(ends)) if ends else math.nan


def flow_ends(flow_info: pl.DataFrame, completions: pl.DataFrame) -> pl.DataFrame:
    """Per flow: ``start_s`` and ``end_s`` = earliest of stop time and completion (inf if neither)."""
    info = flow_info.select(
        pl.col("flow"),
        pl.col("start_s").cast(pl.Float64),
        pl.col("stop_s").cast(pl.Float64).fill_nan(None).fill_null(math.inf).alias("stop"),
    )
    if completions.height:
        done = completions.group_by("flow").agg(pl.col("end_s").cast(pl.Float64).min().alias("done"))
        info = info.join(done, on="flow", how="left")
    else:
        info = info.with_columns(pl.lit(None, dtype=pl.Float64).alias("done"))
    return info.select("flow", "start_s", pl.min_horizontal("stop", pl.col("done").fill_null(math.inf)).alias("end_s"))


def active_flows(flow_info: pl.DataFrame, completions: pl.DataFrame, w0: float, w1: float) -> list[int]:
    """Flows started by ``w0`` and neither stopped nor completed before ``w1``."""
    if flow_info.height == 0:
        return []
    ends = flow_ends(flow_info, completions)
    ok = ends.filter((pl.col("start_s") <= w0 + EPS) & (pl.col("end_s") >= w1 - EPS))
    return ok.get_column("flow").to_list()


def window_rows(flows: pl.DataFrame, w0: float, w1: float, dt: float) -> pl.DataFrame:
    """Rows whose sample interval [t-dt, t] lies inside [w0, w1]."""
    return flows.filter((pl.col("time_s") - dt >= w0 - EPS * max(1.0, abs(w0))) & (pl.col("time_s") <= w1 + EPS))


def per_flow_goodput(flows: pl.DataFrame, ids: Sequence[int], w0: float, w1: float) -> dict[int, float]:
    """Mean goodput (b/s) of each flow in ``ids`` over [w0, w1]; missing samples count as 0."""
    times = sample_times(flows)
    dt = sample_interval(times)
    rows = window_rows(flows, w0, w1, dt) if times else flows
    n_times = rows.get_column("time_s").n_unique() if rows.height else 0
    if n_times == 0:
        return {}
    sums = rows.filter(pl.col("flow").is_in(list(ids))).group_by("flow").agg(pl.col("goodput_bps").sum())
    got = dict(zip(sums.get_column("flow").to_list(), sums.get_column("goodput_bps").to_list()))
    return {int(f): float(got.get(f, 0.0)) / n_times for f in ids}


def fairness(
    flows: pl.DataFrame,
    flow_info: pl.DataFrame,
    completions: pl.DataFrame,
    end_s: float,
    window: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """Jain's index of per-flow goodput over ``window`` (default: last half of the run)."""
    w0, w1 = window if window is not None else (end_s / 2.0, end_s)
    out: dict[str, Any] = {"window_s": [w0, w1], "flows": 0, "jain": None}
    if flows.height == 0 or not math.isfinite(w1):
        return out
    ids = active_flows(flow_info, completions, w0, w1)
    rates = per_flow_goodput(flows, ids, w0, w1)
    if not rates:
        return out
    vals = list(rates.values())
    j = jain(vals)
    out.update(
        flows=len(vals),
        jain=None if math.isnan(j) else j,
        goodput_bps={"mean": sum(vals) / len(vals), "min": min(vals), "max": max(vals)},
    )
    return out


def jain_over_time(
    flows: pl.DataFrame, flow_info: pl.DataFrame, completions: pl.DataFrame, step_s: float = 1.0
) -> pl.DataFrame:
    """Jain's index in consecutive windows of ``step_s`` over flows active through each window.

    Only flows with samples in a window are counted there. Columns: ``time_s`` (window end),
    ``flows``, ``jain``.
    """
    schema = {"time_s": pl.Float64, "flows": pl.UInt32, "jain": pl.Float64}
    if flows.height == 0 or flow_info.height == 0:
        return pl.DataFrame(schema=schema)
    dt = sample_interval(sample_times(flows))
    ends = flow_ends(flow_info, completions)
    w = (
        flows.select("time_s", "flow", "goodput_bps")
        .with_columns(((pl.col("time_s") - dt) / step_s + EPS).floor().alias("w"))
        .with_columns((pl.col("w") * step_s).alias("w0"), ((pl.col("w") + 1) * step_s).alias("w1"))
        .join(ends, on="flow", how="inner")
        .filter((pl.col("start_s") <= pl.col("w0") + EPS) & (pl.col("end_s") >= pl.col("w1") - EPS))
    )
    per_flow = w.group_by("w1", "flow").agg(pl.col("goodput_bps").mean().alias("x"))
    return (
        per_flow.group_by("w1")
        .agg(
            pl.len().cast(pl.UInt32).alias("flows"),
            (pl.col("x").sum() ** 2 / (pl.len() * (pl.col("x") ** 2).sum())).alias("jain"),
        )
        .rename({"w1": "time_s"})
        .sort("time_s")
        .select(pl.col("time_s").cast(pl.Float64), "flows", pl.col("jain").fill_nan(None))
    )


def size_bins(completions: pl.DataFrame, bins_per_decade: int = 1) -> pl.DataFrame:
    """Mean/median FCT per logarithmic size bin: ``size_lo``, ``size_hi``, ``count``, ``mean_fct_s``, ``median_fct_s``."""
    schema = {
        "size_lo": pl.Float64,
        "size_hi": pl.Float64,
        "count": pl.UInt32,
        "mean_fct_s": pl.Float64,
        "median_fct_s": pl.Float64,
        "mean_size_bytes": pl.Float64,
    }
    if completions.height == 0:
        return pl.DataFrame(schema=schema)
    b = float(bins_per_decade)
    return (
        completions.filter(pl.col("size_bytes") > 0)
        .with_columns((pl.col("size_bytes").cast(pl.Float64).log10() * b + EPS).floor().alias("bin"))
        .group_by("bin")
        .agg(
            pl.len().cast(pl.UInt32).alias("count"),
            pl.col("fct_s").mean().alias("mean_fct_s"),
            pl.col("fct_s").median().alias("median_fct_s"),
            pl.col("size_bytes").cast(pl.Float64).mean().alias("mean_size_bytes"),
        )
        .sort("bin")
        .select(
            (10.0 ** (pl.col("bin") / b)).alias("size_lo"),
            (10.0 ** ((pl.col("bin") + 1) / b)).alias("size_hi"),
            "count",
            "mean_fct_s",
            "median_fct_s",
            "mean_size_bytes",
        )
    )


def fct_stats(completions: pl.DataFrame, bins_per_decade: int = 1) -> dict[str, Any]:
    """FCT summary: count, mean, median, p95, p99, min, max (seconds) and per-decade means."""
    if completions.height == 0:
        return {"count": 0}
    fct = completions.get_column("fct_s").cast(pl.Float64)

    def q(p: float) -> float:
        return float(fct.quantile(p, interpolation="linear"))

    bins = size_bins(completions, bins_per_decade)
    return {
        "count": completions.height,
        "mean_s": float(fct.mean()),
        "median_s": q(0.5),
        "p95_s": q(0.95),
        "p99_s": q(0.99),
        "min_s": float(fct.min()),
        "max_s": float(fct.max()),
        "by_size": bins.drop("mean_size_bytes").to_dicts(),
    }


def row_seconds(interval: float) -> pl.Expr:
    """The length of the interval each row's sample covers: samples are taken at multiples of
    ``interval`` and at the run's end, so a row at t covers (t', t] with t' the last multiple
    of ``interval`` before t."""
    prev = ((pl.col("time_s") / interval - EPS).ceil() - 1.0).clip(lower_bound=0.0) * interval
    return pl.col("time_s") - prev


def aggregate_goodput(flows: pl.DataFrame, w0: float, w1: float, interval: float, end: float) -> float | None:
    """Σ flow goodput (b/s) over the samples whose intervals lie in [w0, w1]: the payload bytes
    in them over the time they span. Samples are on a fixed grid, so a sample at which no flow
    ran still counts, as zero; ``None`` if no sample lies in the window."""
    if flows.height == 0 or not interval > 0 or not math.isfinite(end):
        return None
    s0 = math.ceil(w0 / interval - EPS) * interval
    s1 = end if w1 >= end - EPS else math.floor(w1 / interval + EPS) * interval
    if s1 <= s0:
        return None
    half_ns = 0.5e-9  # sample times are whole nanoseconds
    rows = flows.filter((pl.col("time_s") > s0 + half_ns) & (pl.col("time_s") <= s1 + half_ns))
    bits = rows.select((pl.col("goodput_bps") * row_seconds(interval)).sum()).item() if rows.height else 0.0
    return float(bits) / (s1 - s0)


def whole_run_goodput(core_summary: dict[str, Any]) -> float | None:
    """Aggregate goodput (b/s) over the whole run from the engine's ``goodput_bytes`` counter."""
    b, t = core_summary.get("goodput_bytes"), core_summary.get("sim_time_s")
    if isinstance(b, (int, float)) and isinstance(t, (int, float)) and t > 0:
        return 8.0 * b / t
    return None


def build(
    core_summary: dict[str, Any],
    *,
    links: pl.DataFrame,
    flows: pl.DataFrame,
    completions: pl.DataFrame,
    flow_info: pl.DataFrame,
    window: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """The engine's summary plus ``flows`` (count, Jain, goodput) and ``fct`` sections."""
    out = dict(core_summary)
    end = run_end(flows, links, core_summary)
    fair = fairness(flows, flow_info, completions, end, window)
    w0, w1 = fair["window_s"]
    interval = core_summary.get("sample_interval_s") or sample_interval(sample_times(flows))
    out["flows"] = {
        "count": flow_info.height,
        "completed": completions.height,
        "jain": fair["jain"],
        "jain_window_s": fair["window_s"],
        "jain_flows": fair["flows"],
        "per_flow_goodput_bps": fair.get("goodput_bps"),
        "series_recorded": flows.height > 0,
        # From the run's counter, never from what happened to be sampled.
        "aggregate_goodput_bps": whole_run_goodput(core_summary),
        "aggregate_goodput_window_bps": aggregate_goodput(flows, w0, w1, interval, end) if math.isfinite(w1) else None,
    }
    out["fct"] = fct_stats(completions)
    return out


def of_results(res: Any, window: tuple[float, float] | None = None) -> dict[str, Any]:
    """:func:`build` over a :class:`racc.Results`' own tables (every engine's results)."""
    return build(
        res.summary,
        links=res.links,
        flows=res.flows,
        completions=res.completions,
        flow_info=res.flow_info,
        window=window,
    )
