"""QFCP §III's three experiments at reduced scale. qfcp-fct (§III.A): the first 6,000 arrivals
of the paper's list (to about 9.6 s) at its capacity and delay, for TCP Reno, XCP, RCP and QFCP.
Every case runs on the identical arrival list and draws Fig. 1. qfcp-wlan-fairness (§III.B): the
full 40 s scenario (it is small). qfcp-lossy (§III.C): three of the seven loss rates.
Every judged claim is a test, a strict expected failure with the measured number where racc falls
short of the paper."""

from __future__ import annotations

import polars as pl
import pytest
from conftest import needs_core

pytestmark = needs_core

CLAIMS = [
    ("AFCT in QFCP is significantly shorter than in TCP Reno", None),
    ("AFCT in QFCP is significantly shorter than in XCP", None),
    (
        "AFCT in QFCP is significantly shorter than in RCP",
        (
            "RCP's mean FCT (0.219 s) is below QFCP's (0.270 s) at the quick scale: 0.81x, not >= 1.5x "
            "(full scale: RCP 0.254 s, QFCP 0.262 s, 0.97x). No protocol could pass: two propagation RTTs plus "
            "the size at capacity bound the AFCT at 0.201 s, 1.09x below RCP's (full scale 1.26x). The paper's "
            "reason holds for the few large flows (full scale, 100-999 packets: QFCP 0.424 s vs RCP 0.710 s; "
            ">= 1000: 3.08 vs 5.60 s; RCP's R averages 5 Mb/s, QFCP's 35), but 97% of the flows are under 100 "
            "packets (QFCP 0.254 s, RCP 0.233 s), where RCP's low R costs 33 ms and QFCP's queue (about 450 "
            "packets; newcomers start at R, which the minimum-queue term does not hold back) and timeouts 52 ms "
            "(that split measured before QFCP's transport took one RTT sample per round trip; docs/PROTOCOLS.md "
            "section 9)"
        ),
    ),
    ("the completion time of short flows in XCP is the longest", None),
    ("TCP's AFCT is very oscillatory against flow size; XCP's is more stable", None),
]


@pytest.fixture(scope="module")
def rep(quick_reproduction):
    return quick_reproduction("qfcp-fct")


def test_every_case_runs_on_the_identical_arrival_list(rep):
    assert rep.skipped == {}, rep.skipped
    # the paper's four, then today's baselines (issue 41 item 3)
    assert list(rep.results) == ["reno", "xcp", "rcp", "qfcp", "cubic", "bbr"]
    lists = [r.flow_info.sort("start_s").select("start_s", "size_bytes") for r in rep.results.values()]
    assert lists[0].height == 6000
    for other in lists[1:]:
        assert other.equals(lists[0])
    assert [p.name for p in rep.figures] == ["fig1-afct.png"]
    assert rep.figures[0].stat().st_size > 20_000


def test_qfcp_short_flows_finish_sooner_than_under_reno_and_xcp(rep):
    """The issue's reduced-scale claim: QFCP's mean completion time of flows under 100 packets is
    below TCP Reno's and XCP's."""
    from racc.experiments.qfcp_fct import SHORT_PKTS, finished

    short = {n: finished(r).filter(pl.col("size_pkts") < SHORT_PKTS)["fct_s"].mean() for n, r in rep.results.items()}
    assert short["qfcp"] < short["reno"], short
    assert short["qfcp"] < short["xcp"], short


def test_todays_baselines_are_measured_rows_beside_qfcp(rep):
    """Issue 41 item 3: CUBIC and BBR on TCP Reno's DropTail bottleneck (one BDP of buffer) get
    measured rows only (no claim names them), and QFCP's mechanism holds against them as against
    Reno: a new flow starts at the router's rate instead of growing from an initial window, so the
    flows under 100 packets, a few round trips of slow start (CUBIC's, with HyStart++, is Reno's)
    or STARTUP (BBR's, 2/ln 2 per round) finish sooner under QFCP."""
    from racc.experiments.qfcp_fct import SHORT_PKTS, finished

    short = {n: finished(r).filter(pl.col("size_pkts") < SHORT_PKTS)["fct_s"].mean() for n, r in rep.results.items()}
    for name, label in (("cubic", "CUBIC"), ("bbr", "BBR v1")):
        res = rep.results[name]
        assert set(res.flow_info["protocol"]) == {name}
        assert res.port_info.filter(pl.col("name") == "r0->r1")["router"].to_list() == ["droptail"]
        rows = [c for c in rep.claims if label in c.claim]
        assert {c.verdict for c in rows} == {"measured"}, rows
        assert {c.claim for c in rows} == {
            f"{label}: flows finished by the last arrival",
            f"{label}: bottleneck utilisation, queue, drops",
            f"QFCP's AFCT beside {label}'s",
        }
        assert short["qfcp"] < short[name], short


def test_no_flow_finishes_before_its_bound(rep):
    """No finished flow beats the handshake and one data round trip (two propagation RTTs) plus its
    packets at the bottleneck's capacity: the bound the AFCT claims are weighed against."""
    from racc.experiments.qfcp_fct import with_bound

    for name, res in rep.results.items():
        f = with_bound(res)
        early = f.filter(pl.col("fct_s") < pl.col("bound_s"))
        assert f.height > 5000 and early.height == 0, (name, early.head())


def test_every_judged_claim_is_listed(rep):
    judged = {c.claim for c in rep.claims if c.verdict not in ("measured",)}
    assert judged == {c for c, _ in CLAIMS}


@pytest.mark.parametrize(
    "claim", [pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=why)) if why else c for c, why in CLAIMS]
)
def test_claim(claim, rep):
    found = [c for c in rep.claims if c.claim == claim]
    assert len(found) == 1, claim
    assert found[0].verdict == "consistent", f"{found[0].paper} vs {found[0].measured}"


# --- qfcp-wlan-fairness (QFCP §III.B, Fig. 2) at full scale: the twelve flows over the shared
# medium for the scenario's 40 s. Both runs together take a few seconds of CPU; a short window is
# a different sample (QFCP's flows alternate between bursts and timeouts of several seconds).

#: Measured at full scale (seed 1, one QFCP controller for the medium, router_scope "medium", probing from 1 Mb/s,
#: first windows paced; docs/PROTOCOLS.md §9, "qfcp-wlan-fairness, measured"): mean 1 s Jain after 3 s 0.995, every
#: 1 s Jain 0.75 or more from 3 s on, flows 0.24-0.28 Mb/s (downloads 0.262, uploads 0.265; seeds 1-8: mean Jain
#: 0.960-0.995, settled by 0-6 s, worst deviation 8.2-12.7 %). Before (probing from the told 11 Mb/s, first windows
#: in one burst): Jain 0.783, settled from 14 s, flows 0.11-0.38 Mb/s (worst 57.8 %): each flow's first window was
#: 11 Mb/s × its RTT, the 50-packet queues overflowed by megabytes, and the flows that lost their retransmissions
#: came back from RTO back-offs 10-30 s in. What is left: the shares rise with the RTT (the 40 ms download 0.24, the
#: 340 and 370 ms flows 0.28 Mb/s): the transport sends whole packets, so the fraction of a window feedback·srtt of
#: a few packets (about 2.4 at 40 ms) is cut. TCP Reno: Jain 0.334 / 0.317 / 0.274 (seeds 1-3).
#: The medium itself agrees with ns-2.35's 802.11 on this scenario (tests/python/test_crosscheck_wlan.py, TCP Reno,
#: 40 s, seeds 1-3: total goodput racc 4.04/3.94/3.77 Mb/s vs ns-2 3.79/3.74/3.73, downloads per flow
#: 0.003/0.014/0.003 vs 0.019/0.026/0.039, uploads 0.67/0.64/0.63 vs 0.61/0.60/0.58, mean 1 s Jain
#: 0.33/0.32/0.27 vs 0.36/0.38/0.39; channel attempts 877 vs 874 a second, the access point's 253 vs 300), so TCP's
#: starvation is not an artefact of racc's DCF.
WLAN_CLAIMS = [
    ("QFCP achieves good fairness on the throughput once its probe finds the bandwidth", None),
    ("QFCP's probe finds the wireless bandwidth shortly after 2-3 seconds", None),
    # Held once the timeout's go-back-N was paced (`pace_go_back_n`, issue 39): flows 0.25-0.28 Mb/s, worst 7.5 %
    # from the mean 0.265 (before: 0.24-0.28, worst 10.2 %, the 40 ms download's whole-packet window).
    (
        "QFCP allocates the bandwidth equally among the flows, downloads and uploads alike",
        (
            "with the router's joins counted (count_joins, issue 39; the twelve flows all start at 0) the worst flow "
            "is 10.9 % from the mean 0.265 Mb/s (flows 0.24-0.28, the 40 ms download lowest, its whole-packet window), just "
            "outside the fair rule's 10 %; mean 1 s Jain 0.996 (docs/PROTOCOLS.md §9, 'Starts')"
        ),
    ),
    ("under TCP the downloading flows are unable to gain their fair share and keep sending at very low rates", None),
    ("TCP's fairness index is low in this scenario: its performance degrades significantly", None),
]


@pytest.fixture(scope="module")
def wlan(tmp_path_factory):
    from racc import experiments

    return experiments.reproduce("qfcp-wlan-fairness", out=tmp_path_factory.mktemp("qfcp") / "wlan")


def test_wlan_runs_both_protocols_and_draws_fig2(wlan):
    assert wlan.skipped == {}, wlan.skipped
    assert list(wlan.results) == ["reno", "qfcp"]
    for r in wlan.results.values():
        groups = r.flow_info["group"].to_list()
        assert groups.count("down") == 6 and groups.count("up") == 6
        rtts = sorted(round(x * 1000) for x in r.flow_info["rtt_prop_s"].to_list())
        assert rtts[0] == 40 and rtts[-1] == 370, rtts
    assert [p.name for p in wlan.figures] == ["fig2ab-cwnd.png", "fig2c-jain.png"]


def test_on_the_medium_tcp_jain_index_is_below_qfcp_s(wlan):
    """The issue's test: on the wireless medium TCP's Jain's index between downloads and uploads
    is below QFCP's (mean of the 1 s indices after the probe has settled)."""
    from racc.experiments.qfcp_wlan_fairness import mean_jain

    jt, jq = mean_jain(wlan.results["reno"]), mean_jain(wlan.results["qfcp"])
    assert jt < jq, (jt, jq)


def test_the_medium_s_counters_reach_the_links_table(wlan):
    """The medium's own counters are named metrics of its members' ports, with units."""
    r = wlan.results["reno"]
    ap = r.links.filter(pl.col("name") == "ap->wlan").sort("time_s")
    for col in (
        "medium_frames",
        "medium_collisions",
        "medium_retry_drops",
        "medium_airtime_s",
        "medium_channel_busy_s",
    ):
        assert col in r.links.columns, col
        assert col in r.summary["link_metric_units"], col
    assert ap["medium_frames"][-1] > 0
    # whole-run counts: never decreasing
    assert ap["medium_frames"].diff().drop_nulls().min() >= 0
    wired = r.links.filter(pl.col("name") == "r0->ap")
    assert wired["medium_frames"].null_count() == wired.height


def test_every_wlan_claim_is_listed(wlan):
    judged = {c.claim for c in wlan.claims if c.verdict != "measured"}
    assert judged == {c for c, _ in WLAN_CLAIMS}


@pytest.mark.parametrize(
    "claim", [pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=why)) if why else c for c, why in WLAN_CLAIMS]
)
def test_wlan_claim(claim, wlan):
    found = [c for c in wlan.claims if c.claim == claim]
    assert len(found) == 1, claim
    assert found[0].verdict == "consistent", f"{found[0].paper} vs {found[0].measured} ({found[0].rule})"


# --- qfcp-lossy (QFCP §III.C) at reduced scale: three of the sweep's seven loss rates (0.001, 0.01,
# 0.1) at full length (60 s, measured over (20, 60] s): the property is not scale-free in time.

LOSSY_RATES = [0.001, 0.01, 0.1]
#: Shortfalls: none now. Before XCP-b had its own spare-bandwidth estimate (docs/PROTOCOLS.md §5)
#: its probe claims fell short (utilisation 0.966-0.979 with QFCP's probe); before QFCP's transport
#: took RTT samples from SACK blocks (`tcp.sack_rtt`, §9) QFCP's lossy flow had 0.435 / 0.550 at
#: 0.1 (its SRTT held at the start-up 202 ms by Karn's rule).
LOSSY_SHORTFALLS: dict[str, str] = {}


@pytest.fixture(scope="module")
def lossy(tmp_path_factory):
    from racc import experiments
    from racc.experiments.qfcp_lossy import case_name

    names = [case_name(p, r) for p in ("qfcp", "xcp-b") for r in LOSSY_RATES]
    return experiments.reproduce("qfcp-lossy", out=tmp_path_factory.mktemp("qfcp") / "lossy", quick=True, cases=names)


def test_lossy_sweep_runs_and_draws(lossy):
    assert lossy.skipped == {}, lossy.skipped
    assert len(lossy.results) == 6
    assert [p.name for p in lossy.figures] == ["loss-sweep.png", "fig3-cwnd.png"]


def _lossy_claims():
    from racc.experiments.qfcp_lossy import LOSSY_CLAIM_TEMPLATES

    return [t.format(rate=r) for t in LOSSY_CLAIM_TEMPLATES for r in LOSSY_RATES]


def test_every_lossy_claim_is_listed(lossy):
    judged = {c.claim for c in lossy.claims if c.verdict != "measured"}
    assert judged == set(_lossy_claims())


@pytest.mark.parametrize(
    "claim",
    [
        pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=LOSSY_SHORTFALLS[c]))
        if c in LOSSY_SHORTFALLS
        else c
        for c in _lossy_claims()
    ],
)
def test_lossy_claim(claim, lossy):
    found = [c for c in lossy.claims if c.claim == claim]
    assert len(found) == 1, claim
    assert found[0].verdict == "consistent", f"{found[0].paper} vs {found[0].measured} ({found[0].rule})"
