//! The congestion headers of XCC-Linux's layer on the wire (docs/PROTOCOLS.md §1): a 4-byte preamble
//! (protocol, version, length in 4-byte words, packet kind) and the protocol's fields.
//!
//! | protocol | bytes | fields after the preamble |
//! |---|---|---|
//! | XCP | 20 | rtt u32 µs, cwnd u32 B, feedback f32 B, reverse_feedback f32 B |
//! | RCP, PIQI-RCP | 12 | rate u32 B/s, rtt u32 µs |
//! | JetMax | 20 | rtt u32 µs, ipt u32 ns, cur_id u16, fb_id u16, feedback u32 B/s |
//! | QFCP | 16 | rtt u32 µs, rate_request u32 B/s, rate_feedback u32 B/s |

use super::shim::{kind_from_u8, CongKind};
use super::{check_len, get_u16, get_u32, put_u16, put_u32, Result, WireError};
use crate::packet::{CongHeader, Kind};

/// The preamble's version of every congestion header.
pub const VERSION: u8 = 1;

pub fn kind_of(h: &CongHeader) -> CongKind {
    match h {
        CongHeader::None => CongKind::None,
        CongHeader::Xcp { .. } => CongKind::Xcp,
        CongHeader::Rcp { .. } => CongKind::Rcp,
        CongHeader::JetMax { .. } => CongKind::JetMax,
        CongHeader::Qfcp { .. } => CongKind::Qfcp,
    }
}

/// Bytes on the wire of a header of this kind (its `wire_len`, preamble included).
pub fn len_of(k: CongKind) -> usize {
    match k {
        CongKind::None => 0,
        CongKind::Xcp | CongKind::JetMax => 20,
        CongKind::Rcp => 12,
        CongKind::Qfcp => 16,
    }
}

/// Parse a congestion header with its preamble; returns it, the packet kind the preamble
/// names, and its length. An empty slice is no header.
pub fn parse(buf: &[u8]) -> Result<(CongHeader, Option<Kind>, usize)> {
    if buf.is_empty() {
        return Ok((CongHeader::None, None, 0));
    }
    check_len(buf, 4)?;
    let k = CongKind::from_u8(buf[0])?;
    if k == CongKind::None {
        return Err(WireError::BadValue { field: "congestion header protocol", value: 0 });
    }
    if buf[1] != VERSION {
        return Err(WireError::BadVersion(buf[1]));
    }
    let len = len_of(k);
    if buf[2] as usize * 4 != len {
        return Err(WireError::BadLength { field: "congestion header length", value: buf[2] as usize * 4 });
    }
    let kind = kind_from_u8(buf[3])?;
    check_len(buf, len)?;
    let f32_at = |at| f32::from_bits(get_u32(buf, at));
    let h = match k {
        CongKind::Xcp => CongHeader::Xcp {
            rtt_us: get_u32(buf, 4),
            cwnd: get_u32(buf, 8),
            feedback: f32_at(12),
            reverse_feedback: f32_at(16),
        },
        CongKind::Rcp => CongHeader::Rcp { rate: get_u32(buf, 4), rtt_us: get_u32(buf, 8) },
        CongKind::JetMax => CongHeader::JetMax {
            rtt_us: get_u32(buf, 4),
            ipt_ns: get_u32(buf, 8),
            cur_id: get_u16(buf, 12),
            fb_id: get_u16(buf, 14),
            feedback: get_u32(buf, 16),
        },
        CongKind::Qfcp => {
            CongHeader::Qfcp { rtt_us: get_u32(buf, 4), rate_request: get_u32(buf, 8), rate_feedback: get_u32(buf, 12) }
        }
        CongKind::None => unreachable!("refused above"),
    };
    Ok((h, Some(kind), len))
}

/// Write `h` with its preamble (naming packet kind `kind`) at the start of `buf`.
pub fn emit(h: &CongHeader, kind: Kind, buf: &mut [u8]) -> Result<usize> {
    let k = kind_of(h);
    let len = len_of(k);
    if len == 0 {
        return Ok(0);
    }
    check_len(buf, len)?;
    buf[0] = k as u8;
    buf[1] = VERSION;
    buf[2] = (len / 4) as u8;
    buf[3] = kind as u8;
    match *h {
        CongHeader::Xcp { rtt_us, cwnd, feedback, reverse_feedback } => {
            put_u32(buf, 4, rtt_us);
            put_u32(buf, 8, cwnd);
            put_u32(buf, 12, feedback.to_bits());
            put_u32(buf, 16, reverse_feedback.to_bits());
        }
        CongHeader::Rcp { rate, rtt_us } => {
            put_u32(buf, 4, rate);
            put_u32(buf, 8, rtt_us);
        }
        CongHeader::JetMax { rtt_us, ipt_ns, cur_id, fb_id, feedback } => {
            put_u32(buf, 4, rtt_us);
            put_u32(buf, 8, ipt_ns);
            put_u16(buf, 12, cur_id);
            put_u16(buf, 14, fb_id);
            put_u32(buf, 16, feedback);
        }
        CongHeader::Qfcp { rtt_us, rate_request, rate_feedback } => {
            put_u32(buf, 4, rtt_us);
            put_u32(buf, 8, rate_request);
            put_u32(buf, 12, rate_feedback);
        }
        CongHeader::None => {}
    }
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers() -> Vec<CongHeader> {
        vec![
            CongHeader::Xcp { rtt_us: 100_000, cwnd: 15_000, feedback: -1.5, reverse_feedback: f32::INFINITY },
            CongHeader::Rcp { rate: u32::MAX, rtt_us: 50_000 },
            CongHeader::JetMax { rtt_us: 1, ipt_ns: 2, cur_id: 3, fb_id: 0xffff, feedback: 5 },
            CongHeader::Qfcp { rtt_us: 200_000, rate_request: u32::MAX, rate_feedback: 125_000 },
        ]
    }

    #[test]
    fn every_header_round_trips_and_has_its_wire_len() {
        let mut buf = [0u8; 32];
        for h in headers() {
            let len = emit(&h, Kind::Data, &mut buf).unwrap();
            assert_eq!(len as u32, h.wire_len(), "{h:?}");
            assert_eq!(parse(&buf[..len]).unwrap(), (h, Some(Kind::Data), len));
            for cut in 1..len {
                assert!(parse(&buf[..cut]).is_err(), "{h:?} cut at {cut}");
            }
        }
        assert_eq!(emit(&CongHeader::None, Kind::Ack, &mut buf), Ok(0));
        assert_eq!(parse(&[]), Ok((CongHeader::None, None, 0)));
    }

    #[test]
    fn bad_preambles_are_errors() {
        let mut buf = [0u8; 32];
        emit(&headers()[1], Kind::Ref, &mut buf).unwrap();
        let mut b = buf;
        b[1] = 9;
        assert_eq!(parse(&b).unwrap_err(), WireError::BadVersion(9));
        let mut b = buf;
        b[2] = 5;
        assert!(matches!(parse(&b), Err(WireError::BadLength { .. })));
        let mut b = buf;
        b[3] = 6;
        assert!(matches!(parse(&b), Err(WireError::BadValue { field: "packet kind", .. })));
        let mut b = buf;
        b[0] = 9;
        assert!(matches!(parse(&b), Err(WireError::BadValue { .. })));
    }
}
