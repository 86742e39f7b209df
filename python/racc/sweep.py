"""``racc sweep``: run a grid of scenario variants and seeds in parallel on Dask.

Each point is the base scenario with some keys overridden (``--grid key=v1,v2``) and a seed.
Points run as independent tasks on a Dask cluster: a local one (one single-threaded worker
process per core) by default, or any ``dask.distributed`` scheduler given by address, so a
sweep spreads across machines that have racc installed. Every point is checked before any is
dispatched; results come back as one row per point, in point order whatever order the workers
finish in, so a sweep is as deterministic as the runs it is made of.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from racc import scenario as _scenario
from racc.errors import ScenarioError, core


@dataclass(frozen=True)
class Point:
    """One run of a sweep: overrides on the base scenario, and a seed (None = the file's)."""

    index: int
    overrides: tuple[tuple[str, Any], ...]
    seed: int | None

    def label(self) -> str:
        parts = [f"{k}={json.dumps(v)}" for k, v in self.overrides]
        if self.seed is not None:
            parts.append(f"seed={self.seed}")
        return " ".join(parts) or "base"


def parse_grid(items: Iterable[str]) -> dict[str, list[Any]]:
    """``["a.b=1,2", "c=x,y"]`` → ``{"a.b": [1, 2], "c": ["x", "y"]}``; values parse as TOML values.

    A value list may also be a TOML array (``key=[0.01, 0.02]``), which allows commas inside strings.
    """
    grid: dict[str, list[Any]] = {}
    for item in items:
        key, raw = _scenario.split_override(item)
        parsed = _scenario.parse_value(raw)
        values = parsed if isinstance(parsed, list) else [_scenario.parse_value(v.strip()) for v in raw.split(",")]
        if not values or any(v == "" for v in values):
            raise ScenarioError(f"--grid {item!r}: expected key=value1,value2,...")
        if key in grid:
            raise ScenarioError(f"--grid {item!r}: key `{key}` given twice")
        grid[key] = values
    return grid


#: The most runs one sweep (or one ``--seeds`` list) may hold: every point is checked, listed in
#: the manifest and given a row before any runs, so a larger product is refused at once.
MAX_RUNS = 100_000


def count_seeds(text: str) -> int:
    """How many seeds ``--seeds`` text (``"1,2,5"``, ``"1-5"`` or a mix) names, without listing
    them; raises ScenarioError naming ``--seeds`` above :data:`MAX_RUNS`."""
    n = 0
    for part in text.split(","):
        lo, sep, hi = part.strip().partition("-")
        n += max(0, int(hi) - int(lo) + 1) if sep else 1
    if n > MAX_RUNS:
        raise ScenarioError(
            f"--seeds {text[:40]!r}: {n} seeds, more than the {MAX_RUNS} runs a sweep may hold; "
            "split the range over several sweeps"
        )
    return n


def points(grid: Mapping[str, Sequence[Any]], seeds: Sequence[int] | None = None) -> list[Point]:
    """The cartesian product of the grid, each with every seed, in a fixed order (at most
    :data:`MAX_RUNS`, refused before any is made)."""
    keys = list(grid)
    total = len(seeds) if seeds else 1
    for k in keys:
        total *= len(grid[k])
    if total > MAX_RUNS:
        raise ScenarioError(
            f"--grid/--seeds: {total} points, more than the {MAX_RUNS} runs a sweep may hold; "
            "sweep fewer values or seeds at a time"
        )
    combos = itertools.product(*(grid[k] for k in keys)) if keys else [()]
    seed_list: list[int | None] = list(seeds) if seeds else [None]
    out = []
    for combo in combos:
        for s in seed_list:
            out.append(Point(len(out), tuple(zip(keys, combo)), s))
    return out


def run_point(base: dict[str, Any], point: Point, out: str | None, window: tuple[float, float] | None) -> dict:
    """Run one point (on a worker) and return its row of headline figures."""
    from racc.runner import run

    folder = None if out is None else point_folder(out, point)
    res = run(base, seed=point.seed, overrides=dict(point.overrides), out=folder, window=window)
    return row(point, res.summary)


def row(point: Point, summary: Mapping[str, Any]) -> dict[str, Any]:
    """Headline figures of a run: its busiest port (the bottleneck), fairness, goodput, FCT."""
    ports = summary.get("ports") or []
    bn = max(ports, key=lambda p: (p.get("utilisation", 0.0), -p.get("port", 0)), default={})
    flows = summary.get("flows") or {}
    fct = summary.get("fct") or {}
    out: dict[str, Any] = {"point": point.index, "seed": summary.get("seed")}
    for k, v in point.overrides:
        out[k] = v  # typed as given (TOML): numbers stay numbers, tables become structs
    out.update(
        {
            "bottleneck": bn.get("name"),
            "utilisation": bn.get("utilisation"),
            "mean_queue_pkts": bn.get("mean_queue_pkts"),
            "max_queue_pkts": bn.get("max_queue_pkts"),
            "drop_rate": bn.get("drop_rate"),
            "jain": flows.get("jain"),
            "goodput_bps": flows.get("aggregate_goodput_bps"),
            "flows": flows.get("count"),
            "completed": flows.get("completed"),
            "fct_mean_s": fct.get("mean"),
            "fct_p99_s": fct.get("p99"),
            "events": summary.get("events"),
            "wall_s": (summary.get("run") or {}).get("wall_s"),
        }
    )
    return out


def check_points(base: dict[str, Any], pts: Sequence[Point], source: str) -> list[float]:
    """Refuse the sweep before dispatching anything if any point is not a valid scenario; return
    each point's simulated seconds."""
    engine = core()
    spans = []
    for p in pts:
        sc = _scenario.load(base, seed=p.seed, overrides=dict(p.overrides))
        try:
            spans.append(engine.check(sc.to_json(), f"{source} [{p.label()}]"))
        except ScenarioError as exc:
            raise _scenario.blame_override(exc, sc) from None
    return spans


def sweep(
    scenario: str | os.PathLike | Mapping[str, Any],
    grid: Mapping[str, Sequence[Any]],
    *,
    seeds: Sequence[int] | None = None,
    overrides: Iterable[str] | Mapping[str, Any] | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    out: str | os.PathLike | None = None,
    window: tuple[float, float] | None = None,
    progress: bool = False,
    resume: bool = False,
):
    """Run every point of ``grid`` × ``seeds`` on Dask and return a polars frame, one row per point.

    ``scheduler`` is a ``dask.distributed`` scheduler address (``tcp://host:8786``); without it a
    local cluster of ``workers`` processes (default: one per core) runs the points. With ``out``
    each point's results folder is written under ``out/points/NNNN``, ``out/manifest.json`` keeps
    the rows of the points finished so far, and the table goes to ``out/sweep.parquet`` (written
    last, atomically: its presence means the sweep completed). ``out`` must be new or empty unless
    ``resume``: then only the points the manifest does not list as finished (with complete
    folders) run, and the table is the one an uninterrupted sweep gives. On Ctrl-C,
    :class:`racc.errors.Interrupted` says how many points finished and how to resume.
    """

    from racc.errors import Interrupted
    from racc.manifest import Manifest, clear_partial
    from racc.results import is_results_dir

    sc = _scenario.load(scenario, overrides=overrides)
    base = sc.data
    pts = points(grid, seeds)
    spans = check_points(base, pts, sc.source)
    out_dir = None
    manifest = None
    finished: dict[int, dict] = {}
    if out is not None:
        out_dir = Path(out)
        if not resume and out_dir.exists() and any(out_dir.iterdir()):
            again = " (an interrupted sweep: add --resume to finish it)" if (out_dir / "manifest.json").exists() else ""
            raise ScenarioError(f"{out_dir}: exists and is not empty; choose a new folder for the sweep{again}")
        settings = {"scenario": base, "grid": {k: list(v) for k, v in grid.items()}, "seeds": list(seeds or [])}
        manifest = Manifest.open(
            out_dir, "sweep", settings, [str(p.index) for p in pts], resume=resume, resume_hint="the same racc sweep"
        )
        for p in pts:
            folder = point_folder(str(out_dir), p)
            if manifest.done(str(p.index), is_results_dir(folder)):
                finished[p.index] = manifest.finished[str(p.index)]
            else:
                clear_partial(folder)  # a half-written point folder runs again
        manifest.write()

    todo = [p for p in pts if p.index not in finished]
    tracker = None
    if progress and todo:
        from racc.progress import Tracker

        units = [(str(p.index), span) for p, span in zip(pts, spans, strict=True)]
        tracker = Tracker(f"sweep of {sc.name}", units, noun="point", already=[str(i) for i in finished])
    rows = dict(finished)
    try:
        for r in _dispatch(base, todo, None if out_dir is None else str(out_dir), window, scheduler, workers):
            rows[r["point"]] = r
            if manifest is not None:
                manifest.mark(str(r["point"]), r)
            if tracker is not None:
                tracker.finish(str(r["point"]))
    except KeyboardInterrupt:
        kept = f"; their results are kept in {out_dir}. Resume: the same command with --resume" if out_dir else ""
        raise Interrupted(f"interrupted; {len(rows)} of {len(pts)} points finished{kept}") from None
    finally:
        if tracker is not None:
            tracker.close()
    table = typed_frame([rows[p.index] for p in pts], grid)
    if out_dir is not None:
        tmp = out_dir / ".sweep.parquet.partial"
        table.write_parquet(tmp)
        os.replace(tmp, out_dir / "sweep.parquet")
    return table


def typed_frame(rows: list[dict[str, Any]], grid: Mapping[str, Sequence[Any]]):
    """The rows as a polars frame, each swept key typed by its values: integers, floats (integers
    mixed with floats are floats), booleans, strings, or structs for tables."""
    import polars as pl

    schema: dict[str, Any] = {}
    for key, values in grid.items():
        kinds = {type(v) for v in values}
        if kinds <= {int}:
            schema[key] = pl.Int64
        elif kinds <= {int, float}:
            schema[key] = pl.Float64
        elif kinds <= {bool}:
            schema[key] = pl.Boolean
        elif kinds <= {str}:
            schema[key] = pl.Utf8
    return pl.DataFrame(rows, schema_overrides=schema, infer_schema_length=None)


def point_folder(out: str, point: Point) -> Path:
    return Path(out) / "points" / f"{point.index:04d}"


@contextlib.contextmanager
def dask_client(scheduler: str | None, workers: int | None, tasks: int):
    """A ``dask.distributed`` client: on the scheduler at ``scheduler`` (a cluster of machines
    with racc installed), or on a local cluster of ``workers`` single-threaded processes
    (default: one per core, never more than ``tasks``), closed on exit."""
    from dask.distributed import Client, LocalCluster

    cluster = None
    if scheduler:
        client = Client(scheduler)
    else:
        n = max(1, min(workers or os.cpu_count() or 1, tasks))
        # Ctrl-C reaches every process of the terminal's group: the workers are started with
        # SIGINT ignored (inherited, and kept by Python), so only this process answers it, in one
        # line, and closing the cluster ends them. Their stderr is /dev/null and the logs here
        # critical only, so that being stopped mid-task prints nothing: a task's error reaches
        # this process as an exception, and a worker's loss as KilledWorker.
        with _quiet_children():
            cluster = LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=50
            )
        client = Client(cluster)
    try:
        yield client
    except KeyboardInterrupt:
        # Closing mid-run, the scheduler logs each abandoned task; the interruption is said once,
        # by the caller.
        import logging

        logging.disable(logging.CRITICAL)
        raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


@contextlib.contextmanager
def _quiet_children():
    """Processes started here ignore SIGINT and write their stderr to /dev/null."""
    import signal
    import sys
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.stderr.flush()
    saved = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)
        signal.signal(signal.SIGINT, before)


def _dispatch(base, pts, out, window, scheduler, workers):
    """Each point's row as it finishes (in any order); errors surface here."""
    if not pts:
        return
    from dask.distributed import as_completed

    with dask_client(scheduler, workers, len(pts)) as client:
        futures = [client.submit(run_point, base, p, out, window, pure=False, key=f"racc-point-{p.index}") for p in pts]
        for fut in as_completed(futures):
            yield fut.result()
