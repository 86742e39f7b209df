"""A link's propagation delay, in user space, for kernels without ``sch_netem``.

Each delayed link is a namespace of its own between its two nodes, holding the two veth ends
``a`` and ``b`` with no address: this process reads every frame arriving on one end (an
AF_PACKET socket, the kernel's receive timestamp kept) and sends it out of the other end once
the link's delay has passed since that timestamp. The rate and the buffer stay in the kernel
(the sending node's qdisc); only the wire's length is here, so a late wake-up of this process
adds delay but never reorders a direction or drops (a full receive buffer does: counted).

Run as ``python -m racc.kernel.delayline SPEC.json --parent PID``; SIGTERM writes the counters to
``SPEC.json.out`` and exits.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import signal
import socket
import struct
import sys
import time
from collections import deque

from racc.kernel.machine import die_with_parent, setns

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_STATISTICS = 6
PACKET_IGNORE_OUTGOING = 23
SO_TIMESTAMPNS = 35
RCVBUF = 8 << 20
LATE_EVERY = 8


class Direction:
    __slots__ = ("delay", "name", "queue", "rx", "sent", "tx")

    def __init__(self, rx: socket.socket, tx: socket.socket, delay: float, name: str):
        self.rx, self.tx, self.delay, self.name = rx, tx, delay, name
        self.queue: deque[tuple[float, bytes]] = deque()
        self.sent = 0


def open_end(ns: str, ifname: str) -> socket.socket:
    setns(ns)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
    s.setsockopt(socket.SOL_SOCKET, 33, RCVBUF)  # SO_RCVBUFFORCE (root)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.bind((ifname, ETH_P_ALL))
    s.setblocking(False)
    return s


def drops(s: socket.socket) -> int:
    """Frames the kernel dropped for want of room in this socket (PACKET_STATISTICS; read resets)."""
    try:
        _, dropped = struct.unpack("II", s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
        return dropped
    except OSError:
        return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="racc.kernel.delayline")
    ap.add_argument("spec")
    ap.add_argument("--parent", type=int, required=True)
    args = ap.parse_args(argv)
    die_with_parent(args.parent)
    try:
        # A late wake-up is delay the scenario does not have: run before ordinary tasks, as
        # racc-live's router does (on a loaded 2-core machine ordinary scheduling made its
        # wake-ups milliseconds late). The loop sleeps in select, so it cannot starve the machine.
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    except (OSError, AttributeError):
        pass
    with open(args.spec, encoding="utf-8") as f:
        spec = json.load(f)
    dirs: list[Direction] = []
    for lk in spec["links"]:
        a = open_end(lk["ns"], "a")
        b = open_end(lk["ns"], "b")
        dirs.append(Direction(a, b, lk["delay_s"], f"{lk['name']} a->b"))
        dirs.append(Direction(b, a, lk["delay_s"], f"{lk['name']} b->a"))
    dropped = {d.name: 0 for d in dirs}
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    late: list[float] = []  # send time minus due time, of one frame in LATE_EVERY
    # select(2), not epoll: its timeout is in microseconds, epoll's in milliseconds (rounded up, which
    # made frames 0.5 ms late at the median).
    sel = selectors.SelectSelector()
    for d in dirs:
        sel.register(d.rx, selectors.EVENT_READ, d)
    # Ready: the parent waits for this line before it starts any traffic.
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while not stop:
        now = time.time()
        nxt = None
        for d in dirs:
            q = d.queue
            while q and q[0][0] <= now:
                try:
                    d.tx.send(q[0][1])
                except BlockingIOError:
                    break
                except OSError:
                    pass  # a frame the device refuses (too long) is the wire losing it
                if d.sent % LATE_EVERY == 0:
                    late.append(now - q[0][0])
                q.popleft()
                d.sent += 1
            if q and (nxt is None or q[0][0] < nxt):
                nxt = q[0][0]
        timeout = 0.2 if nxt is None else max(0.0, nxt - time.time())
        for key, _ in sel.select(min(timeout, 0.2)):
            d = key.data
            for _ in range(256):
                try:
                    data, anc, _flags, _addr = d.rx.recvmsg(65536, 64)
                except BlockingIOError:
                    break
                ts = now
                for level, kind, val in anc:
                    if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                        sec, ns = struct.unpack("qq", val[:16])
                        ts = sec + ns * 1e-9
                d.queue.append((ts + d.delay, data))
    for d in dirs:
        dropped[d.name] += drops(d.rx)
    out = {
        "links": {
            d.name: {"forwarded": d.sent, "queued_at_end": len(d.queue), "dropped": dropped[d.name]} for d in dirs
        }
    }
    late.sort()
    n = len(late)
    out["late_s"] = {q: late[min(n - 1, int(n * v))] for q, v in (("p50", 0.5), ("p99", 0.99), ("max", 1.0))} if n else {}
    with open(args.spec + ".out", "w", encoding="utf-8") as f:
        json.dump(out, f)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
