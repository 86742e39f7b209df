"""Figure helpers shared by experiments: one panel per case, drawn like the papers' figures."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

# The series drawing is shared with a run's plots, so it lives below both (racc.drawing).
from racc.drawing import DPI, ENVELOPE_ABOVE, ENVELOPE_BINS, draw, envelope, save, subplots  # noqa: F401


def panels(
    results: Mapping[str, Any],
    path: Path,
    title: str,
    ylabel: str,
    series: Callable[[Any], tuple[list[float], list[float]]],
    *,
    hline: float | None = None,
    hline_label: str = "",
) -> Path:
    """A grid of panels (one per case, in the order given) sharing the y axis."""
    names = list(results)
    cols = 2 if len(names) > 1 else 1
    rows = (len(names) + cols - 1) // cols
    fig, axes = subplots(rows, cols, figsize=(5.2 * cols, 3.2 * rows), sharey=True, squeeze=False)
    for ax, name in zip(axes.flat, names):
        x, y = series(results[name])
        draw(ax, x, y)
        if hline is not None:
            ax.axhline(hline, color="k", ls="--", lw=0.8, label=hline_label)
            ax.legend(fontsize=8)
        ax.set_title(name)
        ax.set_xlabel("time (s)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(names) :]:
        ax.set_visible(False)
    fig.suptitle(title)
    return save(fig, path)


def grid(
    results: Mapping[str, Any],
    path: Path,
    title: str,
    columns: Sequence[tuple[str, str, Callable[[Any], tuple[list[float], list[float]]], float | None]],
) -> Path:
    """One row per case (in the order given) and one column per figure, ``columns`` listing each
    figure's (title, y label, series, reference line or None): a paper's figures side by side.
    A column shares its y axis across the cases."""
    names = list(results)
    ncols = len(columns)
    fig, axes = subplots(
        len(names), ncols, figsize=(4.6 * ncols, 2.5 * len(names)), sharex=True, sharey="col", squeeze=False
    )
    for r, name in enumerate(names):
        for c, (head, ylabel, series, hline) in enumerate(columns):
            ax = axes[r][c]
            x, y = series(results[name])
            draw(ax, x, y)
            if hline is not None:
                ax.axhline(hline, color="k", ls="--", lw=0.8)
            ax.set_title(f"{head}: {name}", fontsize=9)
            ax.set_ylabel(ylabel, fontsize=8)
            ax.grid(alpha=0.3)
            if r == len(names) - 1:
                ax.set_xlabel("time (s)")
    fig.suptitle(title)
    return save(fig, path)


def port_series(res: Any, port: str, column: str) -> tuple[list[float], list[float]]:
    df = res.links.filter(pl.col("name") == port).sort("time_s")
    return df["time_s"].to_list(), df[column].to_list()


def drop_rate_series(res: Any, port: str) -> tuple[list[float], list[float]]:
    """Drops / arrivals per sample interval (VCP-DCCP Fig. 7 uses 10 ms intervals)."""
    df = res.links.filter(pl.col("name") == port).sort("time_s")
    rate = df["drops"].cast(pl.Float64) / df["arrivals"].cast(pl.Float64).clip(lower_bound=1.0)
    return df["time_s"].to_list(), rate.to_list()


def flow_series(res: Any, flow: int, column: str, scale: float = 1.0) -> tuple[list[float], list[float]]:
    df = res.flows.filter(pl.col("flow") == flow).sort("time_s")
    return df["time_s"].to_list(), (df[column] * scale).to_list()
