"""``racc kernel run`` (issue 36, the half without BPF): a scenario on the kernel's own TCP and
qdiscs, in network namespaces.

The refusals run anywhere (the checks that need root are stood in for). The runs need root, iproute2
and cgroup v2, and skip with the reason printed otherwise; each is a few seconds of a 20 Mb/s
dumbbell. ``$RACC_KERNEL_TAG`` (default ``pytest``) goes into every name a run creates.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from one_line import error_line
from racc import catalog
from racc.cli import main
from racc.kernel import document as kdoc
from racc.kernel import machine, network
from racc.kernel import plan as kplan
from racc.kernel import run as krun
from racc.scenario import ScenarioError

os.environ.setdefault("RACC_KERNEL_TAG", "pytest")

# Two Reno flows (SACK on, as Linux runs by default) through 20 Mb/s, RTT 2 x (1 + 18 + 1) = 40 ms,
# a one-BDP DropTail buffer (100 packets of 1000 B).
DUMBBELL = """
name = "kernel-dumbbell"
duration = "{duration}"
seed = 1
packet_size = 1000

[topology]
kind = "dumbbell"
pairs = 2
bottleneck = {{ capacity = "20Mbps", delay = "18ms", buffer = "1bdp" }}
access = {{ capacity = "100Mbps", delay = "1ms" }}

[[flows]]
protocol = "newreno"
src = "s{{i}}"
dst = "d{{i}}"
count = 2
start_spread = "0.2s"
sack = true
"""


def _scenario(tmp_path: Path, duration: str = "5s") -> Path:
    p = tmp_path / "kernel-dumbbell.toml"
    p.write_text(DUMBBELL.format(duration=duration))
    return p


def _kernel_or_skip() -> None:
    try:
        krun.check_environment()
    except machine.KernelUnavailable as exc:
        print(f"skipped: {exc}")
        pytest.skip(str(exc))


def _one_error_line(capsys) -> str:
    return error_line(capsys.readouterr().err)


# -- refusals (anywhere) -------------------------------------------------------------------------


def test_non_root_is_refused_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(krun._live, "is_root", lambda: False)
    assert main(["kernel", "run", str(_scenario(tmp_path)), "--out", str(tmp_path / "o")]) == 1
    assert "racc kernel needs root" in _one_error_line(capsys)
    assert not (tmp_path / "o").exists()


def test_missing_tools_and_cgroup2_are_refused_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(krun._live, "is_root", lambda: True)
    monkeypatch.setattr(machine, "missing_tools", lambda: ["tc"])
    assert main(["kernel", "run", str(_scenario(tmp_path))]) == 1
    assert "iproute2's tc" in _one_error_line(capsys)
    monkeypatch.setattr(machine, "missing_tools", list)
    monkeypatch.setattr(machine, "cgroup2_mount", lambda: None)
    assert main(["kernel", "run", str(_scenario(tmp_path))]) == 1
    assert "cgroup v2" in _one_error_line(capsys)


def test_a_protocol_that_needs_bpf_is_refused_without_the_loader(monkeypatch, capsys):
    """VCP's controller and router module are kernel36b's BPF programs: until they are part of
    the build, one line names the protocol and why, before anything is set up."""
    monkeypatch.setattr(krun, "check_environment", lambda: Path("/nonexistent"))
    monkeypatch.setattr(krun, "load_bpf", lambda: None)
    monkeypatch.setattr(machine, "sweep_stale", lambda: pytest.fail("set-up began"))
    assert main(["kernel", "run", str(catalog.shipped("vcp-dumbbell"))]) == 1
    line = _one_error_line(capsys)
    assert "kernel run: protocol vcp needs the BPF programs (" in line


def test_compare_with_pcap_writes_the_simulated_capture_of_the_same_port(tmp_path, monkeypatch):
    """``racc kernel run --compare --pcap FILE`` writes the simulator's capture beside the kernel's,
    ``FILE``'s stem + ``-simulated``, holding the port the kernel captured, as ``racc live run``
    does. The kernel run is stood in for by a simulated one reporting a capture of r0->r1."""
    from racc.runner import run as simulate

    def stand_in(path, *, seed, overrides, out, plots, cc, pcap):
        Path(pcap).write_bytes(b"kernel")
        res = simulate(path, seed=seed, overrides=overrides, out=out, plots=plots)
        res.summary["kernel"] = {"pcap": {"port": "r0->r1", "file": str(pcap), "packets": 0}}
        return res

    monkeypatch.setattr(krun, "check_environment", lambda: None)
    monkeypatch.setattr(krun, "run", stand_in)
    scen, cap, out = _scenario(tmp_path, "1s"), tmp_path / "b.pcapng", tmp_path / "o"
    args = ["kernel", "run", str(scen), "--out", str(out), "--compare", "--pcap", str(cap), "--no-plots", "-q"]
    assert main(args) == 0
    sim_cap = tmp_path / "b-simulated.pcapng"
    assert cap.read_bytes() == b"kernel"
    assert sim_cap.read_bytes()[:4] == b"\x0a\x0d\x0d\x0a"  # a pcapng section header
    info = json.loads((out / "simulated" / "summary.json").read_text())["run"]["pcap"]
    assert info["file"] == str(sim_cap) and set(info["packets"]) == {"r0->r1"}
    assert (out / "compare.txt").exists()
    # An existing sibling is refused before the run, like the kernel's own capture.
    assert main([*args[:4], str(tmp_path / "o2"), *args[5:]]) == 2
    assert not (tmp_path / "o2").exists()


def test_the_loader_s_own_reason_is_the_refusal(monkeypatch):
    class NoStructOps:
        @staticmethod
        def available():
            return "this kernel has no BPF struct_ops"

    monkeypatch.setattr(krun, "load_bpf", lambda: NoStructOps)
    with pytest.raises(machine.KernelUnavailable, match=r"protocol vcp needs the BPF programs \(this kernel has no BPF struct_ops\)"):
        krun.check_bpf(["vcp"])
    assert krun.check_bpf([]) is None  # Reno, CUBIC, BBR need nothing


@pytest.mark.parametrize(
    ("name", "key"),
    [("wlan-example", "topology: shared media"), ("dcpew-ipsec", "tunnels:"), ("qfcp-lossy", "links[")],
)
def test_features_the_kernel_cannot_give_are_refused_naming_the_key(name, key):
    with pytest.raises(ScenarioError) as exc:
        krun.prepare(str(catalog.shipped(name)), None, None, None)
    msg = str(exc.value)
    assert "cannot run in the kernel" in msg and key in msg, msg
    assert "\n" not in msg


def test_a_queue_discipline_the_kernel_lacks_is_refused_naming_the_port():
    _, _, _, plan = krun.prepare(str(catalog.shipped("crosscheck-red-ecn-dumbbell")), None, None, None)
    with pytest.raises(ScenarioError, match=r"links\[10\]\.router = red \(port r0->r1\): this kernel has no sch_red"):
        network.check_routers(plan, {"red": False})
    network.check_routers(plan, {"red": True})


def test_the_plan_routes_by_destination_and_takes_the_engine_s_buffers(tmp_path):
    _, _, _, plan = krun.prepare(str(_scenario(tmp_path)), None, None, None)
    names = [n["name"] for n in plan.nodes]
    bott = next(p for p in plan.ports if p.name == "r0->r1")
    assert (bott.capacity_bps, bott.limit_pkts) == (20e6, 100)  # 1 BDP: 20e6 x 0.04 / 8000
    assert bott.delay_s == pytest.approx(0.018)
    r0, r1, d0 = names.index("r0"), names.index("r1"), names.index("d0")
    assert plan.neighbour(r0, plan.routes[r0][d0]) == r1
    s0, d0 = names.index("s0"), names.index("d0")
    assert plan.initcwnd(s0, d0) == 4  # RFC 5681 for a 960-byte MSS, as racc's TCP (Linux: 10)
    assert plan.initcwnd(d0, s0) is None
    assert plan.route_options(s0, d0) == ["initcwnd", "4", "rto_min", "200ms"]
    assert plan.route_options(d0, s0) == ["quickack", "1"]  # racc's receivers ACK every segment
    kplan.choose_cc(plan, None, set())
    assert {f.cc for f in plan.flows} == {"reno"}
    kplan.choose_cc(plan, "bbr", set())
    assert {f.cc for f in plan.flows} == {"bbr"}
    dev = network.qdisc_args(bott, plan.packet_size)
    assert dev[-1][-3:] == ["pfifo", "limit", "100"]
    assert dev[0][7:10] == ["stab", "overhead", "-14"]
    # netem (where the kernel has it): the link's delay, room for 2 x capacity x delay of 40 B frames
    link = plan.links[bott.index // 2]
    assert network.netem_args(link, plan.packet_size) == ["netem", "delay", "18000us", "limit", "2250"]


# -- runs (root) ---------------------------------------------------------------------------------


def _bottleneck(res) -> dict:
    return next(p for p in res.summary["ports"] if p["name"] == "r0->r1")


def test_two_reno_flows_fill_the_shaped_link(tmp_path):
    """Utilisation >= 0.9 over 5 s: Reno with a one-BDP buffer keeps the link busy through every
    halving (the queue it built covers the window's fall), so the link idles only in the first
    round trips of slow start; the simulator gives 0.93 for the same scenario. The shaper's rate:
    over the samples when the queue was never empty, the link carried 20 Mb/s within 5 %."""
    _kernel_or_skip()
    res = krun.run(str(_scenario(tmp_path)), out=tmp_path / "out")
    b = _bottleneck(res)
    assert b["utilisation"] >= 0.9, b
    assert b["drops"] > 0  # Reno probes until the buffer overflows
    links = res.links.filter(pl.col("name") == "r0->r1").sort("time_s")
    busy = links.filter((pl.col("queue_pkts") > 0) & (pl.col("queue_pkts").shift(1) > 0))
    assert busy.height > 100
    rate = busy["throughput_bps"].mean()
    assert abs(rate / 20e6 - 1) <= 0.05, rate
    assert res.summary["kernel"]["controllers_seen"] == {"0": "reno", "1": "reno"}
    assert res.summary["kernel"]["warnings"] == []  # the delay line kept up
    assert res.summary["run"]["engine"] == "kernel"
    assert res.flows.height > 0 and set(res.flows["flow"].unique()) == {0, 1}
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["flows"]["count"] == 2
    assert not [p for p in Path("/run/netns").glob(f"{machine.run_tag()}-*")]


@pytest.mark.parametrize("cc", ["cubic", "bbr"])
def test_cubic_and_bbr_run(tmp_path, cc):
    """--cc puts every flow on that Linux controller (read back from the sockets); over 3 s each
    fills the link to at least 0.75 (start-up is a few 40 ms round trips of the 3 s)."""
    _kernel_or_skip()
    res = krun.run(str(_scenario(tmp_path, "3s")), cc=cc)
    assert res.summary["kernel"]["controllers_seen"] == {"0": cc, "1": cc}
    assert _bottleneck(res)["utilisation"] >= 0.75


def _names_of(pid: int) -> list[str]:
    tag = machine.run_tag(pid)
    return [p.name for p in Path("/run/netns").glob(f"{tag}-*")]


def _children_of(pid: int) -> list[int]:
    found = []
    for d in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--parent" in cmd and cmd[cmd.index(b"--parent") + 1 : cmd.index(b"--parent") + 2] == [str(pid).encode()]:
            found.append(int(d.name))
    return found


def test_sigkill_leaves_no_namespace_and_no_process(tmp_path):
    _kernel_or_skip()
    scen = _scenario(tmp_path, "30s")
    p = subprocess.Popen(
        [sys.executable, "-m", "racc.cli", "kernel", "run", str(scen), "--out", str(tmp_path / "o"), "-q"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not _children_of(p.pid) or len(_children_of(p.pid)) < 4:  # delay line + 4 hosts
            assert p.poll() is None, p.stderr.read()
            assert time.monotonic() < deadline, "the run did not start its processes"
            time.sleep(0.1)
        assert _names_of(p.pid)
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    # The janitor (the pipe from the killed run closed) removes the run's namespaces and cgroup;
    # the next run's sweep would too. Waited for, not timed: it is done when its names are gone.
    # Killed children take a moment to exit on a loaded machine (a traffic process's threads).
    deadline = time.monotonic() + 30
    while (_names_of(p.pid) or _children_of(p.pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    machine.sweep_stale()  # what the next run does first
    assert _names_of(p.pid) == []
    assert _children_of(p.pid) == []
    mount = machine.cgroup2_mount()
    assert not list(mount.glob(f"{machine.run_tag(p.pid)}*"))
    assert not (tmp_path / "o").exists()


def _pcap_records(path: Path) -> list[tuple[int, bytes]]:
    import struct

    b = path.read_bytes()
    magic, _maj, _min, _tz, _sig, _snap, link = struct.unpack_from("<IHHiIII", b, 0)
    assert (magic, link) == (0xA1B23C4D, 1)  # nanosecond pcap, Ethernet
    out, off = [], 24
    while off < len(b):
        _s, _ns, caplen, origlen = struct.unpack_from("<IIII", b, off)
        out.append((origlen, b[off + 16 : off + 16 + caplen]))
        off += 16 + caplen
    return out


def test_pcap_holds_the_bottleneck_s_departures_and_is_not_overwritten(tmp_path, capsys):
    _kernel_or_skip()
    scen, cap = _scenario(tmp_path, "2s"), tmp_path / "b.pcap"
    res = krun.run(str(scen), pcap=cap)
    info = res.summary["kernel"]["pcap"]
    assert info["port"] == "r0->r1" and info["file"] == str(cap)
    recs = _pcap_records(cap)
    assert len(recs) == info["packets"] > 100
    data = [r for r in recs if r[0] == 14 + 1000]  # Ethernet + a full 1000-byte packet
    assert len(data) >= 0.9 * len(recs)  # the bottleneck's direction carries data, not ACKs
    # The capture runs a little longer than the samples (from before time zero to after the end).
    assert len(data) == pytest.approx(_bottleneck(res)["tx_pkts"], rel=0.05)
    cap.write_bytes(b"mine")
    assert main(["kernel", "run", str(scen), "--out", str(tmp_path / "o2"), "--pcap", str(cap)]) == 2
    assert "--pcap" in _one_error_line(capsys) and cap.read_bytes() == b"mine"


def test_ctrl_c_leaves_results_only_in_out_incomplete(tmp_path):
    _kernel_or_skip()
    out = tmp_path / "o"
    p = subprocess.Popen(
        [sys.executable, "-m", "racc.cli", "kernel", "run", str(_scenario(tmp_path, "30s")), "--out", str(out), "-q"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while len(_children_of(p.pid)) < 5:
        assert p.poll() is None, p.stderr.read()
        assert time.monotonic() < deadline, "the run did not start its processes"
        time.sleep(0.1)
    time.sleep(1.0)  # some samples into the run
    p.send_signal(signal.SIGINT)
    _, err = p.communicate()
    assert p.returncode == 130, err
    assert "kernel run stopped by SIGINT" in err
    assert not out.exists()
    s = json.loads((tmp_path / "o.incomplete" / "summary.json").read_text())
    assert s["complete"] is False and 0 < s["sim_time_s"] < 30
    assert _names_of(p.pid) == [] and _children_of(p.pid) == []


VCP_DUMBBELL = """
name = "kernel-vcp"
duration = "2s"
seed = 1
packet_size = 1000

[topology]
kind = "dumbbell"
pairs = 2
access = { capacity = "100Mbps", delay = "1ms" }

[topology.bottleneck]
capacity = "20Mbps"
delay = "18ms"
buffer = "1bdp"
router = "vcp"
router_params = { t_p = 0.2 }

[[flows]]
protocol = "vcp"
src = "s{i}"
dst = "d{i}"
count = 2
start_spread = "0.2s"
"""


class StandInLoader:
    """Stands in for kernel36b's ``racc.kernel.bpf`` in this test only: records what the runtime
    asks of the interface, and hands the sockets a built-in controller."""

    def __init__(self):
        self.calls: list[tuple] = []
        self.closed = 0

    def available(self):
        return None

    def supported(self, protocol):
        return protocol == "vcp"

    def _handle(self, **kw):
        loader = self

        class Handle:
            def counters(self):
                return {"intervals": 7}

            def close(self):
                loader.closed += 1

        h = Handle()
        for k, v in kw.items():
            setattr(h, k, v)
        return h

    def attach_router(self, netns, ifname, protocol, params, rate_bps):
        assert Path("/run/netns", netns).exists()
        self.calls.append(("router", netns, ifname, protocol, dict(params), rate_bps))
        return self._handle()

    def attach_hosts(self, cgroup_path, protocol, params):
        assert Path(cgroup_path, "cgroup.procs").exists()
        self.calls.append(("hosts", Path(cgroup_path).name, protocol))
        h = self._handle(cc_name="cubic")
        h.attach_iface = lambda netns, ifname: self.calls.append(("iface", netns.rsplit("-", 1)[1], ifname))
        return h


def test_the_bpf_interface_is_called_as_agreed(tmp_path, monkeypatch):
    """The router program at each port of the bottleneck link (the simulator runs the module on
    both directions), at its egress: the sending node's namespace, the link's interface, the
    port's rate; the host programs on every sending and receiving host's cgroup leaf, the
    sockets on the handle's controller, its counters in the summary, every handle closed."""
    _kernel_or_skip()
    loader = StandInLoader()
    monkeypatch.setattr(krun, "load_bpf", lambda: loader)
    scen = tmp_path / "kernel-vcp.toml"
    scen.write_text(VCP_DUMBBELL)
    res = krun.run(str(scen))
    _, _, _, plan = krun.prepare(str(scen), None, None, None)
    names = [n["name"] for n in plan.nodes]
    bott = next(p for p in plan.ports if p.name == "r0->r1")
    routers = sorted((c[1].rsplit("-", 1)[1], c[2], c[3], c[5]) for c in loader.calls if c[0] == "router")
    want = sorted((f"n{names.index(r)}", bott.ifname, "vcp", 20e6) for r in ("r0", "r1"))
    assert routers == want
    assert all(c[4]["t_p"] == 0.2 for c in loader.calls if c[0] == "router")
    hosts = sorted(c[1] for c in loader.calls if c[0] == "hosts")
    assert hosts == sorted(f"n{names.index(h)}" for h in ("s0", "s1", "d0", "d1"))
    ifaces = sorted(c[1:] for c in loader.calls if c[0] == "iface")  # each sender's egress, once
    assert ifaces == sorted((f"n{names.index(h)}", f"k{plan.routes[names.index(h)][names.index(d)]}") for h, d in (("s0", "d0"), ("s1", "d1")))
    assert res.summary["kernel"]["controllers_seen"] == {"0": "cubic", "1": "cubic"}
    assert res.summary["kernel"]["bpf"] == {"r0->r1": {"intervals": 7}, "r1->r0": {"intervals": 7}}
    assert loader.closed == len([c for c in loader.calls if c[0] != "iface"])


def test_a_delay_line_that_fell_behind_is_said():
    _, _, _, plan = krun.prepare(str(catalog.shipped("crosscheck-rtt-dumbbell")), None, None, None)
    assert kdoc.delay_warnings(plan, {"late_s": {"p99": 0.0004}, "links": {}}) == []
    (w,) = kdoc.delay_warnings(plan, {"late_s": {"p99": 0.19}, "links": {}})
    assert "190.0 ms late at p99 (shortest link delay 1.0 ms)" in w
    assert "lost 3 frames" in kdoc.delay_warnings(plan, {"links": {"x": {"dropped": 3}}})[0]


def test_red_takes_the_scenario_s_thresholds_weight_and_ecn():
    """tc's red takes no EWMA weight, only a burst: the burst chosen makes tc's weight
    2^-round(log2(1/w_q)) (w_q = 0.002 -> 2^-9), thresholds in bytes, ECN for action = mark."""
    _, _, _, plan = krun.prepare(str(catalog.shipped("crosscheck-red-ecn-dumbbell")), None, None, None)
    port = next(p for p in plan.ports if p.name == "r0->r1")
    args = network.red_args(port, plan.packet_size)
    kv = dict(zip(args[1:-1:2], args[2:-1:2]))
    assert (kv["min"], kv["max"], kv["avpkt"], kv["probability"]) == ("150000", "700000", "1000", "0.1")
    assert network.red_wlog(150000, int(kv["burst"]), 1000) == 9
    assert network.red_wlog(150000, int(kv["burst"]) - 1, 1000) < 9  # the smallest such burst
    assert args[-1] == "ecn" and int(kv["limit"]) == 1250 * 1000
    assert "no gentle mode" in kdoc.departures(plan)[0]


def test_red_runs_where_the_kernel_has_sch_red(tmp_path):
    _kernel_or_skip()
    if not machine.qdisc_kinds_available({"red"})["red"]:
        print("skipped: this kernel has no sch_red")
        pytest.skip("this kernel has no sch_red")
    res = krun.run(str(catalog.shipped("crosscheck-red-ecn-dumbbell")), overrides=["duration=3s"])
    assert next(p for p in res.summary["ports"] if p["name"] == "r0->r1")["tx_pkts"] > 0


def test_the_kernel_delay_path_is_wired_where_netem_exists(tmp_path, monkeypatch):
    """Where the kernel has netem, each link namespace is a wire in the kernel (ingress, u32,
    mirred redirect to the other end) with netem at each end's egress, and no delay line runs.
    This machine may lack netem: the wiring is checked with a FIFO standing in for netem, so the
    path carries the flows with no delay at all (min RTT far below the scenario's 40 ms)."""
    _kernel_or_skip()
    monkeypatch.setattr(machine, "qdisc_kinds_available", lambda kinds: dict.fromkeys(kinds, False) | {"netem": True})
    monkeypatch.setattr(network, "netem_args", lambda link, size: ["pfifo", "limit", "10000"])
    res = krun.run(str(_scenario(tmp_path, "2s")))
    k = res.summary["kernel"]
    assert k["delay"].startswith("netem") and k["delay_line"] == {}
    assert all(v < 0.01 for v in k["min_rtt_s"].values()), k["min_rtt_s"]
    assert _bottleneck(res)["utilisation"] >= 0.8
