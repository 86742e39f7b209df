"""Advance a ``Simulation`` in chunks of simulated time, with an optional rich progress bar.

Running in chunks keeps Ctrl-C responsive even without a display: ``run_until``
releases the GIL, and the KeyboardInterrupt is raised between chunks.
"""

from __future__ import annotations

import time
from typing import Any

CHUNKS = 100  # 1 % of the run per call


def advance(sim: Any, *, show: bool = False, label: str = "simulating", chunks: int = CHUNKS) -> None:
    """Run ``sim`` to its end; draw a bar on stderr when ``show`` and stderr is a terminal."""
    start, end = float(sim.now_s), float(sim.end_s)
    if show:
        from rich.console import Console

        console = Console(stderr=True)
        if console.is_terminal:
            _advance_with_bar(sim, start, end, chunks, label, console)
            return
    for _ in _steps(sim, start, end, chunks):
        pass


def _steps(sim: Any, start: float, end: float, chunks: int):
    """Yield after each chunk; stops when the engine reports completion or the end is reached."""
    span = max(end - start, 0.0)
    k = 0
    while True:
        k += 1
        target = end if k >= chunks or span == 0.0 else start + span * k / chunks
        done = bool(sim.run_until(target))
        yield target
        if done or target >= end:
            return


def _advance_with_bar(sim: Any, start: float, end: float, chunks: int, label: str, console: Any) -> None:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:>9.2f} / {task.total:.2f} s simulated"),
        TextColumn("[cyan]{task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
    )
    t0 = time.perf_counter()
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task(label, total=max(end, 1e-12), completed=start, rate="")
        for _ in _steps(sim, start, end, chunks):
            wall = time.perf_counter() - t0
            rate = f"{sim.events / wall / 1e6:.2f} M events/s" if wall > 0 else ""
            bar.update(task, completed=min(float(sim.now_s), end), rate=rate)
        bar.update(task, completed=end)
