//! The racc shim: the first 16 bytes of every racc datagram. It says what the rest is (which
//! transport header and congestion header follow), which flow and which way it travels, how
//! many application bytes the packet stands for, and its modelled size on the wire.
//!
//! ```text
//!  0      2        3       4        5          6       8               12              16
//!  | "RC" | version | kind | dir/tx | cong     | payload | flow          | size          |
//! ```
//! `dir/tx`: bit 7 = direction (1 = return path), bits 0-3 = transport (1 TCP-like, 2 DCCP).
//!
//! Version 2 added `size`, the packet's size as the simulator models it (`Packet::size`): the
//! bytes an emulated port accounts, serialises and queues. A datagram is padded up to that size
//! on the wire, but a pure ACK's real headers (IPv4 + UDP + shim + transport header, about 80
//! bytes) exceed its modelled 40, and without the field the live router charged the return path
//! for them. Version 1 (12 bytes, no `size`) is refused: a router of one version would
//! misread the other's transport header.

use super::{check_len, get_u16, get_u32, put_u16, put_u32, Result, WireError};
use crate::packet::{Direction, Kind};

pub const MAGIC: [u8; 2] = *b"RC";
pub const VERSION: u8 = 2;
pub const LEN: usize = 16;

/// Which transport header follows the shim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportKind {
    Tcp = 1,
    Dccp = 2,
}

/// Which congestion header follows the transport header (0 = none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongKind {
    None = 0,
    Xcp = 1,
    Rcp = 2,
    JetMax = 3,
    Qfcp = 4,
}

impl CongKind {
    pub fn from_u8(v: u8) -> Result<CongKind> {
        Ok(match v {
            0 => CongKind::None,
            1 => CongKind::Xcp,
            2 => CongKind::Rcp,
            3 => CongKind::JetMax,
            4 => CongKind::Qfcp,
            _ => return Err(WireError::BadValue { field: "congestion header kind", value: v }),
        })
    }
}

pub fn kind_from_u8(v: u8) -> Result<Kind> {
    Ok(match v {
        0 => Kind::Data,
        1 => Kind::Ack,
        2 => Kind::Syn,
        3 => Kind::SynAck,
        4 => Kind::Ref,
        5 => Kind::Fin,
        _ => return Err(WireError::BadValue { field: "packet kind", value: v }),
    })
}

/// The parsed shim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShimRepr {
    pub kind: Kind,
    pub dir: Direction,
    pub transport: TransportKind,
    pub cong: CongKind,
    /// Application bytes the packet carries (they follow the headers, or are implied).
    pub payload: u16,
    pub flow: u32,
    /// The packet's modelled size on the wire, bytes (IPv4 header and all, as `Packet::size`).
    pub size: u32,
}

impl ShimRepr {
    pub fn parse(buf: &[u8]) -> Result<ShimRepr> {
        // Magic and version first, so that another version's shim is named as such whatever
        // its length.
        check_len(buf, 3)?;
        if buf[0..2] != MAGIC {
            return Err(WireError::BadMagic);
        }
        if buf[2] != VERSION {
            return Err(WireError::BadVersion(buf[2]));
        }
        check_len(buf, LEN)?;
        let kind = kind_from_u8(buf[3])?;
        let dir = if buf[4] & 0x80 != 0 { Direction::Return } else { Direction::Forward };
        let transport = match buf[4] & 0x7f {
            1 => TransportKind::Tcp,
            2 => TransportKind::Dccp,
            v => return Err(WireError::BadValue { field: "transport kind", value: v }),
        };
        Ok(ShimRepr {
            kind,
            dir,
            transport,
            cong: CongKind::from_u8(buf[5])?,
            payload: get_u16(buf, 6),
            flow: get_u32(buf, 8),
            size: get_u32(buf, 12),
        })
    }

    /// Write the shim into `buf[..LEN]`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        check_len(buf, LEN)?;
        buf[0..2].copy_from_slice(&MAGIC);
        buf[2] = VERSION;
        buf[3] = self.kind as u8;
        buf[4] = (self.transport as u8) | if self.dir == Direction::Return { 0x80 } else { 0 };
        buf[5] = self.cong as u8;
        put_u16(buf, 6, self.payload);
        put_u32(buf, 8, self.flow);
        put_u32(buf, 12, self.size);
        Ok(LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack() -> ShimRepr {
        ShimRepr {
            kind: Kind::Ack,
            dir: Direction::Return,
            transport: TransportKind::Dccp,
            cong: CongKind::Qfcp,
            payload: 0,
            flow: 0x0102_0304,
            size: 40,
        }
    }

    #[test]
    fn the_shim_round_trips_with_its_modelled_size_at_bytes_12_to_16() {
        let mut buf = [0u8; LEN];
        assert_eq!(ack().emit(&mut buf), Ok(LEN));
        assert_eq!(&buf[..4], &[b'R', b'C', 2, Kind::Ack as u8]);
        assert_eq!(buf[4], 0x80 | 2);
        assert_eq!(&buf[8..16], &[1, 2, 3, 4, 0, 0, 0, 40]);
        assert_eq!(ShimRepr::parse(&buf), Ok(ack()));
        let big = ShimRepr { size: u32::MAX, kind: Kind::Data, dir: Direction::Forward, payload: 65_535, ..ack() };
        big.emit(&mut buf).unwrap();
        assert_eq!(ShimRepr::parse(&buf), Ok(big));
    }

    #[test]
    fn another_version_is_refused_by_name() {
        let mut buf = [0u8; LEN];
        ack().emit(&mut buf).unwrap();
        for v in [0u8, 1, 3, 255] {
            buf[2] = v;
            assert_eq!(ShimRepr::parse(&buf), Err(WireError::BadVersion(v)));
        }
        // A version-1 shim is named as such whatever its length (it had 12 bytes, this one 16).
        assert_eq!(ShimRepr::parse(&buf[..12]), Err(WireError::BadVersion(255)));
        assert_eq!(ShimRepr::parse(&buf[..3]), Err(WireError::BadVersion(255)));
    }

    #[test]
    fn every_cut_is_truncated_never_a_panic() {
        let mut buf = [0u8; LEN];
        ack().emit(&mut buf).unwrap();
        for cut in 0..LEN {
            let need = if cut < 3 { 3 } else { LEN };
            assert_eq!(ShimRepr::parse(&buf[..cut]), Err(WireError::Truncated { need, have: cut }));
            assert!(ack().emit(&mut [0u8; LEN][..cut]).is_err());
        }
    }
}
