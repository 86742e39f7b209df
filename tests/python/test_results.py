"""Results folders: round trip, atomic save, refusal to overwrite foreign folders."""

import json

import polars as pl
import pytest
import racc
from racc import results as rs
from racc.errors import ResultsError
from synth import make_results

FILES = {
    "links.parquet",
    "flows.parquet",
    "completions.parquet",
    "group_links.parquet",
    "flow_info.parquet",
    "port_info.parquet",
    "summary.json",
    "scenario.toml",
    "scenario.resolved.json",
}


def _siblings(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir())


def test_save_load_roundtrip(tmp_path):
    res = make_results()
    out = res.save(tmp_path / "r")
    assert {p.name for p in out.iterdir()} == FILES
    back = racc.load(out)
    for t in rs.TABLES:
        assert back.tables()[t].equals(res.tables()[t]), t
    assert back.summary["flows"]["jain"] == pytest.approx(res.summary["flows"]["jain"])
    assert back.scenario_text == res.scenario_text and back.resolved == res.resolved
    assert back.name == "synthetic"
    assert json.loads((out / "summary.json").read_text())["run"]["format"] == rs.FORMAT


def test_empty_tables_keep_schema(tmp_path):
    df = rs.frame("completions", {})
    assert df.height == 0 and df.schema["fct_s"] == pl.Float64
    assert rs.frame("flows", {"time_s": [1], "flow": [0], "goodput_bps": [5]}).schema["goodput_bps"] == pl.Float64


@pytest.mark.parametrize("exc", [RuntimeError("disk on fire"), KeyboardInterrupt()])
def test_interrupted_save_leaves_nothing(tmp_path, monkeypatch, exc):
    res = make_results()
    calls = []

    def boom(self, path, *a, **k):
        calls.append(path)
        if len(calls) == 3:
            raise exc
        return orig(self, path, *a, **k)

    orig = pl.DataFrame.write_parquet
    monkeypatch.setattr(pl.DataFrame, "write_parquet", boom)
    with pytest.raises(type(exc)):
        res.save(tmp_path / "r")
    assert _siblings(tmp_path) == []  # no final folder, no temporary left behind


def test_interrupted_save_keeps_previous_results(tmp_path, monkeypatch):
    out = make_results(name="first").save(tmp_path / "r")
    monkeypatch.setattr(rs, "_write_json", lambda *a: (_ for _ in ()).throw(RuntimeError("x")))
    with pytest.raises(RuntimeError):
        make_results(name="second").save(out)
    assert racc.load(out).name == "first"
    assert _siblings(tmp_path) == ["r"]


def test_existing_results_folder_is_replaced(tmp_path):
    out = make_results(name="first").save(tmp_path / "r")
    make_results(name="second").save(out)
    assert racc.load(out).name == "second"
    assert _siblings(tmp_path) == ["r"]
    # A file the user put there makes the folder the user's: never replaced (issue 37).
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ResultsError, match=r"holds files racc did not write \(notes.txt\)"):
        make_results(name="third").save(out)
    assert racc.load(out).name == "second" and (out / "notes.txt").read_text() == "mine"


def test_foreign_folder_refused(tmp_path):
    d = tmp_path / "precious"
    d.mkdir()
    (d / "thesis.tex").write_text("do not delete")
    with pytest.raises(ResultsError, match="not a racc results folder"):
        make_results().save(d)
    assert (d / "thesis.tex").read_text() == "do not delete"
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ResultsError, match="not a directory"):
        make_results().save(f)
    assert _siblings(tmp_path) == ["file", "precious"]


def test_empty_folder_accepted(tmp_path):
    (tmp_path / "r").mkdir()
    make_results().save(tmp_path / "r")
    assert racc.load(tmp_path / "r").flows.height > 0


def test_load_rejects_non_results(tmp_path):
    with pytest.raises(ResultsError):
        racc.load(tmp_path)


def test_plot_failure_keeps_data(tmp_path, monkeypatch):
    from racc import plots

    monkeypatch.setattr(plots, "render_all", lambda *a: 1 / 0)
    res = make_results()
    with pytest.warns(UserWarning, match="plots not written"):
        out = res.save(tmp_path / "r", plots=True)
    assert "ZeroDivisionError" in racc.load(out).summary["run"]["plot_error"]


def test_stale_temporaries_of_dead_processes_removed(tmp_path):
    dead = tmp_path / ".r.tmp-999999999-abcd"
    dead.mkdir()
    (dead / "links.parquet").write_text("half")
    live = tmp_path / f".r.tmp-{__import__('os').getpid()}-beef"
    live.mkdir()
    make_results().save(tmp_path / "r")
    assert _siblings(tmp_path) == [live.name, "r"]


def test_buffer_columns_and_port_names_from_port_info():
    import numpy as np

    raw = {
        "links": {"time_s": ("<f8", np.array([0.1, 0.1, 0.2]).tobytes()), "port": ("<u4", np.array([0, 1, 0], "<u4"))},
        "port_info": {"port": [0, 1], "name": ["a->b", "b->a"]},
        "summary": {"events": 3},
    }
    res = rs.Results.from_core(raw)
    assert res.links.get_column("time_s").to_list() == [0.1, 0.1, 0.2]
    assert res.links.schema["port"] == pl.Int64
    assert res.links.get_column("name").to_list() == ["a->b", "b->a", "a->b"]
    assert res.links.columns == ["time_s", "port", "name"]
    assert res.flows.height == 0 and res.flows.schema["goodput_bps"] == pl.Float64
