"""DCP-EW experiments at reduced scale: what racc reproduces is asserted here, with
margins that hold on other seeds too, and every claim `racc reproduce` judges has its verdict
asserted (`test_claim`). Where racc falls short of the paper the claim's test is a strict
expected failure that says by how much:

- dcpew-parking-lot: the fair shares (DPCP's and DCP-EW's L0 long share stays far below the
  per-flow max-min share, and their L2 long share does not follow the L2 locals): the paper's
  loss, shown by the loss-free and never-cut evidence cases
  (`test_parking_lot_shares_differ_by_the_papers_loss`); VCP's 15:1 bias (VCP nearly stalls
  under the loss, its locals take little more than the long flows).
  Not asserted: DCP-EW's L0 long share at least DPCP's (it is above before the L2 locals start,
  by a point or a few, and below after, on every seed tried).
- dcpew-parking-lot under ai_law "ns2" (router γ 0.95): the same shortfalls, and its
  "closer to max-min than VCP's" holds only before the L2 locals start.
- dcpew-dumbbell-loss at 30 % loss: every protocol is down to a few per cent utilisation and
  the DCP-EW > DPCP > VCP order depends on the seed (it holds on seed 1, whose verdict is
  asserted; `test_dumbbell_loss_ordering` leaves 30 % out).
"""

from __future__ import annotations

import pytest
from conftest import needs_core

pytestmark = needs_core

LOSSY = (0.05, 0.10, 0.20)  # the sweep's points below 30 % (see the docstring)


@pytest.fixture(scope="module")
def parking_lot(quick_reproduction):
    return quick_reproduction("dcpew-parking-lot")


@pytest.fixture(scope="module")
def dumbbell_loss(quick_reproduction):
    return quick_reproduction("dcpew-dumbbell-loss")


@pytest.fixture(scope="module")
def ipsec(quick_reproduction):
    return quick_reproduction("dcpew-ipsec")


@pytest.mark.parametrize(
    ("fixture", "figures", "verdict_claim"),
    [
        ("parking_lot", ["fig-dcpew-parking-lot-shares.png"], "DCP-EW efficient where DPCP under-utilises"),
        ("dumbbell_loss", ["fig-utilisation-vs-loss.png"], "loss-free: DCP-EW equals DPCP"),
        ("ipsec", ["fig-ipsec-queue.png"], "DCP-EW works through the tunnel"),
    ],
)
def test_figures_and_claims_are_produced(fixture, figures, verdict_claim, request):
    rep = request.getfixturevalue(fixture)
    assert not rep.skipped, rep.skipped  # every protocol compared is implemented
    assert [p.name for p in rep.figures] == figures
    # Only the figures listed: the parking lot renames MPCP's Fig. 2 file, which must not stay.
    assert sorted(p.name for p in (rep.out / "figures").iterdir()) == figures
    for p in rep.figures:
        assert p.stat().st_size > 20_000, p  # something was drawn
    assert rep.claims
    for c in rep.claims:
        assert c.measured, c
    # The comparative claim each experiment exists for is judged, not just measured (its
    # verdict is asserted by test_claim below).
    judged = [c for c in rep.claims if c.claim.startswith(verdict_claim)]
    assert len(judged) == 1 and judged[0].verdict != "measured", rep.claims
    assert (rep.out / "claims.json").is_file()


# Every judged claim of the three experiments at reduced scale (seed 1), with its expected
# verdict: None = the claim holds ("consistent"); otherwise racc falls short of the paper and the
# string says how (measured on this build), and the claim's test is a strict expected failure, so
# that it fails the day the claim holds.
PL_SHORT = "racc's long flows stay far from their max-min share under 5 % loss"
CLAIMS = [
    ("parking_lot", "vcp: L0 local:long split", "VCP's bias is 3.2:1 (long 5 %), not the seed's ≈15:1"),
    ("parking_lot", "vcp: L2 long share when L2 locals start", None),
    ("parking_lot", "dpcp: L0 long share before L2 locals start", f"{PL_SHORT}: 13 % (max-min 50 %)"),
    ("parking_lot", "dpcp: L0 long share after L2 locals start", f"{PL_SHORT}: 10 % (max-min 38 %)"),
    (
        "parking_lot",
        "dpcp: L2 long share follows the L2 locals",
        "DPCP's L2 long share goes 24 % → 18 %, not → 50-75 %",
    ),
    ("parking_lot", "dcpew: L0 long share before L2 locals start", f"{PL_SHORT}: 12 % (max-min 50 %)"),
    ("parking_lot", "dcpew: L0 long share after L2 locals start", f"{PL_SHORT}: 10 % (max-min 38 %)"),
    (
        "parking_lot",
        "dcpew: L2 long share follows the L2 locals",
        "DCP-EW's L2 long share goes 22 % → 18 %, not → 50-75 %",
    ),
    ("parking_lot", "dpcp: L0 long share closer to max-min than VCP's", None),
    ("parking_lot", "dcpew: L0 long share closer to max-min than VCP's", None),
    ("parking_lot", "DCP-EW efficient where DPCP under-utilises", None),
    # The same claims under ai_law "ns2" with router γ 0.95 (issue 13 item 2): under 5 % loss the
    # reference sender's law does not bring the long flows near max-min either.
    ("parking_lot", "vcp-ns2: L0 local:long split", "VCP's bias under ns2 is 1.7:1 (long 14 %), not ≈15:1"),
    ("parking_lot", "vcp-ns2: L2 long share when L2 locals start", "VCP's L2 long share moves 5 % → 26 % under ns2"),
    ("parking_lot", "dpcp-ns2: L0 long share before L2 locals start", f"{PL_SHORT}: ns2 17 % (max-min 50 %)"),
    ("parking_lot", "dpcp-ns2: L0 long share after L2 locals start", f"{PL_SHORT}: ns2 12 % (max-min 38 %)"),
    ("parking_lot", "dpcp-ns2: L2 long share follows the L2 locals", "ns2: DPCP's L2 long share 30 % → 22 %"),
    ("parking_lot", "dcpew-ns2: L0 long share before L2 locals start", f"{PL_SHORT}: ns2 18 % (max-min 50 %)"),
    ("parking_lot", "dcpew-ns2: L0 long share after L2 locals start", f"{PL_SHORT}: ns2 11 % (max-min 38 %)"),
    ("parking_lot", "dcpew-ns2: L2 long share follows the L2 locals", "ns2: DCP-EW's L2 long share 33 % → 19 %"),
    (
        "parking_lot",
        "dpcp-ns2: L0 long share closer to max-min than VCP's",
        "ns2: closer before (33 vs 47 points off), not after (26 vs 23): VCP's long flows gain under ns2",
    ),
    (
        "parking_lot",
        "dcpew-ns2: L0 long share closer to max-min than VCP's",
        "ns2: closer before (32 vs 47 points off), not after (27 vs 23): VCP's long flows gain under ns2",
    ),
    ("parking_lot", "ns2 law: DCP-EW efficient where DPCP under-utilises", None),
    ("dumbbell_loss", "utilisation at 5% loss: DCP-EW > DPCP > VCP", None),
    ("dumbbell_loss", "utilisation at 10% loss: DCP-EW > DPCP > VCP", None),
    ("dumbbell_loss", "utilisation at 20% loss: DCP-EW > DPCP > VCP", None),
    ("dumbbell_loss", "utilisation at 30% loss: DCP-EW > DPCP > VCP", None),
    ("dumbbell_loss", "loss-free: DCP-EW equals DPCP", None),
    ("ipsec", "DCP-EW works through the tunnel; DPCP cannot order its packets there", None),
]


@pytest.mark.parametrize(
    ("fixture", "claim"),
    [
        pytest.param(f, c, id=c, marks=[pytest.mark.xfail(strict=True, reason=why)] if why else [])
        for f, c, why in CLAIMS
    ],
)
def test_claim(fixture, claim, request):
    """Each judged claim's verdict: "consistent", or a listed shortfall (strict xfail)."""
    rep = request.getfixturevalue(fixture)
    hits = [c for c in rep.claims if c.claim == claim]
    assert len(hits) == 1, [c.claim for c in rep.claims]
    assert hits[0].verdict == "consistent", hits[0]


@pytest.mark.parametrize("fixture", ["parking_lot", "dumbbell_loss", "ipsec"])
def test_every_judged_claim_is_listed(fixture, request):
    """A claim added, renamed or dropped must be listed above with its expected verdict: no
    verdict goes unasserted."""
    rep = request.getfixturevalue(fixture)
    judged = sorted(c.claim for c in rep.claims if c.verdict != "measured")
    assert judged == sorted(c for f, c, _ in CLAIMS if f == fixture)
    assert all(c.verdict in ("consistent", "differs", "measured") for c in rep.claims), rep.claims


def test_dumbbell_loss_has_a_claim_per_lossy_point(dumbbell_loss):
    from racc.experiments.dcpew_dumbbell_loss import GE_LOSSES

    ordered = [c for c in dumbbell_loss.claims if "DCP-EW > DPCP > VCP" in c.claim]
    assert len(ordered) == len([x for x in GE_LOSSES if x > 0])


# --------------------------------------------------------------------------------------------
# dcpew-parking-lot (DCP-EW §IV)


def test_parking_lot_runs_under_five_percent_loss(parking_lot):
    """The comparison below is only DCP-EW's if every link really loses about 5 % (all cases but
    the loss-free evidence case)."""
    from racc.experiments.base import port_summary
    from racc.experiments.dcpew_parking_lot import LOSSLESS
    from racc.experiments.parking_lot import PL_PORTS

    for link, port in PL_PORTS.items():
        assert port_summary(parking_lot.results[LOSSLESS], port)["losses"] == 0, link
    for name, res in parking_lot.results.items():
        if name == LOSSLESS:
            continue
        for link, port in PL_PORTS.items():
            p = port_summary(res, port)
            assert 0.03 < p["losses"] / p["arrivals"] < 0.07, (name, link, p)


def test_parking_lot_dcpew_uses_the_links_best(parking_lot):
    """DCP-EW §IV: under loss DCP-EW is efficient, DPCP under-utilises, VCP does worse still."""
    from racc.experiments.dcpew_parking_lot import mean_utilisation

    u = {n: mean_utilisation(r) for n, r in parking_lot.results.items()}
    print("mean utilisation of L0..L3:", u)
    # Margins: DCP-EW leads DPCP by 8-9 points and DPCP has about 3x VCP's on seeds 1-3.
    assert u["dcpew"] > u["dpcp"] + 0.05, u
    assert u["dpcp"] > 2 * u["vcp"], u


def test_parking_lot_long_flows_closer_to_max_min_than_vcp(parking_lot):
    """DCP-EW §IV (after MPCP §4.1): DPCP and DCP-EW treat the long flows better than VCP.
    Judged before the L2 locals start: after it the gap to VCP is only a few points."""
    from racc.experiments.parking_lot import phase_shares

    gap = {name: phase_shares(res).gaps[0] for name, res in parking_lot.results.items()}
    print("L0 long share's distance to max-min before the L2 locals:", gap)
    for name in ("dpcp", "dcpew"):
        assert gap[name] < gap["vcp"] - 0.05, gap  # 7-11 points closer on seeds 1-3


SHARE_CLAIMS = [
    f"{p}{tag}: {what}"
    for p in ("dpcp", "dcpew")
    for tag in ("", "-ns2")
    for what in (
        "L0 long share before L2 locals start",
        "L0 long share after L2 locals start",
        "L2 long share follows the L2 locals",
    )
]


def test_parking_lot_shares_differ_by_the_papers_loss(parking_lot):
    """Issue 35 item 4: DPCP's and DCP-EW's long shares under the loss. Without the loss DCP-EW
    (ns2 law) splits L0 at max-min and its L2 long share follows the L2 locals; under the loss
    with no loss ever cutting cwnd (ew_loss_md "none", RTOs too) it stays far off. The long flows
    recover most losses by RTO, not by fast retransmit, and DCP-EW's bit map cuts on none of the
    losses it sees (loss MDs ≈ 0): the loss response is not what they lack. All twelve claims
    carry the "paper" cause with those numbers."""
    from racc.experiments.dcpew_parking_lot import LOSSLESS, NEVER_CUT, loss_recovery
    from racc.experiments.parking_lot import phase_shares

    free, never = phase_shares(parking_lot.results[LOSSLESS]), phase_shares(parking_lot.results[NEVER_CUT])
    print("lossless", free, "never-cut", never)
    # Lossless: the max-min split (50 % / 37.5 %) within the claims' 10 points; measured 54 / 38.
    assert abs(free.l0_long_before - free.maxmin_before) < 0.1 and abs(free.l0_long_after - free.maxmin_after) < 0.1
    assert free.l2_long_before - free.l2_long_after > 0.15
    # Never cutting on loss: far below (measured 16 % / 13 %, L2 falls 5 points).
    assert never.l0_long_before < free.maxmin_before - 0.2 and never.l0_long_after < free.maxmin_after - 0.15
    assert never.l2_long_before - never.l2_long_after < 0.15
    for case in ("dcpew", "dcpew-ns2", NEVER_CUT):
        long = loss_recovery(parking_lot.results[case])["long"]
        assert long["timeouts"] > long["fast_retransmits"], (case, long)  # measured 17-23 vs 4-12
        assert long["loss_mds"] < 1, (case, long)
    claims = {c.claim: c for c in parking_lot.claims}
    for name in SHARE_CLAIMS:
        c = claims[name]
        assert c.verdict == "differs" and c.cause is not None and c.cause.kind == "paper", c
        assert LOSSLESS in c.cause.evidence and NEVER_CUT in c.cause.evidence and "RTOs" in c.cause.evidence


# --------------------------------------------------------------------------------------------
# dcpew-dumbbell-loss (DCP-EW §IV.B, Fig. 6)


def test_dumbbell_loss_30_percent_over_a_longer_run(dumbbell_loss):
    """At 30 % loss every protocol is near idle and a few RTOs decide the order: over 600 s the
    paper's DCP-EW > DPCP > VCP holds (measured 2.06 / 1.97 / 1.73 %), and a "differs" at 30 %
    (seen at full scale) gets the "unspecified" cause (run length) with those numbers."""
    import dataclasses

    from racc.experiments.dcpew_dumbbell_loss import causes, long_runs

    lr = long_runs(dumbbell_loss.results)
    assert lr["dcpew"] > lr["dpcp"] > lr["vcp"] and max(lr.values()) < 0.05, lr
    name = "utilisation at 30% loss: DCP-EW > DPCP > VCP"
    claims = [dataclasses.replace(c, verdict="differs") if c.claim == name else c for c in dumbbell_loss.claims]
    causes(dumbbell_loss.results, claims, True)
    c = next(c for c in claims if c.claim == name)
    assert c.cause.kind == "unspecified" and "run length" in c.cause.text, c.cause
    assert f"{lr['dcpew']:.2%} / {lr['dpcp']:.2%} / {lr['vcp']:.2%}" in c.cause.evidence


def test_dumbbell_loss_ordering(dumbbell_loss):
    """DCP-EW §IV.B: at each loss rate DCP-EW's utilisation is well above DPCP's, DPCP's above
    VCP's (30 % left out: see the module docstring)."""
    from racc.experiments.dcpew_dumbbell_loss import utilisation_by_loss

    u = utilisation_by_loss(dumbbell_loss.results)
    print("bottleneck utilisation by loss:", u)
    for loss in LOSSY:
        a, b, c = u["dcpew"][loss], u["dpcp"][loss], u["vcp"][loss]
        # Ratios on seeds 1-3: DCP-EW/DPCP 1.45-1.85, DPCP/VCP 3.3-7.7.
        assert a > 1.3 * b, (loss, a, b)
        assert b > 2 * c, (loss, b, c)


def test_dumbbell_loss_free_dcpew_matches_dpcp(dumbbell_loss):
    """DCP-EW §IV.B: without loss DCP-EW performs as DPCP does."""
    from racc.experiments.dcpew_dumbbell_loss import utilisation_by_loss

    u = utilisation_by_loss(dumbbell_loss.results)
    assert abs(u["dcpew"][0.0] - u["dpcp"][0.0]) < 0.03, u  # the claim's own tolerance
    # ...and "equal" is not two collapsed runs: loss-free is above every lossy point.
    assert u["dcpew"][0.0] > max(u["dcpew"][x] for x in LOSSY), u


# --------------------------------------------------------------------------------------------
# dcpew-ipsec (DCP-EW §III.C)


def test_ipsec_dcpew_works_through_the_tunnel(ipsec):
    """DCP-EW §III.C: DCP-EW's security module keeps the load factor readable inside the tunnel;
    DPCP's routers cannot order its packets there and it loses utilisation and fairness."""
    from racc.experiments.base import port_summary

    r = ipsec.results
    s = {n: port_summary(res, "r->g2") for n, res in r.items()}
    jain = {n: res.summary["flows"]["jain"] for n, res in r.items()}
    print({n: (s[n]["utilisation"], s[n]["mean_queue_pkts"], jain[n]) for n in r})
    # Seeds 1-3: utilisation 9-11 points higher, Jain 0.05-0.18 higher.
    assert s["dcpew"]["utilisation"] > s["dpcp"]["utilisation"] + 0.05, s
    assert jain["dcpew"] > jain["dpcp"] + 0.03, jain
    # The symptom fig-ipsec-queue.png shows (dcpew-ipsec.toml's note): DPCP's misread load
    # factors leave a standing queue that DCP-EW does not have.
    assert s["dpcp"]["mean_queue_pkts"] > 5 * s["dcpew"]["mean_queue_pkts"] + 1, s
