"""``racc crosscheck ns2``: one scenario, several seeds, racc and ns-2 side by side.

Per seed: racc's engine resolves the scenario (start times, Poisson arrival lists, buffer limits,
routes), the Tcl writer turns that into an ns-2 script, ns-2 runs it in the background while racc
runs the same resolved scenario in this process, pausing at the window's edges to read its queue
integrals. Everything is checked, and refused if ns-2 cannot express it, before anything runs.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from racc import scenario as _scenario
from racc import summary as _summary
from racc.crosscheck import compare, counters, ns, support, tcl
from racc.errors import ScenarioError, core
from racc.runner import finished_results

# Sample intervals tried, largest first: the largest that divides the window's edges and the
# duration and gives at least MIN_SAMPLES samples (racc samples flows only while they run, and so
# does the ns-2 script, so both read a flow's counters at the same instants).
INTERVALS_NS = [10**9 * k // 10 for k in (10, 5, 2, 1)] + [10**6 * k for k in (50, 20, 10, 5, 2, 1)] + [10**5, 10**4]
MIN_SAMPLES = 200


@dataclass
class Crosscheck:
    """What one ``racc crosscheck ns2`` produced (also what is saved)."""

    scenario: str
    source: str
    seeds: list[int]
    window: tuple[float, float]
    interval_s: float
    ns_version: str
    comparison: pl.DataFrame
    values: pl.DataFrame
    sides: list[tuple[compare.Side, compare.Side]]
    scripts: dict[int, str]
    logs: dict[int, str]


def parse_window(text: str | None, duration_s: float) -> tuple[float, float]:
    """``"START:END"`` in seconds (default: the last half of the run)."""
    if not text:
        return (round(duration_s / 2, 9), duration_s)
    try:
        a, b = (float(x.strip().removesuffix("s")) for x in text.split(":"))
    except ValueError:
        raise ScenarioError(f"--window {text!r}: expected START:END in seconds, e.g. 40:100") from None
    if not (0 <= a < b <= duration_s + 1e-9):
        raise ScenarioError(f"--window {text!r}: need 0 <= START < END <= the duration ({duration_s:g} s)")
    return a, b


def seed_list(text: str | None, first: int) -> list[int]:
    """``N`` (N seeds from the scenario's own), or a list like ``1,3`` / ``1-5``."""
    if text is None:
        text = "5"
    text = text.strip()
    try:
        if text.isdigit():
            n = int(text)
            if n < 1:
                raise ValueError
            return list(range(first, first + n))
        seeds: list[int] = []
        for part in text.split(","):
            lo, sep, hi = part.strip().partition("-")
            seeds.extend(range(int(lo), int(hi) + 1) if sep else [int(lo)])
    except ValueError:
        raise ScenarioError(f"--seeds {text!r}: expected a count N or seeds like 1,2,3 or 1-5") from None
    if not seeds:
        raise ScenarioError(f"--seeds {text!r}: no seeds")
    return list(dict.fromkeys(seeds))


def interval_ns(duration_ns: int, window: tuple[float, float]) -> int:
    """The sample interval (see INTERVALS_NS) for this duration and window."""
    edges = [round(window[0] * 1e9), round(window[1] * 1e9), duration_ns]
    for c in INTERVALS_NS:
        if all(e % c == 0 for e in edges) and duration_ns // c >= MIN_SAMPLES:
            return c
    for c in INTERVALS_NS:
        if all(e % c == 0 for e in edges):
            return c
    raise ScenarioError(f"--window {window[0]:g}:{window[1]:g}: edges must be whole multiples of 10 µs")


def prepare(
    path: str, overrides: Iterable[str], seeds_text: str | None, window_text: str | None, vcp: bool = False
) -> dict[str, Any]:
    """Load and check everything before any run: scenarios per seed, window, interval, refusals."""
    base = _scenario.load(path, overrides=list(overrides))
    engine = core()
    resolved = engine.validate(base.to_json(), base.source)  # the engine's checks, with key paths
    resolved = json.loads(resolved) if isinstance(resolved, (str, bytes)) else resolved
    window = parse_window(window_text, resolved["duration"] / 1e9)
    step = interval_ns(resolved["duration"], window)
    first = base.data.get("seed", 1)
    cases = []
    for s in seed_list(seeds_text, first if isinstance(first, int) else 1):
        sc = _scenario.load(path, seed=s, overrides=list(overrides))
        # Samples on the window's edges and every flow recorded: sampling changes nothing the
        # engine does, and both sides read flows at the same instants.
        sc.data.setdefault("record", {}).update(interval=f"{step / 1e6:g}ms", flows=True)
        cases.append((s, sc, engine.Simulation(sc.to_json(), sc.source)))
    _, sc0, sim0 = cases[0]
    support.check(sc0.data, json.loads(sim0.resolved().json()), sim0.results()["port_info"], sc0.source, vcp)
    return {"cases": cases, "window": window, "interval_ns": step, "source": sc0.source, "name": sc0.name}


def crosscheck_ns2(
    path: str,
    *,
    seeds: str | None = None,
    window: str | None = None,
    overrides: Iterable[str] = (),
    jobs: int | None = None,
    log: Callable[[str], None] | None = None,
    vcp: bool = False,
    ns_path: str | None = None,
) -> Crosscheck:
    """Run racc and ns-2 on ``path`` for each seed and compare them (see the module doc). With
    ``vcp``, ns-2 is an ``ns`` built with the VCP authors' code (``ns_path``, else
    ``RACC_NS2_VCP``), and racc's vcp flows and router module run as that code."""
    plan = prepare(path, overrides, seeds, window, vcp)
    exe = ns.find_vcp(ns_path) if vcp else ns.find(ns_path)
    version = ns.version(exe)
    say = log or (lambda _m: None)
    w0, w1 = plan["window"]
    step = plan["interval_ns"]
    jobs = jobs or max(1, os.cpu_count() or 1)
    work = Path(tempfile.mkdtemp(prefix="racc-ns2-"))
    runs: dict[int, ns.NsRun] = {}
    pairs, scripts, logs = [], {}, {}
    try:
        pending = []
        for s, sc, sim in plan["cases"]:
            resolved = json.loads(sim.resolved().json())
            script = tcl.write(resolved, sim.results()["port_info"], step)
            while sum(r.running() for r in runs.values()) >= jobs:
                time.sleep(0.05)
            runs[s] = ns.start(exe, script, work / f"seed-{s}")
            scripts[s] = script
            say(f"seed {s}: ns-2 started; racc running")
            res, qint = _run_racc(sc, sim, resolved, (w0, w1))
            pending.append((s, resolved, res, qint))
            say(f"seed {s}: racc done in {res.summary['run']['wall_s']:.1f} s")
        for s, resolved, res, qint in pending:
            t0 = time.perf_counter()
            path_counters = ns.finish(runs[s], f"seed {s}")
            n2 = counters.read(path_counters, resolved, res.flow_info, res.port_info, step)
            n2.summary = _summary.of_results(n2, (w0, w1))
            n2.summary["run"] = {
                "engine": f"ns-{version}",
                "scenario": resolved["name"],
                "seed": s,
                "waited_s": time.perf_counter() - t0,
            }
            logs[s] = (work / f"seed-{s}" / "ns.log").read_text(encoding="utf-8", errors="replace")
            say(f"seed {s}: ns-2 done")
            pairs.append(
                (
                    compare.Side("racc", s, res, qint),
                    compare.Side("ns-2", s, n2, compare.ns2_queue_integrals(n2, [w0, w1])),
                )
            )
    finally:
        for r in runs.values():
            r.kill()
        shutil.rmtree(work, ignore_errors=True)
    comparison, values = compare.table(pairs, w0, w1)
    return Crosscheck(
        plan["name"],
        plan["source"],
        [p[0].seed for p in pairs],
        (w0, w1),
        step / 1e9,
        version,
        comparison,
        values,
        pairs,
        scripts,
        logs,
    )


def _run_racc(sc: Any, sim: Any, resolved: dict[str, Any], window: tuple[float, float]):
    """Run racc to the end, reading its cumulative queue integrals at the window's edges."""
    started = _dt.datetime.now(_dt.timezone.utc)
    t0 = time.perf_counter()
    qint: dict[float, dict[int, float]] = {}
    for t in window:
        if t > 0:
            sim.run_until(t)
            ports = sim.results()["summary"]["ports"]
            qint[t] = {p["port"]: p["mean_queue_pkts"] * t for p in ports}
        else:
            qint[t] = {}
    sim.run_until(resolved["duration"] / 1e9)
    return finished_results(sim, sc, resolved, started, time.perf_counter() - t0, window), qint


def progress_log() -> Callable[[str], None] | None:
    """A one-line-per-step log on stderr when it is a terminal."""
    if not sys.stderr.isatty():
        return None
    return lambda m: print(m, file=sys.stderr, flush=True)
