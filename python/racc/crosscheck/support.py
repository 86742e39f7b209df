"""What ns-2.35 can be asked to run in racc's place, and the refusal of everything else.

Every check runs before anything is simulated. A scenario that uses several things ns-2
cannot express is refused once, with every part named by its scenario key, so that the user
can fix them all at once.

Supported: dumbbell, parking-lot and explicit topologies whose routes ns-2's static
(fewest-hop) routing finds too; DropTail (packet or byte limits); RED dropping or marking
(packet mode with a packet limit, byte mode with a byte limit); Bernoulli loss; TCP Reno and
NewReno (ECN, SACK as ns-2's Sack1, delayed ACKs, initial window and ssthresh, handshake);
long-lived, finite and Poisson flows. XCP: racc's "xcp" flows as ns-2's one-way XCP agent
(``Agent/TCP/Reno/XCP`` with ``Agent/TCPSink/XCPSink``) and racc's "xcp" router module as ns-2's
``Queue/XCP`` (xcp/xcp.cc, xcpq.cc, xcp-end-sys.cc), where only racc's settings that ns-2.35 has
compiled in are accepted (``XCP_ROUTER_FIXED``), the budget rule is ns-2's own
(``xcp_budget = "ns235"``), and no other traffic shares an XCP port.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any

from racc.crosscheck import vcp as _vcp
from racc.errors import ScenarioError

# racc protocol -> ns-2 one-way TCP agent (the seeds' ns-2 TCP is the one-way agent, not FullTcp).
AGENTS = {"newreno": "Agent/TCP/Newreno", "reno": "Agent/TCP/Reno", "xcp": "Agent/TCP/Reno/XCP"}
SINKS = {"newreno": "Agent/TCPSink", "reno": "Agent/TCPSink", "xcp": "Agent/TCPSink/XCPSink"}
ROUTERS = ("droptail", "red", "xcp")
# racc's registry aliases (crates/racc-proto/src/registry.rs) of the protocols above.
ALIASES = {"tcp-xcp": "xcp", "tcp-vcp": "vcp"}

# Bytes of headers in a data packet on top of the payload, and so in every ACK: IPv4 + TCP, plus
# XCP's 20-byte congestion header (docs/PROTOCOLS.md §1; racc's xcp::XCP_HEADER_BYTES) for XCP.
TCPIP_HEADERS = 40
XCP_HEADER = 20

# racc's XcpRouterParams (crates/racc-proto/src/xcp/params.rs) that ns-2.35 compiles in as
# constants (xcpq.cc: XCPQueue::ALPHA_, BETA_, GAMMA_; xcpq.h: INITIAL_Te_VALUE): a scenario may
# only state ns-2's own values. `count_ops` only counts racc's arithmetic and is accepted.
XCP_ROUTER_FIXED: dict[str, tuple[float, str]] = {
    "alpha": (0.4, "XCPQueue::ALPHA_"),
    "beta": (0.226, "XCPQueue::BETA_"),
    "gamma": (0.1, "XCPQueue::GAMMA_"),
    "initial_d": (0.05, "INITIAL_Te_VALUE"),
}
XCP_ROUTER_KEYS = set(XCP_ROUTER_FIXED) | {"count_ops", "xcp_budget"}
# racc's XcpParams: `desired_rate` (ns-2's sender always asks for as much as the routers allow)
# and the transport's `tcp` table.
XCP_FLOW_KEYS = {"desired_rate", "tcp"}

# racc's TcpParams (crates/racc-proto/src/tcp/mod.rs, `impl Default for TcpParams`): the keys a
# flow's `params` table may set, and their defaults. tcl.py maps each one to an ns-2 variable.
TCP_DEFAULTS: dict[str, Any] = {
    "dupthresh": 3,
    "initial_rto": 1.0,
    "max_rto": 60.0,
    "clock_granularity": 0.001,
    "rto_rule": "rfc6298",
    "partial_ack_timer": "first",
    "spurious_rto": "eifel",
    "limited_transmit": True,
}

# ns-2 keeps RTT variables in ticks in 16-bit `short` deltas (tcp.cc rtt_update): a tick below
# 0.1 ms overflows them for RTT changes above 3.3 s.
MIN_TICK_S = 1e-4

_BERNOULLI = re.compile(r"^Bernoulli \{ p: ([0-9.eE+-]+) \}$")


def bernoulli_p(loss: str) -> float | None:
    """The p of a resolved ``Bernoulli { p: .. }`` loss spec, 0.0 for ``None``, else ``None``."""
    if loss == "None":
        return 0.0
    m = _BERNOULLI.match(loss)
    return float(m.group(1)) if m else None


def link_keys(data: dict[str, Any], resolved: dict[str, Any]) -> list[str]:
    """The scenario key each resolved link comes from, in the resolved order (scenario/build.rs
    `topology`: a dumbbell's access links, bottleneck, access links; a parking lot's chain, then
    the access links; an explicit topology's links as written)."""
    topo = data.get("topology", {})
    n = len(resolved["links"])
    kind = topo.get("kind")
    if kind == "dumbbell":
        pairs = int(topo["pairs"])
        return ["topology.access"] * pairs + ["topology.bottleneck"] + ["topology.access"] * pairs
    if kind == "parking_lot":
        k = len(topo["links"])
        return [f"topology.links[{i}]" for i in range(k)] + ["topology.access"] * (n - k)
    return [f"topology.links[{i}]" for i in range(n)]


def group_keys(data: dict[str, Any]) -> dict[str, str]:
    """Flow-group name (as in resolved flows) -> its scenario key (``flows[0]``, ``traffic[1]``)."""
    keys = {}
    for section, default in (("flows", "flows"), ("traffic", "traffic")):
        for i, g in enumerate(data.get(section, []) or []):
            keys[g.get("name") or f"{default}{i}"] = f"{section}[{i}]"
    return keys


def protocol(flow: dict[str, Any]) -> str:
    """A resolved flow's protocol by racc's canonical name (aliases resolved)."""
    return ALIASES.get(flow["protocol"], flow["protocol"])


def is_xcp(flow: dict[str, Any]) -> bool:
    return protocol(flow) == "xcp"


def has_tcp_table(flow: dict[str, Any]) -> bool:
    """XCP and VCP flows keep their transport's keys in a `tcp` table."""
    return protocol(flow) in ("xcp", "vcp")


def headers(flow: dict[str, Any]) -> int:
    """Header bytes of the flow's data packets: packet_size - headers is its MSS (racc's
    tcp::mss_for), and the same bytes make its ACKs."""
    return TCPIP_HEADERS + (XCP_HEADER if is_xcp(flow) else 0)


def raw_tcp_params(flow: dict[str, Any]) -> dict[str, Any]:
    """The TCP keys a flow's `params` table sets: the table itself, or an XCP/VCP flow's `tcp` table."""
    params = flow.get("params") or {}
    return (params.get("tcp") or {}) if has_tcp_table(flow) else params


def tcp_params(params: Any) -> dict[str, Any]:
    """TCP parameters (a Reno/NewReno `params` table) with racc's defaults filled in."""
    out = dict(TCP_DEFAULTS)
    out.update(params or {})
    return out


def flow_tcp_params(flow: dict[str, Any]) -> dict[str, Any]:
    """A resolved flow's TCP transport parameters, defaults filled in (an XCP flow's `tcp` table)."""
    return tcp_params(raw_tcp_params(flow))


def refusals(
    data: dict[str, Any], resolved: dict[str, Any], port_info: dict[str, list], vcp: bool = False
) -> list[str]:
    """``key: reason`` for every part of the scenario ns-2 cannot express (empty if none); with
    ``vcp``, for ns-2 built with the VCP authors' code (``racc crosscheck ns2-vcp``)."""
    if resolved.get("media"):
        # Checked first and alone: the checks below number ports by links only. `racc crosscheck
        # ns2` runs a shared medium through its own 802.11 comparison (crosscheck/wlan).
        return ["topology.media: a shared medium (racc's DCF-like model is not mapped onto ns-2's Mac802_11)"]
    out: list[str] = []
    if resolved.get("tunnels"):
        out.append("tunnels: IPsec ESP tunnels (ns-2 has no ESP tunnel model)")
    out += _link_refusals(data, resolved, port_info, vcp)
    out += _flow_refusals(data, resolved, vcp)
    out += _xcp_port_refusals(data, resolved)
    out += _route_refusals(resolved)
    keys = group_keys(data)
    for src in resolved.get("sources", []):
        group = src["flow"]["group"]
        out.append(
            f"{keys.get(group, group)}.kind: '{src['kind']}' sources, whose flows racc makes as the run goes "
            "(the ns-2 script replays a fixed list of flows)"
        )
    return list(dict.fromkeys(out))  # a shared access link would repeat itself


def check(
    data: dict[str, Any], resolved: dict[str, Any], port_info: dict[str, list], source: str, vcp: bool = False
) -> None:
    """Raise :class:`ScenarioError` naming every part ns-2 cannot express."""
    bad = refusals(data, resolved, port_info, vcp)
    if bad:
        raise ScenarioError(f"{source}: ns-2 cannot run this scenario as racc does: " + "; ".join(bad))


def _link_refusals(
    data: dict[str, Any], resolved: dict[str, Any], port_info: dict[str, list], vcp: bool = False
) -> list[str]:
    out = []
    seen: dict[frozenset, str] = {}
    limit_bytes = port_info["limit_bytes"]
    for li, (link, key) in enumerate(zip(resolved["links"], link_keys(data, resolved))):
        ends = frozenset((link["a"], link["b"]))
        if ends in seen:
            out.append(f"{key}: a second link between the same two nodes as {seen[ends]} (ns-2 keeps one per pair)")
        seen.setdefault(ends, key)
        router = link["router"]
        if router == "vcp" and vcp:
            out += _vcp.router_refusals(key, link.get("router_params") or {})
            if limit_bytes[2 * li] < 2**63:
                out.append(f"{key}.buffer: a byte buffer (the crosscheck gives the authors' VcpQueue packet limits)")
        elif router == "vcp":
            out.append(f"{key}.router: 'vcp' needs ns-2 built with the VCP authors' code (`racc crosscheck ns2-vcp`)")
        elif router not in ROUTERS:
            out.append(f"{key}.router: '{router}' is racc's own router module (ns-2 has no counterpart)")
        elif router == "red":
            mode = (link.get("router_params") or {}).get("mode", "packet")
            bytes_limit = limit_bytes[2 * li] < 2**63
            if (mode == "byte") != bytes_limit:
                out.append(
                    f"{key}.buffer: RED in {mode} mode with a {'byte' if bytes_limit else 'packet'} limit "
                    "(ns-2's queue_in_bytes_ sets both the average and the limit)"
                )
            if (mode == "byte") and bytes_limit and limit_bytes[2 * li] % _red_mean_size(link, resolved):
                out.append(f"{key}.buffer: a RED byte limit must be a multiple of the mean packet size in ns-2")
        elif router == "xcp":
            out += _xcp_router_refusals(key, link.get("router_params") or {})
        for d, loss in (("forward", link["loss_forward"]), ("reverse", link["loss_reverse"])):
            if bernoulli_p(loss) is None:
                out.append(f"{key}.loss: {loss.split(' ')[0]} ({d}) has no ns-2 error model; only Bernoulli has")
    return out


def _xcp_router_refusals(key: str, params: dict[str, Any]) -> list[str]:
    """racc's XCP router settings that ns-2.35's Queue/XCP cannot take (see XCP_ROUTER_FIXED)."""
    out = []
    for k in params:
        if k not in XCP_ROUTER_KEYS:
            out.append(f"{key}.router_params.{k}: no ns-2 counterpart known to the crosscheck")
    for k, (value, where) in XCP_ROUTER_FIXED.items():
        if k in params and abs(float(params[k]) - value) > 1e-12:
            out.append(f"{key}.router_params.{k}: {params[k]} (ns-2.35 compiles in {value}, xcpq {where})")
    budget = params.get("xcp_budget", "granted")
    if budget != "ns235":
        default = " (racc's default)" if "xcp_budget" not in params else ""
        out.append(
            f'{key}.router_params.xcp_budget: "{budget}"{default} bills feedback ns-2.35 bills otherwise '
            '(xcpq.cc do_before_packet_departure, L 26-27: set it to "ns235")'
        )
    return out


def _red_mean_size(link: dict[str, Any], resolved: dict[str, Any]) -> int:
    return int((link.get("router_params") or {}).get("mean_pkt_size") or resolved["packet_size"])


def _flow_refusals(data: dict[str, Any], resolved: dict[str, Any], vcp: bool = False) -> list[str]:
    out = []
    keys = group_keys(data)
    done: set[str] = set()
    for f in resolved["flows"]:
        group = f["group"]
        if group in done:
            continue
        done.add(group)
        key = keys.get(group, group)
        if protocol(f) == "vcp" and not vcp:
            out.append(f"{key}.protocol: 'vcp' needs ns-2 built with the VCP authors' code (`racc crosscheck ns2-vcp`)")
            continue
        if protocol(f) == "vcp":
            out += _vcp.flow_refusals(key, f)
        elif protocol(f) not in AGENTS:
            out.append(f"{key}.protocol: '{f['protocol']}' (ns-2 runs only TCP Reno, NewReno and XCP here)")
            continue
        raw = raw_tcp_params(f)
        pk = f"{key}.params.tcp" if has_tcp_table(f) else f"{key}.params"  # where the TCP keys are
        if is_xcp(f):
            out += _xcp_flow_refusals(key, f)
        for k in raw:
            if k not in TCP_DEFAULTS:
                out.append(f"{pk}.{k}: no ns-2 counterpart known to the crosscheck")
        p = tcp_params(raw)
        if p["spurious_rto"] != "off":
            default = " (racc's default)" if "spurious_rto" not in raw else ""
            out.append(
                f'{pk}.spurious_rto: "{p["spurious_rto"]}"{default} undoes spurious timeouts; '
                'ns-2 cannot (set it to "off")'
            )
        if p["rto_rule"] != "rfc6298":
            out.append(f'{pk}.rto_rule: "{p["rto_rule"]}" (ns-2 clamps the RTO as RFC 6298 does)')
        if p["clock_granularity"] < MIN_TICK_S:
            out.append(f"{pk}.clock_granularity: below ns-2's usable tcpTick_ of {MIN_TICK_S} s")
    return out


def _xcp_flow_refusals(key: str, f: dict[str, Any]) -> list[str]:
    """An XCP flow's settings that ns-2's Agent/TCP/Reno/XCP and XCPSink cannot take."""
    out = []
    for k in f.get("params") or {}:
        if k not in XCP_FLOW_KEYS:
            out.append(f"{key}.params.{k}: no ns-2 counterpart known to the crosscheck")
    if (f.get("params") or {}).get("desired_rate") is not None:
        out.append(
            f"{key}.params.desired_rate: ns-2's XCP sender always asks for as much as the routers allow "
            "(xcp-end-sys.cc: delta_throughput_ = MAX_THROUGHPUT - throughput)"
        )
    if f["sack"]:
        out.append(f"{key}.sack: ns-2's XCP agent is Reno without SACK")
    if f["delayed_ack"]:
        out.append(f"{key}.delayed_ack: ns-2's XCPSink acknowledges every packet (it has no DelAck variant)")
    if f["ecn"]:
        out.append(f"{key}.ecn: racc's XCP ignores ECN echoes; ns-2's Reno/XCP would halve on them")
    return out


def _xcp_port_refusals(data: dict[str, Any], resolved: dict[str, Any]) -> list[str]:
    """Non-XCP flows through an XCP port: racc's XCP router counts their bytes in y and serves one
    FIFO; ns-2's Queue/XCP puts them in their own RED queues, served round-robin with the XCP
    queue (xcp.cc XCPWrapQ), so they would not meet the same queue."""
    xcp_ports = {
        p for li, link in enumerate(resolved["links"]) if link["router"] == "xcp" for p in (2 * li, 2 * li + 1)
    }
    if not xcp_ports:
        return []
    keys = group_keys(data)
    names = {2 * li + d: _port_name(resolved, 2 * li + d) for li in range(len(resolved["links"])) for d in (0, 1)}
    out = []
    for f in resolved["flows"]:
        if is_xcp(f):
            continue
        crossed = [p for r in (f["fwd_route"], f["rev_route"]) for p in resolved["routes"][r] if p in xcp_ports]
        if crossed:
            out.append(
                f"{keys.get(f['group'], f['group'])}.protocol: '{f['protocol']}' crosses the XCP port "
                f"{names[crossed[0]]} (ns-2's Queue/XCP serves non-XCP packets from separate RED queues, "
                "round-robin with the XCP queue)"
            )
    return out


def _port_name(resolved: dict[str, Any], port: int) -> str:
    nodes = resolved["nodes"]
    return f"{nodes[_port_from(resolved, port)]['name']}->{nodes[_port_to(resolved, port)]['name']}"


def _route_refusals(resolved: dict[str, Any]) -> list[str]:
    """Routes ns-2's static routing would not take: ns-2 picks a fewest-hop path through any
    node, hosts included, and breaks ties its own way; racc avoids transit hosts and breaks ties
    by port number. A route is safe when it is the one and only fewest-hop path."""
    nodes = resolved["nodes"]
    adj: list[list[int]] = [[] for _ in nodes]
    for link in resolved["links"]:
        adj[link["a"]].append(link["b"])
        adj[link["b"]].append(link["a"])
    out = []
    used = sorted({f["fwd_route"] for f in resolved["flows"]} | {f["rev_route"] for f in resolved["flows"]})
    counted: dict[int, tuple[list[int], list[int]]] = {}
    for r in used:
        ports = resolved["routes"][r]
        src = _port_from(resolved, ports[0])
        dst = _port_to(resolved, ports[-1])
        if src not in counted:
            counted[src] = _shortest_counts(adj, src)
        dist, count = counted[src]
        if dist[dst] != len(ports) or count[dst] != 1:
            out.append(
                f"topology: from {nodes[src]['name']} to {nodes[dst]['name']} ns-2's static routing has "
                f"{count[dst]} fewest-hop path(s) of {dist[dst]} hops; racc's has {len(ports)}"
            )
    return out


def _port_from(resolved: dict[str, Any], port: int) -> int:
    link = resolved["links"][port // 2]
    return link["a"] if port % 2 == 0 else link["b"]


def _port_to(resolved: dict[str, Any], port: int) -> int:
    link = resolved["links"][port // 2]
    return link["b"] if port % 2 == 0 else link["a"]


def _shortest_counts(adj: list[list[int]], src: int) -> tuple[list[int], list[int]]:
    """Hop distance from ``src`` and the number of fewest-hop paths to every node (BFS)."""
    n = len(adj)
    dist, count = [-1] * n, [0] * n
    dist[src], count[src] = 0, 1
    q = deque([src])
    while q:
        u = q.popleft()
        for v in adj[u]:
            if dist[v] < 0:
                dist[v] = dist[u] + 1
                q.append(v)
            if dist[v] == dist[u] + 1:
                count[v] += count[u]
    return dist, count
