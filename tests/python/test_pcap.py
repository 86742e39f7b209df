"""``racc run --pcap`` (issue 17 item 6): the simulator's capture of a port, read back here by a
minimal pcapng reader written from the format's specification (independent of the Rust writer):
one interface named after the port, as many packets as the port sent, IPv4/UDP headers with the
flow's addresses, timestamps in simulated nanoseconds."""

import json
import struct

from conftest import needs_core

SCENARIO = """
name = "pcap-cli"
duration = "1s"
seed = 2
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { capacity = "5Mbps", delay = "10ms" }
access = { capacity = "50Mbps", delay = "1ms" }
[[flows]]
protocol = "newreno"
src = "s0"
dst = "d0"
"""


def read_pcapng(path):
    """(interface names, [(interface id, timestamp ns, captured bytes, original length)])."""
    data = path.read_bytes()
    assert struct.unpack_from("<I", data, 0)[0] == 0x0A0D0D0A  # section header block
    assert struct.unpack_from("<I", data, 8)[0] == 0x1A2B3C4D  # little-endian byte-order magic
    names, packets, at = [], [], 0
    while at < len(data):
        kind, length = struct.unpack_from("<II", data, at)
        body = data[at + 8 : at + length - 4]
        if kind == 1:  # interface description: linktype, reserved, snaplen, options
            assert struct.unpack_from("<H", body, 0)[0] == 101  # LINKTYPE_RAW
            opts, name = body[8:], None
            while len(opts) >= 4:
                code, olen = struct.unpack_from("<HH", opts, 0)
                if code == 2:
                    name = opts[4 : 4 + olen].decode()
                if code == 0:
                    break
                opts = opts[4 + (olen + 3) // 4 * 4 :]
            names.append(name)
        elif kind == 6:  # enhanced packet
            iface, hi, lo, caplen, orig = struct.unpack_from("<IIIII", body, 0)
            packets.append((iface, (hi << 32) | lo, body[20 : 20 + caplen], orig))
        at += length
    return names, packets


@needs_core
def test_run_pcap_writes_the_ports_packets(tmp_path, racc_cli):
    (tmp_path / "s.toml").write_text(SCENARIO)
    cap = tmp_path / "bottleneck.pcapng"
    p = racc_cli("run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "out"), "--no-plots", "-q",
                 "--pcap", str(cap), "--pcap-port", "r0->r1")
    assert p.returncode == 0, p.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    port = next(x for x in summary["ports"] if x["name"] == "r0->r1")
    assert summary["run"]["pcap"] == {"file": str(cap), "packets": {"r0->r1": port["tx_pkts"]}, "error": None}
    names, packets = read_pcapng(cap)
    assert names == ["r0->r1"]
    assert len(packets) == port["tx_pkts"] > 100
    times = [t for _, t, _, _ in packets]
    assert times == sorted(times) and 0 < times[0] and times[-1] <= 1_000_000_000
    for _, _, b, orig in packets:
        assert b[0] == 0x45 and b[9] == 17 and struct.unpack_from(">H", b, 2)[0] == orig
        assert b[28:30] == b"RC"  # the racc shim follows the UDP header
    # Data packets go s0 -> d0 on this port: every source address is one host's.
    assert len({bytes(b[12:16]) for _, _, b, _ in packets}) == 1


@needs_core
def test_an_unknown_pcap_port_is_refused(tmp_path, racc_cli):
    (tmp_path / "s.toml").write_text(SCENARIO)
    p = racc_cli("run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "out"), "-q",
                 "--pcap", str(tmp_path / "x.pcapng"), "--pcap-port", "nowhere")
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "nowhere" in lines[0] and "r0->r1" in lines[0], p.stderr
