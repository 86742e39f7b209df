"""Progress of long work on stderr: a rich bar on a terminal, plain lines at intervals otherwise.

:func:`advance` runs one ``Simulation`` in chunks of simulated time (1 % each), for the display.
Ctrl-C does not wait for a chunk: ``run_until`` releases the GIL and looks at pending signals
every 100 ms of wall time (between slices of a few thousand events), raising KeyboardInterrupt
mid-chunk, so a run of any length stops within a fraction of a second. :class:`Tracker` follows
work made of several runs (the cases of ``racc reproduce``, the points of ``racc sweep``): case k
of N, simulated seconds and an estimate of the time left.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

CHUNKS = 100  # 1 % of the run per call
#: Seconds between two plain progress lines when stderr is not a terminal (CI, logs).
PLAIN_INTERVAL = 5.0


def advance(
    sim: Any,
    *,
    show: bool = False,
    label: str = "simulating",
    chunks: int = CHUNKS,
    on_chunk: Callable[[float], None] | None = None,
) -> None:
    """Run ``sim`` to its end. With ``show``: a bar on stderr when it is a terminal, else a plain
    line every :data:`PLAIN_INTERVAL` seconds (a short run prints nothing). ``on_chunk(seconds)``
    is told the simulated seconds done after each chunk (a :class:`Tracker` follows it)."""
    start, end = float(sim.now_s), float(sim.end_s)
    if show and on_chunk is None:
        from rich.console import Console

        console = Console(stderr=True)
        if console.is_terminal:
            _advance_with_bar(sim, start, end, chunks, label, console)
            return
        on_chunk = _plain_reporter(label, start, end)
    for _ in _steps(sim, start, end, chunks):
        if on_chunk is not None:
            on_chunk(float(sim.now_s) - start)


def _plain_reporter(label: str, start: float, end: float) -> Callable[[float], None]:
    t0 = time.perf_counter()
    last = [t0]

    def report(done: float) -> None:
        now = time.perf_counter()
        if now - last[0] >= PLAIN_INTERVAL:
            last[0] = now
            span = max(end - start, 1e-12)
            eta = (now - t0) * (span - done) / done if done > 0 else None
            print(
                f"{label}: {done:.1f} of {span:.1f} s simulated ({done / span:.0%}), "
                f"{_clock(now - t0)} elapsed, about {_clock(eta)} left",
                file=sys.stderr,
                flush=True,
            )

    return report


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    s = round(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Tracker:
    """Progress of work made of runs (``units``: name and simulated seconds, in order): on a
    terminal a rich bar "case k of N" with simulated seconds and the time left; otherwise a plain
    line when work starts, when each run finishes and every :data:`PLAIN_INTERVAL` seconds.

    The time left is the wall time so far scaled by the simulated seconds still to run (runs of
    one experiment cost about the same per simulated second). ``begin``/``at``/``finish`` follow a
    run as it goes; ``finish`` alone serves runs elsewhere (Dask workers) reported as they end.
    """

    def __init__(
        self,
        label: str,
        units: Sequence[tuple[str, float]],
        *,
        noun: str = "case",
        already: Sequence[str] = (),
        terminal: bool | None = None,
        stream: TextIO | None = None,
    ) -> None:
        self.label, self.noun = label, noun
        self.spans = dict(units)
        self.order = [n for n, _ in units]
        self.total_sim = sum(self.spans.values()) or 1e-12
        self.finished: list[str] = [n for n in self.order if n in set(already)]
        self.base_sim = sum(self.spans[n] for n in self.finished)  # done before this process
        self.done_sim = self.base_sim
        self.current: str | None = None
        self.current_sim = 0.0
        self.t0 = time.perf_counter()
        self.last_line = self.t0
        self.stream = stream or sys.stderr
        if terminal is None:
            from rich.console import Console

            terminal = Console(stderr=True).is_terminal
        self.bar: Any = None
        if terminal:
            self._start_bar()
        else:
            left = len(self.order) - len(self.finished)
            resumed = f" ({len(self.finished)} already finished)" if self.finished else ""
            self._line(
                f"{self.label}: {left} {self.noun}s to run{resumed}, "
                f"{self.total_sim - self.base_sim:.0f} s simulated in all"
            )

    # -- reporting ------------------------------------------------------------------------------
    def begin(self, name: str) -> None:
        self.current, self.current_sim = name, 0.0
        self._update()

    def at(self, seconds: float) -> None:
        """The current run has simulated ``seconds``."""
        self.current_sim = min(seconds, self.spans.get(self.current or "", seconds))
        self._update(plain_if_due=True)

    def finish(self, name: str) -> None:
        if name not in self.finished:
            self.finished.append(name)
            self.done_sim += self.spans.get(name, 0.0)
        if self.current == name:
            self.current, self.current_sim = None, 0.0
        self._update(finished=name)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    # -- figures --------------------------------------------------------------------------------
    def simulated(self) -> float:
        return self.done_sim + self.current_sim

    def eta(self) -> float | None:
        """Wall seconds left, from the rate of this process's simulated seconds so far."""
        ran = self.simulated() - self.base_sim
        if ran <= 0:
            return None
        return (time.perf_counter() - self.t0) * (self.total_sim - self.simulated()) / ran

    def status(self) -> str:
        k = min(len(self.finished) + (1 if self.current else 0), len(self.order))
        now = f" ({self.current})" if self.current else ""
        return f"{self.noun} {max(k, 1)} of {len(self.order)}{now}"

    # -- drawing --------------------------------------------------------------------------------
    def _start_bar(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[status]}"),
            TextColumn("{task.completed:.0f}/{task.total:.0f} s simulated"),
            TimeElapsedColumn(),
            TextColumn("about {task.fields[eta]} left"),
            console=Console(stderr=True),
            transient=False,
        )
        self.bar.start()
        self.task = self.bar.add_task(self.label, total=self.total_sim, completed=self.base_sim, status="", eta="?")

    def _update(self, plain_if_due: bool = False, finished: str | None = None) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=self.simulated(), status=self.status(), eta=_clock(self.eta()))
            return
        now = time.perf_counter()
        if finished is not None:
            n = len(self.finished)
            self._line(
                f"{self.label}: {self.noun} {n} of {len(self.order)} finished ({finished}), "
                f"{_clock(now - self.t0)} elapsed, about {_clock(self.eta())} left"
            )
        elif plain_if_due and now - self.last_line >= PLAIN_INTERVAL:
            self._line(
                f"{self.label}: {self.status()}, {self.simulated():.0f} of {self.total_sim:.0f} s simulated, "
                f"{_clock(now - self.t0)} elapsed, about {_clock(self.eta())} left"
            )

    def _line(self, text: str) -> None:
        self.last_line = time.perf_counter()
        print(text, file=self.stream, flush=True)


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
