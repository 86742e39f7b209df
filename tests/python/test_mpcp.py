"""MPCP experiments at reduced scale: what racc reproduces is asserted here; the
claims it does not reproduce yet are reported by `racc reproduce` as "differs" (see the issue
notes) and are not asserted."""

from __future__ import annotations

import polars as pl
import pytest
from conftest import REPO, needs_core

pytestmark = needs_core


@pytest.fixture(scope="module")
def dumbbell(quick_reproduction):
    return quick_reproduction("mpcp-dumbbell")


def test_dpcp_converges_faster_and_uses_the_link_better(dumbbell):
    from racc.experiments.base import port_summary
    from racc.experiments.mpcp_dumbbell import BOTTLENECK, transition_time

    r = dumbbell.results
    t_vcp, t_dpcp = transition_time(r["vcp"]), transition_time(r["dpcp"])
    assert t_dpcp is not None and t_vcp is not None
    assert t_dpcp <= 4.0, t_dpcp  # MPCP §4.2: under 4 s
    assert t_vcp >= 3 * t_dpcp  # and VCP several times slower (≈20 s in the paper)
    u = {n: port_summary(r[n], BOTTLENECK)["utilisation"] for n in ("vcp", "dpcp")}
    assert u["dpcp"] > u["vcp"]
    for n in ("vcp", "dpcp"):
        assert port_summary(r[n], BOTTLENECK)["drops"] == 0
    assert [p.name for p in dumbbell.figures] == ["fig3-utilisation.png"]


@pytest.mark.xfail(
    strict=True,
    reason="DPCP's steady-state utilisation below VCP's on mpcp-dumbbell (full run: 78.5 % vs 86.3 % over "
    "the second half); cause 'unspecified': MPCP gives no round trip, and at 100 ms DPCP reaches VCP's",
)
def test_dpcp_steady_state_utilisation_at_least_vcps(dumbbell):
    """MPCP §4.1: "slightly better bandwidth utilizations in steady status": the claim is read
    over the second half of the run, so VCP's slower start-up does not count."""
    from racc.experiments.mpcp_dumbbell import steady_utilisation

    claim = [c for c in dumbbell.claims if c.claim.startswith("DPCP steady-state")]
    assert len(claim) == 1
    r = dumbbell.results
    assert steady_utilisation(r["dpcp"]) >= steady_utilisation(r["vcp"])


@pytest.fixture(scope="module")
def queue(quick_reproduction):
    return quick_reproduction("mpcp-queue")


def test_multi_packet_chains_hold_a_larger_queue_than_vcp(queue):
    from racc.experiments.figures import port_series
    from racc.experiments.mpcp_queue import BOTTLENECK

    rep = queue
    mean_q = {}
    for n, res in rep.results.items():
        t, q = port_series(res, BOTTLENECK, "queue_pkts")
        tail = [y for ti, y in zip(t, q, strict=True) if ti > t[-1] / 2]
        mean_q[n] = sum(tail) / len(tail)
    # MPCP §5: DPCP and TPCP keep a larger standing queue than VCP.
    assert mean_q["dpcp"] > 2 * mean_q["vcp"] and mean_q["tpcp"] > 2 * mean_q["vcp"], mean_q


def test_xi_cap_sweep_table_and_figure(queue):
    """Issue 13 item 3: DPCP's ξ cap swept over five values (none, ..., VCP's 1/16), one row
    per cap in the printed table with a finite queue and transition time, and the trade-off figure
    drawn (queue vs transition time with MPCP's two claims marked)."""
    import math

    from racc.experiments.mpcp_queue import XI_CAPS, cap_label, xi_sweep

    assert len(XI_CAPS) >= 5 and None in XI_CAPS and 0.0625 in XI_CAPS
    rows = xi_sweep(queue.results)
    assert [r[0] for r in rows] == list(XI_CAPS)
    for _cap, q, t in rows:
        assert t is not None and math.isfinite(t) and math.isfinite(q), rows
    for prefix in ("dpcp, ξ cap ", "tpcp vs dpcp, ξ cap "):  # DPCP's trade-off, TPCP against DPCP
        table = [c for c in queue.claims if c.claim.startswith(prefix)]
        assert [c.claim.split("ξ cap ")[1].split(":")[0] for c in table] == [cap_label(c) for c in XI_CAPS]
        assert all(c.verdict == "measured" for c in table)
    names = [p.name for p in queue.figures]
    assert names == ["fig5-queue.png", "fig-xi-cap-tradeoff.png"], names
    assert (queue.out / "figures" / "fig-xi-cap-tradeoff.png").stat().st_size > 20_000
    # Fig. 5 keeps one panel per protocol: the sweep's cases are only in the trade-off figure.
    assert {"vcp", "dpcp", "tpcp"} <= set(queue.results)


def test_xi_cap_trades_queue_for_transition_time(queue):
    """The trade-off the paper implies (MPCP §4.2 vs §5; VCP's 1/16 MI factor is why VCP is
    slow with a small queue): DPCP with ξ capped at VCP's 1/16 holds a smaller standing queue and
    converges more slowly than uncapped DPCP. Judged on the sweep's end points (measured at
    --quick, seed 1: uncapped 53 packets / 3.5 s, capped at 1/16 13 packets / 8.8 s)."""
    from racc.experiments.mpcp_queue import xi_sweep

    rows = {cap: (q, t) for cap, q, t in xi_sweep(queue.results)}
    (q_none, t_none), (q_vcp, t_vcp) = rows[None], rows[0.0625]
    assert q_vcp < q_none and t_vcp > t_none, rows


@pytest.fixture(scope="module")
def parking(quick_reproduction):
    return quick_reproduction("mpcp-parking-lot")


def test_parking_lot_shares_and_vcp_bias(parking):
    from racc.experiments.parking_lot import PL_PORTS, group_shares, mean_share, phase_shares

    rep = parking
    for res in rep.results.values():
        # The aggregates' shares of a link never exceed its capacity: a packet straddling a
        # sample boundary is split across the two samples.
        sh = group_shares(res, PL_PORTS["L0"]).group_by("time_s").agg(pl.col("share").sum())
        assert sh["share"].max() <= 1.0 + 1e-9
    # MPCP §4.1: VCP's coarse code favours the locals (one bottleneck) over the long flows.
    vcp = mean_share(rep.results["vcp"], "L0", 150.0, 300.0)
    assert vcp["local"] > 2 * vcp["long"], vcp

    # At this scale (L2 locals at 100 s) the example claim holds: before the change
    # DPCP's and TPCP's L0 long share is much closer to per-flow max-min than VCP's (measured on
    # seeds 1-4: 20-23 vs 48 points off), and their L2 long share drops when the L2 locals
    # start (54-59 % -> 38-41 %). It does not hold at full scale, where VCP's long flows have
    # caught up by 200 s (42 % before the change; see the issue notes), so it is asserted here
    # as the faster convergence it is, not as the paper's steady state.
    vcp_gap = phase_shares(rep.results["vcp"]).gaps[0]
    for p in ("dpcp", "tpcp"):
        ps = phase_shares(rep.results[p])
        assert ps.gaps[0] < 0.6 * vcp_gap, (p, ps, vcp_gap)
        assert ps.l2_long_before - ps.l2_long_after > 0.10, (p, ps)
    assert (rep.out / "figures" / "fig2-parking-lot-shares.png").stat().st_size > 50_000


def test_parking_lot_runs_both_ai_laws(parking):
    """Issue 13 item 2: one case per protocol and AI law; the ns2 cases run ai_law = "ns2" on
    every flow group with router γ = 0.95 on every link (the seed001 cases keep the scenario's
    defaults); beside the shares, goodput, drops and timeouts per case and link; per protocol,
    which law Fig. 2 matches and its drops; the figure draws the two laws side by side."""
    import math
    import re

    from racc.experiments.ai_laws import NS2_GAMMA
    from racc.experiments.baselines import paper_results
    from racc.experiments.parking_lot import PL_PORTS

    rep = parking
    # and VCP in its authors' settings (the reference cause's case: the ns2 law, γ 0.95 and more)
    # and today's baselines (issue 41 item 3; test_parking_lot_todays_baselines)
    assert list(rep.results) == ["vcp", "dpcp", "tpcp", "vcp-ns2", "dpcp-ns2", "tpcp-ns2", "vcp-ref", "cubic", "bbr"]
    for name, res in paper_results(rep.results).items():
        # L0..L3 are the links with a router module (the access links are drop-tail)
        links = [lk for lk in res.resolved["links"] if lk["router"] != "droptail"]
        laws = {(f.get("params") or {}).get("ai_law") for f in res.resolved["flows"]}
        gammas = {(lk.get("router_params") or {}).get("gamma") for lk in links}
        assert len(links) == len(PL_PORTS)
        if name.endswith(("-ns2", "-ref")):
            assert laws == {"ns2"} and gammas == {NS2_GAMMA}, (name, laws, gammas)
        else:
            assert laws == {None} and gammas == {None}, (name, laws, gammas)
    rows = [c for c in rep.claims if "share / goodput, drops, timeouts" in c.claim]
    assert len(rows) == len(rep.results) * len(PL_PORTS)
    number = re.compile(r"\d+(?:\.\d+)?")
    for c in rows:
        nums = [float(x) for x in number.findall(c.measured)]
        assert len(nums) == 7 and all(math.isfinite(x) for x in nums), c.measured
    matches = {
        c.claim.split(":")[0]: c
        for c in rep.claims
        if c.claim.endswith("the AI law the paper's parking-lot figure matches")
    }
    assert sorted(matches) == ["dpcp", "tpcp", "vcp"]
    assert all("drops" in c.measured and c.verdict == "measured" for c in matches.values())
    for p in ("vcp", "dpcp", "tpcp"):  # MPCP §4.1's judged claims for each law
        assert any(c.claim.startswith(f"{p}-ns2: ") and c.verdict != "measured" for c in rep.claims), p
    assert [p.name for p in rep.figures] == ["fig2-parking-lot-shares.png"]


def test_parking_lot_todays_baselines(parking):
    """Issue 41 item 3: CUBIC and BBR in every flow group, L0..L3 DropTail ports with the same
    one-BDP buffers; measured rows only (no claim names them) and a row of the figure each.
    A sender that fills a one-BDP DropTail buffer keeps its link busy but for its timeouts (the
    locals' windows are a few packets here, so timeouts are common): at least 75 % on every link,
    and CUBIC, loss-based, drops on every link. TCP's rate falls with its RTT and the loss it
    crosses (Mathis), so CUBIC's long flows, four bottlenecks and about four times the locals'
    RTT, get less than their per-flow max-min share of L0 before the L2 locals start."""
    import re

    from racc.experiments.parking_lot import PL_PORTS, after_window, phase_shares

    rep = parking
    for name in ("cubic", "bbr"):
        res = rep.results[name]
        assert set(res.flow_info["protocol"]) == {name}
        routers = res.port_info.filter(pl.col("name").is_in(list(PL_PORTS.values())))["router"]
        assert routers.to_list() == ["droptail"] * 4
        rows = [c for c in rep.claims if c.claim.startswith(f"{name} ")]
        assert {c.verdict for c in rows} == {"measured"} and len(rows) == 5, rows
        (row,) = [c for c in rows if "utilisation" in c.claim]
        assert len(re.findall(r"\d+%", row.measured)) == 12, row.measured
        t0, t1 = after_window(res)
        for link, port in PL_PORTS.items():
            u = res.links.filter((pl.col("name") == port) & (pl.col("time_s") > t0) & (pl.col("time_s") <= t1))
            assert u["utilisation"].mean() >= 0.75, (name, link, u["utilisation"].mean())
    for port in PL_PORTS.values():
        assert next(p for p in rep.results["cubic"].summary["ports"] if p["name"] == port)["drops"] > 0, port
    ps = phase_shares(rep.results["cubic"])
    assert ps.l0_long_before < ps.maxmin_before, ps
    assert [p.name for p in rep.figures] == ["fig2-parking-lot-shares.png"]


def test_parking_lot_ns2_law_brings_dpcp_nearer_max_min(parking):
    """The reduced parking lot of crates/racc-sim/tests/ai_law.rs at this experiment's --quick
    scale (seed 1): under ai_law "ns2" (router γ 0.95) DPCP's L0 long share is nearer per-flow
    max-min than under "seed001", in both phases (measured: 3 vs 21 points off before the L2
    locals start, 4 vs 18 after)."""
    from racc.experiments.parking_lot import phase_shares

    seed001, ns2 = phase_shares(parking.results["dpcp"]).gaps, phase_shares(parking.results["dpcp-ns2"]).gaps
    assert ns2[0] < seed001[0] and ns2[1] < seed001[1], (seed001, ns2)


def test_dpcp_finishes_a_lossy_transfer_sooner_than_vcp():
    """MPCP §4.3 at one point of the sweep (5 % loss): DPCP completes the 1 MB transfer first."""
    import racc
    from racc.experiments.mpcp_loss_sweep import LOSS_KEY
    from racc.experiments.protocols import protocol_overrides

    fct = {}
    for p in ("vcp", "dpcp"):
        ov = {**protocol_overrides(p, 1, ["topology.bottleneck"]), LOSS_KEY: 0.05, "duration": "300s"}
        res = racc.run(REPO / "scenarios" / "mpcp-loss-sweep.toml", overrides=ov)
        assert res.completions.height == 1, p
        fct[p] = res.completions["fct_s"][0]
    assert fct["dpcp"] < fct["vcp"], fct


def test_ack_path_loss_barely_slows_dpcp():
    """MPCP §4.3 with the loss on the ACK path: cumulative ACKs hide it from TCP, so what
    remains is broken MSP/LSP echo pairs (§3.4). Below 30 % DPCP stays within 3x its loss-free
    completion time (the paper's "not significantly affected") and ahead of VCP."""
    import racc
    from racc.experiments import mpcp_loss_sweep

    cases = {c.name: c for c in mpcp_loss_sweep.cases()}
    fct, fallbacks = {}, {}
    for p, rate in (("dpcp", 0.0), ("dpcp", 0.25), ("vcp", 0.25)):
        case = cases[mpcp_loss_sweep.loss_case_name(p, "ack", rate)]
        res = racc.run(REPO / "scenarios" / case.scenario, overrides={**case.overrides, "duration": "120s"})
        assert res.completions.height == 1, (p, rate)
        fct[(p, rate)] = res.completions["fct_s"][0]
        fallbacks[(p, rate)] = res.flows["vcp_fallbacks"].max() if "vcp_fallbacks" in res.flows.columns else None
    # The flows table carries the chain sender's exception handling (its named metrics): broken
    # echo pairs make DPCP fall back to VCP mode, a clean path does not, and VCP, which has no
    # chains to fall back from, reports no such metric.
    assert fallbacks[("dpcp", 0.0)] == 0 and fallbacks[("vcp", 0.25)] is None, fallbacks
    assert fallbacks[("dpcp", 0.25)] >= 1, fallbacks
    assert fct[("dpcp", 0.25)] < 3 * fct[("dpcp", 0.0)], fct
    assert fct[("dpcp", 0.25)] < fct[("vcp", 0.25)], fct


def test_loss_sweep_arithmetic():
    """The arithmetic behind mpcp-loss-sweep's causes (issue 35 item 5)."""
    from racc.experiments.mpcp_loss_sweep import expected_sendings, expected_triggers, fct_bound

    # MPCP §3.4's trigger: a run M (L lost) M (L lost) M, p²(1-p)³ per echo.
    assert expected_triggers(1000, 0.05) == pytest.approx(1000 * 0.05**2 * 0.95**3)
    assert expected_triggers(1000, 0.0) == 0.0
    # One packet: a geometric number of sendings, mean 1/(1-p); more packets, a larger maximum.
    assert expected_sendings(1, 0.2) == pytest.approx(1 / 0.8, rel=1e-5)
    assert expected_sendings(1, 0.0) == 1.0
    assert expected_sendings(500, 0.2) > expected_sendings(50, 0.2) > expected_sendings(1, 0.2)
    # The bound: never below the loss-free FCT's own last packet, rising with the loss.
    b = [fct_bound(3.87, 0.5, 0.0008, 459, p) for p in (0.0, 0.05, 0.15, 0.25)]
    assert b[0] == pytest.approx(3.87 - 0.0008) and b == sorted(b), b


@pytest.fixture(scope="module")
def loss_sweep_part():
    """mpcp-loss-sweep at reduced scale on the cases its causes need: DPCP loss-free and at 15 %
    data loss, DPCP loss-free and at 10 % ACK loss, VCP loss-free (ACK path)."""
    from racc import experiments

    cases = ["dpcp-data-loss0.00", "dpcp-data-loss0.15", "dpcp-ack-loss0.00", "dpcp-ack-loss0.10", "vcp-ack-loss0.00"]
    return experiments.reproduce("mpcp-loss-sweep", quick=True, cases=cases)


def test_loss_sweep_fallbacks_are_the_papers_own_trigger(loss_sweep_part):
    """DPCP falls back to VCP mode at 10-15 % loss, as MPCP §3.4's "three consecutive MSPs/LSPs"
    does on random loss: the cause is "paper", with the expected count from the run's transfer."""
    claims = {c.claim: c for c in loss_sweep_part.claims}
    for direction in ("data", "ack"):
        c = claims[f"{direction} loss: DPCP falls back to VCP mode only at high loss"]
        assert c.verdict == "differs" and c.cause.kind == "paper", c
        assert "expected" in c.cause.evidence and "measured" in c.cause.evidence
    assert "15%: 14.4 expected" in claims["data loss: DPCP falls back to VCP mode only at high loss"].cause.evidence


def test_loss_sweep_data_loss_bound(loss_sweep_part):
    """At 15 % data loss DPCP does not finish the 1 MB in the reduced run; no reliable sender of
    this size over this RTT could stay within the "little affected" window there: "unspecified"
    (MPCP gives neither), with the computed bound from the run's loss-free transfer."""
    c = next(c for c in loss_sweep_part.claims if c.claim == "data loss: DPCP little affected below 30 %")
    assert c.verdict == "differs" and c.cause.kind == "unspecified", c
    assert "15%" in c.cause.text and "FCT₀ 3.87 s" in c.cause.evidence, c.cause


def test_loss_sweep_ack_loss_slowed_by_the_fallback(loss_sweep_part):
    """At 10 % ACK loss DPCP takes about twice its loss-free time: it fell back to VCP mode by
    MPCP §3.4's trigger and sent the rest at VCP's pace: "paper", quoting the run's FCTs."""
    c = next(c for c in loss_sweep_part.claims if c.claim == "ack loss: DPCP little affected below 30 %")
    assert c.verdict == "differs" and c.cause.kind == "paper", c
    assert "VCP mode" in c.cause.text and "loss-free FCT VCP" in c.cause.evidence
