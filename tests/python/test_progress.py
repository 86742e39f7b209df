"""Long work is never silent (issue 18 item 5): case k of N with simulated seconds and the time
left, as a bar on a terminal and as plain lines at intervals when stderr is not one."""

from __future__ import annotations

import io

import racc
from racc import progress
from racc.progress import Tracker

SCEN = {"name": "t", "duration": 10.0, "interval": 0.5}


def test_plain_lines_when_not_a_terminal(monkeypatch):
    monkeypatch.setattr(progress, "PLAIN_INTERVAL", 0.0)
    out = io.StringIO()
    t = Tracker("exp", [("a", 10.0), ("b", 30.0)], terminal=False, stream=out)
    t.begin("a")
    t.at(5.0)
    t.finish("a")
    t.begin("b")
    t.at(15.0)
    t.close()
    lines = out.getvalue().splitlines()
    assert lines[0] == "exp: 2 cases to run, 40 s simulated in all"
    assert lines[1].startswith("exp: case 1 of 2 (a), 5 of 40 s simulated") and "left" in lines[1]
    assert lines[2].startswith("exp: case 1 of 2 finished (a)")
    assert lines[3].startswith("exp: case 2 of 2 (b), 25 of 40 s simulated")


def test_time_left_scales_by_simulated_seconds(monkeypatch):
    clock = iter([0.0, 10.0])
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(clock, 10.0))
    t = Tracker("exp", [("a", 10.0), ("b", 30.0)], terminal=False, stream=io.StringIO())
    t.finish("a")  # 10 of 40 simulated seconds in 10 s of wall time
    assert t.eta() == 30.0


def test_resumed_work_counts_what_was_finished_before():
    out = io.StringIO()
    t = Tracker("exp", [("a", 10.0), ("b", 30.0)], already=["a"], terminal=False, stream=out)
    assert "1 cases to run (1 already finished), 30 s simulated" in out.getvalue()
    assert t.simulated() == 10.0 and t.eta() is None  # nothing run by this process yet


def test_bar_on_a_terminal(monkeypatch, capsys):
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    t = Tracker("exp", [("a", 10.0), ("b", 30.0)])
    t.begin("a")
    t.at(5.0)
    t.close()
    err = capsys.readouterr().err
    assert "case 1 of 2 (a)" in err and "s simulated" in err and "left" in err


def test_single_run_prints_plain_lines_when_not_a_terminal(fake, monkeypatch, capsys):
    monkeypatch.setattr(progress, "PLAIN_INTERVAL", 0.0)
    racc.run(SCEN, progress=True)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 100 and lines[49].startswith("t: 5.0 of 10.0 s simulated (50%)")


def test_short_single_run_is_quiet(fake, capsys):
    racc.run(SCEN, progress=True)  # far shorter than PLAIN_INTERVAL
    assert capsys.readouterr().err == ""
