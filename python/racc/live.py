"""``racc live run``: a scenario on real Linux packets (the ``racc-live`` binary of
``crates/racc-net``), written as the same results folder as ``racc run``; ``--compare`` runs the
simulator on the same scenario and sets the two side by side.

The live run needs root (network namespaces and TUN devices): anything else is refused at once
with one line. ``racc-live`` is found as ``$RACC_LIVE``, then ``racc-live`` beside the Python
that runs racc (``scripts/setup.sh`` builds it into the virtual environment), then on ``PATH``,
then in the source tree's Cargo target folders (``$CARGO_TARGET_DIR``, ``target/``).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from racc import scenario as _scenario
from racc import summary as _summary
from racc.errors import Interrupted, ResultsError, core
from racc.processes import pid_alive
from racc.results import Results, check_replaceable
from racc.runner import run_info

BINARY = "racc-live"
#: The runtime's temporary folders: ``racc-live-<pid>-...`` (the pid says when one is stale).
TEMP_PREFIX = "racc-live-"
#: Appended to a results file or folder of a run broken off by a signal.
INCOMPLETE_SUFFIX = ".incomplete"
NOT_ROOT = "racc live needs root: it creates network namespaces and TUN devices (run it as root, e.g. with sudo)"


class LiveUnavailable(RuntimeError):
    """A live run cannot start here: not root, or no ``racc-live`` binary."""


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def find_binary() -> Path:
    """The ``racc-live`` executable (see the module doc for the order), or :class:`LiveUnavailable`."""
    candidates: list[Path] = []
    if os.environ.get("RACC_LIVE"):
        candidates.append(Path(os.environ["RACC_LIVE"]))
    candidates.append(Path(sys.executable).parent / BINARY)
    found = shutil.which(BINARY)
    if found:
        candidates.append(Path(found))
    repo = Path(__file__).resolve().parents[2]
    if os.environ.get("CARGO_TARGET_DIR"):
        candidates.append(Path(os.environ["CARGO_TARGET_DIR"]) / "release" / BINARY)
    candidates.append(repo / "target" / "release" / BINARY)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    raise LiveUnavailable(
        f"the live runtime's binary {BINARY} was not found (looked at $RACC_LIVE, beside {sys.executable}, "
        "on PATH and in target/release); build it with `cargo build --release -p racc-net`"
    )


def run(
    scenario: str | os.PathLike | Mapping[str, Any],
    *,
    seed: int | None = None,
    overrides: Iterable[str] | Mapping[str, Any] | None = None,
    out: str | os.PathLike | None = None,
    plots: bool = False,
    pcap: str | os.PathLike | None = None,
    pcap_ports: Iterable[str] | None = None,
    echo: bool = True,
    clock_sends: bool = False,
) -> Results:
    """Run ``scenario`` live and return its :class:`Results` (written to ``out`` if given).

    Refused before anything is set up: a non-root user, a missing binary, a bad scenario, a
    scenario that cannot run live (the runtime names the key and the reason). ``echo`` passes
    the runtime's own report through to stdout. ``pcap`` asks the router for a capture of
    the ports named ``pcap_ports`` (every port if None). ``clock_sends`` turns due-time sends
    off (``racc-live --clock-sends``: timers and the router's stamps at the clock reading;
    docs/LIVE.md).
    """
    if not is_root():
        raise LiveUnavailable(NOT_ROOT)
    binary = find_binary()
    sc = _scenario.load(scenario, seed=seed, overrides=overrides)
    text = sc.to_json()
    if out is not None:
        check_replaceable(Path(out))
        check_writable(Path(out))
    engine = core()
    try:
        resolved = engine.validate(text, sc.source)
    except _scenario.ScenarioError as exc:
        raise _scenario.blame_override(exc, sc) from None
    if isinstance(resolved, (str, bytes)):
        resolved = json.loads(resolved)
    sweep_stale_temp()
    tmp = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-"))
    try:
        spec_file = tmp / f"{sc.name}.json"
        spec_file.write_text(text, encoding="utf-8")
        doc_file = tmp / "results.json"
        cmd = [str(binary), str(spec_file), "--results", str(doc_file)]
        if pcap is not None:
            cmd += ["--pcap", str(Path(pcap).resolve())]
            for name in pcap_ports or []:
                cmd += ["--pcap-port", name]
        if clock_sends:
            cmd.append("--clock-sends")
        started = _dt.datetime.now(_dt.timezone.utc)
        t0 = time.perf_counter()
        raw, stopped = _run_binary(cmd, doc_file, echo)
        wall = time.perf_counter() - t0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    res = _results(raw, sc, resolved, started, wall)
    if stopped is not None:
        raise Interrupted(_save_incomplete(res, out, plots, stopped))
    if out is not None:
        res.save(out, plots=plots)
    return res


def _results(raw: dict[str, Any], sc: Any, resolved: Any, started: _dt.datetime, wall: float) -> Results:
    """The runtime's document as a :class:`Results` with the summary ``racc run`` writes."""
    res = Results.from_core(raw, resolved=resolved, scenario_text=sc.text, name=sc.name)
    res.summary = _summary.of_results(res)
    res.summary["run"] = run_info(sc, resolved, started, wall, 0)
    res.summary["run"]["engine"] = "live"
    res.summary["run"]["events_per_s"] = None
    return res


def _save_incomplete(res: Results, out: str | os.PathLike | None, plots: bool, stopped: str) -> str:
    """An interrupted run's partial results, written beside ``out`` as ``OUT.incomplete`` (never
    as ``out``: nothing that reads results folders may take it for a finished run) with
    ``summary.json`` saying ``"complete": false``. Returns the one line that says so."""
    live = res.summary.get("live", {}) if isinstance(res.summary.get("live"), dict) else {}
    reached = live.get("reached_s")
    what = f"live run stopped by {stopped}" + (f" at {reached:.2f} s" if isinstance(reached, (int, float)) else "")
    res.summary["complete"] = False
    res.summary["incomplete_reason"] = f"stopped by {stopped}"
    if out is None:
        return f"{what}; no results were written"
    dest = Path(out).with_name(Path(out).name + INCOMPLETE_SUFFIX)
    try:
        check_replaceable(dest)
        res.save(dest, plots=plots)
    except (OSError, ResultsError) as exc:
        return f"{what}; the partial results were not written ({exc})"
    return f"{what}; nothing written to {out}; the partial run is in {dest} (summary.json: complete false)"


def _run_binary(cmd: list[str], doc_file: Path, echo: bool) -> tuple[dict[str, Any], str | None]:
    """Run ``racc-live``; its report goes to stdout, a refusal becomes an exception naming why.
    Returns its results document and, for a run broken off by a signal, the signal's name.

    The child never outlives us (issue 37 item 2): it runs in a process group of its own (the
    ``ip`` commands it starts included), is sent SIGTERM by the kernel if we die, even by
    SIGKILL (``PR_SET_PDEATHSIG``), and Ctrl-C or SIGTERM here is passed on to it; on SIGTERM
    it tears its namespaces down and writes its partial results, which we wait for."""
    # `--parent`: the runtime sets PR_SET_PDEATHSIG first thing, then checks that we are still
    # its parent (we may have died before that). Done there rather than in a `preexec_fn`,
    # which is unsafe in a process with threads (polars has a pool).
    cmd = [*cmd, "--parent", str(os.getpid())]
    with _signals_as_interrupts():
        proc = subprocess.Popen(
            cmd,
            stdout=None if echo else subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        stopped = None
        try:
            try:
                _, err = proc.communicate()
            except KeyboardInterrupt as exc:
                stopped = getattr(exc, "signal_name", "SIGINT")
                _signal_group(proc, signal.SIGTERM)
                _, err = proc.communicate()
        finally:
            if proc.poll() is None:  # an exception other than an interrupt
                _signal_group(proc, signal.SIGTERM)
                proc.wait()
            _signal_group(proc, signal.SIGKILL)  # any `ip` left in its group
    partial = doc_file.with_name(doc_file.name + INCOMPLETE_SUFFIX)
    if partial.exists():
        # Broken off by a signal (ours, passed on, or one sent to the runtime itself).
        stopped = stopped or _signal_name(-proc.returncode if proc.returncode < 0 else proc.returncode - 128)
        return json.loads(partial.read_text(encoding="utf-8")), stopped
    if stopped is not None:
        raise Interrupted(f"live run stopped by {stopped} before it started; no results were written")
    if proc.returncode != 0 or not doc_file.exists():
        msg = (err or "").strip().splitlines()
        reason = msg[-1] if msg else f"exit status {proc.returncode}"
        raise _scenario.ScenarioError(reason) if "cannot run live" in reason else LiveUnavailable(reason)
    # The runtime's warnings (forged or replayed packets, issue 37 item 8) reach the user.
    for line in (err or "").splitlines():
        if "warning:" in line:
            print(line, file=sys.stderr)
    return json.loads(doc_file.read_text(encoding="utf-8")), None


def _signal_name(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return f"signal {n}"


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    """``sig`` to the child's process group (it leads it), if any of it is left."""
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


@contextlib.contextmanager
def _signals_as_interrupts() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt (naming the signal) while the live run is on, as
    Ctrl-C does, so that both pass on to the runtime and leave a run marked incomplete."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum: int, _frame: Any) -> None:
        exc = KeyboardInterrupt()
        exc.signal_name = _signal_name(signum)  # type: ignore[attr-defined]
        raise exc

    old = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def sweep_stale_temp() -> list[Path]:
    """Remove the temporary folders of live runs whose process is gone (one killed with
    SIGKILL could not remove its own); returns them."""
    removed = []
    for d in Path(tempfile.gettempdir()).glob(f"{TEMP_PREFIX}*-*"):
        pid = d.name[len(TEMP_PREFIX) :].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid() or pid_alive(int(pid)):
            continue
        shutil.rmtree(d, ignore_errors=True)
        removed.append(d)
    return removed


def check_writable(out: Path) -> None:
    """One line unless ``out``'s folder could be created and written (the nearest existing
    ancestor is a writable folder), checked before the run rather than after it."""
    p = Path(os.path.abspath(out))
    anc = p.parent
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    if not anc.is_dir() or not os.access(anc, os.W_OK | os.X_OK):
        raise ResultsError(f"{out}: cannot write the results folder there ({anc} is not a writable folder)")


# ------------------------------------------------------------------------------------------
# --compare


def compare(live: Results, sim: Results) -> dict[str, list[dict[str, Any]]]:
    """Live against simulated, per flow (whole-run goodput) and per port with traffic
    (utilisation, drops, mean queue), with the relative difference of each pair."""

    def rel(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None or b == 0 else a / b - 1.0

    def goodput(res: Results) -> dict[int, float]:
        if res.flows.height == 0:
            return {}
        dur = float(res.summary.get("sim_time_s") or 0.0)
        interval = float(res.summary.get("sample_interval_s") or 0.0)
        if not interval > 0:
            return {}
        by = res.flows.group_by("flow").agg(
            (pl.col("goodput_bps") * _summary.row_seconds(interval)).sum().alias("bits")
        )
        starts = dict(zip(res.flow_info["flow"].to_list(), res.flow_info["start_s"].to_list()))
        return {
            int(f): float(b) / max(dur - float(starts.get(f, 0.0)), 1e-9)
            for f, b in zip(by["flow"].to_list(), by["bits"].to_list())
        }

    lg, sg = goodput(live), goodput(sim)
    names = dict(zip(live.flow_info["flow"].to_list(), live.flow_info["protocol"].to_list()))
    flows = [
        {
            "flow": f,
            "protocol": names.get(f, ""),
            "live_goodput_bps": lg.get(f),
            "sim_goodput_bps": sg.get(f),
            "difference": rel(lg.get(f), sg.get(f)),
        }
        for f in sorted(set(lg) | set(sg))
    ]
    sp = {p["name"]: p for p in sim.summary.get("ports", [])}
    ports = []
    for p in live.summary.get("ports", []):
        s = sp.get(p["name"], {})
        if not p.get("arrivals") and not s.get("arrivals"):
            continue
        ports.append(
            {
                "port": p["name"],
                "router": p.get("router"),
                "live_utilisation": p.get("utilisation"),
                "sim_utilisation": s.get("utilisation"),
                "live_drops": p.get("drops"),
                "sim_drops": s.get("drops"),
                "live_mean_queue_pkts": p.get("mean_queue_pkts"),
                "sim_mean_queue_pkts": s.get("mean_queue_pkts"),
            }
        )
    return {"flows": flows, "ports": ports}


def write_compare(out: Path, table: dict[str, list[dict[str, Any]]], live: Results, sim: Results) -> list[Path]:
    """``compare.json``, ``compare.txt`` (the printed table) and ``compare.png`` (goodput per flow
    and the busiest port's queue over time, live solid, simulated dashed) into ``out``."""
    written = []
    p = out / "compare.json"
    p.write_text(json.dumps(table, indent=2) + "\n", encoding="utf-8")
    written.append(p)
    p = out / "compare.txt"
    p.write_text("\n".join(compare_lines(table)) + "\n", encoding="utf-8")
    written.append(p)
    png = _compare_plot(out / "compare.png", live, sim)
    if png is not None:
        written.append(png)
    return written


def compare_lines(table: dict[str, list[dict[str, Any]]]) -> list[str]:
    """The side-by-side table as text lines."""

    def mb(x: float | None) -> str:
        return "-" if x is None else f"{x * 1e-6:.3f}"

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{x * 100:+.1f} %"

    def num(x: Any, d: int = 3) -> str:
        return "-" if x is None else (f"{x:.{d}f}" if isinstance(x, float) else str(x))

    lines = ["flow  protocol      live Mb/s   sim Mb/s   difference"]
    for r in table["flows"]:
        lines.append(
            f"{r['flow']:>4}  {r['protocol']:<12} {mb(r['live_goodput_bps']):>10} {mb(r['sim_goodput_bps']):>10}"
            f" {pct(r['difference']):>12}"
        )
    lines.append("")
    lines.append("port          router      util live  util sim  drops live  drops sim  queue live  queue sim (pkts)")
    for r in table["ports"]:
        lines.append(
            f"{r['port']:<13} {r['router']!s:<10} {num(r['live_utilisation']):>10} {num(r['sim_utilisation']):>9}"
            f" {num(r['live_drops']):>11} {num(r['sim_drops']):>10} {num(r['live_mean_queue_pkts'], 1):>11}"
            f" {num(r['sim_mean_queue_pkts'], 1):>10}"
        )
    return lines


def _compare_plot(path: Path, live: Results, sim: Results) -> Path | None:
    if live.flows.height == 0:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9.0, 7.0), dpi=120)
    ax1, ax2 = fig.subplots(2, 1, sharex=True)
    colours = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    flows = sorted(set(live.flows["flow"].to_list()))[:10]
    # Means over bins of about 1/60 of the run (at least one sample): 10 ms samples of a
    # window-based flow alternate between bursts and silences.
    end = float(live.summary.get("sim_time_s") or 1.0)
    step = max(float(live.summary.get("sample_interval_s") or 0.0), end / 60)
    for i, f in enumerate(flows):
        c = colours[i % len(colours)]
        for res, style, label in ((live, "-", "live"), (sim, "--", "sim")):
            d = (
                res.flows.filter(pl.col("flow") == f)
                .with_columns(((pl.col("time_s") / step).ceil() * step).alias("bin"))
                .group_by("bin")
                .agg(pl.col("goodput_bps").mean())
                .sort("bin")
            )
            ax1.step(d["bin"], d["goodput_bps"] * 1e-6, style, color=c, where="pre", label=f"flow {f} {label}")
    ax1.set_ylabel(f"goodput (Mb/s, {step * 1e3:.0f} ms means)")
    ax1.set_title("live (solid) and simulated (dashed)")
    ax1.legend(fontsize="small", ncol=2)
    busiest = max(live.summary.get("ports", []), key=lambda p: p.get("utilisation") or 0.0, default=None)
    if busiest is not None:
        for res, style, label in ((live, "-", "live"), (sim, "--", "sim")):
            d = res.links.filter(pl.col("name") == busiest["name"]).sort("time_s")
            ax2.plot(d["time_s"], d["queue_pkts"], style, label=label)
        ax2.set_ylabel(f"queue at {busiest['name']} (packets)")
        ax2.legend(fontsize="small")
    ax2.set_xlabel("time (s)")
    fig.tight_layout()
    fig.savefig(path)
    return path
