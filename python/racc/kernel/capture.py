"""``--pcap``: the frames a port sends, captured as they leave its queue.

An AF_PACKET socket on the port's interface, in its node's namespace, keeps the outgoing frames
only: the kernel hands a packet to such a tap when the qdisc releases it to the device, so the
capture holds the port's departures (as the simulator's captures do), with the kernel's
timestamps. Written as classic pcap (nanosecond timestamps, Ethernet link type, the first 128
bytes of each frame: every header), which tcpdump and Wireshark read; no tcpdump needed.

``python -m racc.kernel.capture NS IFNAME FILE --parent PID``; SIGTERM ends it and prints the count.
"""

from __future__ import annotations

import argparse
import signal
import socket
import struct
import sys

from racc.kernel.machine import die_with_parent, setns

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SO_TIMESTAMPNS = 35
SNAPLEN = 128
PCAP_NS_MAGIC = 0xA1B23C4D
LINKTYPE_ETHERNET = 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="racc.kernel.capture")
    ap.add_argument("netns")
    ap.add_argument("ifname")
    ap.add_argument("file")
    ap.add_argument("--parent", type=int, required=True)
    args = ap.parse_args(argv)
    die_with_parent(args.parent)
    setns(args.netns)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE
    s.bind((args.ifname, ETH_P_ALL))
    stop: list[int] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    s.settimeout(0.2)
    n = 0
    with open(args.file, "wb") as f:
        f.write(struct.pack("<IHHiIII", PCAP_NS_MAGIC, 2, 4, 0, 0, SNAPLEN, LINKTYPE_ETHERNET))
        print("ready", flush=True)
        while not stop:
            try:
                data, anc, _flags, addr = s.recvmsg(65536, 64, socket.MSG_TRUNC)
            except (TimeoutError, InterruptedError):
                continue
            if addr[2] != PACKET_OUTGOING:
                continue
            sec = nsec = 0
            for level, kind, val in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                    sec, nsec = struct.unpack("qq", val[:16])
            cap = data[:SNAPLEN]
            f.write(struct.pack("<IIII", sec, nsec, len(cap), len(data)) + cap)
            n += 1
    print(n, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
