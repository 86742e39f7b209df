"""A three-namespace path for the kernel BPF tests (tests/python/test_kernel_bpf*.py), root only:

    sender (kernel36b-s) s0 ─ r0 router (kernel36b-r) r1 ─ w0 wire (kernel36b-w) w1 ─ d0 receiver (kernel36b-d)

The bottleneck is r1's egress: htb at `rate` with a pfifo of `buffer` packets under it. The base
RTT is `delay` on the ACK path, so that the bottleneck queue holds only its own backlog. Kernels
built without netem (this machine's has neither netem nor fq) cannot delay in a qdisc, so the
"wire" namespace bridges w0 and w1 in user space (`DELAY_LINE`, AF_PACKET sockets), passing
frames towards the receiver at once and frames back after `delay`. GSO is off on every egress
(gso_max_segs 1): one packet per skb, as the simulator's. Names carry "kernel36b" (or
$RACC_KERNEL_PATH_TAG, so that engineers sharing a machine tell theirs apart); `sweep()`
removes what a killed run left."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TAG = os.environ.get("RACC_KERNEL_PATH_TAG") or "kernel36b"
NS_S, NS_R, NS_W, NS_D = f"{TAG}-s", f"{TAG}-r", f"{TAG}-w", f"{TAG}-d"
DST = "10.36.2.2"


@contextmanager
def exclusive() -> Iterator[None]:
    """One kernel test at a time on this machine: pytest -n 2 runs two files at once, and the
    namespaces, the cgroups and the controller's name `racc_vcp` are machine-wide."""
    with open(Path(tempfile.gettempdir()) / "racc-kernel-tests.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def cgroup_root() -> Path:
    for line in Path("/proc/mounts").read_text().splitlines():
        f = line.split()
        if f[2] == "cgroup2":
            return Path(f[1])
    raise RuntimeError("no cgroup v2 mount")


def sh(*cmd: str, ns: str | None = None) -> str:
    full = ["ip", "netns", "exec", ns, *cmd] if ns else list(cmd)
    r = subprocess.run(full, check=False, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(full)}: {r.stderr.strip()}")
    return r.stdout


def sweep() -> None:
    for ns in (NS_S, NS_R, NS_W, NS_D):
        for pid in subprocess.run(
            ["ip", "netns", "pids", ns], check=False, capture_output=True, text=True
        ).stdout.split():
            try:
                os.kill(int(pid), 9)
            except ProcessLookupError:
                pass
        subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True)
    for cg in cgroup_root().glob(f"{TAG}-*"):
        for pid in (cg / "cgroup.procs").read_text().split():
            try:
                os.kill(int(pid), 9)
            except ProcessLookupError:
                pass
        for _ in range(50):
            try:
                cg.rmdir()
                break
            except OSError:
                time.sleep(0.05)


def build(rate: str = "10mbit", buffer: int = 50, delay: float = 0.02) -> None:
    global _delay_line
    sweep()
    for ns in (NS_S, NS_R, NS_W, NS_D):
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "set", "lo", "up", ns=ns)
    sh("ip", "link", "add", "s0", "netns", NS_S, "type", "veth", "peer", "name", "r0", "netns", NS_R)
    sh("ip", "link", "add", "r1", "netns", NS_R, "type", "veth", "peer", "name", "w0", "netns", NS_W)
    sh("ip", "link", "add", "w1", "netns", NS_W, "type", "veth", "peer", "name", "d0", "netns", NS_D)
    for ns, dev, addr in ((NS_S, "s0", "10.36.1.1/24"), (NS_R, "r0", "10.36.1.2/24"),
                          (NS_R, "r1", "10.36.2.1/24"), (NS_D, "d0", "10.36.2.2/24")):  # fmt: skip
        sh("ip", "addr", "add", addr, "dev", dev, ns=ns)
        sh("ip", "link", "set", dev, "gso_max_segs", "1", "up", ns=ns)
    for dev in ("w0", "w1"):
        sh("ip", "link", "set", dev, "gso_max_segs", "1", "promisc", "on", "up", ns=NS_W)
    # The frames the delay line copies must carry their checksums: no checksum offload into it.
    sh(sys.executable, "-c", TX_CSUM_OFF, "r1", ns=NS_R)
    sh(sys.executable, "-c", TX_CSUM_OFF, "d0", ns=NS_D)
    sh("ip", "route", "add", "default", "via", "10.36.1.2", ns=NS_S)
    sh("ip", "route", "add", "default", "via", "10.36.2.1", ns=NS_D)
    sh("sysctl", "-qw", "net.ipv4.ip_forward=1", ns=NS_R)
    sh("tc", "qdisc", "add", "dev", "r1", "root", "handle", "1:", "htb", "default", "1", ns=NS_R)
    sh("tc", "class", "add", "dev", "r1", "parent", "1:", "classid", "1:1", "htb", "rate", rate, "ceil", rate, ns=NS_R)
    sh("tc", "qdisc", "add", "dev", "r1", "parent", "1:1", "handle", "10:", "pfifo", "limit", str(buffer), ns=NS_R)
    _delay_line = subprocess.Popen(
        ["ip", "netns", "exec", NS_W, sys.executable, "-c", DELAY_LINE, "w0", "w1", str(delay)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert _delay_line.stdout and _delay_line.stdout.readline().strip() == "bridging"


_delay_line: subprocess.Popen | None = None

# ethtool -K DEV tx off, without ethtool: SIOCETHTOOL with ETHTOOL_STXCSUM.
TX_CSUM_OFF = r"""
import array, fcntl, socket, struct, sys
cmd = array.array("I", [0x17, 0])
ifr = struct.pack("16sP16x", sys.argv[1].encode(), cmd.buffer_info()[0])
s = socket.socket()
fcntl.ioctl(s.fileno(), 0x8946, ifr)
"""

DELAY_LINE = r"""
import heapq, os, select, socket, sys, time
fwd, back, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
# A wire keeps time: real-time priority, or a loaded machine's scheduler adds its own delays.
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
def bound(dev):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    s.bind((dev, 0))
    return s
a, b = bound(fwd), bound(back)
q, seq = [], 0
print("bridging", flush=True)
while True:
    wait = max(0.0, q[0][0] - time.monotonic()) if q else None
    for s in select.select([a, b], [], [], wait)[0]:
        frame, addr = s.recvfrom(65536)
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        if s is a:
            b.send(frame)
        else:
            seq += 1
            heapq.heappush(q, (time.monotonic() + delay, seq, frame))
    now = time.monotonic()
    while q and q[0][0] <= now:
        a.send(heapq.heappop(q)[2])
"""


def bottleneck() -> dict[str, int]:
    """Bytes sent and packets dropped at the bottleneck (the htb root and its pfifo)."""
    qd = json.loads(sh("tc", "-s", "-j", "qdisc", "show", "dev", "r1", ns=NS_R))
    root = next(q for q in qd if q["kind"] == "htb")
    return {"bytes": root["bytes"], "drops": sum(q.get("drops", 0) for q in qd)}


def new_cgroup(name: str) -> Path:
    cg = cgroup_root() / f"{TAG}-{name}"
    cg.mkdir(exist_ok=True)
    return cg


SENDER = r"""
import json, socket, struct, sys, time
cc, dst, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
s = socket.socket()
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 18)
s.connect((dst, 5001))
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", 0, 20000))
buf, t0, trace, nxt = b"x" * 16384, time.monotonic(), [], 0.0
while (t := time.monotonic() - t0) < secs:
    try:
        s.send(buf)
    except (BlockingIOError, socket.timeout):
        pass
    if t >= nxt:
        i = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
        trace.append([round(t, 3), struct.unpack_from("I", i, 80)[0], struct.unpack_from("I", i, 68)[0],
                      struct.unpack_from("I", i, 100)[0]])
        nxt += 0.05
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # end now: RST, no drain
s.close()
print(json.dumps(trace))
"""

RECEIVER = r"""
import socket, sys
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("0.0.0.0", 5001)); l.listen(4)
print("listening", flush=True)
c, _ = l.accept()
n = 0
while True:
    try:
        b = c.recv(1 << 16)
    except ConnectionResetError:
        break
    if not b:
        break
    n += len(b)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)  # an ACK per packet, as racc's receiver
print(n, flush=True)
"""


def in_cgroup(cg: Path, ns: str, script: str, *args: str) -> subprocess.Popen:
    """A Python program in network namespace `ns` whose sockets belong to cgroup `cg`."""
    cmd = f'echo $$ > "{cg}/cgroup.procs" && exec ip netns exec {ns} "{sys.executable}" -c "$0" "$@"'
    return subprocess.Popen(["sh", "-c", cmd, script, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def bulk(cg_send: Path, cg_recv: Path, cc: str, secs: float, measure_from: float) -> dict:
    """One bulk flow for `secs`; the bottleneck's utilisation over [measure_from, secs − 0.5] of
    the sender's time (the window ends before the sender stops), its drops over the whole run,
    and the sender's TCP_INFO trace [t, cwnd, rtt µs, total retransmits]."""
    recv = in_cgroup(cg_recv, NS_D, RECEIVER)
    assert recv.stdout and recv.stdout.readline().strip() == "listening", recv.stderr.read() if recv.stderr else ""
    send = in_cgroup(cg_send, NS_S, SENDER, cc, DST, str(secs))
    t0 = time.monotonic()
    time.sleep(measure_from)
    a, ta = bottleneck(), time.monotonic()
    time.sleep(max(0.0, t0 + secs - 0.5 - time.monotonic()))
    b, tb = bottleneck(), time.monotonic()
    out, err = send.communicate(timeout=secs + 30)
    if send.returncode != 0:
        recv.kill()
        recv.communicate()
        raise RuntimeError(f"sender failed: {err.strip().splitlines()[-1] if err.strip() else send.returncode}")
    recv.communicate(timeout=30)
    return {"bytes": b["bytes"] - a["bytes"], "secs": tb - ta, "drops": bottleneck()["drops"], "trace": json.loads(out)}
