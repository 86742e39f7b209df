"""Timing of one port's data packets in a capture (issue 39 item 2's evidence for RCP).

    python scripts/live_pcap_timing.py CAPTURE.pcapng [PORT]

For PORT (default s0->r0, the first sender's access link) in a `racc live run --pcap` or
`racc run --pcap` capture: (1) each data packet's gap to the next against the median of the 21
gaps around it, |gap - median| at p50/p99: how far the arrivals stray from the sender's own
rhythm; (2) the same for the send times the packets carry (the TCP-like header's ts_val, the
sender's clock when it sent): the sender's own timer jitter; (3) the capture time less ts_val
above its minimum at p50/p90/p99: the delay from the sender to the router's stamp (host kernel,
TUN device, router wake-up). Data packets are those of at least 900 bytes.
"""

import itertools
import statistics
import struct
import sys
from pathlib import Path

SHIM = 16  # racc shim, then the transport header (wire/tcp.rs: ts_val at byte 20)
IP_UDP = 28


def read_pcapng(path: Path) -> tuple[list[str | None], list[tuple[int, int, bytes, int]]]:
    """(interface names, [(interface, time ns, captured bytes, original length)])."""
    data = path.read_bytes()
    names: list[str | None] = []
    packets = []
    at = 0
    while at + 8 <= len(data):
        kind, length = struct.unpack_from("<II", data, at)
        body = data[at + 8 : at + length - 4]
        if kind == 1:
            opts, name = body[8:], None
            while len(opts) >= 4:
                code, olen = struct.unpack_from("<HH", opts, 0)
                if code == 0:
                    break
                if code == 2:
                    name = opts[4 : 4 + olen].decode()
                opts = opts[4 + (olen + 3) // 4 * 4 :]
            names.append(name)
        elif kind == 6:
            iface, hi, lo, caplen, orig = struct.unpack_from("<IIIII", body, 0)
            packets.append((iface, (hi << 32) | lo, body[20 : 20 + caplen], orig))
        at += length
    return names, packets


def deviation(times: list[int]) -> tuple[float, float]:
    """|gap - median of the 21 gaps around it|, p50 and p99, µs."""
    g = [b - a for a, b in itertools.pairwise(times)]
    dev = sorted(abs(g[k] - statistics.median(g[k - 10 : k + 11])) for k in range(10, len(g) - 10))
    if not dev:
        return float("nan"), float("nan")
    return dev[len(dev) // 2] / 1e3, dev[int(len(dev) * 0.99)] / 1e3


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    path, port = Path(argv[0]), argv[1] if len(argv) > 1 else "s0->r0"
    names, packets = read_pcapng(path)
    if port not in names:
        print(f"error: {path}: no port {port!r} in the capture (it has {', '.join(map(str, names))})", file=sys.stderr)
        return 2
    i = names.index(port)
    rows = [(t, struct.unpack_from(">Q", b, IP_UDP + SHIM + 20)[0]) for f, t, b, o in packets if f == i and o >= 900]
    if len(rows) < 30:
        print(f"error: {path}: only {len(rows)} data packets on {port}", file=sys.stderr)
        return 2
    a50, a99 = deviation([t for t, _ in rows])
    s50, s99 = deviation([v for _, v in rows])
    tr = sorted(t - v for t, v in rows)
    tr = [x - tr[0] for x in tr]
    n = len(tr)
    print(f"{port}: {n} data packets")
    print(f"  arrival gap deviation      p50 {a50:8.1f} us  p99 {a99:8.1f} us")
    print(f"  send-time gap deviation    p50 {s50:8.1f} us  p99 {s99:8.1f} us")
    print(
        f"  send to stamp (above min)  p50 {tr[n // 2] / 1e3:8.1f} us  p90 {tr[int(n * 0.9)] / 1e3:.1f} us"
        f"  p99 {tr[int(n * 0.99)] / 1e3:.1f} us"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
