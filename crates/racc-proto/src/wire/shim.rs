//! The racc shim: the first 12 bytes of every racc datagram. It says what the rest is (which
//! transport header and congestion header follow), which flow and which way it travels, and how
//! many application bytes the packet stands for.
//!
//! ```text
//!  0      2        3       4        5          6       8               12
//!  | "RC" | version | kind | dir/tx | cong     | payload | flow          |
//! ```
//! `dir/tx`: bit 7 = direction (1 = return path), bits 0-3 = transport (1 TCP-like, 2 DCCP).

use super::{check_len, get_u16, get_u32, put_u16, put_u32, Result, WireError};
use crate::packet::{Direction, Kind};

pub const MAGIC: [u8; 2] = *b"RC";
pub const VERSION: u8 = 1;
pub const LEN: usize = 12;

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
}

impl ShimRepr {
    pub fn parse(buf: &[u8]) -> Result<ShimRepr> {
        check_len(buf, LEN)?;
        if buf[0..2] != MAGIC {
            return Err(WireError::BadMagic);
        }
        if buf[2] != VERSION {
            return Err(WireError::BadVersion(buf[2]));
        }
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
        Ok(LEN)
    }
}
