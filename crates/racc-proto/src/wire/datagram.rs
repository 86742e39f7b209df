//! A whole racc [`Packet`] as a datagram: shim, transport header, congestion header. The
//! application bytes follow; their count is in the shim, and the live runtime sends that many
//! (their content is not racc's). The packet's modelled size is in the shim too (wire version 2):
//! the IP total length is that size only where the headers fit in it. The IP layer carries what
//! is not here, the ECN bits and the IP ID, which the caller passes to [`parse`].

use super::shim::{CongKind, ShimRepr, TransportKind};
use super::{cong, dccp, shim, tcp, Result, WireError};
use crate::packet::{Packet, Transport};

/// What the IP layer around a datagram says about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpFields {
    pub ecn: u8,
    pub ip_id: u16,
}

impl IpFields {
    pub fn of(pkt: &Packet) -> IpFields {
        IpFields { ecn: pkt.ecn, ip_id: pkt.ip_id }
    }
}

/// Header bytes `pkt` takes as a datagram (shim, transport and congestion headers).
pub fn headers_len(pkt: &Packet) -> usize {
    let t = match &pkt.transport {
        Transport::Tcp(h) => tcp::wire_len(h),
        Transport::Dccp(h) => dccp::wire_len(h),
    };
    shim::LEN + t + cong::len_of(cong::kind_of(&pkt.cong))
}

/// Write `pkt`'s headers at the start of `buf`; returns the bytes written. The application
/// bytes (`pkt.payload` of them) are the caller's to append.
pub fn emit(pkt: &Packet, buf: &mut [u8]) -> Result<usize> {
    if pkt.outer.is_some() {
        return Err(WireError::Unsupported("the simulator's modelled IPsec outer header"));
    }
    let payload = u16::try_from(pkt.payload).map_err(|_| WireError::Unsupported("payload over 65535 bytes"))?;
    let transport = match pkt.transport {
        Transport::Tcp(_) => TransportKind::Tcp,
        Transport::Dccp(_) => TransportKind::Dccp,
    };
    let s = ShimRepr {
        kind: pkt.kind,
        dir: pkt.dir,
        transport,
        cong: cong::kind_of(&pkt.cong),
        payload,
        flow: pkt.flow,
        size: pkt.size,
    };
    let mut at = s.emit(buf)?;
    at += match &pkt.transport {
        Transport::Tcp(h) => tcp::emit(h, buf.get_mut(at..).unwrap_or_default())?,
        Transport::Dccp(h) => dccp::emit(h, buf.get_mut(at..).unwrap_or_default())?,
    };
    at += cong::emit(&pkt.cong, pkt.kind, buf.get_mut(at..).unwrap_or_default())?;
    Ok(at)
}

/// Parse the headers at the start of `buf` into a packet, with the IP layer's fields; returns
/// it and the header length. The application bytes after the headers are not read.
pub fn parse(buf: &[u8], ip: IpFields) -> Result<(Packet, usize)> {
    let s = ShimRepr::parse(buf)?;
    let mut at = shim::LEN;
    let rest = |at: usize| buf.get(at..).unwrap_or_default();
    let transport = match s.transport {
        TransportKind::Tcp => {
            let (h, n) = tcp::parse(rest(at))?;
            at += n;
            Transport::Tcp(h)
        }
        TransportKind::Dccp => {
            let (h, n) = dccp::parse(rest(at))?;
            at += n;
            Transport::Dccp(h)
        }
    };
    let cong_bytes = rest(at);
    let (cong, kind, n) =
        if s.cong == CongKind::None { (Default::default(), None, 0) } else { cong::parse(cong_bytes)? };
    if cong::kind_of(&cong) != s.cong {
        return Err(WireError::BadValue {
            field: "congestion header protocol",
            value: cong_bytes.first().copied().unwrap_or(0),
        });
    }
    if kind.is_some_and(|k| k != s.kind) {
        return Err(WireError::BadValue { field: "congestion header packet kind", value: cong_bytes[3] });
    }
    at += n;
    let pkt = Packet {
        flow: s.flow,
        kind: s.kind,
        dir: s.dir,
        size: s.size,
        payload: s.payload as u32,
        ecn: ip.ecn & 0b11,
        ip_id: ip.ip_id,
        transport,
        cong,
        outer: None,
    };
    Ok((pkt, at))
}

/// The sample packets of the tests, for the in-suite fuzz run.
#[cfg(test)]
pub(crate) fn tests_samples() -> Vec<Packet> {
    tests::samples()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{ecn, AckVector, CongHeader, DccpHeader, Direction, Kind, SackBlocks, TcpHeader};

    /// One packet of every shape the protocols send.
    pub(crate) fn samples() -> Vec<Packet> {
        let mut sack = SackBlocks::default();
        sack.push(10, 20);
        let tcp = TcpHeader {
            seq: 5,
            ack: 9,
            flags: 0x10,
            window: 100,
            echo: 6,
            ts_val: 1,
            ts_ecr: 2,
            sack,
            ..Default::default()
        };
        let mut out = vec![];
        for cong in [
            CongHeader::None,
            CongHeader::Xcp { rtt_us: 1, cwnd: 2, feedback: 3.5, reverse_feedback: -4.0 },
            CongHeader::Rcp { rate: 7, rtt_us: 8 },
            CongHeader::JetMax { rtt_us: 1, ipt_ns: 2, cur_id: 3, fb_id: 4, feedback: 5 },
            CongHeader::Qfcp { rtt_us: 1, rate_request: 2, rate_feedback: 3 },
        ] {
            for kind in [Kind::Data, Kind::Ack, Kind::Syn, Kind::SynAck, Kind::Ref, Kind::Fin] {
                let mut p = Packet::tcp(42, kind, 1000, 900, tcp);
                p.cong = cong;
                p.ecn = ecn::ECT1;
                p.ip_id = 0x1234;
                p.dir = if kind == Kind::Ack { Direction::Return } else { Direction::Forward };
                out.push(p);
            }
        }
        let mut ack_vector = AckVector::default();
        ack_vector.push(0, 4);
        ack_vector.push(3, 2);
        let h = DccpHeader { seq: 1 << 47, ack: 3, ack_vector, ack_ratio: 2, echo: 1, ts_val: 9, ts_ecr: 8 };
        out.push(Packet::dccp(3, Kind::Data, 1024, 1000, h));
        let mut ack = Packet::dccp(3, Kind::Ack, 60, 0, DccpHeader { ack_vector: AckVector::default(), ..h });
        ack.dir = Direction::Return;
        out.push(ack);
        out
    }

    #[test]
    fn every_packet_shape_round_trips() {
        let mut buf = [0u8; 256];
        for p in samples() {
            let n = emit(&p, &mut buf).unwrap();
            assert_eq!(n, headers_len(&p));
            assert_eq!(parse(&buf[..n], IpFields::of(&p)), Ok((p, n)), "{p:?}");
            for cut in 0..n {
                assert!(parse(&buf[..cut], IpFields::of(&p)).is_err(), "{p:?} cut at {cut}");
            }
        }
    }

    #[test]
    fn the_modelled_size_travels_in_the_shim_whatever_the_headers_take() {
        let mut buf = [0u8; 256];
        for p in samples() {
            for size in [0, 40, 1000, 9000, u32::MAX] {
                let q = Packet { size, ..p };
                let n = emit(&q, &mut buf).unwrap();
                assert_eq!(parse(&buf[..n], IpFields::of(&q)), Ok((q, n)), "{q:?}");
            }
        }
    }

    #[test]
    fn a_version_1_datagram_is_refused_by_its_version() {
        // Version 1: the 12-byte shim without the modelled size, then the transport header.
        let mut buf = [0u8; 256];
        let p = samples()[1]; // a TCP ACK
        let n = emit(&p, &mut buf).unwrap();
        let mut v1 = [0u8; 256];
        v1[..12].copy_from_slice(&buf[..12]);
        v1[2] = 1;
        v1[12..n - 4].copy_from_slice(&buf[16..n]);
        assert_eq!(parse(&v1[..n - 4], IpFields::of(&p)), Err(WireError::BadVersion(1)));
    }

    #[test]
    fn a_tunnel_packet_or_a_huge_payload_is_refused() {
        let mut buf = [0u8; 256];
        let mut p = samples()[0];
        p.outer = Some(Default::default());
        assert!(matches!(emit(&p, &mut buf), Err(WireError::Unsupported(_))));
        let mut p = samples()[0];
        p.payload = 70_000;
        assert!(matches!(emit(&p, &mut buf), Err(WireError::Unsupported(_))));
    }

    #[test]
    fn shim_and_congestion_header_must_agree() {
        let mut buf = [0u8; 256];
        let p = samples()[6]; // XCP data
        let n = emit(&p, &mut buf).unwrap();
        let at = n - 20;
        let mut b = buf;
        b[at + 3] = Kind::Ack as u8;
        assert!(matches!(parse(&b[..n], IpFields::of(&p)), Err(WireError::BadValue { .. })));
        let mut b = buf;
        b[5] = CongKind::Rcp as u8; // shim says RCP, header says XCP
        assert!(parse(&b[..n], IpFields::of(&p)).is_err());
    }
}
