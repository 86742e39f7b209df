"""``racc kernel bench``: what one BPF router module costs per packet, against 10 Gb/s line rate
(issue 36's router benchmark; docs/KERNEL-BPF.md, "The routers' cost").

Two measurements, both of the very objects ``racc kernel run`` attaches:

- **Per packet, in the kernel** (:func:`prog_cost`): the router's tc program on a realistic TCP
  data frame through ``BPF_PROG_TEST_RUN`` (the loader's ``bench`` command), ``repeat`` runs per
  round, the round's mean ns per run as the kernel times it. The packet one run leaves is the next
  run's input and the port's state carries over (its intervals roll over in real time), so the
  steady cost is that of a packet the port already coded; a code's rewrite happens when the code
  changes. The frame: Ethernet, IPv4 and TCP with the timestamps option Linux puts on data, and
  the protocol's own signal: ECT(1) for the load-factor family, the congestion-header option for
  XCP and RCP.
- **Through one router on veth** (:func:`throughput`): iperf3 from a sender namespace through a
  forwarding namespace, whose egress runs the router, to a receiver; the kernel's own BPF run-time
  statistics (``BPF_ENABLE_STATS``, held only for the run) give the router's CPU per skb and per
  wire packet. The senders are Linux's CUBIC: Not-ECT and without a congestion header, so the
  router meters and estimates every packet and marks none (the marking is in the first table).

Line rate counts the Ethernet frame plus its FCS, preamble and inter-frame gap (24 bytes): 10 Gb/s
of 1514-byte frames (1500-byte IP packets) is 812,743 packets/s, of 60-byte frames (64 on the
wire) 14,880,952.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import statistics
import struct
import subprocess
import time

from racc.kernel import bpf, bpf_base
from racc.kernel.machine import offloads_off, run_tag, sh, sweep_stale, teardown
from racc.kernel.network import in_ns

LINE_RATE_BPS = 10e9
#: Bytes a frame takes on the wire beyond what the kernel sees: FCS 4, preamble 8, gap 12.
WIRE_EXTRA = 24
#: The two frame sizes of the table: a 1500-byte IP packet, and the least Ethernet frame.
FRAME_SIZES = (1514, 60)

_TS_OPT = bytes([1, 1, 8, 10]) + struct.pack("!II", 123456, 654321)  # NOP NOP timestamps
_EXP = 253  # RFC 6994 experimental option kind (kernel/bpf/xcc_opt.h)


def _xcp_opt() -> bytes:
    """An XCP forward header asking for all the router allows: H_rtt 50 ms, H_cwnd 100 packets."""
    return struct.pack("!BBHIIi", _EXP, 16, 0x7863, 50_000, 100 * 1448, 0x7FFFFFFF)


def _rcp_opt() -> bytes:
    """An RCP forward header: no limit yet, H_rtt 50 ms."""
    return struct.pack("!BBHII", _EXP, 12, 0x7270, 0xFFFFFFFF, 50_000)


#: Each protocol's signal on a data packet: (IP TOS, TCP options after the timestamps).
SIGNALS: dict[str, tuple[int, bytes]] = {"xcp": (0, _xcp_opt()), "rcp": (0, _rcp_opt())}
LOAD_FACTOR_SIGNAL = (1, b"")  # ECT(1), VCP's "low load" code a sender starts with


def _csum(b: bytes) -> int:
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def data_frame(size: int, tos: int = 1, options: bytes = b"", timestamps: bool = True) -> bytes:
    """An Ethernet frame of ``size`` bytes (no FCS) holding one TCP data segment with the
    timestamps option (if asked) and ``options``; at least one payload byte (a larger frame than
    ``size`` when the headers need it). Checksums valid."""
    opts = (_TS_OPT if timestamps else b"") + options
    opts += b"\1" * (-len(opts) % 4)
    tcp_hdr = 20 + len(opts)
    payload = max(1, size - 14 - 20 - tcp_hdr)
    ip_len = 20 + tcp_hdr + payload
    src, dst = bytes([10, 36, 91, 1]), bytes([10, 36, 92, 2])
    tcp = struct.pack("!HHIIBBHHH", 40000, 5201, 1_000_000, 1, (tcp_hdr // 4) << 4, 0x18, 512, 0, 0) + opts
    tcp += bytes(i & 0xFF for i in range(payload))
    pseudo = src + dst + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", _csum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, tos, ip_len, 1, 0x4000, 64, 6, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", _csum(ip)) + ip[12:]
    return bytes.fromhex("020000000002020000000001") + b"\x08\x00" + ip + tcp


def line_rate_pps(frame_bytes: int, bps: float = LINE_RATE_BPS) -> float:
    """Packets per second of ``frame_bytes``-byte frames (no FCS) at ``bps`` on Ethernet."""
    return bps / ((frame_bytes + WIRE_EXTRA) * 8)


#: Router settings the benchmark gives where a protocol's defaults do not load in the kernel:
#: PIQI-RCP's newcomer count must be off there (kernel/xcc.py, ``piqi_router_config``).
ROUTER_PARAMS: dict[str, dict] = {"piqi-rcp": {"count_newcomers": False}}


def routers() -> list[str]:
    """The protocols with a router module in the kernel, in the registry's order."""
    return [p for p, k in bpf_base._KERNEL.items() if k.router_object and k.router_config]


def _spec(protocol: str) -> bpf_base.KernelProtocol:
    if protocol not in routers():
        raise ValueError(f"--protocols: {protocol!r} has no router module in the kernel (have: {', '.join(routers())})")
    return bpf_base._KERNEL[protocol]


def _loader_bench(protocol: str, frame: bytes, repeat: int, rounds: int) -> tuple[list[int], dict]:
    """The loader's ``bench`` on a fresh router: each round's mean ns per run, and the counters."""
    spec = _spec(protocol)
    cfg = ",".join(str(v) for v in spec.router_config(ROUTER_PARAMS.get(protocol), LINE_RATE_BPS))
    paths = bpf.build()
    env = {**os.environ, "RACC_COUNTERS": ",".join(spec.router_counters)} if spec.router_counters else None
    args = [str(paths["loader"]), "bench", str(paths[spec.router_object]), cfg, frame.hex(), str(repeat), str(rounds)]
    p = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    lines = p.stdout.strip().splitlines()
    if p.returncode != 0 or len(lines) != 2:
        err = [ln for ln in p.stderr.splitlines() if ln.strip()]
        raise RuntimeError(f"bench {protocol}: {(err or ['no output'])[-1].removeprefix('error: ')}")
    return json.loads(lines[0])["ns"], json.loads(lines[1])


def frame_for(protocol: str, size: int) -> bytes:
    """``protocol``'s data frame of about ``size`` bytes: with its signal, and with the timestamps
    option unless the frame is the least one (60 bytes)."""
    tos, opts = SIGNALS.get(protocol, LOAD_FACTOR_SIGNAL)
    return data_frame(size, tos, opts, timestamps=size > 60)


def prog_cost(protocol: str, size: int, repeat: int = 1_000_000, rounds: int = 5, fresh: int = 2000) -> dict:
    """The router of ``protocol`` (a 10 Gb/s port, default parameters) on a data frame of about
    ``size`` bytes. Steady: ``rounds`` of ``repeat`` runs on the same packet, the median of the
    rounds' means (``ns_per_packet``). Fresh: ``fresh`` rounds of one run each on a new copy of the
    frame (the rewrite of a code or a feedback every time, and colder caches), their median
    (``ns_fresh``). ``counters``: the steady router's (``packets`` = repeat · rounds when every run
    went through)."""
    frame = frame_for(protocol, size)
    ns, counters = _loader_bench(protocol, frame, repeat, rounds)
    steady = statistics.median(ns)
    ns_fresh = statistics.median(_loader_bench(protocol, frame, 1, fresh)[0]) if fresh else None
    line = line_rate_pps(len(frame))
    return {
        "protocol": protocol,
        "frame_bytes": len(frame),
        "ns": ns,
        "ns_per_packet": steady,
        "ns_fresh": ns_fresh,
        "mpps_per_core": 1e3 / steady if steady else None,
        "line_rate_mpps": line / 1e6,
        "cores_for_line_rate": line * steady / 1e9,
        "counters": counters,
    }


# ---- through one router on veth ------------------------------------------------------------

_BPF_ENABLE_STATS = 32
_BPF_STATS_RUN_TIME = 0
_SYS_BPF = 321  # x86_64


def _enable_stats() -> int:
    """BPF run-time statistics on while the returned fd is open (the kernel counts its holders,
    so another process's use is not disturbed)."""
    libc = ctypes.CDLL(None, use_errno=True)
    attr = ctypes.create_string_buffer(struct.pack("I", _BPF_STATS_RUN_TIME).ljust(16, b"\0"))
    fd = libc.syscall(_SYS_BPF, _BPF_ENABLE_STATS, attr, 16)
    if fd < 0:
        e = ctypes.get_errno()
        raise RuntimeError(f"BPF_ENABLE_STATS: {os.strerror(e)}")
    return fd


_SCHED_CLS = 3  # BPF_PROG_TYPE_SCHED_CLS


def _tc_prog_stats(pid: int) -> dict:
    """run_time_ns and run_cnt of the tc program process ``pid`` (the router's loader) holds, from
    its fd's fdinfo (this Debian's bpftool does not list TCX links)."""
    fds = f"/proc/{pid}/fd"
    for fd in os.listdir(fds):
        try:
            if os.readlink(f"{fds}/{fd}") != "anon_inode:bpf-prog":
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                info = dict(ln.split(":", 1) for ln in f.read().splitlines() if ":" in ln)
        except OSError:
            continue
        if int(info.get("prog_type", "-1")) == _SCHED_CLS:
            return {"run_time_ns": int(info.get("run_time_ns", 0)), "run_cnt": int(info.get("run_cnt", 0))}
    raise RuntimeError(f"the router's loader (pid {pid}) holds no tc program")


def _topology(tag: str, gso: bool) -> tuple[str, str, str]:
    """sender (s0) ─ (r0) router (r1) ─ (d0) receiver, three namespaces named ``tag-*``."""
    s, r, d = f"{tag}-bs", f"{tag}-br", f"{tag}-bd"
    for ns in (s, r, d):
        sh("ip", "netns", "add", ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
    sh("ip", "link", "add", "s0", "netns", s, "type", "veth", "peer", "name", "r0", "netns", r)
    sh("ip", "link", "add", "r1", "netns", r, "type", "veth", "peer", "name", "d0", "netns", d)
    for ns, ifname, addr in ((s, "s0", "10.36.91.1/24"), (r, "r0", "10.36.91.2/24")):
        sh("ip", "-n", ns, "addr", "add", addr, "dev", ifname)
    for ns, ifname, addr in ((r, "r1", "10.36.92.1/24"), (d, "d0", "10.36.92.2/24")):
        sh("ip", "-n", ns, "addr", "add", addr, "dev", ifname)
    for ns, ifname in ((s, "s0"), (r, "r0"), (r, "r1"), (d, "d0")):
        sh("ip", "-n", ns, "link", "set", ifname, "up")
        if not gso:
            in_ns(ns, offloads_off, ifname)
    sh("ip", "-n", s, "route", "add", "default", "via", "10.36.91.2")
    sh("ip", "-n", d, "route", "add", "default", "via", "10.36.92.1")
    sh("ip", "netns", "exec", r, "sysctl", "-qw", "net.ipv4.ip_forward=1")
    return s, r, d


def throughput(protocol: str | None, seconds: float = 5.0, flows: int = 2, gso: bool = True) -> dict:
    """iperf3 (``flows`` CUBIC flows, ``seconds``) through one forwarding namespace whose egress
    runs ``protocol``'s router (None: no program, the baseline): Gb/s received, and the router's
    skbs, the packets they were on the wire (full-size segments), its CPU (ns) per each and in all
    (``router_cpu_pct``: percent of one core over the run)."""
    if shutil.which("iperf3") is None:
        raise RuntimeError("iperf3 not found (the throughput run needs it; scripts/setup.sh installs it)")
    sweep_stale()
    tag = run_tag()
    handle = server = None
    stats_fd = -1
    try:
        s, r, d = _topology(tag, gso)
        if protocol is not None:
            handle = bpf.attach_router(r, "r1", protocol, ROUTER_PARAMS.get(protocol), LINE_RATE_BPS)
        server = subprocess.Popen(
            ["ip", "netns", "exec", d, "iperf3", "-s", "-1", "-B", "10.36.92.2"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(0.5)
        stats_fd = _enable_stats() if protocol is not None else -1
        before = _tc_prog_stats(handle._loader._proc.pid) if handle is not None else None
        client = sh(
            "ip",
            "netns",
            "exec",
            s,
            "iperf3",
            "-c",
            "10.36.92.2",
            "-t",
            str(seconds),
            "-P",
            str(flows),
            "-C",
            "cubic",
            "-J",
        )
        out = json.loads(client.stdout)
        # Full-size segments on the wire: the bytes received over the MSS (a GSO skb is one run of
        # the router but many packets; the receiver's InSegs counts it once).
        packets = round(out["end"]["sum_received"]["bytes"] / out["start"]["tcp_mss_default"])
        row = {
            "router": protocol or "none",
            "gso": gso,
            "gbps": out["end"]["sum_received"]["bits_per_second"] / 1e9,
            "retransmits": out["end"]["sum_sent"].get("retransmits", 0),
            "packets": packets,
        }
        if protocol is not None and handle is not None and before is not None:
            after = _tc_prog_stats(handle._loader._proc.pid)
            run_ns = after["run_time_ns"] - before["run_time_ns"]
            skbs = after["run_cnt"] - before["run_cnt"]
            row |= {
                "skbs": skbs,
                "router_cpu_s": run_ns / 1e9,
                "router_cpu_pct": 100 * run_ns / 1e9 / seconds,
                "ns_per_skb": run_ns / skbs if skbs else None,
                "ns_per_packet": run_ns / packets if packets else None,
            }
        return row
    finally:
        if stats_fd >= 0:
            os.close(stats_fd)
        if server is not None and server.poll() is None:
            server.kill()
            server.wait()
        if handle is not None:
            handle.close()
        teardown(tag)


# ---- the command ---------------------------------------------------------------------------


def costs_table(rows: list[dict]) -> str:
    head = ("protocol", "frame B", "ns/pkt", "fresh", "Mpps/core", "10G Mpps", "x line", "cores@10G")
    widths = (-9, 7, 7, 6, 9, 8, 7, 9)
    lines = [
        "router cost per packet (BPF_PROG_TEST_RUN, one core; steady: median of rounds on one packet; "
        + "fresh: median of single runs on a new copy):",
        " ".join(f"{h:<{-w}}" if w < 0 else f"{h:>{w}}" for h, w in zip(head, widths, strict=True)),
    ]
    for r in rows:
        fresh = "-" if r["ns_fresh"] is None else f"{r['ns_fresh']:.0f}"
        lines.append(
            f"{r['protocol']:<9} {r['frame_bytes']:>7} {r['ns_per_packet']:>7.0f} {fresh:>6} {r['mpps_per_core']:>9.2f} "
            f"{r['line_rate_mpps']:>8.3f} {r['mpps_per_core'] / r['line_rate_mpps']:>7.2f} {r['cores_for_line_rate']:>9.2f}"
        )
    return "\n".join(lines)


def throughput_table(rows: list[dict]) -> str:
    lines = [
        "bulk transfer through one BPF router on veth (iperf3, CUBIC; the router's own CPU):",
        f"{'router':<9} {'GSO':>3} {'Gb/s':>6} {'skbs':>10} {'packets':>10} {'ns/skb':>7} {'ns/pkt':>7} {'CPU %':>6}",
    ]
    for r in rows:
        ns_skb, ns_pkt, cpu = r.get("ns_per_skb"), r.get("ns_per_packet"), r.get("router_cpu_pct")
        lines.append(
            f"{r['router']:<9} {'on' if r['gso'] else 'off':>3} {r['gbps']:>6.2f} {r.get('skbs', 0):>10} "
            f"{r.get('packets', 0):>10} {'-' if ns_skb is None else f'{ns_skb:.0f}':>7} "
            f"{'-' if ns_pkt is None else f'{ns_pkt:.0f}':>7} {'-' if cpu is None else f'{cpu:.2f}':>6}"
        )
    return "\n".join(lines)


def run(
    protocols: list[str] | None = None,
    repeat: int = 1_000_000,
    rounds: int = 5,
    fresh: int = 2000,
    seconds: float = 5.0,
    flows: int = 2,
    veth: bool = True,
    echo=print,
) -> dict:
    """Both measurements for ``protocols`` (default: every router), each table echoed as it is
    done; returns {"costs": [...], "throughput": [...]}."""
    names = protocols or routers()
    for p in names:
        _spec(p)
    costs = [prog_cost(p, size, repeat, rounds, fresh) for p in names for size in FRAME_SIZES]
    echo(costs_table(costs))
    result: dict = {"costs": costs, "throughput": []}
    if veth:
        rows = []
        for gso in (True, False):
            rows.append(throughput(None, seconds, flows, gso))
            rows += [throughput(p, seconds, flows, gso) for p in names]
        result["throughput"] = rows
        echo("")
        echo(throughput_table(rows))
    return result
