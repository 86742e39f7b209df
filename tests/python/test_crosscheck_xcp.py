"""``racc crosscheck ns2`` with XCP: racc's "xcp" flows and router module as ns-2.35's
Agent/TCP/Reno/XCP, XCPSink and Queue/XCP. The generated Tcl and the refusals (no ns-2 needed),
then a reduced copy of scenarios/crosscheck-xcp-dumbbell.toml run in both simulators.
"""

from __future__ import annotations

import re
import shutil

import pytest
from conftest import REPO, needs_core
from crosscheck_helpers import comparison_row, resolve, spread
from racc.crosscheck import counters, support, tcl

pytestmark = needs_core

BASE = """
name = "x"
duration = "10s"
seed = 1
packet_size = {packet_size}
min_rto = "200ms"
[topology]
kind = "dumbbell"
pairs = 2
access = {{ capacity = "100Mbps", delay = "1ms" }}
bottleneck = {{ capacity = "10Mbps", delay = "10ms", buffer = {buffer}, router = "xcp", router_params = {{ {router_params} }} }}
[[flows]]
name = "x"
protocol = "{protocol}"
src = "s{{i}}"
dst = "d{{i}}"
count = 2
start_spread = "1s"
params = {{ {params} }}
{extra}
"""


def toml(
    packet_size=1000,
    buffer='"50pkt"',
    router_params='xcp_budget = "ns235"',
    protocol="xcp",
    params='tcp = { spurious_rto = "off" }',
    extra="",
):
    return BASE.format(
        packet_size=packet_size,
        buffer=buffer,
        router_params=router_params,
        protocol=protocol,
        params=params,
        extra=extra,
    )


def script(text, interval_ns=100_000_000):
    sc, r, pi = resolve(text)
    assert support.refusals(sc.data, r, pi) == []
    return tcl.write(r, pi, interval_ns), r


# dumbbell with pairs = 2: s0 s1 = n(0) n(1), r0 r1 = n(2) n(3), d0 d1 = n(4) n(5)


def test_xcp_queue_capacity_limit_and_monitor():
    s, _ = script(toml(packet_size=1500))
    assert "$ns duplex-link $n(2) $n(3) 10000000 0.010000000 XCP" in s
    # Both directions: the controllers' capacity in bits/s, XCPQ's limit as a DropTail's (+1).
    for x, y in ((2, 3), (3, 2)):
        block = s[s.index(f"set q [[$ns link $n({x}) $n({y})] queue]") :]
        assert block.splitlines()[1].startswith("$q set-link-capacity 10000000 ;")
        assert f"$ns queue-limit $n({x}) $n({y}) 51 ;" in block
    # The QueueMonitor goes on the link (around the XCPWrapQ), as for any queue.
    assert "set qm(4) [$ns monitor-queue $n(2) $n(3) 0]" in s
    assert "Queue/XCP set tcp_xcp_on_ 0 ;" in s


def test_xcp_byte_buffer_goes_to_the_xcp_queue():
    s, _ = script(toml(buffer='"150KB"'))
    assert "[$q set vq_(0)] set queue_in_bytes_ true" in s and "[$q set vq_(0)] set mean_pktsize_ 1" in s
    assert "$ns queue-limit $n(2) $n(3) 150001 ;" in s


def test_xcp_agents_sizes_and_window():
    s, r = script(toml(packet_size=1500))
    # The run-wide TCP payload stays packet_size - 40; XCP groups carry 20 more header bytes.
    assert "Agent/TCP set packetSize_ 1460 ;" in s
    block = s.split("proc g0 {t} {")[1].split("\n}")[0]
    assert "$t set tcpip_base_hdr_size_ 60 ;" in block and "$t set packetSize_ 1440 ;" in block
    assert "$t set windowInit_ 1 ;" in block  # XCP starts at one packet
    assert "newreno_changes1_" not in block
    assert "Agent/TCPSink/XCPSink set packetSize_ 60 ;" in s
    flows = re.findall(r'"flow (\d+) (\S+) (\S+) g0 ', s)
    assert [(a, b) for _, a, b in flows] == [("Agent/TCP/Reno/XCP", "Agent/TCPSink/XCPSink")] * 2
    s, _ = script(toml(extra="initial_window = 4"))
    assert "$t set windowInit_ 4 ;" in s
    # Counters: ack_ counts packets of the XCP MSS.
    assert tcl.mss_of(r["flows"][0], 1500) == 1440 and support.headers(r["flows"][0]) == 60
    assert counters.acked_bytes(3, r["flows"][0], 1440) == 3 * 1440


def test_xcp_scripts_leave_tcp_scripts_alone():
    text = toml(protocol="newreno", params='spurious_rto = "off"').replace(', router = "xcp"', "")
    text = text.replace(', router_params = { xcp_budget = "ns235" }', "")
    s, _ = script(text)
    assert "XCP" not in s and "tcpip_base_hdr_size_ 60" not in s


def test_xcp_refusals_name_every_key():
    text = toml(
        router_params="alpha = 0.5, gamma = 0.1, initial_d = 0.1",
        params="desired_rate = 1e6, tcp = { dupthresh = 4 }",
        extra="delayed_ack = true\nsack = true\necn = true",
    )
    text += """
[[flows]]
name = "tcp"
protocol = "newreno"
src = "s0"
dst = "d0"
params = { spurious_rto = "off" }
"""
    sc, r, pi = resolve(text)
    joined = "; ".join(support.refusals(sc.data, r, pi))
    assert "topology.bottleneck.router_params.alpha: 0.5 (ns-2.35 compiles in 0.4" in joined
    assert "router_params.gamma" not in joined  # ns-2's own value is accepted
    assert "topology.bottleneck.router_params.initial_d: 0.1" in joined
    assert 'topology.bottleneck.router_params.xcp_budget: "granted" (racc\'s default)' in joined
    assert "flows[0].params.desired_rate" in joined
    assert 'flows[0].params.tcp.spurious_rto: "eifel" (racc\'s default)' in joined
    for key in ("flows[0].delayed_ack", "flows[0].sack", "flows[0].ecn"):
        assert key in joined
    assert "flows[1].protocol: 'newreno' crosses the XCP port r0->r1" in joined
    assert "dupthresh" not in joined  # a TCP key the agent takes


def test_the_xcp_dumbbell_scenario_is_supported():
    sc, r, pi = resolve((REPO / "scenarios" / "crosscheck-xcp-dumbbell.toml").read_text())
    assert support.refusals(sc.data, r, pi) == []
    s = tcl.write(r, pi, 200_000_000)
    assert s.count(" XCP\n") == 1 and s.count("set-link-capacity 100000000 ;") == 2
    # 1 BDP of the mean round-trip propagation time (50, 60, 80 ms) at 100 Mb/s, 1000-byte packets.
    assert "$ns queue-limit $n(3) $n(4) 793 ;" in s


# ---------------------------------------------------------------------------------------------
# Both simulators: scenarios/crosscheck-xcp-dumbbell.toml at a fifth of the capacity (20 Mb/s,
# buffer still one BDP), joins at 0, 2 and 4 s, 12 s, compared over (6, 12] s, 3 seeds.
# Tolerances written before this reduced scenario was first run (the full one had been run once,
# see docs/CROSSCHECK.md): XCP's steady state is nearly deterministic on both sides (seed ranges of
# 1e-5 in utilisation), so a seed-range rule alone would fail on known model differences; each
# bound is the larger of both sides' seed range and a stated floor:
#   utilisation within 0.01: ns-2's persistent queue counts the departing packet (xcpq.cc deque:
#     byteLength() before DropTail::deque), which holds its utilisation about
#     beta * s / (alpha * d * C) = 0.4 % below racc's at 20 Mb/s;
#   mean queue within 2 packets, and under 5 % of the buffer on both sides;
#   drops within 5;
#   every flow's goodput within 2 % of ns-2's; Jain's index above 0.99 on both sides.

REDUCED = {"capacity": "20Mbps", "joins": ("0s", "2s", "4s"), "duration": "12s", "window": "6:12"}


def _reduced_text():
    text = (REPO / "scenarios" / "crosscheck-xcp-dumbbell.toml").read_text()
    text = text.replace('capacity = "100Mbps"', f'capacity = "{REDUCED["capacity"]}"')
    text = text.replace('duration = "40s"', f'duration = "{REDUCED["duration"]}"')
    for old, new in zip(('start = "0s"', 'start = "5s"', 'start = "10s"'), REDUCED["joins"]):
        assert old in text
        text = text.replace(old, f'start = "{new}"')
    return text


def test_ns2_agrees_on_the_xcp_dumbbell(tmp_path):
    if shutil.which("ns") is None:
        pytest.skip("ns-2 (`ns`) is not installed: apt-get install ns2 (scripts/test.sh installs it as root)")
    from racc.crosscheck.run import crosscheck_ns2

    path = tmp_path / "xcp.toml"
    path.write_text(_reduced_text())
    cc = crosscheck_ns2(str(path), seeds="3", window=REDUCED["window"])
    print(cc.comparison)
    u = comparison_row(cc, "port r0->r1", "utilisation")
    assert abs(u["racc_mean"] - u["ns2_mean"]) <= max(spread(u), 0.01), u
    q = comparison_row(cc, "port r0->r1", "mean queue, pkts")
    assert abs(q["racc_mean"] - q["ns2_mean"]) <= max(spread(q), 2.0), q
    buffer = cc.sides[0][0].res.port_info.filter(cc.sides[0][0].res.port_info["name"] == "r0->r1")["limit_pkts"][0]
    assert max(q["racc_max"], q["ns2_max"]) <= 0.05 * buffer, (q, buffer)
    d = comparison_row(cc, "port r0->r1", "drops")
    assert abs(d["racc_mean"] - d["ns2_mean"]) <= max(spread(d), 5.0), d
    for g in ("x50", "x60", "x80"):
        r = comparison_row(cc, f"group {g}", "goodput, Mb/s")
        assert abs(r["racc_mean"] - r["ns2_mean"]) <= max(spread(r), 0.02 * r["ns2_mean"]), r
    j = comparison_row(cc, "fairness", "Jain's index")
    assert min(j["racc_min"], j["ns2_min"]) >= 0.99, j
