//! The DCCP header on the wire: 48-bit sequence and acknowledgement numbers (RFC 4340 §5.1,
//! X = 1), the Ack Vector as racc models it (a bitmap of the 64 packets below `ack` and its
//! length), the Ack Ratio (RFC 4341 §6), the VCP family's echo byte and 64-bit ns timestamps.
//!
//! ```text
//!  0     6     12        20      21     22         24       32       40
//!  | seq | ack | ack_vec | vec_len | echo | ack_ratio | ts_val | ts_ecr |
//! ```

use super::{check_len, get_u16, get_u48, get_u64, put_u16, put_u48, put_u64, Result, WireError, SEQ48};
use crate::packet::DccpHeader;

pub const LEN: usize = 40;

/// Parse a DCCP header; returns it and its length.
pub fn parse(buf: &[u8]) -> Result<(DccpHeader, usize)> {
    check_len(buf, LEN)?;
    let ack_vec_len = buf[20];
    if ack_vec_len > 64 {
        return Err(WireError::BadLength { field: "Ack Vector length", value: ack_vec_len as usize });
    }
    let h = DccpHeader {
        seq: get_u48(buf, 0),
        ack: get_u48(buf, 6),
        ack_vec: get_u64(buf, 12),
        ack_vec_len,
        echo: buf[21],
        ack_ratio: get_u16(buf, 22),
        ts_val: get_u64(buf, 24),
        ts_ecr: get_u64(buf, 32),
    };
    Ok((h, LEN))
}

/// Write `h` at the start of `buf`. Sequence numbers must fit 48 bits (RFC 4340's space).
pub fn emit(h: &DccpHeader, buf: &mut [u8]) -> Result<usize> {
    check_len(buf, LEN)?;
    if h.seq > SEQ48 || h.ack > SEQ48 {
        return Err(WireError::Unsupported("DCCP sequence number beyond 48 bits"));
    }
    if h.ack_vec_len > 64 {
        return Err(WireError::BadLength { field: "Ack Vector length", value: h.ack_vec_len as usize });
    }
    put_u48(buf, 0, h.seq);
    put_u48(buf, 6, h.ack);
    put_u64(buf, 12, h.ack_vec);
    buf[20] = h.ack_vec_len;
    buf[21] = h.echo;
    put_u16(buf, 22, h.ack_ratio);
    put_u64(buf, 24, h.ts_val);
    put_u64(buf, 32, h.ts_ecr);
    Ok(LEN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_at_the_edges_of_the_48_bit_space() {
        let h = DccpHeader {
            seq: SEQ48,
            ack: 1,
            ack_vec: 0xf0f0_0000_ffff_0001,
            ack_vec_len: 64,
            ack_ratio: 2,
            echo: 3,
            ts_val: 5,
            ts_ecr: 6,
        };
        let mut buf = [0u8; LEN];
        assert_eq!(emit(&h, &mut buf), Ok(LEN));
        assert_eq!(parse(&buf), Ok((h, LEN)));
        assert!(emit(&DccpHeader { seq: SEQ48 + 1, ..h }, &mut buf).is_err());
        assert!(matches!(parse(&buf[..LEN - 1]), Err(WireError::Truncated { .. })));
        buf[20] = 65;
        assert!(parse(&buf).is_err());
    }
}
