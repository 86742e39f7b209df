//! A whole racc packet as an IPv4/UDP packet, as a host sends it and a router forwards it: the
//! IPv4 header (ECN bits, the endpoint's IP ID, don't-fragment), the UDP header (checksum 0,
//! "none", RFC 768) and the racc datagram's headers. The application bytes (zeros in racc) are
//! not written: the IPv4 total length counts them, so a caller that sends the packet appends
//! them, and a capture (pcap) can keep the headers only.
//!
//! Addresses and ports follow one plan in both engines ([`host_addr`], [`udp_port`]), so a
//! capture from the simulator and one from the live runtime name flows alike.

use super::datagram;
use super::ipv4::{Ipv4Repr, MIN_LEN, PROTO_UDP};
use super::{put_u16, Result, WireError};
use crate::packet::{Direction, Packet};

pub const UDP_LEN: usize = 8;
/// IPv4 + UDP header bytes.
pub const IP_UDP_LEN: usize = MIN_LEN + UDP_LEN;
/// Don't fragment, offset 0.
const DF: u16 = 0x4000;
const TTL: u8 = 64;

/// Host `i`'s address: 10.99.0.0/16, never a .0 host part.
pub fn host_addr(i: usize) -> [u8; 4] {
    [10, 99, (i / 250) as u8, (i % 250 + 1) as u8]
}

/// The UDP port of flow `flow`'s sender (`side` 0) or receiver (`side` 1): 10000 + 2·flow + side,
/// wrapping within 10000..65000 for runs of more flows than that holds.
pub fn udp_port(flow: usize, side: usize) -> u16 {
    (10_000 + (2 * flow + side) % 55_000) as u16
}

/// The IPv4 total length of `pkt`: its size on the wire, or its headers where they exceed it.
pub fn total_len(pkt: &Packet) -> usize {
    (pkt.size as usize).max(IP_UDP_LEN + datagram::headers_len(pkt))
}

/// Write `pkt`'s IPv4, UDP and racc headers at the start of `buf`, from `src` to `dst` (the
/// sender's and receiver's addresses of its flow; they are swapped on the return path, as the
/// ports are). Returns the bytes written (headers only) and the IPv4 total length.
pub fn emit(pkt: &Packet, flow_addrs: [[u8; 4]; 2], buf: &mut [u8]) -> Result<(usize, usize)> {
    let total = total_len(pkt);
    if total > u16::MAX as usize {
        return Err(WireError::BadLength { field: "IPv4 total length", value: total });
    }
    let n = datagram::emit(pkt, buf.get_mut(IP_UDP_LEN..).unwrap_or_default())?;
    let (s, d) = if pkt.dir == Direction::Forward { (0, 1) } else { (1, 0) };
    let ip = Ipv4Repr {
        tos: pkt.ecn,
        ident: pkt.ip_id,
        flags_frag: DF,
        ttl: TTL,
        protocol: PROTO_UDP,
        src: flow_addrs[s],
        dst: flow_addrs[d],
        payload_len: (total - MIN_LEN) as u16,
    };
    ip.emit(buf)?;
    let f = pkt.flow as usize;
    put_u16(buf, MIN_LEN, udp_port(f, s));
    put_u16(buf, MIN_LEN + 2, udp_port(f, d));
    put_u16(buf, MIN_LEN + 4, (total - MIN_LEN) as u16);
    put_u16(buf, MIN_LEN + 6, 0);
    Ok((IP_UDP_LEN + n, total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{ecn, Kind, TcpHeader};
    use crate::wire::datagram::IpFields;

    #[test]
    fn an_emitted_packet_parses_back_with_its_ip_fields() {
        let mut p = Packet::tcp(7, Kind::Data, 1000, 940, TcpHeader { seq: 3, ..Default::default() });
        p.ecn = ecn::ECT0;
        p.ip_id = 0xbeef;
        let addrs = [host_addr(0), host_addr(1)];
        let mut buf = [0u8; 256];
        let (n, total) = emit(&p, addrs, &mut buf).unwrap();
        assert_eq!(total, 1000);
        assert_eq!(n, IP_UDP_LEN + datagram::headers_len(&p));
        // The IPv4 parse checks the total length against the buffer: give it the padding.
        let mut whole = vec![0u8; total];
        whole[..n].copy_from_slice(&buf[..n]);
        let (ip, ihl) = Ipv4Repr::parse(&whole).unwrap();
        assert_eq!((ip.ident, ip.ecn(), ip.src, ip.dst), (0xbeef, ecn::ECT0, addrs[0], addrs[1]));
        assert_eq!(&whole[ihl..ihl + 4], &[udp_port(7, 0).to_be_bytes(), udp_port(7, 1).to_be_bytes()].concat()[..]);
        let (q, _) = datagram::parse(&whole[IP_UDP_LEN..], IpFields::of(&p)).unwrap();
        assert_eq!(q, p);
        // The return path swaps addresses and ports.
        let mut a = p;
        a.dir = Direction::Return;
        emit(&a, addrs, &mut buf).unwrap();
        assert_eq!((&buf[12..16], &buf[16..20]), (&addrs[1][..], &addrs[0][..]));
        // A pure ACK smaller than its headers goes out at its headers' length.
        let mut ack = Packet::tcp(7, Kind::Ack, 40, 0, TcpHeader::default());
        ack.dir = Direction::Return;
        let (n, total) = emit(&ack, addrs, &mut buf).unwrap();
        assert_eq!(n, total);
        assert!(total > 40);
        // ... and parses back at its modelled size, which the shim carries.
        let (q, _) = datagram::parse(&buf[IP_UDP_LEN..n], IpFields::of(&ack)).unwrap();
        assert_eq!((q, q.size), (ack, 40));
    }
}
