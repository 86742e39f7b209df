"""The ports' counters, read from the kernel's qdisc statistics (what ``tc -s qdisc`` prints)
over rtnetlink: one ``RTM_GETQDISC`` dump per node namespace per sample, no process spawned.

For each port the leaf FIFO of its htb (handle ``10:``) gives the bytes and packets sent, the
drops, and the queue (packets and bytes) at the sample time; the byte counts are IP bytes (the
root's size table takes the Ethernet header off before any qdisc counts).
"""

from __future__ import annotations

import json
import socket
import struct

from racc.kernel.machine import sh
from racc.kernel.network import in_ns

RTM_GETQDISC = 38
RTM_NEWQDISC = 36
NLMSG_DONE = 3
NLMSG_ERROR = 2
NLM_F_REQUEST = 0x1
NLM_F_DUMP = 0x300
TCA_KIND = 1
TCA_STATS2 = 7
TCA_STATS_BASIC = 1
TCA_STATS_QUEUE = 3
TCA_STATS_PKT64 = 8
LEAF_HANDLE = 0x00100000  # "10:" (tc handles are hex)


def _attrs(buf: bytes, off: int, end: int):
    while off + 4 <= end:
        ln, typ = struct.unpack_from("HH", buf, off)
        if ln < 4:
            return
        yield typ & 0x3FFF, buf[off + 4 : off + ln]
        off += (ln + 3) & ~3


def parse_dump(chunks: list[bytes]) -> dict[tuple[int, int], dict[str, int]]:
    """``{(ifindex, handle): {"bytes", "packets", "drops", "qlen", "backlog", "overlimits"}}``."""
    out: dict[tuple[int, int], dict[str, int]] = {}
    for buf in chunks:
        off = 0
        while off + 16 <= len(buf):
            ln, typ, _flags, _seq, _pid = struct.unpack_from("IHHII", buf, off)
            if ln < 16:
                break
            if typ == RTM_NEWQDISC:
                _fam, ifindex, handle, _parent, _info = struct.unpack_from("B3xiIII", buf, off + 16)
                st: dict[str, int] = {}
                for t, v in _attrs(buf, off + 36, off + ln):
                    if t == TCA_STATS2:
                        for t2, v2 in _attrs(v, 0, len(v)):
                            if t2 == TCA_STATS_BASIC and len(v2) >= 12:
                                st["bytes"], st["packets"] = struct.unpack_from("QI", v2, 0)
                            elif t2 == TCA_STATS_PKT64 and len(v2) >= 8:
                                st["packets"] = struct.unpack_from("Q", v2, 0)[0]
                            elif t2 == TCA_STATS_QUEUE and len(v2) >= 20:
                                q = struct.unpack_from("IIIII", v2, 0)
                                st.update(qlen=q[0], backlog=q[1], drops=q[2], overlimits=q[4])
                out[(ifindex, handle)] = st
            off += (ln + 3) & ~3
    return out


class Reader:
    """One rtnetlink socket per node namespace (made in a thread moved into it; a socket stays in
    the namespace it was made in), and each port's (namespace, ifindex)."""

    def __init__(self, ports: list[tuple[int, str, str]]):
        """``ports``: (port index, namespace, interface name)."""
        self.socks: dict[str, socket.socket] = {}
        self.where: dict[int, tuple[str, int]] = {}
        names = sorted({ns for _, ns, _ in ports})
        index = {}
        for ns in names:
            links = json.loads(sh("ip", "-n", ns, "-j", "link", "show").stdout or "[]")
            index[ns] = {lk["ifname"]: lk["ifindex"] for lk in links}
        for ns in names:  # a netlink socket talks to the namespace it was made in
            self.socks[ns] = in_ns(ns, _route_socket)
        for port, ns, ifname in ports:
            self.where[port] = (ns, index[ns][ifname])
        self.seq = 1

    def read(self) -> dict[int, dict[str, int]]:
        """Every port's leaf counters now."""
        by_ns: dict[str, dict[tuple[int, int], dict[str, int]]] = {}
        for ns, s in self.socks.items():
            self.seq += 1
            req = struct.pack("IHHII", 36, RTM_GETQDISC, NLM_F_REQUEST | NLM_F_DUMP, self.seq, 0)
            req += struct.pack("B3xiIII", socket.AF_UNSPEC, 0, 0, 0, 0)
            s.send(req)
            chunks = []
            while True:
                buf = s.recv(1 << 16)
                chunks.append(buf)
                if _done(buf):
                    break
            by_ns[ns] = parse_dump(chunks)
        return {p: by_ns[ns].get((ifindex, LEAF_HANDLE), {}) for p, (ns, ifindex) in self.where.items()}

    def close(self) -> None:
        for s in self.socks.values():
            s.close()


def _done(buf: bytes) -> bool:
    off = 0
    while off + 16 <= len(buf):
        ln, typ = struct.unpack_from("IH", buf, off)
        if typ in (NLMSG_DONE, NLMSG_ERROR):
            return True
        if ln < 16:
            return True
        off += (ln + 3) & ~3
    return False


def _route_socket() -> socket.socket:
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    s.bind((0, 0))
    return s
