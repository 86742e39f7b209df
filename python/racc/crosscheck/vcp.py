"""``racc crosscheck ns2-vcp``: VCP against its authors' own ns-2 code.

The VCP authors' ns-2 sender, sink and router (Yong Xia's VCP distribution: ``vcp-src.cc``,
``vcp-sink.cc``, ``vcp-queue.cc``, ``drop-tail2.cc``, ``vcp-cmn.cc`` and their headers) are not
part of ns-2.35; docs/PROTOCOLS.md ("VCP against its authors' ns-2 code") says how to build an
``ns`` that has them. This module maps racc's "vcp" flows and router module onto them and refuses
every racc setting that code cannot take, naming its key:

* racc "vcp" flow -> ``Agent/TCP/Reno/VcpSrc`` with ``Agent/VcpSink`` (one ACK per packet, the
  code echoed). The sender's laws are racc's ``ai_law = "ns2"`` and ``md_hold = "t_p"``, with
  no initial slow start; ``h`` (or ``mu`` = h/4) is ``k_``, ``alpha``/``beta`` are
  ``alpha_``/``beta_``, ``t_p`` is ``router_load_measurement_interval_``, ``iw`` is
  ``windowInit_``; σ_MI is compiled in as 2.5 (``MAX_RTT_BY_TRHO``); its RTT clock is ns-2's
  ``tcpTick_``, so racc's ``ai_ns2.tick`` must equal ``tcp.clock_granularity``. Loss recovery is Reno's
  (racc's transport is NewReno: only matters if a VCP flow loses packets).
* racc "vcp" router module -> ``Queue/DropTail2/VcpQueue`` on both directions of the link, with
  ``set-link-capacity``; ``t_p``/``t_q``/``k_q`` are ``load_measurement_interval_``/
  ``queue_sampling_interval_``/``queue_weight_``. The code compiles in the target utilisation
  0.95 (``dynamic_target_utilization_``) and its own queue term (racc's ``queue_term = "ns2"``
  with ``ns2_queue_shift`` 4), so the scenario must state those. DropTail2 refuses an arrival
  when length + 1 >= limit, as DropTail: limit = buffer + 1.
* The constructors read several bound variables for which ns-2.35 has no defaults (the
  distribution ships none): the script sets every one as a class default before any object is
  made, and sets the per-link and per-group values the same way just before the objects that
  read them in their constructors (``k_`` and the intervals are read only there).
"""

from __future__ import annotations

from typing import Any

AGENT = "Agent/TCP/Reno/VcpSrc"
SINK = "Agent/VcpSink"
QUEUE = "DropTail2/VcpQueue"

# What the authors' code compiles in (vcp-queue.cc: dynamic_target_utilization_; vcp-queue.h:
# moving_avg_int's shift as parsed; vcp-src.h: MAX_RTT_BY_TRHO).
GAMMA = 0.95
NS2_QUEUE_SHIFT = 4
SIGMA_MI = 2.5

# racc's VcpRouterParams / VcpParams keys (crates/racc-proto/src/vcp/load_factor.rs, params.rs).
ROUTER_KEYS = {"t_p", "t_q", "k_q", "a", "gamma", "queue_term", "ns2_queue_shift"}
FLOW_KEYS = {
    "t_p",
    "h",
    "mu",
    "alpha",
    "beta",
    "sigma_mi",
    "sigma_ai",
    "ai_law",
    "ai_ns2",
    "md_hold",
    "pacing_gain",
    "iw",
    "initial_slow_start",
    "tcp",
}
DEFAULTS = {"t_p": 0.2, "t_q": 0.01, "k_q": 0.5, "h": 0.25, "alpha": 1.0, "beta": 0.875, "iw": 2.0}


def is_vcp(flow: dict[str, Any]) -> bool:
    return flow["protocol"] in ("vcp", "tcp-vcp")


def router_refusals(key: str, params: dict[str, Any]) -> list[str]:
    """racc VCP router settings the authors' VcpQueue cannot take."""
    out = [
        f"{key}.router_params.{k}: no counterpart in the VCP authors' ns-2 router"
        for k in params
        if k not in ROUTER_KEYS
    ]
    gamma = params.get("gamma", 0.98)
    if abs(float(gamma) - GAMMA) > 1e-12:
        default = " (racc's default)" if "gamma" not in params else ""
        out.append(f"{key}.router_params.gamma: {gamma}{default}; the authors' router compiles in {GAMMA}")
    if params.get("queue_term", "a2") != "ns2":
        out.append(
            f'{key}.router_params.queue_term: "{params.get("queue_term", "a2")}"; the authors\' router has its own '
            'term (set it to "ns2")'
        )
    if int(params.get("ns2_queue_shift", NS2_QUEUE_SHIFT)) != NS2_QUEUE_SHIFT:
        out.append(f"{key}.router_params.ns2_queue_shift: the authors' router shifts by {NS2_QUEUE_SHIFT}")
    return out


def flow_refusals(key: str, flow: dict[str, Any]) -> list[str]:
    """racc VCP flow settings the authors' VcpSrc/VcpSink cannot take."""
    p = flow.get("params") or {}
    out = [f"{key}.params.{k}: no counterpart in the VCP authors' ns-2 sender" for k in p if k not in FLOW_KEYS]
    if p.get("ai_law", "seed001") != "ns2":
        default = " (racc's default)" if "ai_law" not in p else ""
        out.append(f'{key}.params.ai_law: "{p.get("ai_law", "seed001")}"{default}; the authors\' sender is "ns2"')
    if p.get("md_hold", "t_p") != "t_p":
        out.append(f'{key}.params.md_hold: {p["md_hold"]!r}; the authors\' sender holds for t_p ("t_p")')
    if abs(float(p.get("sigma_mi", SIGMA_MI)) - SIGMA_MI) > 1e-12:
        out.append(f"{key}.params.sigma_mi: the authors' sender compiles in {SIGMA_MI} (MAX_RTT_BY_TRHO)")
    for k in p.get("ai_ns2") or {}:
        if k != "tick":
            out.append(f"{key}.params.ai_ns2.{k}: the authors' sender compiles in its constants (vcp-src.h)")
    tick = float((p.get("ai_ns2") or {}).get("tick", 0.0))
    clock = float((p.get("tcp") or {}).get("clock_granularity", 0.001))
    if abs(tick - clock) > 1e-12:
        out.append(
            f"{key}.params.ai_ns2.tick: {tick:g} s; the authors' sender truncates its srtt to ns-2's one clock, "
            f"tcpTick_ = tcp.clock_granularity ({clock:g} s): set both the same"
        )
    if p.get("pacing_gain") is not None:
        out.append(f"{key}.params.pacing_gain: the authors' sender paces only above RTT 3.2 s, not by a gain")
    if p.get("initial_slow_start"):
        out.append(f"{key}.params.initial_slow_start: the authors' sender has no slow start")
    iw = flow["initial_window"] or p.get("iw", DEFAULTS["iw"])
    if float(iw) != int(iw):
        out.append(f"{key}.params.iw: {iw} packets; ns-2's windowInit_ is a whole number")
    for k in ("sack", "delayed_ack", "ecn"):
        if flow[k]:
            out.append(f"{key}.{k}: the authors' VcpSrc/VcpSink have none")
    return out


def k_of(p: dict[str, Any]) -> float:
    """``k_`` of VcpSrc: racc's h, or 4·mu (mu = h·(1/0.8 − 1))."""
    return 4.0 * float(p["mu"]) if p.get("mu") is not None else float(p.get("h", DEFAULTS["h"]))


def iw_packets(flow: dict[str, Any]) -> int:
    return int(flow["initial_window"] or (flow.get("params") or {}).get("iw", DEFAULTS["iw"]))


def preamble(num) -> str:
    """Class defaults for every bound variable of the authors' classes (ns-2.35 has none)."""
    return f"""
# VCP, the authors' ns-2 code (racc: vcp flows and router module). ns-2.35 has no defaults for
# these classes' bound variables; the values are the code's comments' (vcp-src.h, vcp-queue.h).
Queue/DropTail2 set two_queue_ false ;# one FIFO, as racc's port
Queue/DropTail2 set drop_front_ false
Queue/DropTail2 set summarystats_ false
Queue/DropTail2 set queue_in_bytes_ false
Queue/DropTail2 set mean_pktsize_ 500
Queue/DropTail2/VcpQueue set encode_load_factor_ 1 ;# the 2-bit code
Queue/DropTail2/VcpQueue set smoothen_load_factor_ 0
Queue/DropTail2/VcpQueue set load_measurement_interval_ {num(DEFAULTS["t_p"])}
Queue/DropTail2/VcpQueue set queue_sampling_interval_ {num(DEFAULTS["t_q"])}
Queue/DropTail2/VcpQueue set queue_weight_ {num(DEFAULTS["k_q"])}
Agent/TCP/Reno/VcpSrc set encode_load_factor_ 1
Agent/TCP/Reno/VcpSrc set md_wait_timer_counter_ 0
Agent/TCP/Reno/VcpSrc set pacing_timer_counter_ 0
Agent/TCP/Reno/VcpSrc set runtime_counter_ 0
Agent/TCP/Reno/VcpSrc set router_load_measurement_interval_ {num(DEFAULTS["t_p"])}
Agent/TCP/Reno/VcpSrc set k_ {num(DEFAULTS["h"])}
Agent/TCP/Reno/VcpSrc set alpha_ {num(DEFAULTS["alpha"])}
Agent/TCP/Reno/VcpSrc set beta_ {num(DEFAULTS["beta"])}
Agent/TCP/Reno/VcpSrc set w_ 1.0
Agent/TCP/Reno/VcpSrc set windowOption_ 10 ;# the branch of opencwnd that runs VCP's MI/AI
Agent/VcpSink set packetSize_ 40
Agent/VcpSink set maxSackBlocks_ 3
Agent/VcpSink set ts_echo_bugfix_ true
Agent/VcpSink set ts_echo_rfc1323_ false
Agent/VcpSink set generateDSacks_ false
Agent/VcpSink set qs_enabled_ false
Agent/VcpSink set RFC2581_immediate_ack_ true
Agent/VcpSink set bytes_ 0
"""


def link_defaults(params: dict[str, Any], num) -> str:
    """Set just before the link's VcpQueues are made (their constructor starts the timers)."""
    p = {k: params.get(k, DEFAULTS[k]) for k in ("t_p", "t_q", "k_q")}
    return (
        f"Queue/DropTail2/VcpQueue set load_measurement_interval_ {num(p['t_p'])} ;# racc t_p\n"
        f"Queue/DropTail2/VcpQueue set queue_sampling_interval_ {num(p['t_q'])} ;# racc t_q\n"
        f"Queue/DropTail2/VcpQueue set queue_weight_ {num(p['k_q'])} ;# racc k_q"
    )


def queue_lines(q: str, link: dict[str, Any], x: int, y: int, limit_pkts: int, num) -> list[str]:
    return [
        f"{q} set-link-capacity {num(link['capacity_bps'])} ;# racc: the port's capacity",
        f"$ns queue-limit $n({x}) $n({y}) {limit_pkts + 1} ;# racc buffer {limit_pkts} waiting packets (DropTail2 as DropTail)",
    ]


def group_pre(k: int, flow: dict[str, Any], num) -> str:
    """A proc run just before the group's agents are made: VcpSrc reads these in its constructor."""
    p = flow.get("params") or {}
    return (
        f"proc pre_g{k} {{}} {{ ;# group {flow['group']}: read by VcpSrc's constructor\n"
        f"    Agent/TCP/Reno/VcpSrc set k_ {num(k_of(p))} ;# racc h (mu = h/4)\n"
        f"    Agent/TCP/Reno/VcpSrc set alpha_ {num(p.get('alpha', DEFAULTS['alpha']))}\n"
        f"    Agent/TCP/Reno/VcpSrc set beta_ {num(p.get('beta', DEFAULTS['beta']))}\n"
        f"    Agent/TCP/Reno/VcpSrc set router_load_measurement_interval_ {num(p.get('t_p', DEFAULTS['t_p']))} ;# racc t_p\n"
        "}"
    )
