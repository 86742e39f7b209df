"""xcc-scalability (XCC-Linux's summary: "scalable with increase in link capacity and round-trip
delay, and admit low queuing delay and almost zero packet loss in the steady state") at reduced
scale: the whole grid for 20 s, the points of at most 100 ms judged over the last 10 s (the
400 ms points are left unjudged, saying why). Every judged claim of every protocol holds."""

from __future__ import annotations

import pytest
from conftest import needs_core
from racc.experiments import xcc_scalability as exp
from racc.experiments.base import NOT_JUDGED_QUICK

pytestmark = needs_core


@pytest.fixture(scope="module")
def rep(quick_reproduction):
    return quick_reproduction("xcc-scalability")


def test_case_names_round_trip():
    for c in exp.cases():
        p, cap, rtt = exp.parse(c.name)
        assert exp.point_name(p, cap, rtt) == c.name
        assert c.overrides[f"{exp.LINK}.router"] == p == c.overrides["flows.0.protocol"]
    assert len(exp.cases()) == 4 * len(exp.CAPACITIES) * len(exp.RTTS)


def test_every_point_runs_at_its_capacity_and_rtt(rep):
    assert rep.skipped == {}
    assert len(rep.results) == 4 * len(exp.CAPACITIES) * len(exp.RTTS)
    for name, res in rep.results.items():
        _p, cap, rtt = exp.parse(name)
        info = res.port_info.filter(res.port_info["name"] == exp.BOTTLENECK)
        assert float(info["capacity_bps"][0]) == pytest.approx(cap), name
        assert res.flow_info["rtt_prop_s"].to_list() == pytest.approx([rtt] * exp.FLOWS, rel=1e-6), name


def test_every_judged_claim_holds(rep):
    judged = [c for c in rep.claims if c.verdict not in ("measured", NOT_JUDGED_QUICK)]
    short = sum(rtt <= exp.QUICK_MAX_RTT for rtt in exp.RTTS)
    assert len(judged) == 3 * 4 * len(exp.CAPACITIES) * short
    bad = [(c.claim, c.measured) for c in judged if c.verdict != "consistent"]
    assert not bad, bad
    unjudged = [c for c in rep.claims if c.verdict == NOT_JUDGED_QUICK]
    assert len(unjudged) == 3 * 4 * len(exp.CAPACITIES) * (len(exp.RTTS) - short)
    assert all("400 ms" in c.claim and "RTTs in" in c.note for c in unjudged)
    measured = [c for c in rep.claims if c.verdict == "measured"]
    assert len(measured) == len(rep.results) and all("peak queue" in c.measured for c in measured)


def test_heat_maps(rep):
    figures = rep.figures  # drawn by the experiment's figures() from these results
    assert [p.name for p in figures] == ["fig-scalability.png"]
    assert figures[0].stat().st_size > 50_000
