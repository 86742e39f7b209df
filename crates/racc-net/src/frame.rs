//! The router's view of a real IP packet: IPv4, UDP, racc datagram, turned into the [`Packet`]
//! the router modules work on, and the module's rewrites put back into the bytes (ECN bits,
//! IP ID, congestion header) with the IPv4 checksum fixed. Anything else is rejected with the
//! reason, never a panic.

use racc_proto::packet::Packet;
use racc_proto::wire::datagram::{self, IpFields};
use racc_proto::wire::ipv4::{self, Ipv4Repr, PROTO_UDP};
use racc_proto::wire::WireError;

/// The UDP header, and IPv4 + UDP headers (what a host's datagram is short of its wire size):
/// the wire layer's.
pub use racc_proto::wire::ip_packet::{IP_UDP_LEN, UDP_LEN};

/// Why a packet the router read is not forwarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reject {
    /// Not IPv4, or a broken IPv4 header.
    NotIpv4,
    /// IPv4 but not a whole UDP datagram (another protocol, a fragment, a bad UDP length).
    NotUdp,
    /// UDP, but not a racc datagram the wire layer accepts, or one whose IP total length is not
    /// what a racc host sends for its modelled size ([`wire_len`]).
    NotRacc,
    /// A racc datagram of another wire format version (`shim::VERSION`).
    BadVersion,
}

/// A packet the router accepted: the protocol's view and where its headers are in the bytes.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    pub pkt: Packet,
    pub src: [u8; 4],
    pub dst: [u8; 4],
    /// IPv4 header length.
    pub ihl: u16,
    /// racc header bytes at the start of the UDP payload.
    pub racc_len: u16,
}

/// Parse a packet read from a TUN device.
pub fn parse(buf: &[u8]) -> Result<Frame, Reject> {
    let (ip, ihl) = Ipv4Repr::parse(buf).map_err(|_| Reject::NotIpv4)?;
    // A fragment's UDP payload is not whole: racc never sends one (packets fit the MTU).
    if ip.protocol != PROTO_UDP || ip.flags_frag & 0x3fff != 0 {
        return Err(Reject::NotUdp);
    }
    let total = ihl + ip.payload_len as usize;
    let udp = &buf[ihl..total];
    if udp.len() < UDP_LEN {
        return Err(Reject::NotUdp);
    }
    let udp_len = u16::from_be_bytes([udp[4], udp[5]]) as usize;
    if udp_len < UDP_LEN || udp_len > udp.len() {
        return Err(Reject::NotUdp);
    }
    let fields = IpFields { ecn: ip.ecn(), ip_id: ip.ident };
    let (pkt, racc_len) = datagram::parse(&udp[UDP_LEN..udp_len], fields).map_err(|e| match e {
        WireError::BadVersion(_) => Reject::BadVersion,
        _ => Reject::NotRacc,
    })?;
    // The headers' bytes include the run's trailer (`auth.rs`), in a data packet's padding.
    if udp_len != udp.len() || total != wire_len(pkt.size, ihl + UDP_LEN + racc_len + crate::auth::TRAILER) {
        return Err(Reject::NotRacc);
    }
    Ok(Frame { pkt, src: ip.src, dst: ip.dst, ihl: ihl as u16, racc_len: racc_len as u16 })
}

/// The IP total length of a racc packet of modelled size `size` whose headers (IPv4, UDP, racc
/// and the run's trailer) take `headers` bytes: padded up to its size, or its headers where they exceed it (a
/// pure ACK, modelled at 40 bytes). The router accounts the modelled size (`Packet::size`, from
/// the shim), never this, so that the emulated ports serialise and queue what the simulator's do.
pub fn wire_len(size: u32, headers: usize) -> usize {
    (size as usize).max(headers)
}

/// Write what a router module changed in `pkt` back into `buf` (the bytes `f` was parsed
/// from): ECN bits and IP ID with the header checksum fixed, the racc headers re-emitted in
/// place, and the UDP checksum set to 0 ("none", allowed in IPv4, RFC 768), since the payload
/// may have changed. Fails if the headers would change length (a module never does that).
pub fn write_back(buf: &mut [u8], f: &Frame, pkt: &Packet) -> Result<(), WireError> {
    if pkt.ecn != f.pkt.ecn {
        ipv4::set_ecn(buf, pkt.ecn)?;
    }
    if pkt.ip_id != f.pkt.ip_id {
        ipv4::set_ident(buf, pkt.ip_id)?;
    }
    let at = f.ihl as usize + UDP_LEN;
    let end = at + f.racc_len as usize;
    if pkt.transport != f.pkt.transport || pkt.cong != f.pkt.cong {
        let n = datagram::emit(pkt, &mut buf[at..end])?;
        if n != f.racc_len as usize {
            return Err(WireError::BadLength { field: "re-emitted racc headers", value: n });
        }
    }
    buf[f.ihl as usize + 6] = 0;
    buf[f.ihl as usize + 7] = 0;
    Ok(())
}

/// Write `pkt`'s ECN bits, IP ID and racc headers into `buf` (the bytes `f` was parsed from,
/// perhaps since rewritten for a later state of the packet), whatever they hold now, for a
/// capture of the packet as a port sent it; UDP checksum "none" as in [`write_back`].
pub fn write_tapped(buf: &mut [u8], f: &Frame, pkt: &Packet) -> Result<(), WireError> {
    ipv4::set_ecn(buf, pkt.ecn)?;
    ipv4::set_ident(buf, pkt.ip_id)?;
    let at = f.ihl as usize + UDP_LEN;
    let end = at + f.racc_len as usize;
    let n = datagram::emit(pkt, buf.get_mut(at..end).unwrap_or_default())?;
    if n != f.racc_len as usize {
        return Err(WireError::BadLength { field: "re-emitted racc headers", value: n });
    }
    buf[f.ihl as usize + 6] = 0;
    buf[f.ihl as usize + 7] = 0;
    Ok(())
}

/// A host's datagram for `pkt` into `buf`: racc headers, then zero bytes up to the packet's
/// wire size less IPv4 and UDP headers, so that the IP total length is `pkt.size` (a packet
/// whose headers alone exceed that is sent with its headers only: [`wire_len`]). Returns the
/// length.
pub fn host_datagram(pkt: &Packet, buf: &mut [u8]) -> Result<usize, WireError> {
    let n = datagram::emit(pkt, buf)?;
    let want = (pkt.size as usize).saturating_sub(IP_UDP_LEN).max(n).min(buf.len());
    buf[n..want].fill(0);
    Ok(want)
}

#[cfg(test)]
mod tests {
    use super::*;
    use racc_proto::packet::{ecn, CongHeader, Kind, TcpHeader};
    use racc_proto::rng::SimRng;

    /// An XCP data packet as a host sends it: IPv4 + UDP + racc datagram, 1000 bytes in all.
    fn ip_packet(buf: &mut [u8]) -> (Packet, usize) {
        let mut p = Packet::tcp(3, Kind::Data, 1000, 960, TcpHeader { seq: 7, ts_val: 11, ..Default::default() });
        p.cong = CongHeader::Xcp { rtt_us: 40_000, cwnd: 12_000, feedback: 5.0, reverse_feedback: 0.0 };
        p.ecn = ecn::ECT0;
        p.ip_id = 77;
        let n = host_datagram(&p, &mut buf[IP_UDP_LEN..]).unwrap();
        let ip = Ipv4Repr {
            tos: p.ecn,
            ident: p.ip_id,
            flags_frag: 0x4000,
            ttl: 64,
            protocol: PROTO_UDP,
            src: [10, 99, 0, 1],
            dst: [10, 99, 0, 2],
            payload_len: (UDP_LEN + n) as u16,
        };
        ip.emit(buf).unwrap();
        buf[20..22].copy_from_slice(&10_000u16.to_be_bytes());
        buf[22..24].copy_from_slice(&10_001u16.to_be_bytes());
        buf[24..26].copy_from_slice(&((UDP_LEN + n) as u16).to_be_bytes());
        (p, IP_UDP_LEN + n)
    }

    #[test]
    fn a_host_packet_parses_to_its_packet_with_the_ip_total_length_as_size() {
        let mut buf = [0u8; 1500];
        let (p, n) = ip_packet(&mut buf);
        assert_eq!(n, 1000);
        let f = parse(&buf[..n]).unwrap();
        assert_eq!(f.pkt, p);
        assert_eq!((f.src, f.dst), ([10, 99, 0, 1], [10, 99, 0, 2]));
    }

    #[test]
    fn rewrites_reach_the_bytes_with_valid_checksums() {
        let mut buf = [0u8; 1500];
        let (_, n) = ip_packet(&mut buf);
        let f = parse(&buf[..n]).unwrap();
        let mut q = f.pkt;
        q.ecn = ecn::CE;
        q.ip_id = 4242;
        q.cong = CongHeader::Xcp { rtt_us: 40_000, cwnd: 12_000, feedback: -2.5, reverse_feedback: 0.0 };
        write_back(&mut buf[..n], &f, &q).unwrap();
        // The IPv4 parse verifies the header checksum; the UDP checksum is "none".
        let g = parse(&buf[..n]).unwrap();
        assert_eq!(g.pkt, q);
        assert_eq!(&buf[26..28], &[0, 0]);
    }

    #[test]
    fn a_pure_ack_is_accounted_at_its_modelled_size_not_its_header_bytes() {
        let mut ack = Packet::tcp(3, Kind::Ack, 40, 0, TcpHeader { ack: 7, ts_ecr: 11, ..Default::default() });
        ack.dir = racc_proto::packet::Direction::Return;
        let mut buf = [0u8; 256];
        let (n, total) = racc_proto::wire::ip_packet::emit(&ack, [[10, 99, 0, 1], [10, 99, 0, 2]], &mut buf).unwrap();
        // IPv4 20 + UDP 8 + shim 16 + transport header: more than the 40 modelled bytes.
        assert_eq!(n, total);
        let total = crate::auth::make_room(&mut buf, n, total).unwrap();
        assert!(total == n + crate::auth::TRAILER && total == wire_len(40, total), "{total}");
        let f = parse(&buf[..total]).unwrap();
        assert_eq!(f.pkt, ack);
        assert_eq!(f.pkt.size, 40);
    }

    #[test]
    fn another_wire_version_is_refused_as_such() {
        let mut buf = [0u8; 1500];
        let (_, n) = ip_packet(&mut buf);
        for v in [0u8, 1, 3] {
            let mut b = buf;
            b[IP_UDP_LEN + 2] = v; // the shim's version byte (not under the IPv4 checksum)
            assert_eq!(parse(&b[..n]).unwrap_err(), Reject::BadVersion);
        }
    }

    #[test]
    fn an_ip_length_other_than_the_modelled_size_is_not_racc() {
        let mut buf = [0u8; 1500];
        let (_, n) = ip_packet(&mut buf);
        // The shim says 900 bytes, the IPv4 total length 1000 (and the other way round).
        for size in [900u32, 1001] {
            let mut b = buf;
            b[IP_UDP_LEN + 12..IP_UDP_LEN + 16].copy_from_slice(&size.to_be_bytes());
            assert_eq!(parse(&b[..n]).unwrap_err(), Reject::NotRacc);
        }
    }

    #[test]
    fn foreign_and_broken_packets_are_rejected_never_a_panic() {
        let mut buf = [0u8; 1500];
        let (_, n) = ip_packet(&mut buf);
        assert_eq!(parse(&[]).unwrap_err(), Reject::NotIpv4);
        let mut b = buf;
        b[9] = 6; // TCP
        b[10..12].fill(0);
        let c = ipv4::checksum(&b[..20]);
        b[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(parse(&b[..n]).unwrap_err(), Reject::NotUdp);
        for cut in 0..n {
            assert!(parse(&buf[..cut]).is_err(), "cut at {cut}");
        }
        // Random and mutated inputs: whatever parses also writes back.
        let mut rng = SimRng::for_component(1, "frame-fuzz");
        for i in 0..100_000 {
            let mut b = buf;
            let len = if i % 2 == 0 {
                for x in b[..64].iter_mut() {
                    *x = rng.below(256) as u8;
                }
                rng.below(65) as usize
            } else {
                for _ in 0..1 + rng.below(4) {
                    let at = rng.below(n as u64) as usize;
                    b[at] = rng.below(256) as u8;
                }
                n
            };
            if let Ok(f) = parse(&b[..len]) {
                let _ = write_back(&mut b[..len], &f, &f.pkt);
            }
        }
    }
}
