"""The kernel runtime's traffic program: one process per host, in the host's namespace and its
per-run cgroup leaf, running that host's flow ends on the kernel's own TCP with ordinary sockets.

- A **sender** connects from port ``20000 + flow`` (the receiver knows the flow by it: no bytes
  of its own on the wire), sets ``TCP_CONGESTION`` on the socket, and either sends without end
  (a bulk flow, until its stop time or the run's end) or sends ``size`` bytes, shuts its side
  and waits for the receiver's close: the flow's completion time (a request whose response is
  the close, as Poisson/Pareto flows are run).
- A **receiver** accepts on port 5001, reads to the end and closes.
- Every ``interval`` the process reads ``TCP_INFO`` of each open sending socket (bytes acked,
  window, smoothed RTT, delivery rate): the flows' series come from the kernel's own counters.

``python -m racc.kernel.traffic SPEC.json --parent PID --netns NS``: prints ``ready`` once listening, reads the
run's time zero from stdin (CLOCK_MONOTONIC, one clock for all namespaces), writes ``SPEC.json.out`` at
``t0 + duration`` (or on SIGTERM) and exits.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import struct
import sys
import threading
import time
from typing import Any

from racc.kernel.machine import die_with_parent, setns

TCP_CONGESTION = 13
TCP_INFO = 11
LISTEN_PORT = 5001
BASE_PORT = 20000
CHUNK = 64 * 1024


def tcp_info(s: socket.socket) -> dict[str, float] | None:
    """The fields of ``struct tcp_info`` (linux/tcp.h) the results use; None once the socket is gone."""
    try:
        b = s.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 232)
    except OSError:
        return None
    if len(b) < 168:
        return None
    snd_mss = struct.unpack_from("I", b, 16)[0]
    rtt_us, _rttvar, _ssthresh, cwnd = struct.unpack_from("IIII", b, 68)
    total_retrans = struct.unpack_from("I", b, 100)[0]
    pacing_rate, _max_pacing, bytes_acked, _bytes_received = struct.unpack_from("QQQQ", b, 104)
    min_rtt_us = struct.unpack_from("I", b, 148)[0]
    delivery_rate = struct.unpack_from("Q", b, 160)[0]
    return {
        "acked": bytes_acked,
        "cwnd_bytes": cwnd * snd_mss,
        "srtt_s": rtt_us * 1e-6,
        "min_rtt_s": min_rtt_us * 1e-6,
        "rate_bps": delivery_rate * 8.0,
        "pacing_bps": pacing_rate * 8.0 if pacing_rate < 2**63 else float("nan"),
        "retrans": total_retrans,
    }


class Host:
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec
        self.t0 = float(spec["t0"])
        self.lock = threading.Lock()
        self.open: dict[int, socket.socket] = {}
        self.last: dict[int, dict[str, float]] = {}
        self.completions: list[dict[str, Any]] = []
        self.received: dict[int, int] = {}
        self.errors: list[str] = []
        self.cc: dict[int, str] = {}
        self.samples: dict[str, list] = {
            k: [] for k in ("time_s", "flow", "acked", "cwnd_bytes", "srtt_s", "rate_bps", "pacing_bps", "retrans")
        }

    def now(self) -> float:
        return time.monotonic() - self.t0

    def sleep_until(self, t: float) -> None:
        d = t - self.now()
        if d > 0:
            time.sleep(d)

    # -- receiving ---------------------------------------------------------------------------

    def _accept(self, ls: socket.socket) -> None:
        while True:
            try:
                c, (_addr, port) = ls.accept()
            except OSError:
                return
            threading.Thread(target=self._drain, args=(c, port - BASE_PORT), daemon=True).start()

    def _drain(self, c: socket.socket, flow: int) -> None:
        buf = bytearray(CHUNK * 4)
        n = 0
        try:
            while True:
                k = c.recv_into(buf)
                if k == 0:
                    break
                n += k
        except OSError:
            pass
        finally:
            with self.lock:
                self.received[flow] = self.received.get(flow, 0) + n
            c.close()

    # -- sending -----------------------------------------------------------------------------

    def send(self, f: dict[str, Any]) -> None:
        fid = f["flow"]
        self.sleep_until(f["start"])
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, f["cc"].encode())
            # What the kernel says the socket runs (the results report this, not the request).
            cc = s.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).split(b"\0", 1)[0].decode()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((self.spec["addr"], BASE_PORT + fid))
            s.connect((f["dst"], LISTEN_PORT))
        except OSError as exc:
            # A receiver gone at the run's end refuses a flow started in its last moments: no error.
            if self.now() < float(self.spec["duration"]) - 0.05:
                with self.lock:
                    self.errors.append(f"flow {fid}: {exc.strerror or exc}")
            s.close()
            return
        with self.lock:
            self.open[fid] = s
            self.cc[fid] = cc
        data = bytes(CHUNK)
        stop = f.get("stop")
        size = f.get("size")
        try:
            if size:
                left = int(size)
                while left > 0:
                    left -= s.send(memoryview(data)[: min(left, CHUNK)])
                s.shutdown(socket.SHUT_WR)
                while s.recv(4096):
                    pass
                end = self.now()
                with self.lock:
                    self.completions.append({"flow": fid, "size_bytes": int(size), "start_s": f["start"], "end_s": end})
            else:
                if stop is not None:
                    s.settimeout(0.05)
                while stop is None or self.now() < stop:
                    try:
                        s.send(data)
                    except TimeoutError:
                        pass
        except OSError:
            pass
        with self.lock:
            info = tcp_info(s)
            if info is not None:
                self.last[fid] = info
            self.open.pop(fid, None)
        if size or stop is not None:
            s.close()

    # -- sampling ----------------------------------------------------------------------------

    def sample(self, t: float) -> None:
        with self.lock:
            socks = list(self.open.items())
        for fid, s in socks:
            info = tcp_info(s)
            if info is None:
                continue
            self.last[fid] = info
            if self.spec.get("record_flows", True):
                for k, v in (("time_s", t), ("flow", fid), ("acked", info["acked"]), ("cwnd_bytes", info["cwnd_bytes"]),
                             ("srtt_s", info["srtt_s"]), ("rate_bps", info["rate_bps"]),
                             ("pacing_bps", info["pacing_bps"]), ("retrans", info["retrans"])):  # fmt: skip
                    self.samples[k].append(v)

    def result(self, reached: float) -> dict[str, Any]:
        with self.lock:
            return {
                "host": self.spec["host"],
                "reached_s": reached,
                "samples": self.samples,
                "completions": self.completions,
                "received": {str(k): v for k, v in self.received.items()},
                "final": {str(k): v for k, v in self.last.items()},
                "errors": self.errors,
                "cc": {str(k): v for k, v in self.cc.items()},
            }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="racc.kernel.traffic")
    ap.add_argument("spec")
    ap.add_argument("--parent", type=int, required=True)
    ap.add_argument("--netns", required=True)
    args = ap.parse_args(argv)
    with open(args.spec, encoding="utf-8") as f:
        spec = json.load(f)
    if spec.get("cgroup"):
        # Before any socket: a socket belongs to the cgroup of the process that made it, and the
        # sockops program (the BPF controllers' echo option) is attached to this leaf.
        with open(os.path.join(spec["cgroup"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    die_with_parent(args.parent)
    # setns rather than `ip netns exec`, whose private /sys has no cgroup mount; threads made
    # afterwards inherit the namespace.
    setns(args.netns)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    if spec["listen"]:
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind((spec["addr"], LISTEN_PORT))
        ls.listen(1024)
    print("ready", flush=True)
    # The run's time zero (CLOCK_MONOTONIC, one clock in every namespace), once every host is ready.
    spec["t0"] = float(sys.stdin.readline())
    host = Host(spec)
    if spec["listen"]:
        threading.Thread(target=host._accept, args=(ls,), daemon=True).start()
    def launch() -> None:
        # One thread per flow, made at its start time (not thousands sleeping from time zero).
        for f in sorted(spec["send"], key=lambda f: f["start"]):
            host.sleep_until(f["start"] - 0.002)
            threading.Thread(target=host.send, args=(f,), daemon=True).start()

    threading.Thread(target=launch, daemon=True).start()
    interval = float(spec["interval"])
    duration = float(spec["duration"])
    k = 1
    reached = 0.0
    while not stop:
        t = min(k * interval, duration)
        host.sleep_until(t)
        if stop:
            break
        host.sample(round(t, 9))
        reached = t
        if t >= duration:
            break
        k += 1
    with open(args.spec + ".out", "w", encoding="utf-8") as f:
        json.dump(host.result(reached), f)
    sys.stdout.flush()
    os._exit(0)  # senders blocked in send() end with the process


if __name__ == "__main__":
    sys.exit(main())
