"""mpcp-vcp-scenarios (MPCP §4.1, "scenarios similar to those presented in [18]") at reduced scale
(30 s, the last 15 s judged): VCP and DPCP under both AI laws along the VCP paper's axes. DPCP's
faster convergence holds at every point under both laws; its "slightly better" steady
utilisation holds at the base point under the default law and not under the reference law, whose
claim takes that law as its cause; every claim that differs carries a cause the run produced."""

from __future__ import annotations

import pytest
from conftest import needs_core
from racc.experiments import mpcp_vcp_scenarios as exp
from racc.experiments.base import unexplained

pytestmark = needs_core


@pytest.fixture(scope="module")
def rep(quick_reproduction):
    return quick_reproduction("mpcp-vcp-scenarios")


def test_every_case_runs_at_every_point(rep):
    assert rep.skipped == {}
    assert len(rep.results) == 4 * len(exp.POINTS)
    assert {exp.parse(n) for n in rep.results} == {
        (p, law, pt) for p in ("vcp", "dpcp") for law in ("seed001", "ns2") for pt in exp.POINTS
    }


def test_the_cases_run_the_points_they_name(rep):
    for name, res in rep.results.items():
        cap, rtt, n, web = exp.POINTS[exp.parse(name)[2]]
        info = res.port_info.filter(res.port_info["name"] == exp.BOTTLENECK)
        assert float(info["capacity_bps"][0]) == pytest.approx(cap), name
        fi = res.flow_info
        long_lived = fi.filter(fi["group"] == "ftp")
        assert long_lived.height == n, name
        assert float(long_lived["rtt_prop_s"][0]) == pytest.approx(rtt, rel=1e-6), name
        assert (fi.filter(fi["group"] == "web").height > 0) == web, name


def test_dpcp_converges_significantly_faster_everywhere(rep):
    conv = [c for c in rep.claims if "converges significantly faster" in c.claim]
    assert len(conv) == 2 * len(exp.POINTS)
    bad = [(c.claim, c.measured) for c in conv if c.verdict != "consistent"]
    assert not bad, bad


def test_steady_utilisation_at_the_base_point_and_its_cause(rep):
    by = {c.claim: c for c in rep.claims}
    seed, ns2 = exp.claim_names("seed001", "base")[0], exp.claim_names("ns2", "base")[0]
    assert by[seed].verdict == "consistent", by[seed].measured
    assert by[ns2].verdict == "differs", by[ns2].measured
    assert by[ns2].cause.kind == "configuration" and "seed001" in by[ns2].cause.text
    assert seed in by[ns2].cause.evidence
    assert rep.headline.startswith('MPCP §4.1\'s claims hold best under ai_law "seed001"')


def test_every_difference_has_a_cause_from_the_run(rep):
    assert unexplained(rep.claims) == []
    kinds = {c.cause.kind for c in rep.claims if c.verdict == "differs"}
    assert {"configuration", "unspecified"} <= kinds
    for c in rep.claims:
        if c.cause is not None and c.cause.kind == "unspecified":
            assert "this run's sweep along that axis" in c.cause.evidence and "(consistent)" in c.cause.evidence


def test_queue_and_drops_are_measured_for_every_case(rep):
    measured = [c for c in rep.claims if c.verdict == "measured"]
    assert sorted(c.claim.split(":")[0] for c in measured) == sorted(rep.results)


def test_figures(rep):
    figures = rep.figures  # drawn by the experiment's figures() from these results
    assert [p.name for p in figures] == ["fig-vcp-scenarios.png", "fig-vcp-scenarios-base.png"]
    assert all(p.stat().st_size > 20_000 for p in figures)
