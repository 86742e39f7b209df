"""``racc.run`` against the fake engine: chunked progress, summary, save, interruption."""

import pytest
import racc
from racc import progress

SCEN = {
    "name": "demo",
    "duration": 10.0,
    "interval": 0.5,
    "flows": [{"rate": 1e6}, {"rate": 1e6}, {"rate": 4e6, "size": 100000, "start": 1.0}],
}


def test_run_returns_frames_and_summary(fake):
    res = racc.run(SCEN)
    assert res.links.height == 20 * 2 and res.flows.height == 20 * 3
    assert res.completions.height == 1 and res.flow_info.height == 3 and res.port_info.height == 2
    s = res.summary
    assert s["events"] == 10000 and s["ports"][0]["name"] == "r0->r1"
    assert s["flows"]["jain"] == pytest.approx(1.0) and s["flows"]["jain_flows"] == 2
    assert s["fct"]["count"] == 1
    assert s["run"]["scenario"] == "demo" and s["run"]["seed"] == 1


def test_run_advances_in_one_percent_chunks(fake):
    racc.run(SCEN)
    calls = fake.Simulation.calls
    assert len(calls) == 100 and calls[0] == pytest.approx(0.1) and calls[-1] == 10.0


def test_run_stops_when_engine_reports_done():
    class Sim:
        now_s, end_s, events = 0.0, 10.0, 0
        n = 0

        def run_until(self, t):
            self.n += 1
            self.now_s = t
            return t >= 3.0  # e.g. "stop at the arrival of the last flow"

    sim = Sim()
    progress.advance(sim)
    assert sim.n == 30


def test_progress_bar_runs_without_tty(fake, capsys):
    racc.run(SCEN, progress=True)  # not a terminal under pytest: silently no bar
    assert capsys.readouterr().err == ""


def test_progress_bar_on_terminal(fake, monkeypatch, capsys):
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    racc.run(SCEN, progress=True)
    err = capsys.readouterr().err
    assert "simulated" in err and "10.00" in err and "events/s" in err
    assert len(fake.Simulation.calls) == 100


def test_run_out_writes_folder(fake, tmp_path):
    res = racc.run(SCEN, out=tmp_path / "o", plots=True, seed=3)
    assert res.path == tmp_path / "o"
    back = racc.load(tmp_path / "o")
    assert back.summary["run"]["seed"] == 3 and (tmp_path / "o" / "report.html").exists()
    assert not (tmp_path / "o" / "scenario.toml").exists()  # came from a dict


def test_run_interrupt_leaves_nothing(fake, tmp_path):
    with pytest.raises(KeyboardInterrupt):
        racc.run({**SCEN, "interrupt_at": 5.0}, out=tmp_path / "o")
    assert list(tmp_path.iterdir()) == []


def test_scenario_error_before_running(fake):
    with pytest.raises(racc.ScenarioError, match="key `nope`"):
        racc.run({**SCEN, "nope": 1})


def test_run_refuses_foreign_out_before_running(fake, tmp_path):
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "keep.txt").write_text("x")
    fake.Simulation.calls = ["untouched"]
    with pytest.raises(racc.ResultsError):
        racc.run(SCEN, out=tmp_path / "o")
    assert fake.Simulation.calls == ["untouched"]
