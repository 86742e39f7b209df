"""Output that fits (issue 18 item 9): tables are not cut at 80 columns when written to a pipe or
a log, every command that prints a table has --json, and swept values are stored typed."""

from __future__ import annotations

import json

import polars as pl
from conftest import needs_core


@needs_core
def test_tables_are_not_cut_in_a_pipe(tmp_path, racc_cli):
    r = racc_cli("reproduce", "--list", cwd=tmp_path)
    assert r.returncode == 0
    assert "…" not in r.stdout
    assert "dpcp-ack-loss0.50" in r.stdout  # the last case of mpcp-loss-sweep, in full


@needs_core
def test_json_everywhere_a_table_is_printed(tmp_path, racc_cli):
    r = racc_cli("list", "--json", cwd=tmp_path)
    doc = json.loads(r.stdout)
    assert {"protocols", "router_modules", "loss_models", "scenarios"} <= set(doc)
    r = racc_cli("scenario", "list", "--json", cwd=tmp_path)
    assert any(s["name"] == "vcp-dumbbell" for s in json.loads(r.stdout))
    r = racc_cli("reproduce", "--list", "--json", cwd=tmp_path)
    assert any(e["name"] == "mpcp-queue" for e in json.loads(r.stdout))
    r = racc_cli("run", "vcp-dumbbell", "--set", "duration=2s", "--no-plots", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["flows"]["count"] == 4
    r = racc_cli("reproduce", "mpcp-dumbbell", "--quick", "--cases", "dpcp", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    claims = json.loads(r.stdout)["claims"]
    assert claims and {"claim", "paper", "measured", "rule", "verdict"} <= set(claims[0])


def test_swept_values_are_typed():
    from racc.sweep import typed_frame

    loss = [{"model": "bernoulli", "p": 0.001}, {"model": "bernoulli", "p": 0.01}]
    rows = [
        {"point": 0, "n": 1, "x": 1, "loss": loss[0], "proto": "reno"},
        {"point": 1, "n": 2, "x": 0.5, "loss": loss[1], "proto": "newreno"},
    ]
    df = typed_frame(rows, {"n": [1, 2], "x": [1, 0.5], "loss": loss, "proto": ["reno", "newreno"]})
    assert df.schema["n"] == pl.Int64 and df.schema["x"] == pl.Float64 and df.schema["proto"] == pl.Utf8
    assert df.schema["loss"] == pl.Struct({"model": pl.Utf8, "p": pl.Float64})
    assert df["loss"].struct.field("p").to_list() == [0.001, 0.01]
