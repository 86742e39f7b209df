"""PNG plots of one run (matplotlib, Agg, no pyplot state): throughput, cwnd, queues,
utilisation and FCT vs size. Each function returns the file written, or None if there is
nothing to draw."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

MAX_LINES = 20  # more flows than this: sample + mean + min-max band
SAMPLE = 10  # flows drawn individually when sampling
MAX_PORTS = 8  # ports drawn on the queue/utilisation plots
BUSY_UTILISATION = 0.1  # utilisation plot: ports with at least this mean utilisation
MAX_POINTS = 400  # interval series with more sample times are averaged into wider bins
TARGET_POINTS = 300
FIGSIZE = (9.0, 4.5)
DPI = 120


def render_all(res: Any, folder: str | Path) -> list[Path]:
    """Draw every applicable plot of ``res`` (a :class:`racc.Results`) into ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for fn in (throughput, cwnd, queue, utilisation, fct):
        p = fn(res, folder)
        if p is not None:
            out.append(p)
    return out


def throughput(res: Any, folder: Path) -> Path | None:
    """Per-flow goodput over time."""
    return _per_flow(
        res, folder, "goodput_bps", 1e-6, "goodput (Mb/s)", "per-flow goodput", "throughput.png", step=True
    )


def cwnd(res: Any, folder: Path) -> Path | None:
    """Per-flow congestion window over time."""
    return _per_flow(res, folder, "cwnd_bytes", 1e-3, "cwnd (kB)", "per-flow congestion window", "cwnd.png")


def queue(res: Any, folder: Path) -> Path | None:
    """Queue length per port: ports that ever queued (the busiest few if none did)."""
    links = res.links
    if links.height == 0 or "queue_pkts" not in links.columns:
        return None
    stats = links.group_by("port").agg(
        pl.col("queue_pkts").max().alias("qmax"), pl.col("utilisation").mean().alias("u")
    )
    queued = stats.filter(pl.col("qmax") > 0).sort(["qmax", "port"], descending=[True, False])
    ports = queued if queued.height else stats.sort(["u", "port"], descending=[True, False]).head(3)
    ports = ports.head(MAX_PORTS).get_column("port").to_list()
    note = "" if len(ports) >= queued.height else f" (top {len(ports)} of {queued.height} queued ports)"
    return _per_port(res, folder, ports, "queue_pkts", 1.0, "queue (packets)", f"queue length{note}", "queue.png")


def utilisation(res: Any, folder: Path) -> Path | None:
    """Utilisation per port over time: ports with mean utilisation >= 10 % (else the busiest 3), at most 8."""
    links = res.links
    if links.height == 0 or "utilisation" not in links.columns:
        return None
    stats = (
        links.group_by("port")
        .agg(pl.col("utilisation").mean().alias("u"), pl.col("tx_pkts").sum().alias("tx"))
        .filter(pl.col("tx") > 0)
        .sort(["u", "port"], descending=[True, False])
    )
    if stats.height == 0:
        return None
    busy = stats.filter(pl.col("u") >= BUSY_UTILISATION)
    ports = (busy if busy.height else stats.head(3)).head(MAX_PORTS).get_column("port").to_list()
    note = "" if len(ports) == stats.height else f" (busiest {len(ports)} of {stats.height} ports)"
    return _per_port(
        res,
        folder,
        ports,
        "utilisation",
        100.0,
        "utilisation (%)",
        f"link utilisation{note}",
        "utilisation.png",
        step=True,
    )


def fct(res: Any, folder: Path) -> Path | None:
    """Flow completion time vs flow size: every flow (dots) and the mean per size bin (line)."""
    from racc.summary import size_bins

    comp = res.completions
    if comp.height == 0:
        return None
    fig, ax = _figure()
    ax.scatter(
        comp.get_column("size_bytes").to_list(),
        comp.get_column("fct_s").to_list(),
        s=4,
        alpha=0.25,
        color="tab:gray",
        label="flows",
        rasterized=True,
    )
    bins = size_bins(comp, bins_per_decade=4)
    ax.plot(
        bins.get_column("mean_size_bytes").to_list(),
        bins.get_column("mean_fct_s").to_list(),
        "o-",
        color="tab:blue",
        label="mean per size bin",
    )
    ax.set_xscale("log")
    lo, hi = comp.get_column("fct_s").min(), comp.get_column("fct_s").max()
    if lo and lo > 0 and hi / lo > 20:
        ax.set_yscale("log")
    ax.set_xlabel("flow size (bytes)")
    ax.set_ylabel("flow completion time (s)")
    ax.set_title(f"{res.name}: flow completion time vs size ({comp.height} flows)")
    ax.legend(loc="best", fontsize="small")
    return _save(fig, folder / "fct.png")


# -- helpers -----------------------------------------------------------------


def _figure():
    from matplotlib.figure import Figure

    fig = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    ax.grid(True, alpha=0.3)
    return fig, ax


def _save(fig: Any, path: Path) -> Path:
    fig.savefig(path, format="png")
    return path


def _flow_labels(res: Any) -> Callable[[int], str]:
    info = res.flow_info
    proto = {}
    if info.height and "protocol" in info.columns:
        proto = dict(zip(info.get_column("flow").to_list(), info.get_column("protocol").to_list()))
    return lambda f: f"flow {f} ({proto[f]})" if f in proto else f"flow {f}"


def _per_flow(
    res: Any, folder: Path, col: str, scale: float, ylabel: str, what: str, fname: str, step: bool = False
) -> Path | None:
    """One line per flow, or (> MAX_LINES flows) a sample, the mean and a min–max band.

    ``step``: values are interval averages ending at ``time_s`` (drawn as steps)."""
    ds = "steps-pre" if step else "default"
    df = res.flows
    if df.height == 0 or col not in df.columns:
        return None
    df = df.select("time_s", "flow", (pl.col(col).cast(pl.Float64) * scale).alias("y"))
    if step:
        df, ylabel = _coarsen(df, "flow", ylabel)
    df = df.sort("flow", "time_s")
    ids = df.get_column("flow").unique().sort().to_list()
    label = _flow_labels(res)
    fig, ax = _figure()
    if len(ids) <= MAX_LINES:
        for f in ids:
            d = df.filter(pl.col("flow") == f)
            ax.plot(d.get_column("time_s").to_list(), d.get_column("y").to_list(), lw=1.2, label=label(f), drawstyle=ds)
        title = f"{res.name}: {what}"
    else:
        band = (
            _active_rows(res, df)
            .group_by("time_s")
            .agg(pl.col("y").mean().alias("mean"), pl.col("y").min().alias("lo"), pl.col("y").max().alias("hi"))
            .sort("time_s")
        )
        t = band.get_column("time_s").to_list()
        ax.fill_between(
            t,
            band.get_column("lo").to_list(),
            band.get_column("hi").to_list(),
            color="tab:blue",
            alpha=0.15,
            label="min–max over active flows",
            step="pre" if step else None,
        )
        stride = len(ids) / SAMPLE
        for f in (ids[int(i * stride)] for i in range(SAMPLE)):
            d = df.filter(pl.col("flow") == f)
            ax.plot(d.get_column("time_s").to_list(), d.get_column("y").to_list(), lw=0.8, alpha=0.6, drawstyle=ds)
        ax.plot(t, band.get_column("mean").to_list(), color="black", lw=2, label="mean over active flows", drawstyle=ds)
        title = f"{res.name}: {what} ({SAMPLE} of {len(ids)} flows, mean and range)"
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_ylim(bottom=0)
    _legend(ax)
    return _save(fig, folder / fname)


def _coarsen(df: pl.DataFrame, key: str, ylabel: str) -> tuple[pl.DataFrame, str]:
    """Average interval samples ``y`` into wider bins when there are more than MAX_POINTS sample times.

    Returns the (possibly) coarsened frame and the y label noting the averaging window."""
    from racc.summary import sample_interval, sample_times

    times = sample_times(df)
    if len(times) <= MAX_POINTS:
        return df, ylabel
    dt = sample_interval(times)
    width = dt * math.ceil(len(times) / TARGET_POINTS)
    out = (
        df.with_columns(((pl.col("time_s") - dt / 2) / width).floor().alias("_bin"))
        .group_by(key, "_bin")
        .agg(pl.col("y").mean())
        .with_columns(((pl.col("_bin") + 1) * width).alias("time_s"))
        .drop("_bin")
    )
    return out, f"{ylabel}, {width:g} s means"


def _active_rows(res: Any, df: pl.DataFrame) -> pl.DataFrame:
    """Rows whose sample interval overlaps the flow's life (start to stop/completion)."""
    from racc.summary import flow_ends, sample_interval, sample_times

    if res.flow_info.height == 0:
        return df
    dt = sample_interval(sample_times(df))
    ends = flow_ends(res.flow_info, res.completions)
    return df.join(ends, on="flow", how="inner").filter(
        (pl.col("start_s") < pl.col("time_s")) & (pl.col("end_s") > pl.col("time_s") - dt)
    )


def _per_port(
    res: Any,
    folder: Path,
    ports: list[int],
    col: str,
    scale: float,
    ylabel: str,
    what: str,
    fname: str,
    step: bool = False,
) -> Path | None:
    if not ports:
        return None
    links = res.links.filter(pl.col("port").is_in(ports))
    names = (
        dict(zip(links.get_column("port").to_list(), links.get_column("name").to_list()))
        if "name" in links.columns
        else {}
    )
    df = links.select("time_s", "port", (pl.col(col).cast(pl.Float64) * scale).alias("y"))
    if step:
        df, ylabel = _coarsen(df, "port", ylabel)
    fig, ax = _figure()
    from racc.drawing import draw

    for p in ports:
        d = df.filter(pl.col("port") == p).sort("time_s")
        x, y, label = d.get_column("time_s").to_list(), d.get_column("y").to_list(), str(names.get(p, f"port {p}"))
        if step:
            ax.plot(x, y, lw=1.2, label=label, drawstyle="steps-pre")
        else:  # long runs: min/max envelope and mean, not a solid block of samples
            draw(ax, x, y, label=label, lw=1.2)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.set_title(f"{res.name}: {what}")
    ax.set_ylim(bottom=0)
    _legend(ax)
    return _save(fig, folder / fname)


def _legend(ax: Any) -> None:
    n = len(ax.get_legend_handles_labels()[0])
    if n:
        ax.legend(loc="best", fontsize="small", ncol=2 if n > 8 else 1)
