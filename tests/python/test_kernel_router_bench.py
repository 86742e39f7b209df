"""``racc kernel bench`` (racc.kernel.router_bench): its frames are well-formed data packets, its
line rates are Ethernet's, and on a machine with kernel BPF it runs each router and reports its
keys. No timing is asserted: the numbers are the benchmark's, not the tests'."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from one_line import refused_in_process
from racc.cli import main
from racc.kernel import bpf, router_bench
from racc.kernel.machine import NETNS_DIR, run_tag

REASON = bpf.available()
needs_bpf = pytest.mark.skipif(REASON is not None, reason=f"kernel BPF unavailable: {REASON}")


def _sum16(b: bytes) -> int:
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


@pytest.mark.parametrize("protocol", ["vcp", "xcp", "rcp"])
@pytest.mark.parametrize("size", router_bench.FRAME_SIZES)
def test_frames_are_data_packets_with_valid_checksums_and_the_protocol_s_signal(protocol, size):
    f = router_bench.frame_for(protocol, size)
    ip, ihl = f[14:], (f[14] & 15) * 4
    tcp = ip[ihl:]
    assert f[12:14] == b"\x08\x00" and len(f) >= size
    assert struct.unpack("!H", ip[2:4])[0] == len(ip)
    assert _sum16(ip[:ihl]) == 0xFFFF  # the header checksums to all ones
    pseudo = ip[12:20] + struct.pack("!BBH", 0, 6, len(tcp))
    assert _sum16(pseudo + tcp) == 0xFFFF
    doff = (tcp[12] >> 4) * 4
    assert len(tcp) > doff  # data, not a pure ACK
    exids = {"xcp": b"\xfd\x10\x78\x63", "rcp": b"\xfd\x0c\x72\x70"}
    if protocol in exids:
        assert exids[protocol] in tcp[20:doff] and ip[1] & 3 == 0
    else:
        assert ip[1] & 3 == 1  # ECT(1)
    assert (b"\x08\x0a" in tcp[20:doff]) == (size > 60)  # timestamps, but on the least frame


def test_line_rate_counts_fcs_preamble_and_gap():
    assert round(router_bench.line_rate_pps(1514)) == 812_744  # 10e9 / (1538 * 8) = 812,743.8
    assert round(router_bench.line_rate_pps(60)) == 14_880_952


def test_an_unknown_router_is_refused_naming_it():
    with pytest.raises(ValueError, match="'nope' has no router module"):
        router_bench.run(["nope"], veth=False)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [(["--repeat", "0"], "--repeat: must be at least 1"), (["--seconds", "0"], "--seconds above 0")],
)
def test_bad_arguments_are_refused_in_one_line_before_anything_runs(args, fragment, capsys, monkeypatch):
    monkeypatch.setattr(router_bench, "run", lambda *a, **k: pytest.fail("the benchmark ran"))
    refused_in_process(capsys, main(["kernel", "bench", *args]), fragment)


def test_without_kernel_bpf_the_command_says_why_in_one_line(capsys, monkeypatch):
    monkeypatch.setattr(bpf, "available", lambda: "not root (BPF programs, namespaces and cgroups need root)")
    monkeypatch.setattr(router_bench, "run", lambda *a, **k: pytest.fail("the benchmark ran"))
    refused_in_process(capsys, main(["kernel", "bench"]), "not root", status=1)


@needs_bpf
@pytest.mark.parametrize("protocol", router_bench.routers())
def test_every_router_runs_every_packet_and_reports_its_cost(protocol):
    r = router_bench.prog_cost(protocol, 1514, repeat=1000, rounds=2, fresh=3)
    assert r["counters"]["packets"] == 2000  # every run went through the program
    assert len(r["ns"]) == 2 and r["ns_per_packet"] > 0 and r["ns_fresh"] > 0
    assert r["frame_bytes"] == 1514 and r["line_rate_mpps"] == pytest.approx(0.8127, abs=1e-4)
    assert r["mpps_per_core"] == pytest.approx(1e3 / r["ns_per_packet"])


@needs_bpf
def test_a_transfer_through_one_router_reports_its_cpu_and_leaves_nothing():
    row = router_bench.throughput("vcp", seconds=1, flows=1, gso=True)
    assert set(row) >= {"router", "gso", "gbps", "packets", "skbs", "ns_per_skb", "ns_per_packet"}
    assert row["gbps"] > 0 and row["skbs"] > 0 and row["packets"] > 0
    assert row["ns_per_skb"] > 0 and row["ns_per_packet"] > 0
    assert not list(Path(NETNS_DIR).glob(f"{run_tag()}-*"))
