"""Build a plan's network: a namespace per node, veth pairs, the egress qdiscs, addresses and
routes, and per-namespace TCP settings. Torn down by :func:`racc.kernel.machine.teardown`.

The link ``k`` between nodes ``a`` and ``b``: interface ``k<k>`` in each node. With a delay it
runs through a link namespace ``…-l<k>`` (ends ``a`` and ``b``, no address) where the delay line
holds each frame for the link's delay; without one the two ``k<k>`` are one veth pair.

Each port (a link direction) is the egress of its sending node's ``k<k>``:

    htb (rate = ceil = the port's capacity; ``stab overhead -14``: the rate counts IP bytes, as
    the scenario's capacity does, not the veth's Ethernet header)
      └─ class 1:1 ─ pfifo limit N (DropTail; bfifo for a byte limit)

The buffer is the leaf's limit, so the queue the flows build is the scenario's buffer at the
scenario's rate; the delay comes after the queue (the simulator's ``arrive = tx_end + delay``).
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

from racc.kernel.machine import KernelUnavailable, offloads_off, setns
from racc.kernel.plan import Link, Plan, Port
from racc.scenario import ScenarioError

#: Bytes per port of the htb class's quantum: at least one full packet, at most htb's ceiling.
HTB_QUANTUM_MAX = 200_000


def node_ns(tag: str, node: int) -> str:
    return f"{tag}-n{node}"


def link_ns(tag: str, link: int) -> str:
    return f"{tag}-l{link}"


def in_ns(ns: str, fn, *args):
    """``fn(*args)`` in namespace ``ns``, on a thread of its own (``setns`` moves only the calling
    thread, so the caller's namespace never changes); its exception is raised here."""
    out: list = []
    err: list[BaseException] = []

    def work() -> None:
        try:
            setns(ns)
            out.append(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - reported on the calling thread
            err.append(exc)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    if err:
        raise err[0]
    return out[0]


def write_sysctls(ns: str, values: dict[str, str]) -> None:
    """``/proc/sys/net/...`` of namespace ``ns`` (per-netns: written from a thread moved into it)."""

    def write() -> None:
        for key, v in values.items():
            Path("/proc/sys", *key.split(".")).write_text(v)

    in_ns(ns, write)


def qdisc_args(port: Port, packet_size: int) -> list[list[str]]:
    """The ``tc`` argument lists that give ``port`` its rate and buffer (DropTail only: the
    other router modules are refused before, or are BPF programs attached after)."""
    dev = port.ifname
    rate = f"{port.capacity_bps:.0f}bit"
    quantum = str(max(packet_size + 14, min(HTB_QUANTUM_MAX, int(port.capacity_bps / 8 / 1000))))
    cmds = [
        ["qdisc", "add", "dev", dev, "root", "handle", "1:", "stab", "overhead", "-14", "htb", "default", "1"],
        ["class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb", "rate", rate, "ceil", rate]
        + ["quantum", quantum],
    ]
    if port.router == "red":
        leaf = red_args(port, packet_size)
    elif port.limit_bytes is not None:
        leaf = ["bfifo", "limit", str(port.limit_bytes)]
    else:
        leaf = ["pfifo", "limit", str(port.limit_pkts if port.limit_pkts is not None else 1000)]
    cmds.append(["qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", *leaf])
    return cmds


def red_wlog(qmin: float, burst: int, avpkt: int) -> int:
    """The EWMA weight's log2 that tc computes from ``burst`` (iproute2 tc_red_eval_ewma)."""
    a = burst + 1 - qmin / avpkt
    w = 0.5
    for wlog in range(1, 32):
        if a <= (1 - (1 - w) ** burst) / w:
            return wlog
        w /= 2
    return -1


def red_args(port: Port, packet_size: int) -> list[str]:
    """Linux's red with the scenario's RED: thresholds in bytes (the scenario's are packets of
    ``packet_size``, or ``mean_pkt_size``), max_p, ECN marking for ``action = "mark"``, and the
    burst that makes tc's EWMA weight 2^-round(log2(1/w_q)) (tc takes no weight, only a burst).
    Linux's red has no gentle mode: above max_th it drops (or marks) every packet, where a
    gentle RED raises p to 1 over max_th..2 max_th (said in summary.json's kernel section)."""
    import math

    rp = {"min_th": 150.0, "max_th": 700.0, "max_p": 0.1, "w_q": 0.002, "action": "drop"}
    rp.update({k: v for k, v in (port.router_params or {}).items() if v is not None})
    avpkt = int(rp.get("mean_pkt_size") or packet_size)
    qmin, qmax = int(rp["min_th"] * avpkt), int(rp["max_th"] * avpkt)
    target = max(1, round(math.log2(1 / float(rp["w_q"]))))
    burst = max(1, math.ceil(qmin / avpkt))
    while red_wlog(qmin, burst, avpkt) < target and burst < 1_000_000:
        burst += max(1, burst // 64)
    limit = (port.limit_pkts or 1000) * packet_size if port.limit_bytes is None else port.limit_bytes
    args = ["red", "limit", str(max(limit, qmax + avpkt)), "min", str(qmin), "max", str(qmax), "avpkt", str(avpkt)]
    args += ["burst", str(burst), "probability", f"{float(rp['max_p']):g}", "bandwidth", f"{port.capacity_bps:.0f}bit"]
    if rp.get("action") == "mark":
        args.append("ecn")
    return args


def check_routers(plan: Plan, have: dict[str, bool]) -> None:
    """Refuse a port whose queue discipline this kernel lacks (named by the port and the key)."""
    for p in plan.ports:
        if p.router == "red" and not have.get("red", False):
            raise ScenarioError(
                f"links[{p.index // 2}].router = {p.router} (port {p.name}): this kernel has no sch_{p.router} "
                "(tc says the qdisc kind is unknown)"
            )


def netem_args(link: Link, packet_size: int) -> list[str]:
    """A link's delay as netem, alone on a link-namespace end (no rate, so it holds every frame
    for the delay and never queues behind another): room for the link's capacity x delay in
    40-byte frames, twice over."""
    cap = max(p.capacity_bps for p in link.ports)
    limit = max(1000, min(10_000_000, int(2 * cap * link.delay_s / (8 * 40))))
    return ["netem", "delay", f"{round(link.delay_s * 1e6)}us", "limit", str(limit)]


def wire_link_ns(tc, ln: str, delay_qdisc: list[str]) -> None:
    """A link namespace as a wire with a delay in the kernel: what arrives on one end leaves by
    the other (tc ingress, u32 matching all, mirred redirect), through ``delay_qdisc`` at each
    end's egress. ``tc(ns, *args)`` queues one tc command."""
    for src, dst in (("a", "b"), ("b", "a")):
        tc(ln, "qdisc", "add", "dev", dst, "root", *delay_qdisc)
        tc(ln, "qdisc", "add", "dev", src, "handle", "ffff:", "ingress")
        tc(
            ln, "filter", "add", "dev", src, "parent", "ffff:", "protocol", "all", "u32",
            "match", "u32", "0", "0", "action", "mirred", "egress", "redirect", "dev", dst,
        )  # fmt: skip


class Batch:
    """``ip``/``tc`` commands grouped by tool and namespace and run as one ``-batch`` each: a
    process per namespace instead of one per command (83 namespaces: 8.6 s of set-up before)."""

    def __init__(self) -> None:
        self.groups: dict[tuple[str, str | None], list[str]] = {}

    def ip(self, ns: str | None, *args: str) -> None:
        self.groups.setdefault(("ip", ns), []).append(" ".join(args))

    def tc(self, ns: str | None, *args: str) -> None:
        self.groups.setdefault(("tc", ns), []).append(" ".join(args))

    def run(self) -> None:
        for (tool, ns), lines in self.groups.items():
            cmd = [tool, *(["-n", ns] if ns else []), "-batch", "-"]
            p = subprocess.run(cmd, input="\n".join(lines) + "\n", capture_output=True, text=True, check=False)
            if p.returncode != 0:
                err = (p.stderr or p.stdout).strip().splitlines()
                raise KernelUnavailable(f"`{tool}{' -n ' + ns if ns else ''} -batch` failed: {' / '.join(err[-2:])}")
        self.groups.clear()


def build(plan: Plan, tag: str, mtu: int, delay_qdisc=None) -> list[dict]:
    """Create every namespace, link, qdisc, address and route of ``plan``; returns the delay
    line's link list (``{"ns", "name", "delay_s"}`` per delayed link). With ``delay_qdisc``
    (link -> tc arguments, :func:`netem_args` where the kernel has netem) the delays are the
    kernel's and the list is empty."""
    delayed = []
    base = {
        "net.ipv6.conf.all.disable_ipv6": "1",
        "net.ipv6.conf.default.disable_ipv6": "1",
    }
    b = Batch()
    names = [node_ns(tag, i) for i in range(len(plan.nodes))]
    links = {lk.index: link_ns(tag, lk.index) for lk in plan.links if lk.delay_s > 0}
    for ns in [*names, *links.values()]:
        b.ip(None, "netns", "add", ns)
    for lk in plan.links:
        na, nb, dev = names[lk.a], names[lk.b], f"k{lk.index}"
        if lk.index in links:
            b.ip(None, "link", "add", dev, "netns", na, "type", "veth", "peer", "name", "a", "netns", links[lk.index])
            b.ip(None, "link", "add", dev, "netns", nb, "type", "veth", "peer", "name", "b", "netns", links[lk.index])
        else:
            b.ip(None, "link", "add", dev, "netns", na, "type", "veth", "peer", "name", dev, "netns", nb)
    b.run()
    for ns in [*names, *links.values()]:
        write_sysctls(ns, base)
    for i, ns in enumerate(names):
        b.ip(ns, "link", "set", "dev", "lo", "up")
        b.ip(ns, "addr", "add", f"{plan.addr(i)}/32", "dev", "lo")
    offload = []
    for lk in plan.links:
        dev = f"k{lk.index}"
        if lk.index in links:
            ln = links[lk.index]
            for end in ("a", "b"):
                b.ip(ln, "link", "set", "dev", end, "mtu", str(mtu), "gso_max_segs", "1", "up")
            if delay_qdisc is not None:
                wire_link_ns(b.tc, ln, delay_qdisc(lk))
            else:
                name = f"{plan.nodes[lk.a]['name']}<->{plan.nodes[lk.b]['name']}"
                delayed.append({"ns": ln, "name": name, "delay_s": lk.delay_s})
                offload += [(names[lk.a], dev), (names[lk.b], dev)]
        for ns in (names[lk.a], names[lk.b]):
            # One segment per skb (no TSO/GSO bursts of 64 KB through the shaper), wire size = MTU.
            b.ip(ns, "link", "set", "dev", dev, "mtu", str(mtu), "gso_max_segs", "1", "up")
    for port in plan.ports:
        for args in qdisc_args(port, plan.packet_size):
            b.tc(names[port.node], *args)
    for i, table in enumerate(plan.routes):
        ns, src = names[i], plan.addr(i)
        for link in sorted(set(table.values())):
            nb = plan.neighbour(i, link)
            b.ip(ns, "route", "replace", f"{plan.addr(nb)}/32", "dev", f"k{link}", "src", src)
        for dest, link in sorted(table.items()):
            nb = plan.neighbour(i, link)
            extra = plan.route_options(i, dest)
            if dest != nb:
                via = ["via", plan.addr(nb), "dev", f"k{link}", "onlink", "src", src]
                b.ip(ns, "route", "replace", f"{plan.addr(dest)}/32", *via, *extra)
            elif extra:
                b.ip(ns, "route", "replace", f"{plan.addr(nb)}/32", "dev", f"k{link}", "src", src, *extra)
    b.run()
    for ns, dev in offload:
        in_ns(ns, offloads_off, dev)
    return delayed


def host_sysctls(plan: Plan, tag: str) -> None:
    """Routers forward; hosts send segments of exactly the scenario's packet size (no TCP
    timestamps: header 40 bytes, so payload = packet size - 40) and ECN/SACK as their flows ask."""
    senders_ecn = {f.src for f in plan.flows if f.ecn} | {f.dst for f in plan.flows if f.ecn}
    sack = {f.src for f in plan.flows if f.sack} | {f.dst for f in plan.flows if f.sack}
    for i, n in enumerate(plan.nodes):
        ns = node_ns(tag, i)
        vals = {"net.ipv4.conf.all.rp_filter": "0", "net.ipv4.conf.default.rp_filter": "0"}
        if n.get("host"):
            vals.update(
                {
                    "net.ipv4.tcp_timestamps": "0",
                    "net.ipv4.tcp_sack": "1" if i in sack else "0",
                    "net.ipv4.tcp_ecn": "1" if i in senders_ecn else "0",
                    "net.ipv4.tcp_no_metrics_save": "1",
                }
            )
        else:
            vals["net.ipv4.ip_forward"] = "1"
        write_sysctls(ns, vals)
