"""``racc crosscheck ns2``: the generated Tcl feature by feature (no ns-2 needed), the refusals, the
counter reader, the verdict, the command's errors, and two small scenarios run in both simulators.

The integration tolerances below were written down before either scenario was first run.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from conftest import REPO, needs_core
from crosscheck_helpers import comparison_row, resolve, spread
from one_line import refused
from racc import scenario as _scenario
from racc.crosscheck import compare, counters, support, tcl

pytestmark = needs_core

BASE = """
name = "t"
duration = "10s"
seed = 1
packet_size = {packet_size}
min_rto = "{min_rto}"
[topology]
kind = "dumbbell"
pairs = 2
access = {{ capacity = "100Mbps", delay = "1ms" }}
bottleneck = {{ capacity = "10Mbps", delay = "10ms", buffer = {buffer}{router} }}
"""
FLOW = """
[[flows]]
name = "{name}"
protocol = "{protocol}"
src = "s{{i}}"
dst = "d{{i}}"
count = 2
start_spread = "1s"
params = {{ spurious_rto = "off"{params} }}
{extra}
"""


def toml(packet_size=1000, min_rto="200ms", buffer='"50pkt"', router="", flows=None):
    text = BASE.format(packet_size=packet_size, min_rto=min_rto, buffer=buffer, router=router)
    for f in flows if flows is not None else [{}]:
        text += FLOW.format(
            name=f.get("name", "g"),
            protocol=f.get("protocol", "newreno"),
            params=f.get("params", ""),
            extra=f.get("extra", ""),
        )
    return text


def script(text, interval_ns=100_000_000):
    _, r, pi = resolve(text)
    return tcl.write(r, pi, interval_ns), r


# dumbbell with pairs = 2: s0 s1 = n(0) n(1), r0 r1 = n(2) n(3), d0 d1 = n(4) n(5)


def test_droptail_queue_limit_is_buffer_plus_one_and_payload_is_wire_size_minus_40():
    s, _ = script(toml(packet_size=1500, buffer='"50pkt"'))
    assert "Agent/TCP set packetSize_ 1460 ;" in s
    assert "$ns duplex-link $n(2) $n(3) 10000000 0.010000000 DropTail" in s
    assert "$ns queue-limit $n(2) $n(3) 51 ;" in s and "$ns queue-limit $n(3) $n(2) 51 ;" in s
    # Run-wide matching: receiver window, per-ACK RTT samples without option bytes, RFC 6582 exit.
    for line in (
        "Agent/TCP set window_ 1000000 ;",
        "Agent/TCP set timestamps_ true ;",
        "Agent/TCP set ts_option_size_ 0 ;",
        "Agent/TCP set minrto_ 0.2 ;",
        "Agent/TCP/Newreno set exit_recovery_fix_ 1 ;",
        "Agent/TCP/Newreno set partial_window_deflation_ 1 ;",
    ):
        assert line in s


def test_droptail_byte_buffer():
    s, _ = script(toml(buffer='"150KB"'))
    assert "[[$ns link $n(2) $n(3)] queue] set queue_in_bytes_ true" in s
    assert "[[$ns link $n(2) $n(3)] queue] set mean_pktsize_ 1" in s
    assert "$ns queue-limit $n(2) $n(3) 150001 ;" in s


def test_bdp_buffer_is_the_engines_resolved_limit():
    s, _ = script(toml(buffer='"1bdp"'))
    # 10 Mb/s x 2 x (1 + 10 + 1) ms / 8000 B = 30 packets
    assert "$ns queue-limit $n(2) $n(3) 31 ;" in s


def test_red_thresholds_marking_and_limit():
    red = ', router = "red", router_params = { min_th = 10, max_th = 30, max_p = 0.05, w_q = 0.004, action = "mark" }'
    s, _ = script(toml(buffer='"100pkt"', router=red, flows=[{"extra": "ecn = true"}]))
    assert "$ns duplex-link $n(2) $n(3) 10000000 0.010000000 RED" in s
    before = s[: s.index("$ns duplex-link $n(2) $n(3)")]
    for line in ("Queue/RED set thresh_ 10 ;", "Queue/RED set maxthresh_ 30 ;", "Queue/RED set q_weight_ 0.004 ;"):
        assert line in before, line
    block = s[s.index("$ns duplex-link $n(2) $n(3)") :].split("$ns queue-limit $n(2) $n(3)")[0]
    for line in (
        "$q set linterm_ 20 ;",
        "$q set gentle_ true",
        "$q set wait_ false ;",
        "$q set bytes_ false ;",
        "$q set queue_in_bytes_ false",
        "$q set mean_pktsize_ 1000 ;",
        "$q set setbit_ true ;",
        "$q set mark_p_ 2.0 ;",
    ):
        assert line in block, line
    assert "$ns queue-limit $n(2) $n(3) 100 ;" in s  # RED holds the limit itself
    assert "$t set ecn_ 1" in s
    s, _ = script(toml(buffer='"100pkt"', router=', router = "red", router_params = { gentle = false }'))
    assert "$q set setbit_ false ;" in s and "$q set gentle_ false" in s
    # Thresholds left out are ns-2's automatic ones (0, 0, -1), derived by ns-2 as by racc.
    for line in ("Queue/RED set thresh_ 0 ;", "Queue/RED set maxthresh_ 0 ;", "Queue/RED set q_weight_ -1 ;"):
        assert line in s, line


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (Debian's ns2 package) is not installed")
def test_red_automatic_settings_are_ns2s(tmp_path):
    """ns-2.35 derives RED's automatic min_th, max_th and w_q (thresh_ 0, maxthresh_ 0, q_weight_ -1)
    from the link as racc does: on the script racc writes, the values ns-2 reads back agree with the
    run's `router_settings` within 1e-9 (relative), at two rates, delays and packet sizes."""

    import racc

    for capacity, delay, size in (("10Mbps", "10ms", 1000), ("100Mbps", "48ms", 1500)):
        text = toml(
            buffer='"1000pkt"', router=', router = "red", router_params = { action = "mark" }', packet_size=size
        ).replace('capacity = "10Mbps", delay = "10ms"', f'capacity = "{capacity}", delay = "{delay}"')
        s, _ = script(text)
        probe = s.split("# Flow groups")[0] + (
            "set q [[$ns link $n(2) $n(3)] queue]\n"
            'puts "[$q set thresh_] [$q set maxthresh_] [$q set q_weight_]"\nexit 0\n'
        )
        (tmp_path / "probe.tcl").write_text(probe)
        out = subprocess.run(["ns", "probe.tcl"], check=True, cwd=tmp_path, capture_output=True, text=True, timeout=60)
        ns_min, ns_max, ns_w = (float(x) for x in out.stdout.split()[-3:])
        mine = racc.run(text).summary["run"]["router_settings"]
        port = next(v for k, v in mine.items() if k.startswith("r0"))
        for ours, theirs in ((port["min_th"], ns_min), (port["max_th"], ns_max), (port["w_q"], ns_w)):
            assert abs(ours - theirs) <= 1e-9 * abs(theirs), (capacity, delay, size, port, (ns_min, ns_max, ns_w))


def test_start_times_sizes_and_stops_are_raccs():
    poisson = """
[[traffic]]
name = "web"
protocol = "reno"
src = "s1"
dst = "d1"
rate = 20
size = { dist = "pareto", mean = "20pkt", shape = 1.5 }
params = { spurious_rto = "off" }
"""
    s, r = script(toml(flows=[{"extra": 'stop = "8s"'}]) + poisson)
    lines = re.findall(r'^\$ns at (\S+) "flow (\d+) (\S+) (\S+) g\d+ (\d+) (\d+) (-?\d+) (-?\d+)"$', s, re.MULTILINE)
    assert len(lines) == len(r["flows"]) > 10
    for start, i, agent, sink, src, dst, size, _ss in lines:
        f = r["flows"][int(i)]
        assert start == tcl.secs(f["start"]) and float(start) == f["start"] / 1e9
        assert (int(src), int(dst)) == (f["src"], f["dst"])
        assert int(size) == (-1 if f["size_bytes"] is None else f["size_bytes"])
        assert agent == {"newreno": "Agent/TCP/Newreno", "reno": "Agent/TCP/Reno"}[f["protocol"]]
        assert sink == "Agent/TCPSink"
    stops = [int(i) for i in re.findall(r'^\$ns at 8\.000000000 "stop_flow (\d+)"$', s, re.MULTILINE)]
    assert stops == [i for i, f in enumerate(r["flows"]) if f["stop"] is not None] and len(stops) == 2


def test_tcp_options_and_params():
    s, _ = script(
        toml(min_rto="1s", flows=[{"params": ', dupthresh = 4, partial_ack_timer = "every", limited_transmit = false'}])
    )
    assert "Agent/TCP set minrto_ 1 ;" in s
    for line in ("$t set numdupacks_ 4", "$t set newreno_changes1_ 0", "$t set singledup_ 0"):
        assert line in s
    # Defaults: IW 4 for a 960-byte SMSS, SYN first, RFC 6298's 1 s initial RTO, 1 ms tick.
    for line in (
        "$t set windowInit_ 4 ;",
        "$t set syn_ true ;",
        "$t set rtxcur_init_ 1 ;",
        "$t set tcpTick_ 0.001 ;",
        "$t set newreno_changes1_ 1",
    ):
        assert line in toml_script_default(), line
    extra = 'initial_window = 10\ninitial_ssthresh = "20pkt"\nhandshake = false\ndelayed_ack = true\nsack = true'
    s, _ = script(toml(flows=[{"extra": extra}]))
    assert "$t set windowInit_ 10 ;" in s and "$t set syn_ false ;" in s
    assert re.search(r'"flow 0 Agent/TCP/Sack1 Agent/TCPSink/Sack1/DelAck g0 \d+ \d+ -1 20"', s)
    s, _ = script(toml(flows=[{"protocol": "reno", "extra": "delayed_ack = true"}]))
    assert re.search(r'"flow 0 Agent/TCP/Reno Agent/TCPSink/DelAck g0 ', s)
    assert "newreno_changes1_" not in s.split("proc g0")[1].split("}")[0]


def toml_script_default():
    return script(toml())[0]


def test_explicit_topology_the_parking_lot_scenario():
    path = REPO / "scenarios" / "crosscheck-parking-lot.toml"
    sc, r, pi = resolve(path.read_text())
    assert support.refusals(sc.data, r, pi) == []
    s = tcl.write(r, pi, 500_000_000)
    # r0 r1 r2 r3 = n(0..3): the three 100 Mb/s, 10 ms links with 250-packet buffers.
    for a, b in ((0, 1), (1, 2), (2, 3)):
        assert f"$ns duplex-link $n({a}) $n({b}) 100000000 0.010000000 DropTail" in s
        assert f"$ns queue-limit $n({a}) $n({b}) 251 ;" in s
    assert "set n(4) [$ns node] ;# long_src" in s
    groups = re.findall(r"^proc g\d+ \{t\} \{ ;# group (\S+): newreno$", s, re.MULTILINE)
    assert sorted(groups) == ["cross0", "cross1", "cross2", "long"]
    assert s.count('"flow ') == 10


def test_bernoulli_loss_on_its_direction_only():
    s, _ = script(toml(router=', loss = { model = "bernoulli", p = 0.01 }'))
    # Port 2 x 2 (the bottleneck is link 2 of a 2-pair dumbbell) is r0 -> r1.
    assert "set em [new ErrorModel] ;# racc Bernoulli loss on port 4" in s
    assert "$em set rate_ 0.01" in s and "$ns link-lossmodel $em $n(2) $n(3)" in s
    assert "$em drop-target $lm(4)" in s and s.count("new ErrorModel") == 1


def test_refusals_name_every_part():
    text = """
name = "bad"
duration = "5s"
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { capacity = "10Mbps", delay = "10ms", router = "vcp", loss = { model = "gilbert_elliott", loss = 0.05 } }
[[flows]]
name = "v"
protocol = "vcp"
src = "s0"
dst = "d0"
[[flows]]
name = "plain"
protocol = "newreno"
src = "s0"
dst = "d0"
params = { rto_rule = "linux" }
[[traffic]]
name = "web"
kind = "web"
protocol = "newreno"
src = "s0"
dst = "d0"
sources = 2
params = { spurious_rto = "off" }
"""
    sc, r, pi = resolve(text)
    bad = support.refusals(sc.data, r, pi)
    joined = "; ".join(bad)
    assert "topology.bottleneck.router: 'vcp'" in joined
    assert "topology.bottleneck.loss: GilbertElliott (forward)" in joined
    assert "flows[0].protocol: 'vcp'" in joined
    assert "flows[1].params.spurious_rto" in joined and "racc's default" in joined
    assert "flows[1].params.rto_rule" in joined
    assert "traffic[0].kind: 'web' sources" in joined
    with pytest.raises(_scenario.ScenarioError, match="ns-2 cannot run this scenario"):
        support.check(sc.data, r, pi, "bad.toml")
    # Nothing to refuse in a supported scenario.
    sc, r, pi = resolve(toml(router=', router = "red"'))
    assert support.refusals(sc.data, r, pi) == []


def test_refuses_routes_ns2_would_choose_differently():
    text = """
duration = "5s"
[topology]
kind = "explicit"
nodes = [{ name = "a", kind = "host" }, { name = "r1" }, { name = "r2" }, { name = "r3" }, { name = "b", kind = "host" }]
links = [
  { a = "a", b = "r1", capacity = "10Mbps", delay = "1ms" },
  { a = "r1", b = "r2", capacity = "10Mbps", delay = "1ms" },
  { a = "r1", b = "r3", capacity = "10Mbps", delay = "1ms" },
  { a = "r2", b = "b", capacity = "10Mbps", delay = "1ms" },
  { a = "r3", b = "b", capacity = "10Mbps", delay = "1ms" },
]
[[flows]]
protocol = "newreno"
src = "a"
dst = "b"
params = { spurious_rto = "off" }
"""
    sc, r, pi = resolve(text)
    assert any(
        "from a to b ns-2's static routing has 2 fewest-hop path(s)" in b for b in support.refusals(sc.data, r, pi)
    )


def test_counter_reader_converts_ns2_units(tmp_path):
    _, r, pi = resolve(toml(flows=[{"extra": 'size = "10pkt"'}]))
    import polars as pl
    from racc.results import frame

    port = r["record_ports"][0]
    (tmp_path / "c.txt").write_text(
        f"L 1 {port} 100 90 90000 5 2 0 10 10000 0.5\n"
        f"L 2 {port} 250 240 240000 6 3 0 0 0 1.5\n"
        "F 1 0 -1 0 0 1 0\n"
        "F 1 1 4 1 0 5.5 800\n"
        "F 2 1 20 2 1 6 800\n"
        "D 0 1.5\nD 1 1.9\n"
    )
    info = frame("flow_info", {"flow": [0, 1], "group": ["g", "g"], "start_s": [0.0, 0.0], "stop_s": [None, None]})
    res = counters.read(tmp_path / "c.txt", r, info, frame("port_info", pi), 100_000_000)
    links = res.links.filter(pl.col("port") == port)
    assert links.get_column("tx_pkts").to_list() == [90, 150] and links.get_column("drops").to_list() == [5, 1]
    assert links.get_column("utilisation").to_list()[1] == pytest.approx(
        150000 * 8 / 0.1 / res.port_info.filter(pl.col("port") == port).get_column("capacity_bps")[0]
    )
    assert links.get_column("queue_pkt_s").to_list() == [0.5, 1.5]
    f1 = res.flows.filter(pl.col("flow") == 1)
    # ack_ 4 with a SYN = 4 data packets of 960 B; capped at the size (10 x 960) later.
    assert f1.get_column("acked_bytes").to_list() == [3840, 9600]
    assert f1.get_column("srtt_s").to_list() == pytest.approx([0.1, 0.1])  # 800 / 8 ticks of 1 ms
    assert res.flows.filter(pl.col("flow") == 0).get_column("acked_bytes").to_list() == [0]
    assert res.completions.get_column("fct_s").to_list() == pytest.approx(
        [1.5 - r["flows"][0]["start"] / 1e9, 1.9 - r["flows"][1]["start"] / 1e9]
    )
    assert counters.acked_bytes(4, {"handshake": False, "size_bytes": None}, 960) == 5 * 960


def test_verdict_uses_the_larger_seed_range():
    assert compare.verdict([1.0, 2.0], [2.5, 3.0], 2) is False  # |1.5 - 2.75| > 1
    assert compare.verdict([1.0, 3.0], [2.5, 3.0], 2) is True  # |2 - 2.75| <= 2
    assert compare.verdict([0.0, 0.0], [0.0, 0.0], 2) is True
    assert compare.verdict([1.0], [1.0], 1) is None


def test_command_without_ns_says_how_to_install_it(tmp_path, cli_env, racc_cli):
    (tmp_path / "s.toml").write_text(toml())
    env = dict(cli_env, PATH=str(tmp_path))  # no ns on it
    env.pop("RACC_NS", None)
    p = racc_cli("crosscheck", "ns2", "s.toml", "--seeds", "1", env=env, cwd=tmp_path, timeout=120)
    refused(p, "ns2", "apt-get install ns2")
    assert not (tmp_path / "results").exists()


def test_command_refuses_before_running(tmp_path, racc_cli):
    (tmp_path / "s.toml").write_text(toml().replace('spurious_rto = "off"', 'spurious_rto = "eifel"'))
    p = racc_cli("crosscheck", "ns2", "s.toml", cwd=tmp_path, timeout=120)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and "flows[0].params.spurious_rto" in lines[0], p.stderr
    p = racc_cli("crosscheck", "ns2", "s.toml", "--window", "8:3", cwd=tmp_path, timeout=120)
    assert p.returncode == 2 and "--window" in p.stderr


# ---------------------------------------------------------------------------------------------
# Both simulators. Tolerances written before the first run:
#   A (DropTail, NewReno and Reno with delayed ACKs, two RTTs): bottleneck utilisation within
#     0.03; mean queue within max(5 packets, 30 % of ns-2's); drops within max(either side's
#     seed range, 30 % of ns-2's mean, 5); the groups' total goodput within 5 %.
#   B (RED marking, ECN, a long flow and Poisson short flows): utilisation within 0.05; marks
#     within max(either seed range, 30 % of ns-2's mean) and above zero on both sides; the number
#     of short flows that arrived in the window and completed within 10 %; their mean completion
#     time within 30 %.

SCENARIO_A = """
name = "xc-a"
duration = "20s"
packet_size = 1000
min_rto = "200ms"
[topology]
kind = "dumbbell"
pairs = 4
access = { capacity = "100Mbps", delay = "1ms" }
access_delays = ["2ms", "12ms"]
bottleneck = { capacity = "10Mbps", delay = "10ms", buffer = "40pkt" }
[[flows]]
name = "newreno"
protocol = "newreno"
src = "s{i}"
dst = "d{i}"
count = 2
start_spread = "1s"
params = { spurious_rto = "off" }
[[flows]]
name = "reno"
protocol = "reno"
src = "s{i}"
dst = "d{i}"
count = 2
index_offset = 2
start_spread = "1s"
delayed_ack = true
params = { spurious_rto = "off" }
"""

SCENARIO_B = """
name = "xc-b"
duration = "10s"
packet_size = 1000
min_rto = "200ms"
[topology]
kind = "dumbbell"
pairs = 2
access = { capacity = "100Mbps", delay = "1ms" }
[topology.bottleneck]
capacity = "10Mbps"
delay = "10ms"
buffer = "100pkt"
router = "red"
router_params = { min_th = 10, max_th = 30, max_p = 0.1, w_q = 0.002, gentle = true, action = "mark" }
[[flows]]
name = "long"
protocol = "newreno"
src = "s0"
dst = "d0"
ecn = true
params = { spurious_rto = "off" }
[[traffic]]
name = "short"
protocol = "newreno"
src = "s1"
dst = "d1"
rate = 20
size = { dist = "pareto", mean = "20pkt", shape = 1.5 }
ecn = true
params = { spurious_rto = "off" }
"""


def _both(tmp_path, text, window):
    if shutil.which("ns") is None:
        pytest.skip("ns-2 (`ns`) is not installed: apt-get install ns2 (scripts/test.sh installs it as root)")
    from racc.crosscheck.run import crosscheck_ns2

    path = tmp_path / "s.toml"
    path.write_text(text)
    return crosscheck_ns2(str(path), seeds="3", window=window)


def test_ns2_agrees_on_a_droptail_dumbbell(tmp_path):
    cc = _both(tmp_path, SCENARIO_A, "10:20")
    u = comparison_row(cc, "port r0->r1", "utilisation")
    assert abs(u["racc_mean"] - u["ns2_mean"]) <= 0.03, u
    q = comparison_row(cc, "port r0->r1", "mean queue, pkts")
    assert abs(q["racc_mean"] - q["ns2_mean"]) <= max(5.0, 0.3 * q["ns2_mean"]), q
    d = comparison_row(cc, "port r0->r1", "drops")
    assert abs(d["racc_mean"] - d["ns2_mean"]) <= max(spread(d), 0.3 * d["ns2_mean"], 5.0), d
    good = [comparison_row(cc, f"group {g}", "goodput, Mb/s") for g in ("newreno", "reno")]
    racc_total, ns2_total = sum(g["racc_mean"] for g in good), sum(g["ns2_mean"] for g in good)
    assert abs(racc_total - ns2_total) <= 0.05 * ns2_total, good


def test_ns2_agrees_on_red_marking_with_short_flows(tmp_path):
    cc = _both(tmp_path, SCENARIO_B, "4:10")
    u = comparison_row(cc, "port r0->r1", "utilisation")
    assert abs(u["racc_mean"] - u["ns2_mean"]) <= 0.05, u
    m = comparison_row(cc, "port r0->r1", "marks")
    assert m["racc_min"] > 0 and m["ns2_min"] > 0, m
    assert abs(m["racc_mean"] - m["ns2_mean"]) <= max(spread(m), 0.3 * m["ns2_mean"]), m
    done = {}
    fct = {}
    for side in ("racc", "ns2"):
        n = t = 0.0
        for r, s in cc.sides:
            comp = (r if side == "racc" else s).res.completions
            c = comp.filter((comp["start_s"] >= 4) & (comp["start_s"] < 10))
            n += c.height
            t += c["fct_s"].sum()
        done[side], fct[side] = n, t / n
    assert abs(done["racc"] - done["ns2"]) <= 0.1 * done["ns2"], done
    assert abs(fct["racc"] - fct["ns2"]) <= 0.3 * fct["ns2"], fct
