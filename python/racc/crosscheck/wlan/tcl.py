"""The ns-2.35 wired-cum-wireless script of a racc scenario with one ``wlan`` medium.

racc's medium (docs/SIMULATOR.md "Shared media") is a simplified 802.11 DCF; ns-2's is
``Mac/802_11`` over ``Phy/WirelessPhy``, the model the QFCP paper's Fig. 2 ran on. The script
builds racc's explicit topology with the medium as ns-2's infrastructure WLAN: the wired nodes
in one hierarchical domain, the access point as a base station (``-wiredRouting ON``) and the
stations in a second, routing by DSDV (the Debian build of ns-2.35 has no NOAH; DSDV's
periodic updates are a few small broadcasts, and a station has no route to its base station
for the first fraction of a second, so a few first packets are dropped: "Route to base_stn not
known"). Settings that differ from ns-2's defaults stand for racc's medium keys:

* ``dataRate_`` = ``phy_rate``; ``basicRate_`` 1 Mb/s (racc's ``ack`` is 14 B at 1 Mb/s + PLCP);
  PLCP preamble + header 192 us at 1 Mb/s (racc ``phy_header``), slot, SIFS (DIFS = SIFS + 2
  slots), CWmin/CWmax as racc's; ``ShortRetryLimit_`` = ``retry_limit``;
* ``RTSThreshold_`` above the packet size: no RTS/CTS, which racc does not model (ns-2's
  default 0 sends RTS/CTS before every frame; ``rts=True`` keeps it, to see what it costs);
* the interface queue (``Queue/DropTail/PriQueue``) holds racc's ``buffer`` packets (ns-2
  counts the packet in the MAC apart: one more in the interface, as racc counts waiting ones);
* the stations stand on a 10 m circle around the access point (every member hears every other,
  at equal power at the access point, so ns-2's capture does not pick a winner there).

TCP: Agent/TCP/Reno (or Newreno) with TCPSink and FTP, packetSize_ = racc's packet_size - 40,
timestamps for RTT samples as racc, min_rto, initial RTO, IW and clock as racc's defaults. Each
1 s (racc's record interval) it writes every flow's ``ack_`` (``F t flow ack_ cwnd_ nrexmit_``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

HEADERS = 40  # IPv4 + TCP, in racc's packet_size, added by ns-2 to packetSize_
COUNTERS = "counters.txt"
TRACE = "trace.tr"
RADIUS_M = 10.0
#: racc TCP params a flow may state: ns-2's TCP has no Eifel undo of a spurious timeout
NS2_TCP = {"spurious_rto": "off"}


@dataclass
class Wlan:
    """What the script needs of a racc scenario with one medium (explicit topology)."""

    name: str
    duration_s: float
    interval_s: float
    packet_size: int
    wired: list[str]  # wired nodes (hosts and routers), in scenario order
    links: list[tuple[str, str, float, float, int]]  # a, b, bps, delay s, buffer pkts
    ap: str
    stations: list[str]
    phy_bps: float
    buffer: int
    dcf: dict[str, float] = field(default_factory=dict)
    flows: list[tuple[str, str, str, str]] = field(default_factory=list)  # name, group, src, dst
    protocol: str = "reno"
    min_rto_s: float = 0.2


def _seconds(v: Any) -> float:
    if isinstance(v, (int, float)):
        return float(v)
    s = str(v).strip()
    for unit, k in (("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0)):
        if s.endswith(unit):
            return float(s[: -len(unit)]) * k
    return float(s)


def _bps(v: Any) -> float:
    s = str(v).strip()
    for unit, k in (("Gbps", 1e9), ("Mbps", 1e6), ("Kbps", 1e3), ("kbps", 1e3), ("bps", 1.0)):
        if s.endswith(unit):
            return float(s[: -len(unit)]) * k
    return float(s)


def _pkts(v: Any) -> int:
    s = str(v).strip()
    return int(s[:-3]) if s.endswith("pkt") else int(s)


def from_scenario(data: dict[str, Any]) -> Wlan:
    """The medium scenario ``data`` (a parsed TOML, overrides applied) as a :class:`Wlan`.
    Raises ``ValueError`` naming the key ns-2's script cannot express."""
    topo = data["topology"]
    if topo.get("kind") != "explicit" or len(topo.get("media", [])) != 1:
        raise ValueError("topology: an explicit topology with exactly one medium")
    m = topo["media"][0]
    if m.get("kind", "wlan") != "wlan":
        raise ValueError("topology.media[0].kind: only 'wlan'")
    for k in ("loss", "station_loss"):
        if k in m:
            raise ValueError(f"topology.media[0].{k}: not mapped onto ns-2")
    members = {m["ap"], *m["stations"]}
    wired = [n["name"] for n in topo["nodes"] if n["name"] not in members or n["name"] == m["ap"]]
    wired.remove(m["ap"])
    links = []
    for i, lk in enumerate(topo["links"]):
        if "loss" in lk:
            raise ValueError(f"topology.links[{i}].loss: not mapped onto ns-2")
        links.append((lk["a"], lk["b"], _bps(lk["capacity"]), _seconds(lk["delay"]), _pkts(lk.get("buffer", 1000))))
    flows = []
    proto = None
    for g in data["flows"]:
        p = g.get("protocol", "reno")
        if p not in ("reno", "newreno") or (proto and p != proto):
            raise ValueError(f"flows.{g['name']}.protocol: '{p}' (one of reno, newreno for all flows)")
        if (g.get("params") or {}) != NS2_TCP:
            # racc's default undoes spurious timeouts (Eifel), which ns-2's TCP does not
            raise ValueError(f"flows.{g['name']}.params: must be exactly {NS2_TCP} (ns-2's TCP)")
        proto = p
        off = int(g.get("index_offset", 0))
        for k in range(int(g.get("count", 1))):
            i = off + k
            flows.append((f"{g['name']}{k}", g["name"], g["src"].format(i=i), g["dst"].format(i=i)))
    dcf = {
        "slot": _seconds(m.get("slot", "20us")),
        "sifs": _seconds(m.get("sifs", "10us")),
        "difs": _seconds(m.get("difs", "50us")),
        "phy_header": _seconds(m.get("phy_header", "192us")),
        "cw_min": int(m.get("cw_min", 31)),
        "cw_max": int(m.get("cw_max", 1023)),
        "retry_limit": int(m.get("retry_limit", 7)),
    }
    if abs(dcf["difs"] - (dcf["sifs"] + 2 * dcf["slot"])) > 1e-12:
        raise ValueError("topology.media[0].difs: ns-2's DIFS is SIFS + 2 slots")
    return Wlan(
        name=data["name"],
        duration_s=_seconds(data["duration"]),
        interval_s=_seconds(data.get("record", {}).get("interval", "1s")),
        packet_size=int(data.get("packet_size", 1000)),
        wired=wired,
        links=links,
        ap=m["ap"],
        stations=list(m["stations"]),
        phy_bps=_bps(m["phy_rate"]),
        buffer=_pkts(m.get("buffer", 50)),
        dcf=dcf,
        flows=flows,
        protocol=proto or "reno",
        min_rto_s=_seconds(data.get("min_rto", "200ms")),
    )


def write(w: Wlan, seed: int, rts: bool = False, mac_trace: bool = False) -> str:
    """The whole ns-2 script for one seed (ns-2's own generator: racc's draws cannot be replayed)."""
    nw = len(w.wired)
    nm = 1 + len(w.stations)
    addr = {name: f"0.0.{i}" for i, name in enumerate(w.wired)}
    addr[w.ap] = "1.0.0"
    for j, s in enumerate(w.stations):
        addr[s] = f"1.0.{j + 1}"
    d = w.dcf
    agent = {"reno": "Agent/TCP/Reno", "newreno": "Agent/TCP/Newreno"}[w.protocol]
    mss = w.packet_size - HEADERS
    out = [
        f"# ns-2.35 wired-cum-wireless script of racc's scenario {w.name!r}, seed {seed}",
        "set ns [new Simulator]",
        f"$defaultRNG seed {seed}",
        "ns-random " + str(seed),
        "# 802.11 (racc's medium keys)",
        f"Mac/802_11 set dataRate_ {w.phy_bps:.0f} ;# phy_rate",
        "Mac/802_11 set basicRate_ 1000000 ;# racc's ack: 14 B at 1 Mb/s + PLCP",
        "Mac/802_11 set PLCPDataRate_ 1000000",
        "Mac/802_11 set PreambleLength_ 144",
        "Mac/802_11 set PLCPHeaderLength_ 48 ;# 144 + 48 bits at 1 Mb/s = racc's phy_header 192 us",
        f"Mac/802_11 set SlotTime_ {d['slot']:.9f}",
        f"Mac/802_11 set SIFS_ {d['sifs']:.9f}",
        f"Mac/802_11 set CWMin_ {d['cw_min']}",
        f"Mac/802_11 set CWMax_ {d['cw_max']}",
        f"Mac/802_11 set ShortRetryLimit_ {d['retry_limit']}",
        f"Mac/802_11 set RTSThreshold_ {0 if rts else 3000} ;# {'RTS/CTS before every frame' if rts else 'no RTS/CTS (racc has none)'}",
        "# TCP (racc's defaults: crates/racc-proto/src/tcp)",
        f"Agent/TCP set packetSize_ {mss}",
        f"Agent/TCP set tcpip_base_hdr_size_ {HEADERS}",
        "Agent/TCP set window_ 1000000 ;# no receiver window in racc",
        "Agent/TCP set maxcwnd_ 0",
        "Agent/TCP set timestamps_ true",
        "Agent/TCP set ts_option_size_ 0",
        "Agent/TCP set windowInit_ 4 ;# RFC 5681 IW for this MSS",
        "Agent/TCP set windowInitOption_ 1",
        f"Agent/TCP set minrto_ {w.min_rto_s:.6f}",
        "Agent/TCP set rfc2988_ true",
        "Agent/TCP set rtxcur_init_ 1.0",
        "Agent/TCP set maxrto_ 60",
        "Agent/TCP set tcpTick_ 0.001",
        "Agent/TCP set maxburst_ 0",
        "Agent/TCP set singledup_ 1",
        "Agent/TCP set syn_ false ;# racc: no handshake by default",
        "# Addresses: domain 0 wired, domain 1 the WLAN (base station first)",
        "$ns node-config -addressType hierarchical",
        "AddrParams set domain_num_ 2",
        "AddrParams set cluster_num_ {1 1}",
        f"AddrParams set nodes_num_ {{{nw} {nm}}}",
    ]
    # ns-2's wireless nodes need a trace file (their drop targets write to it) even when off.
    out += [f"set tf [open {TRACE if mac_trace else '/dev/null'} w]", "$ns trace-all $tf"]
    out += [
        "set topo [new Topography]",
        "$topo load_flatgrid 100 100",
        f"create-god {nm}",
    ]
    for name in w.wired:
        out.append(f"set n({name}) [$ns node {addr[name]}]")
    on = "ON" if mac_trace else "OFF"
    out += [
        "set chan [new Channel/WirelessChannel]",
        "$ns node-config -adhocRouting DSDV -llType LL -macType Mac/802_11 \\",
        f"    -ifqType Queue/DropTail/PriQueue -ifqLen {w.buffer} -antType Antenna/OmniAntenna \\",
        "    -propType Propagation/TwoRayGround -phyType Phy/WirelessPhy -channel $chan \\",
        f"    -topoInstance $topo -wiredRouting ON -agentTrace OFF -routerTrace OFF -macTrace {on} -movementTrace OFF",
        f"set n({w.ap}) [$ns node {addr[w.ap]}]",
        f"$n({w.ap}) random-motion 0",
        f"$n({w.ap}) set X_ 50.0",
        f"$n({w.ap}) set Y_ 50.0",
        f"$n({w.ap}) set Z_ 0.0",
        "$ns node-config -wiredRouting OFF",
    ]
    for j, s in enumerate(w.stations):
        a = 2 * math.pi * j / len(w.stations)
        out += [
            f"set n({s}) [$ns node {addr[s]}]",
            f"$n({s}) base-station [AddrParams addr2id [$n({w.ap}) node-addr]]",
            f"$n({s}) random-motion 0",
            f"$n({s}) set X_ {50 + RADIUS_M * math.cos(a):.6f}",
            f"$n({s}) set Y_ {50 + RADIUS_M * math.sin(a):.6f}",
            f"$n({s}) set Z_ 0.0",
        ]
    for a, b, bps, delay, buf in w.links:
        out.append(f"$ns duplex-link $n({a}) $n({b}) {bps:.0f} {delay:.9f} DropTail")
        out.append(f"$ns queue-limit $n({a}) $n({b}) {buf + 1}")
        out.append(f"$ns queue-limit $n({b}) $n({a}) {buf + 1}")
    out.append(f"set out [open {COUNTERS} w]")
    for i, (name, group, src, dst) in enumerate(w.flows):
        out += [
            f"set tcp({i}) [new {agent}] ;# {name} ({group}): {src} -> {dst}",
            f"$tcp({i}) set fid_ {i}",
            f"$ns attach-agent $n({src}) $tcp({i})",
            f"set sink({i}) [new Agent/TCPSink]",
            f"$ns attach-agent $n({dst}) $sink({i})",
            f"$ns connect $tcp({i}) $sink({i})",
            f"set ftp({i}) [new Application/FTP]",
            f"$ftp({i}) attach-agent $tcp({i})",
            f'$ns at 0.0 "$ftp({i}) start"',
        ]
    nflows = len(w.flows)
    samples = round(w.duration_s / w.interval_s)
    out += [
        "proc sample {k} {",
        "    global ns tcp out",
        f"    for {{set i 0}} {{$i < {nflows}}} {{incr i}} {{",
        '        puts $out "F $k $i [$tcp($i) set ack_] [$tcp($i) set cwnd_] [$tcp($i) set nrexmit_]"',
        "    }",
        f"    if {{$k < {samples}}} {{",
        f'        $ns at [expr ($k + 1) * {w.interval_s}] "sample [expr $k + 1]"',
        "    } else {",
        "        close $out",
        "        $ns flush-trace",
        "        $ns halt",
        "    }",
        "}",
        f'$ns at {w.interval_s} "sample 1"',
        "$ns run",
        "exit 0",
        "",
    ]
    return "\n".join(out)


def node_names(w: Wlan) -> dict[int, str]:
    """ns-2's node ids (creation order: the wired nodes, the access point, the stations) -> racc's
    node names, for reading the trace (``run.mac_counts``)."""
    order = [*w.wired, w.ap, *w.stations]
    return dict(enumerate(order))
