"""A cause beside every "differs" (issue 35 item 1): the Cause record, where it shows (claims.json,
the printed summary, report.html), and that no claim of a shipped experiment differs without one."""

from __future__ import annotations

import json

import pytest
from conftest import REPO, needs_core
from racc.experiments.base import CAUSES, Cause, Claim, explain, judged, tally, unexplained
from racc.experiments.printout import summary_lines


def _differs(name: str = "x") -> Claim:
    return judged(name, "< 4 s", 5.0, "5.0 s", (None, 4.0), "at most 4 s")


def test_cause_kinds_and_one_line():
    assert CAUSES == ("paper", "reference", "unspecified", "configuration", "racc")
    with pytest.raises(ValueError, match="not one of"):
        Cause("bug", "t", "e")
    with pytest.raises(ValueError, match="one non-empty line"):
        Cause("racc", "two\nlines", "e")
    with pytest.raises(ValueError, match="one non-empty line"):
        Cause("paper", "t", "")


def test_only_a_differing_claim_takes_a_cause():
    ok = judged("y", "< 4 s", 3.0, "3.0 s", (None, 4.0), "at most 4 s")
    claims = [_differs(), ok]
    cause = Cause("paper", "the paper's parameters give 0.55 %", "computed")
    assert explain(claims, "x", cause) and claims[0].cause == cause
    assert not explain(claims, "y", cause) and claims[1].cause is None
    with pytest.raises(KeyError, match="no claim named"):
        explain(claims, "renamed", cause)
    with pytest.raises(ValueError, match="only"):
        Claim("z", "", "", "consistent", cause=cause)


def test_tally_and_summary_count_verdicts_and_causes():
    a, b = _differs("a"), _differs("b")
    explain([a], "a", Cause("configuration", "holds under ai_law ns2", "dpcp-ns2: 33 %"))
    claims = [a, b, Claim("m", "", "1", "measured")]
    assert unexplained(claims) == [b]
    assert tally(claims) == ({"differs": 2, "measured": 1}, {"configuration": 1, "none": 1})
    lines = summary_lines(claims, "Fig. 2 is reproduced by ai_law ns2")
    assert lines[0].startswith("Fig. 2")
    assert lines[1] == "3 claims: 2 differs, 1 measured"
    assert lines[2] == "differs, by cause: configuration 1, none 1"


def test_claims_json_carries_the_cause(tmp_path):
    c = _differs()
    explain([c], "x", Cause("racc", "no cause found", "tried both AI laws"))
    doc = json.loads(json.dumps(c.to_json()))
    assert doc["cause"] == {"kind": "racc", "text": "no cause found", "evidence": "tried both AI laws"}
    assert json.loads(json.dumps(_differs().to_json()))["cause"] is None


def test_report_html_shows_the_cause_and_the_headline(tmp_path):
    from racc.experiments import report

    c = _differs()
    explain([c], "x", Cause("unspecified", "MPCP gives no cap on ξ", "sweep: 1.1x to 8.2x"))
    payload = {"experiment": "e", "description": "d", "source": "MPCP §5", "headline": "law ns2 reproduces Fig. 5"}
    page = report.render(tmp_path, payload, [c], [])
    assert "<b>unspecified</b>: MPCP gives no cap on ξ" in page and "sweep: 1.1x to 8.2x" in page
    assert "law ns2 reproduces Fig. 5" in page and "differs, by cause: unspecified 1" in page


@needs_core
@pytest.mark.parametrize("name", sorted(__import__("racc.experiments", fromlist=["names"]).names()))
def test_no_shipped_claim_differs_without_a_cause(name, quick_reproduction):
    """Issue 35: every "differs" of every shipped experiment says why (at reduced scale)."""
    rep = quick_reproduction(name)
    missing = [(c.claim, c.measured) for c in unexplained(rep.claims)]
    assert not missing, missing
    for c in rep.claims:
        if c.cause is not None:
            assert c.verdict == "differs" and c.cause.kind in CAUSES and c.cause.text and c.cause.evidence


@pytest.fixture(scope="module")
def parking_quick(quick_reproduction):
    return quick_reproduction("mpcp-parking-lot")


@needs_core
def test_configuration_cause_carries_the_other_laws_measured_value(parking_quick):
    """DPCP's fair split (MPCP Fig. 2) differs under the default AI law and holds under the VCP
    reference code's: the cause names that law and quotes its claim as measured in this run."""
    claims = {c.claim: c for c in parking_quick.claims}
    c = claims["dpcp: L0 long share after L2 locals start"]
    other = claims["dpcp-ns2: L0 long share after L2 locals start"]
    assert c.verdict == "differs" and other.verdict == "consistent", (c, other)
    assert c.cause.kind == "configuration" and 'ai_law "ns2"' in c.cause.text
    assert f"measures {other.measured} in this run" in c.cause.evidence
    # the headline names the law that reproduces the figure, with the drops it costs
    assert parking_quick.headline.startswith('MPCP Fig. 2 (the fair split) is reproduced by ai_law "ns2"')
    assert "Drops over L0..L3" in parking_quick.headline


@needs_core
def test_paper_cause_is_red_arithmetic_computed_from_the_run():
    """VCP-DCCP §4's TCP/RED queue (≈180 packets) and drop rate (≈7 %) cannot both hold under its
    own RED parameters: RED drops 0.55 % (1.1 % with its count spacing) at an average of 180."""
    from racc import experiments
    from racc.experiments.dccp_vcp_t3 import red_drop_fraction, red_drop_probability

    params = {"min_th": 150, "max_th": 700, "max_p": 0.1}
    assert red_drop_probability(180, **params) == pytest.approx(0.1 * 30 / 550)
    assert red_drop_probability(180, **params) == pytest.approx(0.0055, abs=5e-5)
    assert red_drop_fraction(180, **params) < 0.07 / 5
    assert red_drop_probability(125, **params) == 0.0
    rep = experiments.reproduce("dccp-vcp-t3", quick=True, cases=["tcp-red", "dccp-red"])
    paper = [c for c in rep.claims if c.cause is not None and c.cause.kind == "paper"]
    # DCCP/RED: the paper's queue (≈125 packets, 12.5 at this scale) is below min_th, where RED
    # drops nothing, yet it reports ≈3 % drops
    assert [c.claim for c in paper if c.claim.startswith("dccp-red")] == [
        "dccp-red: mean bottleneck queue",
        "dccp-red: drop rate",
    ]
    assert all("p_b(12.5) = 0.00%" in c.cause.evidence for c in paper), paper


@needs_core
def test_racc_cause_says_what_was_tried():
    """VCP's 15:1 bias differs under both AI laws; run without the case in its authors' settings
    (whose comparison with their code gives the cause "reference"), it stays racc's open shortfall,
    saying what was tried."""
    from racc import experiments

    rep = experiments.reproduce("mpcp-parking-lot", quick=True, cases=["vcp", "vcp-ns2"])
    racc = [c for c in rep.claims if c.cause is not None and c.cause.kind == "racc"]
    assert racc, "VCP's 15:1 bias differs under both AI laws at reduced scale"
    for c in racc:
        assert "tried" in c.cause.evidence


#: dccp-vcp-t3's reduced scale (its `quick` overrides) for the ns-2 comparison
T3_QUICK = {
    "duration": "30s",
    "topology.pairs": "20",
    "flows[0].count": "20",
    "topology.bottleneck.capacity": "4.5Mbps",
    "topology.bottleneck.buffer": "140pkt",
    "topology.bottleneck.router_params.min_th": "15",
    "topology.bottleneck.router_params.max_th": "70",
}


@needs_core
def test_reference_cause_ns2_holds_racc_queue(tmp_path, racc_cli):
    """The evidence of dccp-vcp-t3's "reference" cause: ns-2.35 on the TCP/RED case (web-like
    sources left out) holds racc's mean queue, well above the paper's ≈180 packets (18 at this
    scale), by the crosscheck's own agreement rule (measured: 26.5 vs 26.8 pkts, seeds 1-3)."""
    import shutil

    import polars as pl
    from racc import experiments

    if shutil.which("ns") is None:
        pytest.skip("ns-2 (`ns`) is not installed: apt-get install ns2")
    from racc.experiments.dccp_vcp_t3 import REFERENCE_COMMAND

    args = ["crosscheck", "ns2", "dccp-vcp-t3", "--seeds", "1-3", "--out", tmp_path / "cc"]
    args += ["--set", "traffic=[]", "--set", "flows[0].params.spurious_rto=off"]
    for k, v in T3_QUICK.items():
        args += ["--set", f"{k}={v}"]
    assert "flows[0].params.spurious_rto=off" in REFERENCE_COMMAND
    r = racc_cli(*args, timeout=900)
    assert r.returncode == 0, r.stderr
    cmp = pl.read_parquet(tmp_path / "cc" / "comparison.parquet")
    row = cmp.filter(pl.col("metric").str.starts_with("mean queue")).row(0, named=True)
    assert row["agree"], row
    assert min(row["racc_mean"], row["ns2_mean"]) > 18 * 1.25, row  # above the 'about' window of 18
    rep = experiments.reproduce("dccp-vcp-t3", quick=True, cases=["tcp-red"])
    c = next(c for c in rep.claims if c.claim == "tcp-red: mean bottleneck queue")
    assert c.verdict == "differs" and c.cause.kind == "reference" and "test_reference_cause" in c.cause.evidence


@needs_core
def test_unspecified_cause_is_the_xi_sweeps_range():
    """MPCP gives no cap on DPCP's MI factor ξ; the experiment's own sweep of it spans DPCP's queue
    ratio, and the cause quotes that range (the ns2 law's cases left out, so no other law explains
    the claim first)."""
    from racc import experiments
    from racc.experiments.mpcp_queue import XI_CAPS, xi_case_name

    rep = experiments.reproduce("mpcp-queue", quick=True, cases=["vcp", *(xi_case_name(c) for c in XI_CAPS)])
    c = next(c for c in rep.claims if c.claim == "dpcp standing queue / VCP's")
    assert c.verdict == "differs", c
    assert c.cause.kind == "unspecified" and "ξ" in c.cause.text
    assert "ξ-cap sweep run here" in c.cause.evidence and "spans" in c.cause.evidence


@needs_core
def test_configuration_cause_rcp_stamped_at_arrival():
    """xcc-single: RCP's join queue falls short of the slides' 9415 packets with the rate written
    at dequeue (ns-2's, the default) and holds with it written at arrival, where XCC-Linux's
    netfilter module sits; the cause quotes that case's claim as measured in this run."""
    from racc import experiments
    from racc.experiments.xcc_single import STAMP_ARRIVAL, STAMP_CLAIM

    rep = experiments.reproduce("xcc-single", quick=True, cases=["rcp", STAMP_ARRIVAL])
    claims = {c.claim: c for c in rep.claims}
    c, other = claims["RCP's queue when a flow joins"], claims[STAMP_CLAIM]
    assert c.verdict == "differs" and other.verdict == "consistent", (c, other)
    assert c.cause.kind == "configuration" and 'stamp = "arrival"' in c.cause.text
    assert f"measures {other.measured} in this run" in c.cause.evidence
    # the summary names the configuration that reproduces the slides' figure first
    assert rep.headline.startswith("XCC-Linux's RCP join queue") and "stamping at arrival" in rep.headline


@needs_core
def test_unspecified_cause_is_the_join_spread_sweeps_range():
    """xcc-abrupt: the slides do not say how the ten joins are spread; the experiment's sweep of
    the spread runs RCP's overshoot across the slides' 300 % (quick: +396 % at 0.1 s, +278 % at
    0.12 s, +86 % at the scenario's 1 s), and the cause quotes that range."""
    from racc import experiments
    from racc.experiments.xcc_abrupt import SPREADS_S, spread_case_name, spread_sweep

    rep = experiments.reproduce("xcc-abrupt", quick=True, cases=["rcp", *(spread_case_name(s) for s in SPREADS_S)])
    c = next(c for c in rep.claims if c.claim == "RCP overshoots the link capacity when 10 flows join")
    assert c.verdict == "differs" and c.cause.kind == "unspecified" and "spread" in c.cause.text
    assert "join-spread sweep run here" in c.cause.evidence and "spans" in c.cause.evidence
    overshoots = [o for _s, o, _q in spread_sweep(rep.results)]
    assert min(overshoots) < 3.0 < max(overshoots), overshoots


@needs_core
def test_unspecified_cause_is_the_round_trip_sweeps_range(quick_reproduction):
    """mpcp-dumbbell: MPCP gives no round trip for its testbed; DPCP's steady utilisation is
    below VCP's at the scenario's 500 ms and the experiment's round-trip sweep finds where it is
    not, which the cause quotes."""
    from racc.experiments.mpcp_dumbbell import rtt_sweep

    # The same quick run test_mpcp and test_no_shipped_claim_differs_without_a_cause[mpcp-dumbbell] read.
    rep = quick_reproduction("mpcp-dumbbell")
    c = next(c for c in rep.claims if c.claim == "DPCP steady-state utilisation at least VCP's")
    assert c.verdict == "differs", c
    assert c.cause.kind == "unspecified" and "round-trip" in c.cause.text
    rows = rtt_sweep(rep.results)
    assert len(rows) == 4 and "RTT sweep run here" in c.cause.evidence
    for rtt, _uv, _ud, _settled in rows:
        assert f"{rtt} ms " in c.cause.evidence


@needs_core
def test_unspecified_cause_is_the_xi_sweep_on_tpcp_and_dpcp():
    """mpcp-queue: TPCP's queue is not "slightly higher" than DPCP's uncapped (TPCP overflows the
    buffer); the ξ-cap sweep run on both shows the cap decides it, and the cause quotes it. At
    full scale (60 s at 10 Mb/s; at --quick's 30 s the claim holds): measured uncapped 89 vs 93
    packets, capped at 0.25 36 vs 29."""
    from racc import experiments
    from racc.experiments.mpcp_queue import XI_CAPS, tpcp_xi_case_name, tpcp_xi_sweep, xi_case_name

    cases = [*(xi_case_name(c) for c in XI_CAPS), *(tpcp_xi_case_name(c) for c in XI_CAPS)]
    rep = experiments.reproduce("mpcp-queue", cases=cases)
    c = next(c for c in rep.claims if c.claim == "TPCP's standing queue slightly higher than DPCP's")
    assert c.verdict == "differs", c
    assert c.cause.kind == "unspecified" and "ξ" in c.cause.text
    assert "ξ-cap sweep run here on both" in c.cause.evidence
    assert len(tpcp_xi_sweep(rep.results)) == len(XI_CAPS)


@needs_core
def test_reference_cause_vcp_authors_code_parking_lot():
    """The evidence of mpcp-parking-lot's "reference" cause for VCP's bias: the VCP authors' own ns-2
    code (an `ns` built with it, RACC_NS2_VCP), on the parking lot at the reduced scale with racc's
    reference-profile case's settings, gives racc's L0 local:long goodput split, far from MPCP's
    15:1, and L2's long share falls once L2's locals start (before, they are L2's only flows).
    One seed at a scale where the split is still settling, so the two are held within the 'much'
    factor of each other (measured, (200, 300] s: racc 5.2:1, ns-2 7.0:1; L2 long share 31 % and
    26 %; at full scale, (2000, 3000] s: 6.9:1 and 6.7:1)."""
    import os
    import re

    exe = os.environ.get("RACC_NS2_VCP")
    if not exe:
        pytest.skip("RACC_NS2_VCP is not set: no ns-2 built with the VCP authors' code (docs/PROTOCOLS.md)")
    from racc import experiments
    from racc.crosscheck.run import crosscheck_ns2
    from racc.experiments.base import MUCH
    from racc.experiments.mpcp_parking_lot import REF, REF_SETS

    quick = [re.sub(r"\.(\d+)\.", r"[\1].", f"{k}={v}") for k, v in experiments.get("mpcp-parking-lot").quick.items()]
    cc = crosscheck_ns2(
        str(REPO / "scenarios" / "mpcp-parking-lot.toml"),
        seeds="1",
        window="200:300",
        overrides=quick + REF_SETS,
        vcp=True,
        ns_path=exe,
    )
    rows = {(r["section"], r["metric"]): r for r in cc.comparison.iter_rows(named=True)}
    good = {g: rows[(f"group {g}", "goodput, Mb/s")] for g in ("long", "local-L0", "local-L2")}
    split = {s: good["local-L0"][f"{s}_mean"] / good["long"][f"{s}_mean"] for s in ("racc", "ns2")}
    l2_long = {
        s: good["long"][f"{s}_mean"] / (good["long"][f"{s}_mean"] + good["local-L2"][f"{s}_mean"]) for s in split
    }
    assert max(split.values()) <= MUCH * min(split.values()), split
    assert max(split.values()) < 15 * 0.75, split  # below the 'about' window of MPCP's 15:1
    assert max(l2_long.values()) < 0.9, l2_long  # moved from 100 %
    rep = experiments.reproduce("mpcp-parking-lot", quick=True, cases=["vcp", REF])
    c = next(c for c in rep.claims if c.claim == "vcp: L0 local:long split")
    assert c.verdict == "differs" and c.cause.kind == "reference" and "test_reference_cause_vcp" in c.cause.evidence
