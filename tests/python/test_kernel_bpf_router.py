"""The router program on crafted packets (BPF_PROG_TEST_RUN through `bpftool prog run`): it raises
ECT codes to the port's code with a valid IP checksum, never lowers one, never touches Not-ECT
(RFC 3168; racc-proto `VcpRouter::mark`). Root only, skipped with `bpf.available()`'s reason.

The port is configured so that one packet overloads it for good: t_p = t_q = 1 ms and C = 80 b/s,
so γ·C·t_p/8 is 0.01 byte and the virtual queue takes 15 s to drain one packet. The first packet
starts the timers (its interval only opens the first measurement, code 01); any packet 2 ms or
more later finds ρ far above 1 (the first packet's bytes, then the queue term): code 11."""

from __future__ import annotations

import json
import struct
import subprocess
import time
from pathlib import Path

import pytest
from racc.kernel import bpf

REASON = bpf.available()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"kernel BPF unavailable: {REASON}")

PIN = Path("/sys/fs/bpf/kernel36b-router-test")


def checksum(header: bytes) -> int:
    s = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def frame(ecn: int, payload: int = 100) -> bytes:
    tcp = struct.pack("!HHIIBBHHH", 40000, 5001, 1, 0, 5 << 4, 0x18, 65535, 0, 0) + b"x" * payload
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, ecn, 20 + len(tcp), 7, 0, 64, 6, 0,
                               bytes([10, 36, 1, 1]), bytes([10, 36, 2, 2])))  # fmt: skip
    ip[10:12] = struct.pack("!H", checksum(bytes(ip)))
    return b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + bytes(ip) + tcp


def run(prog: Path, data: bytes, tmp: Path) -> bytes:
    (tmp / "in").write_bytes(data)
    subprocess.run(
        ["bpftool", "prog", "run", "pinned", str(prog), "data_in", str(tmp / "in"), "data_out", str(tmp / "out")],
        check=True, capture_output=True,
    )  # fmt: skip
    return (tmp / "out").read_bytes()


@pytest.fixture
def router(tmp_path):
    import kernel_path

    obj = bpf.build()["vcp_router"]
    with kernel_path.exclusive():
        subprocess.run(["rm", "-rf", str(PIN)], check=False)
        PIN.mkdir()
        try:
            subprocess.run(
                ["bpftool", "prog", "load", str(obj), str(PIN / "prog"), "type", "classifier", "pinmaps", str(PIN)],
                check=True, capture_output=True,
            )  # fmt: skip
            cfg = bpf.router_config({"t_p": 0.001, "t_q": 0.001}, 80)
            value = [f"{b:02x}" for b in struct.pack(f"<{len(cfg)}Q", *cfg)]
            subprocess.run(
                ["bpftool", "map", "update", "pinned", str(PIN / "lf_config"), "key", "hex", "00", "00", "00", "00",
                 "value", "hex", *value],
                check=True, capture_output=True,
            )  # fmt: skip
            yield lambda data: run(PIN / "prog", data, tmp_path)
        finally:
            subprocess.run(["rm", "-rf", str(PIN)], check=False)


def ecn_and_checksum_ok(out: bytes) -> tuple[int, bool]:
    ip = out[14:34]
    return ip[1] & 3, checksum(ip) == 0


def test_marks_raise_only_ect_with_a_valid_checksum(router):
    assert ecn_and_checksum_ok(router(frame(1))) == (1, True), "before the first full t_p: code 01, unchanged"
    time.sleep(0.005)
    for ecn, want in ((1, 3), (2, 3), (3, 3), (0, 0)):
        out = router(frame(ecn))
        assert ecn_and_checksum_ok(out) == (want, True), f"ECN {ecn:02b} in, overloaded port"
        assert out[34:] == frame(ecn)[34:], "the TCP segment is untouched"
    counters = json.loads(
        subprocess.run(["bpftool", "-j", "map", "dump", "pinned", str(PIN / "counters")], capture_output=True,
                       check=True).stdout
    )  # fmt: skip
    per_slot = {e["formatted"]["key"]: sum(v["value"] for v in e["formatted"]["values"]) for e in counters}
    assert per_slot[2] == 2, "two codes raised (01 and 10 to 11)"
    assert per_slot[6] == 1, "one Not-ECT packet left alone"
