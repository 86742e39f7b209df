"""Live runs and signals (issue 37 items 2, 5 and 7): nothing outlives ``racc live run``, a
run broken off is marked incomplete and never looks finished, bad ``--duration``, ``--out``
and ``--results`` are refused in one line before anything is set up.

The runs need root and the ``racc-live`` binary and skip with the reason printed otherwise;
the argument checks need only the binary. Each run is a 20 s scenario stopped after a second
or two; the waits are generous deadlines for teardown, not timing claims.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from racc import live

SCENARIO = """
name = "live-signals"
duration = "20s"
seed = 1
packet_size = 1000
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { capacity = "10Mbps", delay = "8ms", buffer = "1bdp" }
access = { capacity = "100Mbps", delay = "1ms" }
[[flows]]
protocol = "newreno"
src = "s{i}"
dst = "d{i}"
"""

#: How long teardown may take before the test calls it a leak.
DEADLINE_S = 15.0


def _binary_or_skip() -> Path:
    try:
        return live.find_binary()
    except live.LiveUnavailable as exc:
        print(f"skipped: {exc}")
        pytest.skip(str(exc))


def _live_or_skip() -> Path:
    if not live.is_root():
        print("skipped: live runs need root (network namespaces and TUN devices)")
        pytest.skip("live runs need root (network namespaces and TUN devices)")
    return _binary_or_skip()


def _children(pid: int, name: str) -> list[int]:
    """Processes called ``name`` whose parent is ``pid``."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        if comm == name and ppid == pid:
            found.append(int(d.name))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _namespaces(pid: int) -> list[str]:
    d = Path("/var/run/netns")
    return sorted(n.name for n in d.iterdir() if n.name.startswith(f"racc-{pid}-")) if d.is_dir() else []


def _wait_for(cond, what: str) -> None:
    end = time.monotonic() + DEADLINE_S
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"not within {DEADLINE_S} s: {what}")
        time.sleep(0.05)


def _start_cli(tmp_path: Path, out: Path) -> tuple[subprocess.Popen, int]:
    """``racc live run`` in a process of its own; returns it and its ``racc-live`` child,
    once that has its namespaces up."""
    (tmp_path / "s.toml").write_text(SCENARIO)
    proc = subprocess.Popen(
        [sys.executable, "-m", "racc", "live", "run", str(tmp_path / "s.toml"), "--out", str(out), "-q", "--no-plots"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    kids: list[int] = []

    def started() -> bool:
        kids[:] = _children(proc.pid, "racc-live")
        return bool(kids) and len(_namespaces(kids[0])) == 2

    _wait_for(started, "racc-live started with its two namespaces")
    return proc, kids[0]


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killing_racc_live_run_leaves_no_runtime_and_no_namespace(tmp_path, sig):
    """Before: racc-live ran on under PID 1 at SCHED_FIFO until the scenario ended."""
    _live_or_skip()
    out = tmp_path / "out"
    proc, child = _start_cli(tmp_path, out)
    time.sleep(1.0)
    proc.send_signal(sig)
    proc.wait(timeout=DEADLINE_S)
    _wait_for(lambda: not _alive(child), f"racc-live (pid {child}) gone after {sig.name} to its parent")
    _wait_for(lambda: not _namespaces(child), "its namespaces removed")
    assert not out.exists(), "an interrupted run must not look finished"
    if sig == signal.SIGTERM:
        assert proc.returncode == 130
        summary = json.loads((tmp_path / "out.incomplete" / "summary.json").read_text())
        assert summary["complete"] is False
        assert 0 < summary["sim_time_s"] < 20
    # The next run sweeps the temporary folder a SIGKILL left behind.
    live.sweep_stale_temp()
    import tempfile

    left = list(Path(tempfile.gettempdir()).glob(f"{live.TEMP_PREFIX}{proc.pid}-*"))
    assert left == []


def test_sigterm_to_racc_live_marks_the_run_incomplete(tmp_path):
    """Before: racc-live exited 0 and wrote 4 s of a 10 s run as a complete-looking folder."""
    _live_or_skip()
    out = tmp_path / "out"
    proc, child = _start_cli(tmp_path, out)
    time.sleep(1.5)
    os.kill(child, signal.SIGTERM)
    _, err = proc.communicate(timeout=DEADLINE_S)
    assert proc.returncode == 130, err
    line = err.strip().splitlines()[-1]
    assert "stopped by SIGTERM" in line and "incomplete" in line, line
    assert not out.exists()
    summary = json.loads((tmp_path / "out.incomplete" / "summary.json").read_text())
    assert summary["complete"] is False
    assert summary["incomplete_reason"] == "stopped by SIGTERM"
    assert 1.0 <= summary["sim_time_s"] < 20
    assert not _namespaces(child)


def test_racc_live_alone_writes_an_interrupted_run_only_as_incomplete(tmp_path):
    binary = _live_or_skip()
    (tmp_path / "s.toml").write_text(SCENARIO)
    doc = tmp_path / "r.json"
    proc = subprocess.Popen([str(binary), str(tmp_path / "s.toml"), "--results", str(doc)], stdout=subprocess.DEVNULL)
    _wait_for(lambda: len(_namespaces(proc.pid)) == 2, "namespaces up")
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=DEADLINE_S) == 128 + signal.SIGINT
    assert not doc.exists()
    s = json.loads((tmp_path / "r.json.incomplete").read_text())["summary"]
    assert s["complete"] is False and s["live"]["stopped_by"] == "SIGINT"
    assert not _namespaces(proc.pid)


@pytest.mark.parametrize("value", ["1e300", "inf", "nan", "-1", "0", "86401", "x"])
def test_an_absurd_duration_is_refused_in_one_line(tmp_path, value):
    """Before: `racc-live --duration 1e300` never ended."""
    binary = _binary_or_skip()
    (tmp_path / "s.toml").write_text(SCENARIO)
    r = subprocess.run(
        [str(binary), str(tmp_path / "s.toml"), "--duration", value], capture_output=True, text=True, check=False
    )
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith(f"--duration {value}:")
    if value not in ("x",):
        assert "86400" in lines[0]


def test_a_scenario_longer_than_a_day_cannot_run_live(tmp_path):
    binary = _live_or_skip()
    (tmp_path / "s.toml").write_text(SCENARIO.replace('duration = "20s"', 'duration = "172800s"'))
    r = subprocess.run([str(binary), str(tmp_path / "s.toml")], capture_output=True, text=True, check=False)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [r.stderr.strip()]
    assert "duration" in r.stderr and "cannot run live" in r.stderr


def test_an_unwritable_results_file_is_refused_before_the_run(tmp_path):
    """Before: `--results` was first written after the whole run."""
    binary = _binary_or_skip()
    (tmp_path / "s.toml").write_text(SCENARIO)
    for bad in (tmp_path / "missing" / "r.json", tmp_path):
        t0 = time.monotonic()
        r = subprocess.run(
            [str(binary), str(tmp_path / "s.toml"), "--results", str(bad)], capture_output=True, text=True, check=False
        )
        assert r.returncode == 1
        assert r.stderr.strip().splitlines() == [r.stderr.strip()]
        assert r.stderr.startswith(f"--results {bad}:"), r.stderr
        assert time.monotonic() - t0 < 15, "refused before the 20 s run"


def test_an_unwritable_out_is_refused_before_the_run(tmp_path):
    _live_or_skip()
    from racc import cli

    (tmp_path / "s.toml").write_text(SCENARIO)
    (tmp_path / "file").write_text("x")
    with pytest.raises(Exception) as e:
        live.run(str(tmp_path / "s.toml"), out=tmp_path / "file" / "out", echo=False)
    assert "cannot write the results folder there" in str(e.value)
    assert cli  # the CLI maps it to one line (ResultsError)


def test_stale_temporary_folders_are_swept(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f"{live.TEMP_PREFIX}{dead.pid}-abc"
    mine = tmp_path / f"{live.TEMP_PREFIX}{os.getpid()}-abc"
    other = tmp_path / f"{live.TEMP_PREFIX}xyz"
    for d in (stale, mine, other):
        d.mkdir()
    assert live.sweep_stale_temp() == [stale]
    assert not stale.exists() and mine.exists() and other.exists()
