"""``racc.run``: load a scenario, run it in the engine, and wrap the output as :class:`Results`."""

from __future__ import annotations

import datetime as _dt
import os
import secrets
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from racc import memory as _memory
from racc import scenario as _scenario
from racc import summary as _summary
from racc.errors import core
from racc.progress import advance
from racc.resolved import Resolved
from racc.results import FORMAT, Results, check_replaceable


def run(
    scenario: str | os.PathLike | Mapping[str, Any],
    *,
    seed: int | None = None,
    overrides: Iterable[str] | Mapping[str, Any] | None = None,
    out: str | os.PathLike | None = None,
    progress: bool | Callable[[float], None] = False,
    plots: bool = False,
    window: tuple[float, float] | None = None,
    pcap: str | os.PathLike | None = None,
    pcap_ports: Iterable[str] | None = None,
) -> Results:
    """Run one scenario and return its :class:`Results`.

    ``scenario`` is a path, TOML text or a dict; ``overrides`` are ``"key=value"`` strings
    (or a ``{dotted.key: value}`` mapping); ``seed`` sets the top-level ``seed``. With ``out``
    the results folder is written (atomically), with ``plots`` also its plots and report.
    ``window`` is the (start, end) in seconds for Jain's index (default: last half of the run).
    ``progress``: True for a bar on a terminal (plain lines at intervals otherwise), or a function
    told the simulated seconds done as the run goes (a :class:`racc.progress.Tracker`'s ``at``).
    ``pcap``: write the packets that start serialisation on the ports named ``pcap_ports``
    (every port if None) to this pcapng file, at simulated times (``summary.run.pcap``).
    Raises :class:`racc.ScenarioError` for a bad scenario before anything runs.
    """
    peak_reset = _memory.reset_peak()  # the run's own peak, whatever the process held before
    t_setup = time.perf_counter()
    sc = _scenario.load(scenario, seed=seed, overrides=overrides)
    text, arrivals = sc.engine_inputs()
    extra = (arrivals,) if arrivals else ()  # trace entries' rows, beside the JSON
    if out is not None:
        check_replaceable(Path(out))  # refuse before spending time on the run
    engine = core()
    try:
        # Checked and built once: the engine refuses a bad scenario here, before anything runs.
        sim = engine.Simulation(text, sc.source, *extra)
    except _scenario.ScenarioError as exc:
        raise _scenario.blame_override(exc, sc) from None
    resolved = Resolved(sim.resolved())  # made into text only when read or written
    # Stand-in engines (the tests' fakes) need not estimate; the built extension always does.
    estimate = dict(sim.estimate()) if hasattr(sim, "estimate") else None
    notes = scenario_notes(sim, sc)  # told before the run starts
    # A capture goes to a temporary sibling, renamed into place only when the run ends well: an
    # interrupted or failed run leaves no pcap that looks whole, and no earlier file is cut short.
    final = Path(pcap) if pcap is not None else None
    tmp = final.parent / f".{final.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}" if final is not None else None
    try:
        if tmp is not None:
            sim.capture(str(tmp), None if pcap_ports is None else list(pcap_ports))
        started = _dt.datetime.now(_dt.timezone.utc)
        t0 = time.perf_counter()
        setup = t0 - t_setup  # read, check and build: a trace's file included
        if callable(progress):
            advance(sim, on_chunk=progress)
        else:
            advance(sim, show=progress, label=sc.name)
        res = finished_results(sim, sc, resolved, started, time.perf_counter() - t0, window)
        if pcap is not None:
            counts, error = sim.capture_status()
            res.summary["run"]["pcap"] = {"file": str(pcap), "packets": dict(counts), "error": error}
        del sim  # the engine's copy of the series is no longer needed (and the capture is closed)
        if tmp is not None:
            os.replace(tmp, final)
    finally:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
    res.summary["run"]["peak_reset"] = peak_reset
    res.summary["run"]["estimate"] = estimate  # what `[limits]` was checked against, beside the peak
    res.summary["run"].update(notes)
    res.summary["run"]["setup_s"] = setup
    if out is not None:
        res.save(out, plots=plots)
    return res


def scenario_notes(sim: Any, sc: _scenario.Scenario) -> dict:
    """Warn (:class:`racc.scenario.ScenarioWarning`) of every setting the engine finds cannot act on
    its port or run, and return them with the settings router modules derived from their ports
    (RED's automatic thresholds), for the run's summary: ``{"warnings": [...], "router_settings":
    {port: {name: value}}}``."""
    if not hasattr(sim, "warnings"):  # the tests' stand-in engines
        return {}
    found = [{"key": key, "reason": reason} for key, reason in sim.warnings()]
    for w in found:
        warnings.warn(f"{sc.source}: key `{w['key']}`: {w['reason']}", _scenario.ScenarioWarning, stacklevel=3)
    return {"warnings": found, "router_settings": {k: dict(v) for k, v in sim.router_settings().items()}}


def finished_results(
    sim: Any,
    sc: _scenario.Scenario,
    resolved: dict,
    started: _dt.datetime,
    wall: float,
    window: tuple[float, float] | None,
) -> Results:
    """A finished engine run as :class:`Results`, with its summary statistics and provenance."""
    res = Results.from_core(sim.results(), resolved=resolved, scenario_text=sc.text, name=sc.name)
    res.summary = _summary.of_results(res, window)
    # The seed as the engine ran it: from its own summary (the engine always states it), else
    # from the resolved scenario.
    seed = res.summary.get("seed")
    if seed is None:
        seed = resolved.get("seed")
    res.summary["run"] = run_info(sc, {"seed": seed}, started, wall, int(sim.events))
    return res


def run_info(sc: _scenario.Scenario, resolved: dict, started: _dt.datetime, wall: float, events: int) -> dict:
    """Provenance recorded in ``summary.json`` under ``run``."""
    from racc import __version__

    return {
        "format": FORMAT,
        "scenario": sc.name,
        "source": str(Path(sc.source).resolve()) if sc.path else sc.source,
        "seed": resolved.get("seed") if resolved.get("seed") is not None else sc.data.get("seed"),
        "overrides": sc.overrides,
        "racc_version": __version__,
        "started_utc": started.isoformat(timespec="seconds"),
        "wall_s": wall,
        "events_per_s": (events / wall) if wall > 0 else None,
        # Engine run and results tables; `Results.save` raises it to include writing them.
        "peak_memory_bytes": _memory.peak_bytes(),
    }
