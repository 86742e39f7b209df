"""The ns-2 Tcl writer: racc's resolved scenario (one seed) as an ns-2.35 script.

The script builds the same nodes, links, queues and loss as racc, creates each flow at racc's
own start time with racc's own size (so Poisson arrival lists are replayed, not redrawn), and
writes ns-2's own counters to ``counters.txt`` at racc's sample times:

    L k port arrivals departures departed_bytes drops marks losses queue_pkts queue_bytes queue_pkt_s
    F k flow ack_ nrexmitpack_ nrexmit_ cwnd_ srtt_(ticks x 8)
    D flow time          (the agent's `done`: every byte acknowledged)

``L`` lines are cumulative QueueMonitor counters of every recorded port (the integral of the
waiting queue in packet-seconds included), ``F`` lines the running flows' TCP agent variables:
no packet trace is written, which keeps ns-2 fast. Every setting that differs from ns-2's
default says which racc key or default it stands for; the module docstring of
``racc.crosscheck`` lists the pitfalls.
"""

from __future__ import annotations

from typing import Any

from racc.crosscheck import vcp as _vcp
from racc.crosscheck.support import (
    AGENTS,
    SINKS,
    TCPIP_HEADERS,
    XCP_HEADER,
    bernoulli_p,
    flow_tcp_params,
    headers,
    is_xcp,
)

HEADERS = TCPIP_HEADERS  # IPv4 + TCP: racc's packet_size includes them, ns-2's packetSize_ does not
BIG_WINDOW = 1_000_000  # packets: ns-2's receiver window (window_, default 20) must never bind
COUNTERS = "counters.txt"


def secs(ns: int) -> str:
    """Integer nanoseconds as exact decimal seconds (racc's start times, to the nanosecond)."""
    return f"{ns // 1_000_000_000}.{ns % 1_000_000_000:09d}"


def num(x: float) -> str:
    """A number as ns-2 parses it, without a float's noise."""
    return str(int(x)) if float(x).is_integer() else f"{x:.12g}"


def write(resolved: dict[str, Any], port_info: dict[str, list], interval_ns: int) -> str:
    """The whole script for one seed. ``port_info`` is the engine's (resolved buffer limits)."""
    samples = resolved["duration"] // interval_ns
    parts = [
        _preamble(resolved),
        _nodes(resolved),
        _links(resolved, port_info),
        _groups(resolved),
        _procs(resolved, interval_ns, samples),
        _flows(resolved),
        f'$ns at {secs(interval_ns)} "sample 1"\n$ns run\n',
    ]
    return "\n".join(parts)


def _preamble(r: dict[str, Any]) -> str:
    mss = r["packet_size"] - HEADERS
    return (
        f"""# ns-2.35 script written by `racc crosscheck ns2` from racc's resolved scenario
# "{r["name"]}", seed {r["seed"]}: racc's nodes, links, start times and flow sizes.
set ns [new Simulator]
# ns-2's own stream for RED and loss draws (racc's cannot be replayed); 0 would mean "from the clock".
$defaultRNG seed {r["seed"] + 1}

# Run-wide TCP settings (racc: packet_size, min_rto; crates/racc-proto/src/tcp).
Agent/TCP set packetSize_ {mss} ;# payload: racc's packet_size {r["packet_size"]} is the wire size
Agent/TCP set tcpip_base_hdr_size_ {HEADERS} ;# ns-2 adds it to packetSize_ (and sends ACKs and the SYN at 40)
Agent/TCP set window_ {BIG_WINDOW} ;# receiver window, default 20 packets; racc has no receiver limit
Agent/TCP set maxcwnd_ 0
Agent/TCP set timestamps_ true ;# an RTT sample from every ACK, as racc's RFC 7323 echo gives
Agent/TCP set ts_option_size_ 0 ;# ... without 10 option bytes on the wire (racc's sizes carry none)
Agent/TCP set windowInitOption_ 1 ;# windowInit_ as set per group
Agent/TCP set delay_growth_ true ;# with syn_: cwnd 1 for the SYN, the IW once it is acknowledged
Agent/TCP set minrto_ {num(r["min_rto"] / 1e9)} ;# racc min_rto
Agent/TCP set rfc2988_ true ;# min_rto clamps the RTO before back-off, as racc's rto_rule rfc6298
Agent/TCP set maxburst_ 0
Agent/TCP set ecn_ 0
Agent/TCP/Newreno set partial_window_deflation_ 1 ;# RFC 6582: deflate by the data a partial ACK covers
Agent/TCP/Newreno set exit_recovery_fix_ 1 ;# full ACK: cwnd = min(ssthresh, flight + 1), RFC 6582 option (1)
Agent/TCPSink/DelAck set interval_ 0.1 ;# racc's delayed-ACK timer (100 ms)
Agent/TCPSink/Sack1/DelAck set interval_ 0.1
"""
        + (_xcp_preamble() if any(is_xcp(f) for f in r["flows"]) else "")
        + (_vcp.preamble(num) if _uses_vcp(r) else "")
    )


def _uses_vcp(r: dict[str, Any]) -> bool:
    return any(_vcp.is_vcp(f) for f in r["flows"]) or any(link["router"] == "vcp" for link in r["links"])


def _xcp_preamble() -> str:
    # ns-2.35 defines XCP_HDR_LEN 20 (xcp-end-sys.h) but never adds it to a packet: an XCP packet
    # is as big as a TCP one, packetSize_ + tcpip_base_hdr_size_ (data) or the sink's
    # packetSize_ (ACKs). racc's XCP packets carry a 20-byte XCP header on top of IPv4 + TCP
    # (docs/PROTOCOLS.md §1), in data and ACKs alike, so the XCP groups count it in
    # tcpip_base_hdr_size_ (60, set per group, with packetSize_ = packet_size - 60 = racc's MSS)
    # and XCPSink's ACKs are 60 bytes: the XCP router then sees racc's wire sizes.
    return f"""
# XCP (racc: xcp flows, xcp router module; ns-2.35 xcp/): headers = IPv4 + TCP + XCP.
Agent/TCPSink/XCPSink set packetSize_ {TCPIP_HEADERS + XCP_HEADER} ;# racc's XCP ACK: 40 + the 20-byte XCP header
Queue/XCP set tcp_xcp_on_ 0 ;# all capacity to the XCP queue (no non-XCP traffic crosses an XCP port)
"""


def _nodes(r: dict[str, Any]) -> str:
    lines = ["# Nodes (racc's order)."]
    lines += [f"set n({i}) [$ns node] ;# {nd['name']}" for i, nd in enumerate(r["nodes"])]
    return "\n".join(lines) + "\n"


def _links(r: dict[str, Any], port_info: dict[str, list]) -> str:
    lines = ["# Links: both directions share capacity, delay, buffer and router module (racc's links)."]
    record = set(r["record_ports"])
    for li, link in enumerate(r["links"]):
        a, b = link["a"], link["b"]
        kind = {"red": "RED", "xcp": "XCP", "vcp": _vcp.QUEUE}.get(link["router"], "DropTail")
        if link["router"] == "vcp":
            lines.append(_vcp.link_defaults(link.get("router_params") or {}, num))
        if link["router"] == "red":
            lines += _red_defaults(r, link.get("router_params") or {})
        lines.append(f"$ns duplex-link $n({a}) $n({b}) {num(link['capacity_bps'])} {secs(link['delay'])} {kind}")
        for p, (x, y) in ((2 * li, (a, b)), (2 * li + 1, (b, a))):
            lines += _queue(r, link, x, y, port_info["limit_pkts"][p], port_info["limit_bytes"][p])
            loss = bernoulli_p(link["loss_forward"] if p % 2 == 0 else link["loss_reverse"]) or 0.0
            if loss > 0:
                lines += _loss(p, x, y, loss)
            if p in record:
                lines.append(f"set qm({p}) [$ns monitor-queue $n({x}) $n({y}) 0]")
                lines.append(f"set qi({p}) [$qm({p}) get-pkts-integrator]")
    return "\n".join(lines) + "\n"


def _red_defaults(r: dict[str, Any], p: dict[str, Any]) -> list[str]:
    """RED's thresholds and weight, set on the class before the link is made: ns-2 derives the ones
    racc leaves automatic (0 and -1, its own defaults) when the link is attached, from the link's rate
    and delay and the class's mean_pktsize_ then, by the same rule racc follows (aqm/red_config.rs)."""
    size = int(p.get("mean_pkt_size") or r["packet_size"])
    return [
        f"Queue/RED set mean_pktsize_ {size} ;# before the link: ns-2 derives automatic settings from it",
        f"Queue/RED set thresh_ {num(p.get('min_th', 0))} ;# racc min_th (0: automatic, x mean_pktsize_ in byte mode)",
        f"Queue/RED set maxthresh_ {num(p.get('max_th', 0))} ;# racc max_th (0: automatic)",
        f"Queue/RED set q_weight_ {num(p.get('w_q', -1))} ;# racc w_q (-1: automatic)",
        "Queue/RED set targetdelay_ 0.005 ;# the automatic min_th's target delay, as racc's",
    ]


def _queue(r: dict[str, Any], link: dict[str, Any], x: int, y: int, limit_pkts: int, limit_bytes: int) -> list[str]:
    q = f"[[$ns link $n({x}) $n({y})] queue]"
    in_bytes = limit_bytes < 2**63
    if link["router"] == "xcp":
        return _xcp_queue(q, link, x, y, limit_pkts, limit_bytes)
    if link["router"] == "vcp":
        return _vcp.queue_lines(q, link, x, y, limit_pkts, num)
    if link["router"] != "red":
        if in_bytes:
            # DropTail in bytes accepts while bytes + size < limit x mean_pktsize_: with a mean
            # size of 1 byte, limit B + 1 holds B bytes waiting, as racc's byte buffer.
            return [
                f"{q} set queue_in_bytes_ true",
                f"{q} set mean_pktsize_ 1",
                f"$ns queue-limit $n({x}) $n({y}) {limit_bytes + 1} ;# racc buffer {limit_bytes} B waiting",
            ]
        # ns-2's DropTail refuses when length + 1 >= limit: it holds limit - 1 waiting packets
        # (the one on the wire is not in the queue, in ns-2 as in racc).
        return [f"$ns queue-limit $n({x}) $n({y}) {limit_pkts + 1} ;# racc buffer {limit_pkts} waiting packets"]
    p = link.get("router_params") or {}
    mode = p.get("mode", "packet")
    size = int(p.get("mean_pkt_size") or r["packet_size"])
    flag = "true" if mode == "byte" else "false"
    mark = p.get("action", "drop") == "mark"
    # RED checks the limit before it enqueues (qlen >= limit drops): it holds `limit` packets.
    limit = limit_bytes // size if in_bytes else limit_pkts
    return [
        f"set q {q}",
        f"$q set linterm_ {num(1.0 / p.get('max_p', 0.1))} ;# 1 / racc max_p",
        f"$q set gentle_ {'true' if p.get('gentle', True) else 'false'}",
        "$q set wait_ false ;# racc spaces drops by Floyd & Jacobson's count, not ns-2's wait_ variant",
        f"$q set bytes_ {flag} ;# racc mode = {mode} (ns-2's default is byte mode)",
        f"$q set queue_in_bytes_ {flag}",
        f"$q set mean_pktsize_ {size} ;# racc's mean packet size s: idle decay and byte mode (ns-2: 500)",
        f"$q set setbit_ {'true' if mark else 'false'} ;# racc action = {'mark' if mark else 'drop'}",
        "$q set use_mark_p_ true",
        "$q set mark_p_ 2.0 ;# mark every selected ECT packet, even at p = 1, as racc (ns-2's 0.1 drops above it)",
        "$q set adaptive_ 0",
        "$q set cautious_ 0",
        f"$ns queue-limit $n({x}) $n({y}) {limit} ;# racc buffer {limit_bytes if in_bytes else limit_pkts}"
        + (" B" if in_bytes else " waiting packets"),
    ]


def _xcp_queue(q: str, link: dict[str, Any], x: int, y: int, limit_pkts: int, limit_bytes: int) -> list[str]:
    """ns-2's Queue/XCP is a wrapper (xcp.cc XCPWrapQ) around three queues: XCP packets go to
    vq_(0), a Queue/DropTail/XCPQ that runs the controllers (xcpq.cc), TCP and other packets to
    two RED queues. The wrapper is the link's queue, so the QueueMonitor attached to the link
    sees every arrival and departure, and the wrapper hands its drop target (the link's drop
    head, which the monitor snoops) to the inner queues: drops of vq_(0) are counted there too.
    `$ns queue-limit` sets every inner queue's limit; vq_(0) is a DropTail, limit = buffer + 1.
    The capacity the controllers use is not taken from the link: set-link-capacity gives it."""
    lines = [
        f"set q {q}",
        f"$q set-link-capacity {num(link['capacity_bps'])} ;# racc: the port's capacity (bits/s; xcpq keeps bytes/s)",
    ]
    if limit_bytes < 2**63:
        lines += [
            "[$q set vq_(0)] set queue_in_bytes_ true ;# the XCP queue in bytes, as a DropTail in bytes",
            "[$q set vq_(0)] set mean_pktsize_ 1",
            f"$ns queue-limit $n({x}) $n({y}) {limit_bytes + 1} ;# racc buffer {limit_bytes} B waiting",
        ]
    else:
        lines.append(
            f"$ns queue-limit $n({x}) $n({y}) {limit_pkts + 1} ;# racc buffer {limit_pkts} waiting packets (XCPQ is a DropTail)"
        )
    return lines


def _loss(port: int, x: int, y: int, p: float) -> list[str]:
    # After the link's delay, before the next node: lost packets still take the link, as in racc.
    # Their own drop target (a LossMonitor counts them) keeps them out of the queue's drops.
    return [
        f"set em [new ErrorModel] ;# racc Bernoulli loss on port {port}",
        "$em unit pkt",
        f"$em set rate_ {num(p)}",
        "$em ranvar [new RandomVariable/Uniform]",
        f"$ns link-lossmodel $em $n({x}) $n({y})",
        f"set lm({port}) [new Agent/LossMonitor]",
        f"$em drop-target $lm({port})",
    ]


def group_classes(flow: dict[str, Any]) -> tuple[str, str]:
    """(sender agent class, receiver sink class) of a resolved flow."""
    if is_xcp(flow):
        return AGENTS["xcp"], SINKS["xcp"]  # support refuses SACK and delayed ACKs for XCP
    if _vcp.is_vcp(flow):
        return _vcp.AGENT, _vcp.SINK  # support refuses SACK, delayed ACKs and ECN for VCP
    if flow["sack"]:
        agent, sink = "Agent/TCP/Sack1", "Agent/TCPSink/Sack1"  # RFC 2018 blocks; ns-2's own SACK recovery
    else:
        agent, sink = AGENTS[flow["protocol"]], SINKS[flow["protocol"]]
    return agent, sink + ("/DelAck" if flow["delayed_ack"] else "")


def mss_of(flow: dict[str, Any], packet_size: int) -> int:
    """The flow's payload per full packet (racc's tcp::mss_for), ns-2's packetSize_."""
    return packet_size - headers(flow)


def iw_packets(flow: dict[str, Any], mss: int) -> int:
    """racc's initial window in packets: ``initial_window``, else RFC 5681 §3.1 by SMSS; XCP
    starts at one packet (racc's XcpWindow::new)."""
    if flow["initial_window"]:
        return int(flow["initial_window"])
    if is_xcp(flow):
        return 1
    if _vcp.is_vcp(flow):
        return _vcp.iw_packets(flow)
    return 4 if mss <= 1095 else 3 if mss <= 2190 else 2


def _groups(r: dict[str, Any]) -> str:
    """One proc per flow group: the per-flow TCP settings (every flow of a group shares them)."""
    lines = ["# Flow groups: racc's per-flow TCP options and params (defaults: TcpParams::default)."]
    for k, f in enumerate(_first_of_each_group(r)):
        p = flow_tcp_params(f)
        mss = mss_of(f, r["packet_size"])
        if _vcp.is_vcp(f):
            lines.append(_vcp.group_pre(k, f, num))
        lines.append(f"proc g{k} {{t}} {{ ;# group {f['group']}: {f['protocol']}")
        # ns-2 sends the SYN at tcpip_base_hdr_size_, racc's XCP sender without its XCP header.
        syn = "60 bytes; racc's is 40" if is_xcp(f) else "40 bytes"
        if is_xcp(f):
            lines += [
                f"    $t set tcpip_base_hdr_size_ {headers(f)} ;# IPv4 + TCP + racc's 20-byte XCP header (ns-2 adds none)",
                f"    $t set packetSize_ {mss} ;# racc's XCP MSS: packet_size {r['packet_size']} - {headers(f)}",
            ]
        lines += [
            f"    $t set windowInit_ {iw_packets(f, mss)} ;# racc IW (initial_window, else {'1 for XCP' if is_xcp(f) else 'RFC 5681 by SMSS'})",
            f"    $t set syn_ {'true' if f['handshake'] else 'false'} ;# racc handshake: a SYN first ({syn})",
            f"    $t set ecn_ {1 if f['ecn'] else 0}",
            f"    $t set numdupacks_ {p['dupthresh']} ;# dupthresh",
            f"    $t set rtxcur_init_ {num(p['initial_rto'])} ;# initial_rto (ns-2 default 3 s)",
            f"    $t set maxrto_ {num(p['max_rto'])}",
            f"    $t set tcpTick_ {num(p['clock_granularity'])} ;# clock_granularity (ns-2 default 10 ms)",
            f"    $t set singledup_ {1 if p['limited_transmit'] else 0} ;# limited_transmit (RFC 3042)",
        ]
        if group_classes(f)[0] == "Agent/TCP/Newreno":
            first = 1 if p["partial_ack_timer"] == "first" else 0
            lines.append(f"    $t set newreno_changes1_ {first} ;# partial_ack_timer = {p['partial_ack_timer']}")
        lines.append("}")
    return "\n".join(lines) + "\n"


def _first_of_each_group(r: dict[str, Any]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for f in r["flows"]:
        seen.setdefault(f["group"], f)
    return list(seen.values())


def _procs(r: dict[str, Any], interval_ns: int, samples: int) -> str:
    ports = " ".join(str(p) for p in r["record_ports"])
    return f"""# Flows are made when they start (ns-2 resets an agent when it is made, and again here so
# the group's settings take effect); `done` fires when every byte is acknowledged.
proc flow {{i cls sink group src dst bytes ssthresh}} {{
    global ns n tcp app running
    if {{[info procs pre_$group] != ""}} {{ pre_$group }} ;# class defaults a constructor reads (VCP)
    set t [new $cls]
    $t set fid_ $i
    $group $t
    $t reset
    if {{$ssthresh > 0}} {{ $t set ssthresh_ $ssthresh }} ;# racc initial_ssthresh; else window_
    $ns attach-agent $n($src) $t
    set s [new $sink]
    $ns attach-agent $n($dst) $s
    $ns connect $t $s
    set a [new Application/FTP]
    $a attach-agent $t
    set tcp($i) $t
    set app($i) $a
    set running($i) 1
    if {{$bytes < 0}} {{ $a start }} else {{ $a send $bytes }}
}}
proc stop_flow {{i}} {{
    global app
    $app($i) stop
}}
Agent/TCP instproc done {{}} {{
    global ns out running
    set i [$self set fid_]
    unset -nocomplain running($i)
    puts $out "D $i [$ns now]"
}}

# Counters at racc's sample times k x {secs(interval_ns)} s.
set out [open {COUNTERS} w]
set ports {{{ports}}}
proc sample {{k}} {{
    global ns out ports qm qi lm running tcp
    set now [$ns now]
    foreach p $ports {{
        set m $qm($p)
        $qi($p) newpoint $now [$m set pkts_]
        set lost 0
        if {{[info exists lm($p)]}} {{ set lost [$lm($p) set npkts_] }}
        puts $out "L $k $p [$m set parrivals_] [$m set pdepartures_] [$m set bdepartures_] [$m set pdrops_]\\
 [$m set pmarks_] $lost [$m set pkts_] [$m set size_] [$qi($p) set sum_]"
    }}
    foreach i [lsort -integer [array names running]] {{
        set t $tcp($i)
        puts $out "F $k $i [$t set ack_] [$t set nrexmitpack_] [$t set nrexmit_] [$t set cwnd_] [$t set srtt_]"
    }}
    if {{$k < {samples}}} {{
        $ns at [expr {{($k + 1) * {num(interval_ns / 1e9)}}}] "sample [expr {{$k + 1}}]"
    }} else {{
        close $out
        exit 0
    }}
}}
"""


def _flows(r: dict[str, Any]) -> str:
    group_of = {f["group"]: k for k, f in enumerate(_first_of_each_group(r))}
    lines = ["# Every flow at racc's start time: flow i agent sink group src dst bytes (-1: unbounded) ssthresh."]
    for i, f in enumerate(r["flows"]):
        agent, sink = group_classes(f)
        mss = mss_of(f, r["packet_size"])
        size = -1 if f["size_bytes"] is None else int(f["size_bytes"])
        ss = -1 if f["initial_ssthresh"] is None else max(1, int(f["initial_ssthresh"]) // mss)
        k = group_of[f["group"]]
        lines.append(f'$ns at {secs(f["start"])} "flow {i} {agent} {sink} g{k} {f["src"]} {f["dst"]} {size} {ss}"')
        if f["stop"] is not None:
            lines.append(f'$ns at {secs(f["stop"])} "stop_flow {i}"')
    return "\n".join(lines) + "\n"
