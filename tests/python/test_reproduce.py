"""``racc reproduce``: the experiment registry, reduced-scale runs, figures and claims."""

from __future__ import annotations

import json

import polars as pl
import pytest
from conftest import needs_core
from racc.errors import ScenarioError

pytestmark = needs_core


def test_registry_and_unknown_name():
    from racc import experiments

    assert "dccp-vcp-t3" in experiments.names()
    with pytest.raises(ScenarioError, match="unknown experiment"):
        experiments.get("no-such-thing")


def test_every_experiment_case_is_a_valid_scenario():
    """Every case's scenario (full and quick) passes the engine's checks, or names what it needs."""
    from racc import experiments, scenario
    from racc.errors import core
    from racc.experiments.base import available, scenario_path

    have = available()
    for name in experiments.names():
        exp = experiments.get(name)
        for case in exp.cases:
            if any(r not in have for r in case.requires):
                continue
            for quick in (False, True):
                ov = dict(exp.quick) if quick else {}
                ov.update(case.overrides)
                sc = scenario.load(str(scenario_path(case)), overrides=ov)
                core().validate(sc.to_json(), f"{name}/{case.name}")


def test_dccp_vcp_t3_quick(tmp_path):
    """TCP/RED at reduced scale: RED keeps a standing queue between its thresholds and drops a few
    percent (seed 001 Figs. 6-7); cases whose protocols are missing are reported as not run."""
    from racc import experiments

    rep = experiments.reproduce("dccp-vcp-t3", out=tmp_path / "r", quick=True)
    assert "tcp-red" in rep.results
    bn = next(p for p in rep.results["tcp-red"].summary["ports"] if p["name"] == "r0->r1")
    assert 15 < bn["mean_queue_pkts"] < 140  # inside RED's scaled band (min_th 15, buffer 140)
    assert 0.005 < bn["drop_rate"] < 0.2
    # Fig. 5's flow is found by its sender, and it is the 60 ms RTPD one.
    from racc.experiments.dccp_vcp_t3 import flow_60ms

    for res in rep.results.values():
        info = res.flow_info.filter(pl.col("flow") == flow_60ms(res))
        assert info["rtt_prop_s"].to_list() == [pytest.approx(0.060)]
    data = json.loads((tmp_path / "r" / "claims.json").read_text())
    assert data["cases_run"] == sorted(rep.results)
    assert {c["verdict"] for c in data["claims"]} <= {"consistent", "differs", "not run", "measured"}
    for f in data["figures"]:
        assert (tmp_path / "r" / f).stat().st_size > 10_000
    for case, why in rep.skipped.items():
        assert "not implemented" in why, case


def test_cli_reproduce_list_and_error(racc_cli):
    r = racc_cli("reproduce", "--list")
    assert r.returncode == 0 and "dccp-vcp-t3" in r.stdout
    bad = racc_cli("reproduce", "nope")
    assert bad.returncode == 2 and bad.stderr.startswith("error: unknown experiment 'nope'")


def test_reproduce_with_another_seed(tmp_path, racc_cli):
    """``--seed N`` runs every case with seed N (recorded in claims.json and in each case's
    resolved scenario), and a different seed gives a different random draw."""
    out = tmp_path / "s2"
    r = racc_cli("reproduce", "mpcp-queue", "--quick", "--seed", "2", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "seed 2" in r.stdout
    data = json.loads((out / "claims.json").read_text())
    assert data["seed"] == 2
    from racc import experiments

    one = experiments.reproduce("mpcp-queue", quick=True)
    for case in data["cases_run"]:
        assert json.loads((out / case / "scenario.resolved.json").read_text())["seed"] == 2
    # The routers' first load-factor tick is drawn from the seed, so the queues differ.
    q2 = pl.read_parquet(out / "dpcp" / "links.parquet")["queue_pkts"].to_list()
    q1 = one.results["dpcp"].links["queue_pkts"].to_list()
    assert q1 != q2


def test_reproduce_on_dask_matches_the_sequential_run(tmp_path):
    """``workers=2`` runs the cases on a local Dask cluster; the claims (and every case's
    results) are the ones of the sequential run, in the experiment's case order."""
    from racc import experiments

    seq = experiments.reproduce("mpcp-queue", out=tmp_path / "seq", quick=True)
    par = experiments.reproduce("mpcp-queue", out=tmp_path / "par", quick=True, workers=2)
    assert list(par.results) == list(seq.results) == [c.name for c in par.experiment.cases]
    assert [c.__dict__ for c in par.claims] == [c.__dict__ for c in seq.claims]
    for name in seq.results:
        assert par.results[name].links.equals(seq.results[name].links), name
        assert (tmp_path / "par" / name / "summary.json").exists()
    a = json.loads((tmp_path / "seq" / "claims.json").read_text())
    b = json.loads((tmp_path / "par" / "claims.json").read_text())
    assert a == b
    assert [p.name for p in par.figures] == [p.name for p in seq.figures]
