"""``racc crosscheck ns2-vcp``: racc's VCP against the VCP authors' own ns-2 code. The generated Tcl
and the refusals need no ns-2; the comparison needs an ``ns`` built with the authors' code
(docs/PROTOCOLS.md, "VCP against its authors' ns-2 code"), given by ``RACC_NS2_VCP``, and is
skipped with the reason printed where there is none.
"""

from __future__ import annotations

import os

import pytest
from conftest import REPO, needs_core
from crosscheck_helpers import resolve
from one_line import refused
from racc.crosscheck import support, tcl

pytestmark = needs_core

SCENARIO = REPO / "scenarios" / "crosscheck-vcp-parking-lot.toml"


def test_the_parking_lot_as_the_authors_code():
    sc, r, pi = resolve(SCENARIO.read_text())
    assert support.refusals(sc.data, r, pi, vcp=True) == []
    s = tcl.write(r, pi, 100_000_000)
    # r0 r1 r2 = n(0..2): both 10 Mb/s links carry the authors' VcpQueue in both directions.
    for a, b in ((0, 1), (1, 2)):
        assert f"$ns duplex-link $n({a}) $n({b}) 10000000 0.020000000 DropTail2/VcpQueue" in s
        assert f"[[$ns link $n({a}) $n({b})] queue] set-link-capacity 10000000" in s
        assert f"[[$ns link $n({b}) $n({a})] queue] set-link-capacity 10000000" in s
        assert f"$ns queue-limit $n({a}) $n({b}) 125 ;" in s
    assert s.count("Queue/DropTail2/VcpQueue set load_measurement_interval_ 0.2 ;# racc t_p") == 2
    assert "Agent/TCP/Reno/VcpSrc set windowOption_ 10" in s
    # Each group's constructor-read values are class defaults set just before its agents.
    assert s.count("Agent/TCP/Reno/VcpSrc set k_ 0.25 ;# racc h") == 3
    assert 'if {[info procs pre_$group] != ""} { pre_$group }' in s
    assert s.count("$t set windowInit_ 2 ;") == 3 and s.count("$t set syn_ true ;") == 3
    assert s.count("$t set tcpTick_ 0.01 ;") == 3  # the senders' RTT clock (ai_ns2.tick)
    assert s.count(" Agent/TCP/Reno/VcpSrc Agent/VcpSink ") == 3
    assert "Agent/TCP set packetSize_ 960 ;" in s


def test_refusals_name_what_the_authors_code_compiles_in():
    text = SCENARIO.read_text()
    text = text.replace('router_params = { gamma = 0.95, queue_term = "ns2" }', "router_params = {}", 1)
    text = text.replace(
        'ai_law = "ns2", ai_ns2 = { tick = 0.01 }, md_hold = "t_p"', 'md_hold = "rtt", pacing_gain = 1.2', 1
    )
    text = text.replace("ai_ns2 = { tick = 0.01 }", "ai_ns2 = { tick = 0.02 }", 2)
    sc, r, pi = resolve(text)
    joined = "; ".join(support.refusals(sc.data, r, pi, vcp=True))
    assert "topology.links[0].router_params.gamma: 0.98 (racc's default)" in joined
    assert "topology.links[0].router_params.queue_term" in joined
    assert "topology.links[1]" not in joined
    assert "flows[0].params.ai_law" in joined and "flows[0].params.md_hold" in joined
    assert "flows[0].params.pacing_gain" in joined
    assert "flows[1].params.ai_ns2.tick: 0.02 s" in joined and "tcp.clock_granularity (0.01 s)" in joined
    # Plain `crosscheck ns2` says where VCP runs.
    sc, r, pi = resolve(SCENARIO.read_text())
    joined = "; ".join(support.refusals(sc.data, r, pi))
    assert "topology.links[0].router: 'vcp' needs ns-2 built with the VCP authors' code" in joined
    assert "flows[0].protocol: 'vcp' needs ns-2 built with the VCP authors' code" in joined


def test_command_without_the_build_says_how_to_get_one(tmp_path, cli_env, racc_cli):
    env = dict(cli_env)
    env.pop("RACC_NS2_VCP", None)
    p = racc_cli("crosscheck", "ns2-vcp", SCENARIO, "--seeds", "1", env=env, cwd=tmp_path, timeout=120)
    refused(p, "VCP authors' code", "--ns PATH", "docs/PROTOCOLS.md")
    # A plain ns-2 is not enough: the classes are checked for (any executable without them).
    p = racc_cli(
        "crosscheck", "ns2-vcp", SCENARIO, "--seeds", "1", "--ns", "/bin/true", env=env, cwd=tmp_path, timeout=120
    )
    assert p.returncode == 2 and "has no VCP classes" in p.stderr, p.stderr
    assert not (tmp_path / "results").exists()


def test_the_authors_code_against_racc_flow_by_flow(tmp_path):
    """Tolerances written before the first run: utilisation of each link within 0.02 and each
    link's goodput (the long flow plus that link's cross flow) within 3 % (the load factor's
    aggregate rule is the same code on both sides). How the total splits between the long and the cross flows is printed, not
    asserted: on the authors' code it moves from 0.60 to 0.93 with the sender's RTT clock tick
    and sampling alone (docs/PROTOCOLS.md, "VCP against its authors' ns-2 code")."""
    exe = os.environ.get("RACC_NS2_VCP")
    if not exe:
        pytest.skip("RACC_NS2_VCP is not set: no ns-2 built with the VCP authors' code (docs/PROTOCOLS.md)")
    from racc.crosscheck.run import crosscheck_ns2

    cc = crosscheck_ns2(str(SCENARIO), seeds="1", window="30:60", vcp=True, ns_path=exe)
    rows = {(r["section"], r["metric"]): r for r in cc.comparison.iter_rows(named=True)}
    for port in ("r0->r1", "r1->r2"):
        u = rows[(f"port {port}", "utilisation")]
        assert abs(u["racc_mean"] - u["ns2_mean"]) <= 0.02, u
    good = {g: rows[(f"group {g}", "goodput, Mb/s")] for g in ("long", "crossA", "crossB")}
    for cross in ("crossA", "crossB"):  # each link's goodput: the long flow and that link's cross flow
        link = {side: good["long"][f"{side}_mean"] + good[cross][f"{side}_mean"] for side in ("racc", "ns2")}
        assert abs(link["racc"] - link["ns2"]) <= 0.03 * link["ns2"], good
    ratio = {
        side: good["long"][f"{side}_mean"] / ((good["crossA"][f"{side}_mean"] + good["crossB"][f"{side}_mean"]) / 2)
        for side in ("racc", "ns2")
    }
    print(f"\nlong/cross goodput ratio: racc {ratio['racc']:.3f}, authors' code {ratio['ns2']:.3f}")


def _ratios(overrides=()):
    import racc

    out = []
    for seed in (1, 2, 3):
        res = racc.run(str(SCENARIO), seed=seed, overrides=list(overrides))
        f = res.flows
        acked = {}
        for t in (30.0, 60.0):
            rows = f.filter((f["time_s"] - t).abs() < 1e-6).sort("flow")
            acked[t] = rows["acked_bytes"].to_list()
        g = [b - a for a, b in zip(acked[30.0], acked[60.0], strict=True)]
        out.append(g[0] / ((g[1] + g[2]) / 2))
    return out


def test_the_long_flows_share_follows_the_senders_rtt_clock():
    """The documented cause of issue 35 item 3 (docs/PROTOCOLS.md §2): the authors' code gives
    the long flow 0.80 of a cross flow's goodput (3.891 vs 4.839 / 4.857 Mb/s) because its sender
    scales MI, AI and the MD timer by srtt truncated to 10 ms ticks. racc with its exact srtt gives
    the long flow nearly its fair share on every seed (the routers' random timer phases); with the
    authors' clock (ai_ns2.tick = 0.01) it falls to the authors' range on every seed, and the
    seeds span 0.80 ± 0.06 (measured 0.80 / 0.70 / 0.60; the authors' own code gives 0.42-0.93
    with its tick and RTT sampling varied)."""
    ticked = _ratios()
    exact = _ratios([f"flows[{i}].params.ai_ns2.tick=0" for i in range(3)])
    print(f"\nlong/cross goodput, seeds 1-3: exact srtt {exact}, 10 ms clock {ticked}")
    assert min(exact) >= 0.90, exact
    assert max(ticked) <= 0.85, ticked
    assert min(ticked) <= 0.80 + 0.06 and max(ticked) >= 0.80 - 0.06, ticked
