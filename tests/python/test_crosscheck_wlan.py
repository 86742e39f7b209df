"""ns-2 cross-check of racc's shared medium on qfcp-wlan-fairness (QFCP §III.B's WLAN, the
topology the paper ran on ns-2's 802.11): the generated wired-cum-wireless Tcl (no ns-2 needed),
its refusals, and TCP Reno run in both simulators.

The integration tolerances below were written down before either simulator was first run on the
scenario: the two DCF models share every timing constant, so the channel's total goodput should
agree within 10 %; how it splits between the directions and the 1 s Jain's index depend on TCP's
losses at the access point's queue, so they get wider windows (0.1 of the total, 0.15 of Jain).
"""

from __future__ import annotations

import shutil

import pytest
from conftest import REPO, needs_core
from racc.crosscheck.wlan import run, tcl

SCENARIO = REPO / "scenarios" / "qfcp-wlan-fairness.toml"
#: ns-2's TCP has no Eifel undo: racc's flows drop it for the comparison
TCP = {"flows.0.params": {"spurious_rto": "off"}, "flows.1.params": {"spurious_rto": "off"}}
#: the generated script's checks need no full-length run
SHORT = {"duration": "15s"}


def script(**kw):
    return tcl.write(tcl.from_scenario(run.load(SCENARIO, {**TCP, **SHORT})), seed=1, **kw)


def test_the_medium_as_ns2_802_11():
    s = script()
    assert "Mac/802_11 set dataRate_ 11000000" in s
    assert "Mac/802_11 set basicRate_ 1000000" in s
    assert "Mac/802_11 set RTSThreshold_ 3000" in s
    assert "Mac/802_11 set ShortRetryLimit_ 7" in s
    assert "Mac/802_11 set CWMin_ 31" in s and "Mac/802_11 set CWMax_ 1023" in s
    assert "-ifqLen 50" in s and "-adhocRouting DSDV" in s
    assert s.count("base-station [AddrParams addr2id [$n(ap) node-addr]]") == 12
    assert "AddrParams set nodes_num_ {13 13}" in s
    assert "RTSThreshold_ 0" in script(rts=True)


def test_links_flows_and_tcp():
    s = script()
    assert "$ns duplex-link $n(srv0) $n(r0) 100000000 0.018000000 DropTail" in s
    assert "$ns duplex-link $n(r0) $n(ap) 100000000 0.002000000 DropTail" in s
    assert "attach-agent $n(srv3) $tcp(3)" in s and "attach-agent $n(sta3) $sink(3)" in s
    assert "attach-agent $n(sta9) $tcp(9)" in s and "attach-agent $n(srv9) $sink(9)" in s
    assert "Agent/TCP set packetSize_ 960" in s
    assert "Agent/TCP set minrto_ 0.200000" in s
    assert s.count("new Agent/TCP/Reno") == 12


def test_refusals_name_the_key():
    data = run.load(SCENARIO)
    with pytest.raises(ValueError, match="params"):
        tcl.from_scenario(data)  # Eifel (racc's default) has no ns-2 counterpart
    data = run.load(SCENARIO, {**TCP, "flows.0.protocol": "qfcp"})
    with pytest.raises(ValueError, match="protocol"):
        tcl.from_scenario(data)
    data = run.load(SCENARIO, {**TCP, "topology.media.0.loss": {"model": "bernoulli", "p": 0.01}})
    with pytest.raises(ValueError, match="loss"):
        tcl.from_scenario(data)


@needs_core
def test_ns2_and_racc_agree_on_tcp_reno_over_the_wlan():
    """The scenario's 40 s, seeds 1-3, figures after 3 s averaged over the seeds (ns-2 takes about
    3 s a run): total goodput, the downloads' share of it, the mean 1 s Jain's index."""
    if shutil.which("ns") is None:
        pytest.skip("ns-2 (`ns`) is not installed: apt-get install ns2 (scripts/test.sh installs it as root)")
    seeds = (1, 2, 3)
    a = [run.run_racc(SCENARIO, s, TCP) for s in seeds]
    b = [run.run_ns2(SCENARIO, s, TCP) for s in seeds]
    print("\n" + run.table([r for pair in zip(a, b, strict=True) for r in pair]))

    def mean(xs):
        return sum(xs) / len(xs)

    total_a, total_b = mean([r.total() for r in a]), mean([r.total() for r in b])
    assert abs(total_a - total_b) <= 0.10 * total_b, (total_a, total_b)
    share_a = mean([sum(r.per_flow["down"]) / r.total() for r in a])
    share_b = mean([sum(r.per_flow["down"]) / r.total() for r in b])
    assert abs(share_a - share_b) <= 0.10, (share_a, share_b)
    jain_a, jain_b = mean([r.mean_jain for r in a]), mean([r.mean_jain for r in b])
    assert abs(jain_a - jain_b) <= 0.15, (jain_a, jain_b)


def test_mac_counts_read_ns2_s_wireless_trace(tmp_path):
    """ns-2's old wireless trace format: MAC sends of TCP data and ACKs (every try), drops after
    the retry limit (RET), collisions seen by a receiver (COL), interface queue drops (IFQ)."""
    trace = tmp_path / "trace.tr"
    trace.write_text(
        "s 1.000075000 _21_ MAC  --- 63 tcp 1038 [13a 0 8 800] ------- [4194312:0 7:0 32 4194304] [0 0] 0 0\n"
        "s 1.000175000 _13_ MAC  --- 64 ack 80 [13a 8 0 800] ------- [7:0 4194312:0 32 4194312] [0 0] 0 0\n"
        "s 1.000275000 _13_ MAC  --- 0 ACK 38 [0 8 0 0]\n"
        "D 1.149406836 _14_ MAC  COL 83 tcp 1058 [13a 1 0 800] ------- [0:0 4194305:0 29 4194305] [4 0] 0 0\n"
        "D 2.000000000 _13_ IFQ  --- 90 ack 40 [0 0 0 800] ------- [7:0 4194312:0 32 4194312] [0 0] 0 0\n"
        "D 2.500000000 _21_ MAC  RET 91 tcp 1038 [13a 0 8 800] ------- [4194312:0 7:0 32 4194304] [0 0] 0 0\n"
        "s 9.000000000 _21_ MAC  --- 99 tcp 1038 [13a 0 8 800] ------- [4194312:0 7:0 32 4194304] [0 0] 0 0\n"
    )
    names = {13: "ap", 14: "sta0", 21: "sta7"}
    c = run.mac_counts(trace, names, 0.5, 5.0)
    assert c.attempts == {"sta7": 1, "ap": 1}  # the MAC's own ACK is not a TCP frame; 9 s is outside
    assert c.collisions_seen == {"sta0": 1}
    assert c.ifq_drops == {"ap": 1}
    assert c.retry_drops == {"sta7": 1}


def test_node_ids_follow_the_script_s_creation_order():
    w = tcl.from_scenario(run.load(SCENARIO, TCP))
    ids = tcl.node_names(w)
    assert ids[0] == "srv0" and ids[12] == "r0" and ids[13] == "ap" and ids[14] == "sta0" and ids[25] == "sta11"


TCP_SET = ["--set", 'flows[0].params.spurious_rto="off"', "--set", 'flows[1].params.spurious_rto="off"']


@needs_core
def test_the_command_takes_a_shared_medium(tmp_path, racc_cli):
    """`racc crosscheck ns2` on a scenario with a medium runs this comparison (refusals first)."""
    p = racc_cli("crosscheck", "ns2", SCENARIO, "--seeds", "1", cwd=tmp_path)  # Eifel left on: refused by key
    assert p.returncode == 2 and "params" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    if shutil.which("ns") is None:
        pytest.skip("ns-2 (`ns`) is not installed: apt-get install ns2 (scripts/test.sh installs it as root)")
    p = racc_cli("crosscheck", "ns2", SCENARIO, "--seeds", "1", "--set", 'duration="6s"', *TCP_SET, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    rows = [line.split() for line in p.stdout.splitlines()[1:]]
    assert [r[0] for r in rows] == ["racc", "ns-2"] and all(r[1] == "1" for r in rows), p.stdout
    assert all(float(r[-2]) > 1.0 for r in rows), p.stdout  # total goodput, Mb/s, on both sides
