//! Replays the wire fuzz corpus (`fuzz/corpus/wire`: what `cargo fuzz run wire` kept, and the
//! v2 seeds below) through every parser on the stable toolchain, as the fuzz target does: no
//! input panics, and what a parser accepts round-trips (`racc_proto::wire::selfcheck::check`).
//!
//! The seeds are valid wire-format-v2 inputs written by the wire layer's own emit functions, so
//! that the fuzzer starts from packets the parsers accept: a racc datagram (shim, transport
//! header, congestion header) of every packet kind with every congestion header, over TCP and
//! DCCP, the same as whole IPv4/UDP packets, and each transport and congestion header alone.
//! `cargo test -p racc-proto --test wire_corpus -- --ignored` rewrites them (after a wire format
//! change); the suite checks that the corpus holds them as the emit functions write them now.

use racc_proto::packet::{ecn, AckVector, CongHeader, DccpHeader, Direction, Kind, Packet, SackBlocks, TcpHeader};
use racc_proto::wire::datagram::{self, IpFields};
use racc_proto::wire::{cong, dccp, ip_packet, ipv4, shim, tcp};
use std::path::PathBuf;

fn corpus_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus/wire"))
}

const KINDS: [(Kind, &str); 6] = [
    (Kind::Data, "data"),
    (Kind::Ack, "ack"),
    (Kind::Syn, "syn"),
    (Kind::SynAck, "synack"),
    (Kind::Ref, "ref"),
    (Kind::Fin, "fin"),
];

fn congestion_headers() -> [(CongHeader, &'static str); 5] {
    [
        (CongHeader::None, "none"),
        (CongHeader::Xcp { rtt_us: 40_000, cwnd: 64_000, feedback: 1500.5, reverse_feedback: -250.0 }, "xcp"),
        (CongHeader::Rcp { rate: 2_500_000, rtt_us: 40_000 }, "rcp"),
        (CongHeader::JetMax { rtt_us: 40_000, ipt_ns: 480_000, cur_id: 3, fb_id: 7, feedback: 1_250_000 }, "jetmax"),
        (CongHeader::Qfcp { rtt_us: 40_000, rate_request: 3_000_000, rate_feedback: 2_000_000 }, "qfcp"),
    ]
}

fn tcp_header(kind: Kind) -> TcpHeader {
    let mut sack = SackBlocks::default();
    if kind == Kind::Ack {
        sack.push(3_000, 4_000);
        sack.push(6_000, 7_000);
    }
    TcpHeader {
        src_port: 10_000,
        dst_port: 10_001,
        seq: 1_000,
        ack: 2_000,
        flags: 0x10,
        echo: 0b101,
        window: 65_535,
        checksum: 0,
        ts_val: 1_234_567_890,
        ts_ecr: 1_234_000_000,
        sack,
    }
}

fn dccp_header(kind: Kind) -> DccpHeader {
    let mut ack_vector = AckVector::default();
    if kind == Kind::Ack {
        ack_vector.push(0, 5);
        ack_vector.push(3, 2);
    }
    DccpHeader { seq: (1 << 47) + 5, ack: 99, ack_vector, ack_ratio: 2, echo: 1, ts_val: 77_000, ts_ecr: 76_000 }
}

/// One packet of every shape: each kind with each congestion header, over TCP and DCCP.
fn packets() -> Vec<(String, Packet)> {
    let mut out = Vec::new();
    for (c, cname) in congestion_headers() {
        for (kind, kname) in KINDS {
            let (size, payload) = if kind == Kind::Data { (1000, 900) } else { (40, 0) };
            let mut p = Packet::tcp(5, kind, size, payload, tcp_header(kind));
            p.cong = c;
            p.ecn = ecn::ECT1;
            p.ip_id = 0x1234;
            p.dir = if matches!(kind, Kind::Ack | Kind::SynAck) { Direction::Return } else { Direction::Forward };
            out.push((format!("tcp-{kname}-{cname}"), p));
        }
        for (kind, kname) in [(Kind::Data, "data"), (Kind::Ack, "ack")] {
            let (size, payload) = if kind == Kind::Data { (1024, 960) } else { (60, 0) };
            let mut p = Packet::dccp(6, kind, size, payload, dccp_header(kind));
            p.cong = c;
            p.ecn = ecn::ECT0;
            p.dir = if kind == Kind::Ack { Direction::Return } else { Direction::Forward };
            out.push((format!("dccp-{kname}-{cname}"), p));
        }
    }
    out
}

/// Every seed: (file name, bytes).
fn seeds() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut buf = [0u8; 2048];
    let addrs = [[10, 99, 0, 1], [10, 99, 0, 2]];
    for (name, p) in packets() {
        let n = datagram::emit(&p, &mut buf).expect("a packet the protocols send emits");
        out.push((format!("v2-datagram-{name}"), buf[..n].to_vec()));
        // A whole packet, as a host sends it: the headers, then zeros up to the IPv4 length.
        let (n, total) = ip_packet::emit(&p, addrs, &mut buf).expect("emits as IPv4");
        buf[n..total].fill(0);
        out.push((format!("v2-ipv4-{name}"), buf[..total].to_vec()));
    }
    for (kind, kname) in [(Kind::Data, "data"), (Kind::Ack, "ack")] {
        let n = tcp::emit(&tcp_header(kind), &mut buf).unwrap();
        out.push((format!("v2-tcp-header-{kname}"), buf[..n].to_vec()));
        let n = dccp::emit(&dccp_header(kind), &mut buf).unwrap();
        out.push((format!("v2-dccp-header-{kname}"), buf[..n].to_vec()));
    }
    for (c, cname) in congestion_headers().into_iter().skip(1) {
        let n = cong::emit(&c, Kind::Data, &mut buf).unwrap();
        out.push((format!("v2-cong-{cname}"), buf[..n].to_vec()));
    }
    out
}

#[test]
fn every_wire_corpus_input_parses_or_errs_without_panicking() {
    let mut inputs = 0;
    for entry in std::fs::read_dir(corpus_dir()).expect("the wire fuzz corpus") {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        racc_proto::wire::selfcheck::check(&bytes);
        inputs += 1;
    }
    assert!(inputs >= 20, "the corpus has only {inputs} inputs");
}

#[test]
fn the_wire_corpus_holds_a_valid_v2_seed_of_every_packet_shape() {
    let seeds = seeds();
    // 5 congestion headers x (6 TCP kinds + 2 DCCP kinds) x (datagram, IPv4), 4 transport
    // headers alone, 4 congestion headers alone.
    assert_eq!(seeds.len(), 5 * 8 * 2 + 4 + 4);
    let packets = packets();
    for (name, bytes) in &seeds {
        let on_disk = std::fs::read(corpus_dir().join(name)).unwrap_or_else(|e| {
            panic!("fuzz/corpus/wire/{name}: {e} (write the seeds: cargo test -p racc-proto --test wire_corpus -- --ignored)")
        });
        assert_eq!(&on_disk, bytes, "{name} is not what the wire layer emits now (rewrite the seeds)");
    }
    // What each seed is: the datagrams and IPv4 packets parse back to the packet they came from
    // (in wire format version 2), the headers alone to their header.
    for (name, p) in &packets {
        let d = &seeds.iter().find(|(n, _)| *n == format!("v2-datagram-{name}")).unwrap().1;
        assert_eq!(d[2], shim::VERSION, "{name}");
        assert_eq!(shim::VERSION, 2);
        assert_eq!(datagram::parse(d, IpFields::of(p)), Ok((*p, d.len())), "{name}");
        let ip = &seeds.iter().find(|(n, _)| *n == format!("v2-ipv4-{name}")).unwrap().1;
        let (hdr, at) = ipv4::Ipv4Repr::parse(ip).expect("an IPv4 header");
        assert_eq!((hdr.ident, hdr.ecn(), ip.len()), (p.ip_id, p.ecn, ip_packet::total_len(p)), "{name}");
        let udp = at + ip_packet::UDP_LEN;
        assert_eq!(&ip[udp..udp + d.len()], &d[..], "{name}: IPv4 + UDP + the datagram");
    }
    for (name, bytes) in seeds.iter().filter(|(n, _)| n.starts_with("v2-tcp-header") || n.starts_with("v2-dccp-header"))
    {
        let ok = if name.contains("tcp") { tcp::parse(bytes).is_ok() } else { dccp::parse(bytes).is_ok() };
        assert!(ok, "{name}");
    }
    for (name, bytes) in seeds.iter().filter(|(n, _)| n.starts_with("v2-cong-")) {
        assert!(matches!(cong::parse(bytes), Ok((_, Some(Kind::Data), n)) if n == bytes.len()), "{name}");
    }
}

/// Writes the v2 seeds into `fuzz/corpus/wire` (run after a wire format change).
#[test]
#[ignore = "writes the fuzz corpus' v2 seeds; run by hand"]
fn write_v2_wire_seeds() {
    for (name, bytes) in seeds() {
        std::fs::write(corpus_dir().join(&name), bytes).unwrap();
    }
}
