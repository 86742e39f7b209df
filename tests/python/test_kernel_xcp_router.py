"""The XCP router program on crafted frames (BPF_PROG_TEST_RUN through `bpftool prog run`): it
lowers H_feedback in place with a valid TCP checksum (bpf_l4_csum_replace: options are inside the
checksum), leaves a lower header alone, and counts and ignores a forged or malformed header (our
ExID with a wrong length, H_rtt above 1 s, H_cwnd below the packet). Root only, skipped with
`bpf.available()`'s reason.

The port is configured so that every interval after the first is overloaded: C = 80 b/s and
d = 1 ms, so y is far above C and φ = α·d·(C − y) − β·Q is negative: feedback below 0."""

from __future__ import annotations

import json
import struct
import subprocess
import time
from pathlib import Path

import pytest
from racc.kernel import bpf, xcc

REASON = bpf.available()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"kernel BPF unavailable: {REASON}")

PIN = Path("/sys/fs/bpf/kern36ch-xcp-router-test")
INF = 0x7FFFFFFF
SRC, DST = bytes([10, 36, 1, 1]), bytes([10, 36, 2, 2])


def fold(s: int) -> int:
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def csum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    return ~fold(sum(struct.unpack(f"!{len(data) // 2}H", data))) & 0xFFFF


def xcp_opt(rtt_us: int, cwnd: int, fb: int, length: int = 16) -> bytes:
    body = struct.pack("!BBHIIi", 253, length, 0x7863, rtt_us, cwnd, fb)
    return body[:length] + b"\x01" * ((4 - length % 4) % 4)


def frame(opt: bytes, payload: int = 100) -> bytes:
    doff = (20 + len(opt)) // 4
    tcp = bytearray(struct.pack("!HHIIBBHHH", 40000, 5001, 1, 0, doff << 4, 0x18, 65535, 0, 0) + opt + b"x" * payload)
    pseudo = SRC + DST + struct.pack("!BBH", 0, 6, len(tcp))
    tcp[16:18] = struct.pack("!H", csum(pseudo + bytes(tcp)))
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 7, 0, 64, 6, 0, SRC, DST))
    ip[10:12] = struct.pack("!H", csum(bytes(ip)))
    return b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + bytes(ip) + bytes(tcp)


def tcp_ok(out: bytes) -> bool:
    tcp = out[34:]
    return csum(SRC + DST + struct.pack("!BBH", 0, 6, len(tcp)) + tcp) == 0


def feedback(out: bytes) -> int:
    return struct.unpack("!i", out[34 + 20 + 12 : 34 + 20 + 16])[0]


def run(prog: Path, data: bytes, tmp: Path) -> bytes:
    (tmp / "in").write_bytes(data)
    subprocess.run(
        ["bpftool", "prog", "run", "pinned", str(prog), "data_in", str(tmp / "in"), "data_out", str(tmp / "out")],
        check=True, capture_output=True,
    )  # fmt: skip
    return (tmp / "out").read_bytes()


def counters() -> dict[str, int]:
    dump = json.loads(
        subprocess.run(["bpftool", "-j", "map", "dump", "pinned", str(PIN / "counters")], capture_output=True,
                       check=True).stdout
    )  # fmt: skip
    per_slot = {e["formatted"]["key"]: sum(v["value"] for v in e["formatted"]["values"]) for e in dump}
    return {name: per_slot.get(i, 0) for i, name in enumerate(xcc.XCP_ROUTER_COUNTERS)}


@pytest.fixture
def router(tmp_path):
    import kernel_path

    obj = bpf.build()["xcp_router"]
    with kernel_path.exclusive():
        subprocess.run(["rm", "-rf", str(PIN)], check=False)
        PIN.mkdir()
        try:
            subprocess.run(
                ["bpftool", "prog", "load", str(obj), str(PIN / "prog"), "type", "classifier", "pinmaps", str(PIN)],
                check=True, capture_output=True,
            )  # fmt: skip
            cfg = xcc.xcp_router_config({"initial_d": 0.001}, 80)
            value = [f"{b:02x}" for b in struct.pack(f"<{len(cfg)}Q", *cfg)]
            subprocess.run(
                ["bpftool", "map", "update", "pinned", str(PIN / "router_config"), "key", "hex", "00", "00", "00",
                 "00", "value", "hex", *value],
                check=True, capture_output=True,
            )  # fmt: skip
            yield lambda data: run(PIN / "prog", data, tmp_path)
        finally:
            subprocess.run(["rm", "-rf", str(PIN)], check=False)


def test_feedback_rewritten_in_place_with_a_valid_checksum(router):
    first = router(frame(xcp_opt(10_000, 10_000, INF)))
    assert tcp_ok(first) and feedback(first) == 0, "before the first interval ends: no budget, feedback 0"
    for _ in range(3):
        # Each packet opens a control interval of its own (d is the packets' H_rtt, 10 ms): the
        # interval before it held one packet, far above the 80 b/s port. Within one interval the
        # first packet spends the negative residual (App. A) and the next would get 0, so the
        # wait, not bpftool's start-up time, decides which interval a packet falls in.
        time.sleep(0.02)
        out = router(frame(xcp_opt(10_000, 10_000, INF)))
        assert tcp_ok(out), "the TCP checksum must stay valid"
        assert feedback(out) < 0, "an overloaded port's feedback is negative"
        assert out[:34] == frame(xcp_opt(10_000, 10_000, INF))[:34], "the IP header is untouched"
    lower = frame(xcp_opt(10_000, 10_000, -(10**8)))
    assert router(lower) == lower, "a header already lower is left alone"
    c = counters()
    assert c["fb_written"] == 4 and c["xcp_data"] == 5 and c["malformed"] == 0 and c["csum_fail"] == 0, c


def test_forged_or_malformed_headers_are_counted_and_ignored(router):
    router(frame(xcp_opt(10_000, 10_000, INF)))
    time.sleep(0.005)
    forged = [
        frame(xcp_opt(10_000, 10_000, INF, length=12)),  # our ExID, a wrong length
        frame(xcp_opt(2_000_000, 10_000, INF)),  # H_rtt above 1 s
        frame(xcp_opt(10_000, 10, INF)),  # H_cwnd below the packet
    ]
    for f in forged:
        assert router(f) == f, "a forged header is never rewritten"
    c = counters()
    assert c["malformed"] == 3 and c["fb_written"] == 1 and c["xcp_data"] == 1, c
    plain = frame(b"")
    assert router(plain) == plain, "a segment without the option passes untouched"
