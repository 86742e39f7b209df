"""What a kernel run builds, from the scenario as the simulator resolves it: a namespace per
node, a veth path per link with its two ports' rate, buffer and queue discipline, a delay per
link, static routes by destination from the scenario's routes, and the flows each host runs.

Pure (no system calls): the refusals of scenario features the kernel runtime cannot give are
raised here, each naming its key, before anything is set up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from racc.scenario import ScenarioError

#: Scenario protocols that Linux's own controllers stand in for, and which one.
LINUX_CC = {"newreno": "reno", "reno": "reno"}
#: ``--cc`` values (controllers this kernel builds in; the BPF ones come from ``bpf.attach_hosts``).
CC_CHOICES = ("reno", "cubic", "bbr")
#: Protocols whose racc sender starts at one packet, not at RFC 5681's IW (XCP: docs/PROTOCOLS.md §5;
#: RCP: one packet until the first rate, §6).
ONE_PACKET_START = {"xcp", "rcp"}
#: Router modules the kernel's own qdiscs give (racc has no fq_codel module to ask for).
QDISC_ROUTERS = {"droptail", "red"}


@dataclass
class Port:
    """One direction of a link: the qdisc at the egress of ``node``'s interface ``ifname``."""

    index: int
    name: str
    node: int
    ifname: str
    capacity_bps: float
    delay_s: float
    router: str
    router_params: dict[str, Any] | None
    limit_pkts: int | None
    limit_bytes: int | None


@dataclass
class Link:
    index: int
    a: int
    b: int
    delay_s: float
    ports: tuple[Port, Port]


@dataclass
class Flow:
    id: int
    protocol: str
    group: str
    src: int
    dst: int
    start_s: float
    stop_s: float | None
    size_bytes: int | None
    ecn: bool
    sack: bool
    params: dict[str, Any] | None
    initial_window: int | None = None
    delayed_ack: bool = False
    cc: str = ""  # the TCP_CONGESTION name, set when the controllers are chosen


@dataclass
class Plan:
    name: str
    duration_s: float
    interval_s: float
    packet_size: int
    nodes: list[dict[str, Any]]
    links: list[Link]
    flows: list[Flow]
    #: routes[node] = {destination node: link index}
    routes: list[dict[int, int]] = field(default_factory=list)
    record_ports: list[int] = field(default_factory=list)
    record_flows: bool = True
    min_rto_s: float | None = None

    @property
    def ports(self) -> list[Port]:
        return [p for link in self.links for p in link.ports]

    def addr(self, node: int) -> str:
        """Node ``node``'s one IPv4 address (on its loopback; every interface reaches it)."""
        return f"10.77.{node // 250}.{node % 250 + 1}"

    def hosts(self) -> list[int]:
        """Hosts that run a flow end, in node order."""
        used = {f.src for f in self.flows} | {f.dst for f in self.flows}
        return sorted(used)

    def initcwnd(self, src: int, dst: int) -> int | None:
        """The initial window (segments) of flows from ``src`` to ``dst``: the scenario's
        ``initial_window``, else RFC 5681's IW for this MSS, as racc's TCP starts (newreno.rs);
        Linux would start with 10. None if no flow goes that way. Set per route (``initcwnd``),
        so the first such flow's value holds for all."""
        for f in self.flows:
            if f.src == src and f.dst == dst:
                if f.initial_window:
                    return max(1, int(f.initial_window))
                if f.protocol in ONE_PACKET_START:
                    return 1
                smss = self.packet_size - 40
                return 2 if smss > 2190 else 3 if smss > 1095 else 4
        return None

    def route_options(self, node: int, dest: int) -> list[str]:
        """``ip route`` options on ``node``'s route to ``dest``: the initial window and minimum
        RTO of the flows it sends there, and ``quickack 1`` (an ACK for every segment, as racc's receivers send
        unless a flow asks for ``delayed_ack``) if it receives a flow from there that does not."""
        opts = []
        iw = self.initcwnd(node, dest)
        if iw is not None:
            opts += ["initcwnd", str(iw)]
            if self.min_rto_s is not None:  # the scenario's floor on the RTO (Linux's is 200 ms)
                opts += ["rto_min", f"{max(1, round(self.min_rto_s * 1000))}ms"]
        if any(f.src == dest and f.dst == node and not f.delayed_ack for f in self.flows):
            opts += ["quickack", "1"]
        return opts

    def neighbour(self, node: int, link: int) -> int:
        lk = self.links[link]
        return lk.b if lk.a == node else lk.a


def _limit(v: Any) -> int | None:
    """A port's limit from the engine (u64::MAX, or -1 once in a signed table, means none)."""
    if v is None:
        return None
    v = int(v)
    return None if v < 0 or v >= 2**63 else v


def build(resolved: dict[str, Any], doc: dict[str, Any]) -> Plan:
    """The plan from ``resolved`` (the engine's resolved scenario) and ``doc`` (the results
    document of a simulation built but not run: its ``port_info`` and ``flow_info`` carry the
    buffers in packets and the flows as the simulator numbers them)."""
    _refuse_unsupported(resolved)
    nodes = resolved["nodes"]
    pi = doc["port_info"]
    ports: dict[int, Port] = {}
    for i, idx in enumerate(pi["port"]):
        link = resolved["links"][idx // 2]
        node = link["a"] if idx % 2 == 0 else link["b"]
        ports[idx] = Port(
            index=idx,
            name=pi["name"][i],
            node=node,
            ifname=f"k{idx // 2}",
            capacity_bps=float(pi["capacity_bps"][i]),
            delay_s=float(pi["delay_s"][i]),
            router=pi["router"][i],
            router_params=link.get("router_params"),
            limit_pkts=_limit(pi["limit_pkts"][i]),
            limit_bytes=_limit(pi["limit_bytes"][i]),
        )
    links = [
        Link(k, lk["a"], lk["b"], lk["delay"] / 1e9, (ports[2 * k], ports[2 * k + 1]))
        for k, lk in enumerate(resolved["links"])
    ]
    flows = []
    for i, f in enumerate(resolved["flows"]):
        flows.append(
            Flow(
                id=i,
                protocol=f["protocol"],
                group=f["group"],
                src=f["src"],
                dst=f["dst"],
                start_s=f["start"] / 1e9,
                stop_s=None if f.get("stop") is None else f["stop"] / 1e9,
                size_bytes=f.get("size_bytes"),
                ecn=bool(f.get("ecn")),
                sack=bool(f.get("sack")),
                params=f.get("params"),
                initial_window=f.get("initial_window"),
                delayed_ack=bool(f.get("delayed_ack")),
            )
        )
    plan = Plan(
        name=resolved["name"],
        duration_s=resolved["duration"] / 1e9,
        interval_s=resolved["sample_interval"] / 1e9,
        packet_size=int(resolved["packet_size"]),
        nodes=nodes,
        links=links,
        flows=flows,
        record_ports=list(resolved.get("record_ports") or []),
        record_flows=bool(resolved.get("record_flows", True)),
        min_rto_s=None if resolved.get("min_rto") is None else resolved["min_rto"] / 1e9,
    )
    plan.routes = _routes(resolved, plan)
    return plan


def _refuse_unsupported(resolved: dict[str, Any]) -> None:
    """One line per feature the kernel runtime cannot give, naming the scenario's key."""
    if resolved.get("media"):
        raise ScenarioError(
            "topology: shared media (802.11 contention) cannot run in the kernel runtime: veth links are point to point"
        )
    if resolved.get("tunnels"):
        raise ScenarioError("tunnels: IPsec tunnels are modelled by the simulator only; the kernel runtime has none")
    if resolved.get("sources"):
        raise ScenarioError(
            "traffic: web sources (each flow waits for its predecessor) are not run by the kernel runtime's traffic program"
        )
    for k, lk in enumerate(resolved["links"]):
        for side in ("loss_forward", "loss_reverse"):
            if lk.get(side) not in (None, "None"):
                raise ScenarioError(f"links[{k}].{side}: the kernel runtime has no random loss process on a link")
    if len(resolved["flows"]) > 5000:
        raise ScenarioError(
            f"flows: {len(resolved['flows'])} flows; the kernel runtime's traffic program takes at most 5000"
        )


def _routes(resolved: dict[str, Any], plan: Plan) -> list[dict[int, int]]:
    """Per node, the link towards each destination, from the scenario's routes (the kernel routes
    by destination only: a scenario whose routes need more is refused)."""
    routes: list[dict[int, int]] = [{} for _ in plan.nodes]
    names = [n["name"] for n in plan.nodes]
    for f in resolved["flows"]:
        for key, dest in (("fwd_route", f["dst"]), ("rev_route", f["src"])):
            for p in resolved["routes"][f[key]]:
                link = p // 2
                lk = resolved["links"][link]
                frm = lk["a"] if p % 2 == 0 else lk["b"]
                have = routes[frm].get(dest)
                if have is not None and have != link:
                    raise ScenarioError(
                        f"routes: node {names[frm]} reaches {names[dest]} over two links; "
                        "the kernel runtime routes by destination only"
                    )
                routes[frm][dest] = link
    return routes


def choose_cc(plan: Plan, cc: str | None, bpf_protocols: set[str]) -> None:
    """Set each flow's ``cc``: ``--cc`` for every flow if given, Linux's Reno for the scenario's
    NewReno/Reno; protocols in ``bpf_protocols`` are left for the BPF controllers (``cc`` set
    later from their handle)."""
    for f in plan.flows:
        if cc is not None:
            f.cc = cc
        elif f.protocol in LINUX_CC:
            f.cc = LINUX_CC[f.protocol]
        elif f.protocol not in bpf_protocols:
            raise ScenarioError(f"flows (group {f.group}): protocol {f.protocol} has no kernel controller")


def needs_bpf(plan: Plan, cc: str | None) -> list[str]:
    """Protocols (of flows, or of router modules) only the BPF programs can give, sorted."""
    need = set()
    if cc is None:
        need |= {f.protocol for f in plan.flows if f.protocol not in LINUX_CC}
    need |= {p.router for p in plan.ports if p.router not in QDISC_ROUTERS}
    return sorted(need)
