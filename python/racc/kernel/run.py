"""``racc kernel run``: a scenario on the Linux kernel's own TCP and queues, written as the same
results folder as ``racc run`` (docs/KERNEL.md).

Order: refuse what cannot run (one line each) → sweep what killed runs left → start the janitor
→ build namespaces, links, qdiscs and routes → BPF programs if the scenario's protocols need them
→ the delay line → one traffic process per host (in its cgroup leaf) → sample the qdiscs every
record interval until the run's end → collect, tear down, save.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from racc import live as _live
from racc import scenario as _scenario
from racc import summary as _summary
from racc.errors import Interrupted, core
from racc.kernel import document as _document
from racc.kernel import machine, network
from racc.kernel import plan as _plan
from racc.kernel.machine import KernelUnavailable
from racc.resolved import Resolved
from racc.results import Results, check_replaceable, frame
from racc.runner import run_info

NOT_ROOT = "racc kernel needs root: it creates network namespaces, qdiscs and cgroups (run it as root, e.g. with sudo)"
#: Seconds between the traffic processes saying ready and the run's time zero.
START_MARGIN_S = 0.3


def check_environment() -> Path:
    """The one-line refusals that need no scenario; returns the cgroup2 mount."""
    if not _live.is_root():
        raise KernelUnavailable(NOT_ROOT)
    missing = machine.missing_tools()
    if missing:
        raise KernelUnavailable(f"racc kernel needs iproute2's {' and '.join(missing)} on PATH (not found)")
    mount = machine.cgroup2_mount()
    if mount is None:
        raise KernelUnavailable("racc kernel needs cgroup v2 mounted (no cgroup2 entry in /proc/mounts)")
    return mount


def load_bpf():
    """kernel36b's loader (``racc.kernel.bpf``), or None where this build has none."""
    try:
        from racc.kernel import bpf
    except ImportError:
        return None
    return bpf


def check_bpf(need: list[str]) -> Any:
    """The BPF loader if the scenario needs it and it can run here, else the one-line refusal."""
    if not need:
        return None
    bpf = load_bpf()
    what = f"protocol {need[0]}" if len(need) == 1 else f"protocols {', '.join(need)}"
    if bpf is None:
        raise KernelUnavailable(
            f"kernel run: {what} needs the BPF programs (racc.kernel.bpf is not part of this build)"
        )
    reason = bpf.available()
    if reason is not None:
        raise KernelUnavailable(f"kernel run: {what} needs the BPF programs ({reason})")
    missing = [p for p in need if not bpf.supported(p)]
    if missing:
        raise KernelUnavailable(f"kernel run: protocol {missing[0]} has no BPF program yet")
    return bpf


def prepare(scenario: Any, seed: int | None, overrides: Any, cc: str | None) -> tuple[Any, dict, dict, _plan.Plan]:
    """Scenario → (scenario, resolved, the unrun simulation's results document, plan); raises
    ScenarioError for anything the kernel runtime cannot give."""
    sc = _scenario.load(scenario, seed=seed, overrides=overrides)
    text, arrivals = sc.engine_inputs()
    try:
        sim = core().Simulation(text, sc.source, *((arrivals,) if arrivals else ()))
    except _scenario.ScenarioError as exc:
        raise _scenario.blame_override(exc, sc) from None
    resolved = Resolved(sim.resolved())
    doc = sim.results()
    try:
        plan = _plan.build(resolved.data, doc)
    except _scenario.ScenarioError as exc:
        raise _scenario.ScenarioError(f"{sc.source}: cannot run in the kernel: {exc}") from None
    if cc is not None and cc not in _plan.CC_CHOICES:
        raise _scenario.ScenarioError(f"--cc {cc}: not one of {', '.join(_plan.CC_CHOICES)}")
    return sc, resolved, doc, plan


def run(
    scenario: str | os.PathLike | Mapping[str, Any],
    *,
    seed: int | None = None,
    overrides: Iterable[str] | None = None,
    out: str | os.PathLike | None = None,
    plots: bool = False,
    cc: str | None = None,
    pcap: str | os.PathLike | None = None,
    echo: bool = True,
) -> Results:
    """Run ``scenario`` on kernel TCP and return its :class:`Results` (saved to ``out`` if given)."""
    mount = check_environment()
    sc, resolved, doc, plan = prepare(scenario, seed, overrides, cc)
    bpf = check_bpf(_plan.needs_bpf(plan, cc))
    _plan.choose_cc(plan, cc, set(_plan.needs_bpf(plan, cc)))
    have = machine.qdisc_kinds_available({"red", "netem"})
    network.check_routers(plan, have)
    if out is not None:
        check_replaceable(Path(out))
        _live.check_writable(Path(out))
    machine.sweep_stale()
    _live.sweep_stale_temp()
    tag = machine.run_tag()
    tmp = Path(tempfile.mkdtemp(prefix=f"{_live.TEMP_PREFIX}{os.getpid()}-kernel-"))
    janitor = subprocess.Popen(
        [sys.executable, "-m", "racc.kernel.janitor", tag],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    janitor.stdout.readline()
    started = _dt.datetime.now(_dt.timezone.utc)
    t_wall = time.perf_counter()
    session = Session(plan, tag, mount / tag, tmp, bpf, echo)
    if have["netem"]:
        session.delay_qdisc = lambda link: network.netem_args(link, plan.packet_size)
    stopped = None
    try:
        with _live._signals_as_interrupts():
            try:
                session.start(pcap)
                session.sample_until_end()
            except KeyboardInterrupt as exc:
                stopped = getattr(exc, "signal_name", "SIGINT")
            raw = session.finish(stopped is not None)
    finally:
        session.close()
        machine.teardown(tag)
        janitor.stdin.close()
        janitor.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    if stopped is not None and raw is None:
        raise Interrupted(f"kernel run stopped by {stopped} before it started; no results were written")
    raw["port_info"] = doc["port_info"]
    raw["flow_info"]["rtt_prop_s"] = frame("flow_info", doc["flow_info"])["rtt_prop_s"].to_list()
    res = _results(raw, sc, resolved, started, time.perf_counter() - t_wall)
    if stopped is not None:
        raise Interrupted(_live._save_incomplete(res, out, plots, stopped).replace("live run", "kernel run"))
    if out is not None:
        res.save(out, plots=plots)
    return res


class Session:
    """One run's processes and samples."""

    def __init__(self, plan: _plan.Plan, tag: str, cgroup: Path, tmp: Path, bpf: Any, echo: bool):
        self.plan, self.tag, self.cgroup, self.tmp, self.bpf, self.echo = plan, tag, cgroup, tmp, bpf, echo
        self.procs: dict[str, subprocess.Popen] = {}
        self.delay: subprocess.Popen | None = None
        self.pcap: subprocess.Popen | None = None
        self.handles: list[Any] = []
        self.router_handles: dict[int, Any] = {}
        #: protocol -> a hosts handle (its counters are the protocol's controller's, all hosts').
        self.host_handles: dict[str, Any] = {}
        self.reader = None
        self.rows: dict[str, list] = {k: [] for k in _document.LINK_COLUMNS}
        self.prev: dict[int, dict[str, int]] = {}
        self.t0 = 0.0
        self.reached = 0.0
        self.delayed: list[dict] = []
        self.totals: dict[int, dict[str, float]] = {}
        #: link -> tc arguments of the kernel's delay (netem), or None for the delay line.
        self.delay_qdisc = None

    # -- set-up --------------------------------------------------------------------------------

    def start(self, pcap: Any) -> None:
        plan = self.plan
        self.delayed = network.build(plan, self.tag, plan.packet_size, self.delay_qdisc)
        network.host_sysctls(plan, self.tag)
        self.cgroup.mkdir(exist_ok=True)
        for h in plan.hosts():
            (self.cgroup / f"n{h}").mkdir(exist_ok=True)
        self._attach_bpf()
        if self.delayed:
            spec = self.tmp / "delayline.json"
            spec.write_text(json.dumps({"links": self.delayed}), encoding="utf-8")
            self.delay = self._spawn(
                [sys.executable, "-m", "racc.kernel.delayline", str(spec), "--parent", str(os.getpid())]
            )
            self._ready(self.delay, "the delay line")
        if pcap is not None:
            self.pcap, self.pcap_port, self.pcap_tmp = _start_capture(plan, self.tag, Path(pcap), self._spawn)
            self._ready(self.pcap, "the capture")
            self.pcap_path = Path(pcap)
        from racc.kernel.qdisc_stats import Reader

        self.reader = Reader([(p.index, network.node_ns(self.tag, p.node), p.ifname) for p in plan.ports])
        for h in plan.hosts():
            spec = self.tmp / f"host{h}.json"
            spec.write_text(json.dumps(self._host_spec(h)), encoding="utf-8")
            cmd = [sys.executable, "-m", "racc.kernel.traffic", str(spec), "--parent", str(os.getpid())]
            self.procs[str(h)] = self._spawn([*cmd, "--netns", network.node_ns(self.tag, h)], stdin=True)
        for h, p in self.procs.items():
            self._ready(p, f"the traffic program of {plan.nodes[int(h)]['name']}")
        self.t0 = time.monotonic() + START_MARGIN_S
        for p in self.procs.values():
            p.stdin.write(f"{self.t0!r}\n")
            p.stdin.flush()
        self.prev = self.reader.read()

    def _attach_bpf(self) -> None:
        if self.bpf is None:
            return
        plan = self.plan
        for p in plan.ports:
            if p.router not in _plan.QDISC_ROUTERS:
                h = self.bpf.attach_router(
                    network.node_ns(self.tag, p.node), p.ifname, p.router, p.router_params or {}, p.capacity_bps
                )
                self.handles.append(h)
                self.router_handles[p.index] = h
        by_host: dict[tuple[int, str], Any] = {}

        def attach(host: int, f: _plan.Flow) -> Any:
            key = (host, f.protocol)
            if key not in by_host:
                try:
                    by_host[key] = self.bpf.attach_hosts(str(self.cgroup / f"n{host}"), f.protocol, f.params or {})
                except ValueError as exc:  # the loader's word on the flows' parameters
                    raise _scenario.ScenarioError(f"flows (group {f.group}): {exc}") from None
                self.handles.append(by_host[key])
                self.host_handles.setdefault(f.protocol, by_host[key])
            return by_host[key]

        bpf_flows = [f for f in plan.flows if not f.cc]
        for f in bpf_flows:
            h = attach(f.src, f)
            f.cc = h.cc_name
            # The sender's egress (where the loader marks its data ECN-capable), once per host.
            if hasattr(h, "attach_iface") and not getattr(h, "_racc_ifaces", False):
                for lk in plan.links:
                    if f.src in (lk.a, lk.b):
                        h.attach_iface(network.node_ns(self.tag, f.src), f"k{lk.index}")
                h._racc_ifaces = True
        for f in bpf_flows:  # the receiver's echo runs in the receiving host's cgroup
            attach(f.dst, f)

    def _host_spec(self, h: int) -> dict[str, Any]:
        plan = self.plan
        return {
            "host": plan.nodes[h]["name"],
            "addr": plan.addr(h),
            "cgroup": str(self.cgroup / f"n{h}"),
            "duration": plan.duration_s,
            "interval": plan.interval_s,
            "record_flows": plan.record_flows,
            "listen": any(f.dst == h for f in plan.flows),
            "send": [
                {
                    "flow": f.id,
                    "dst": plan.addr(f.dst),
                    "start": f.start_s,
                    "stop": f.stop_s,
                    "size": f.size_bytes,
                    "cc": f.cc,
                }
                for f in plan.flows
                if f.src == h and f.start_s < plan.duration_s
            ],
        }

    def _spawn(self, cmd: list[str], stdin: bool = False) -> subprocess.Popen:
        return subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # Ctrl-C reaches us only; we stop them in order
        )

    def _ready(self, p: subprocess.Popen, what: str) -> None:
        line = p.stdout.readline()
        if line.strip() != "ready":
            err = (p.stderr.read() or "").strip().splitlines()
            raise KernelUnavailable(f"{what} did not start: {err[-1] if err else 'exit status ' + str(p.wait())}")

    # -- the run -------------------------------------------------------------------------------

    def sample_until_end(self) -> None:
        plan = self.plan
        k = 1
        while True:
            t = min(k * plan.interval_s, plan.duration_s)
            d = self.t0 + t - time.monotonic()
            if d > 0:
                time.sleep(d)
            self._sample(round(t, 9))
            self.reached = round(t, 9)
            if t >= plan.duration_s:
                return
            k += 1

    def _sample(self, t: float) -> None:
        now = self.reader.read()
        interval = t - (self.rows["time_s"][-1] if self.rows["time_s"] else 0.0)
        record = set(self.plan.record_ports)
        for p in self.plan.ports:
            c, b = now.get(p.index, {}), self.prev.get(p.index, {})
            dbytes = c.get("bytes", 0) - b.get("bytes", 0)
            dpk = c.get("packets", 0) - b.get("packets", 0)
            ddrop = c.get("drops", 0) - b.get("drops", 0)
            dq = c.get("qlen", 0) - b.get("qlen", 0)
            tot = self.totals.setdefault(
                p.index,
                {"tx_bytes": 0, "tx_pkts": 0, "drops": 0, "arrivals": 0, "q": 0.0, "qb": 0.0, "qmax": 0, "n": 0},
            )
            tot["tx_bytes"] += dbytes
            tot["tx_pkts"] += dpk
            tot["drops"] += ddrop
            tot["arrivals"] += dpk + ddrop + dq
            tot["q"] += c.get("qlen", 0)
            tot["qb"] += c.get("backlog", 0)
            tot["qmax"] = max(tot["qmax"], c.get("qlen", 0))
            tot["n"] += 1
            if p.index not in record:
                continue
            thr = dbytes * 8 / interval if interval > 0 else 0.0
            for key, v in (("time_s", t), ("port", p.index), ("tx_bytes", dbytes), ("tx_pkts", dpk), ("throughput_bps", thr),
                           ("utilisation", thr / p.capacity_bps), ("queue_pkts", c.get("qlen", 0)),
                           ("queue_bytes", c.get("backlog", 0)), ("drops", ddrop), ("losses", 0), ("marks", 0),
                           ("arrivals", dpk + ddrop + dq)):  # fmt: skip
                self.rows[key].append(v)
        self.prev = now

    # -- the end -------------------------------------------------------------------------------

    def finish(self, interrupted: bool) -> dict[str, Any] | None:
        """Collect every process's output (stopping them first if the run was interrupted)."""
        if not self.procs:
            return None
        if interrupted:
            for p in self.procs.values():
                _signal(p, signal.SIGTERM)
        hosts = {}
        for h, p in self.procs.items():
            try:
                p.wait(timeout=max(5.0, self.plan.interval_s * 4))
            except subprocess.TimeoutExpired:
                _signal(p, signal.SIGKILL)
                p.wait()
            f = self.tmp / f"host{h}.json.out"
            if f.exists():
                hosts[int(h)] = json.loads(f.read_text(encoding="utf-8"))
            else:
                err = (p.stderr.read() or "").strip().splitlines()
                if not interrupted:
                    raise KernelUnavailable(
                        f"the traffic program of {self.plan.nodes[int(h)]['name']} failed: {err[-1] if err else p.returncode}"
                    )
        delay_counts = {}
        if self.delay is not None:
            _signal(self.delay, signal.SIGTERM)
            self.delay.wait()
            f = self.tmp / "delayline.json.out"
            if f.exists():
                got = json.loads(f.read_text(encoding="utf-8"))
                delay_counts = {"links": got.get("links", {}), "late_s": got.get("late_s", {})}
        pcap_info = self._stop_capture(interrupted) if self.pcap is not None else None
        return _document.build(self, hosts, delay_counts, pcap_info, interrupted)

    def _stop_capture(self, interrupted: bool) -> dict[str, Any]:
        """End the capture; an interrupted run's capture is removed (nothing that looks whole)."""
        _signal(self.pcap, signal.SIGTERM)
        out, _ = self.pcap.communicate()
        packets = int(out.split()[-1]) if out.split() and out.split()[-1].isdigit() else None
        if interrupted or packets is None:
            self.pcap_tmp.unlink(missing_ok=True)
            return {"file": None, "port": self.pcap_port, "packets": packets}
        os.replace(self.pcap_tmp, self.pcap_path)
        return {"file": str(self.pcap_path), "port": self.pcap_port, "packets": packets}

    def close(self) -> None:
        if self.pcap is not None and self.pcap_tmp.exists() and self.pcap.poll() is None:
            _signal(self.pcap, signal.SIGKILL)
            self.pcap.wait()
        if self.pcap is not None:
            self.pcap_tmp.unlink(missing_ok=True)
        for h in self.handles:
            try:
                h.close()
            except Exception as exc:  # noqa: BLE001 - teardown goes on; the namespaces go anyway
                print(f"warning: closing a BPF program failed: {exc}", file=sys.stderr)
        for p in [*self.procs.values(), self.delay, self.pcap]:
            if p is not None and p.poll() is None:
                _signal(p, signal.SIGKILL)
                p.wait()
        if self.reader is not None:
            self.reader.close()


def _signal(p: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _start_capture(plan: _plan.Plan, tag: str, path: Path, spawn) -> tuple[subprocess.Popen, str, Path]:
    """The capture process at the bottleneck's egress: the port of least capacity that a flow
    crosses (the first such port). Writes a temporary sibling of ``path``, renamed at the end."""
    used = set()
    for f in plan.flows:
        a = f.src
        while a != f.dst:
            link = plan.routes[a][f.dst]
            lk = plan.links[link]
            used.add(lk.ports[0].index if lk.a == a else lk.ports[1].index)
            a = plan.neighbour(a, link)
    port = min((p for p in plan.ports if p.index in used), key=lambda p: (p.capacity_bps, p.index))
    tmp = path.parent / f".{path.name}.tmp-{os.getpid()}"
    ns = network.node_ns(tag, port.node)
    p = spawn([sys.executable, "-m", "racc.kernel.capture", ns, port.ifname, str(tmp), "--parent", str(os.getpid())])
    return p, port.name, tmp


def _results(raw: dict[str, Any], sc: Any, resolved: Any, started: _dt.datetime, wall: float) -> Results:
    res = Results.from_core(raw, resolved=resolved, scenario_text=sc.text, name=sc.name)
    res.summary = _summary.build(
        res.summary, links=res.links, flows=res.flows, completions=res.completions, flow_info=res.flow_info
    )
    res.summary["run"] = run_info(sc, resolved, started, wall, 0)
    res.summary["run"]["engine"] = "kernel"
    res.summary["run"]["events_per_s"] = None
    return res
