"""Drawing a time series, shared by a run's plots (:mod:`racc.plots`) and the experiments'
figures (:mod:`racc.experiments.figures`): a figure on the non-interactive backend, saving it, and
a long series drawn as its min/max envelope with its mean."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

DPI = 120


def subplots(*args, **kw):
    """A matplotlib figure and axes on the non-interactive Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(*args, **kw)


def save(fig, path: Path) -> Path:
    """Lay out, write and close `fig` at `path` (creating its folder)."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


#: Above this many samples a series is drawn as a min/max envelope with its mean (a 3000 s run's
#: queue sampled every 100 ms would otherwise be a solid block of ink).
ENVELOPE_ABOVE = 1500
ENVELOPE_BINS = 500


def envelope(x: Sequence[float], y: Sequence[float], bins: int = ENVELOPE_BINS):
    """(bin centres, min, mean, max) of ``y`` over ``bins`` equal slices of ``x``."""
    import numpy as np

    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    edges = np.linspace(xs.min(), xs.max(), bins + 1)
    idx = np.clip(np.searchsorted(edges, xs, side="right") - 1, 0, bins - 1)
    count = np.bincount(idx, minlength=bins)
    keep = count > 0
    lo = np.full(bins, np.inf)
    hi = np.full(bins, -np.inf)
    np.minimum.at(lo, idx, ys)
    np.maximum.at(hi, idx, ys)
    mean = np.bincount(idx, weights=ys, minlength=bins)[keep] / count[keep]
    centres = ((edges[:-1] + edges[1:]) / 2)[keep]
    return centres, lo[keep], mean, hi[keep]


def draw(ax: Any, x: Sequence[float], y: Sequence[float], color: Any = None, label: str | None = None, lw: float = 0.9):
    """A time series: every sample, or past :data:`ENVELOPE_ABOVE` samples its min/max envelope
    (shaded) and its mean (line), labelled so."""
    if len(x) <= ENVELOPE_ABOVE:
        return ax.plot(x, y, lw=lw, color=color, label=label)
    c, lo, mean, hi = envelope(x, y)
    (line,) = ax.plot(c, mean, lw=lw, color=color, label=(label + " " if label else "") + "(mean per bin)")
    ax.fill_between(c, lo, hi, color=line.get_color(), alpha=0.25, lw=0, label="min-max per bin")
    return [line]
