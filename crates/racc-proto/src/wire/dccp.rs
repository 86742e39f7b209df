//! The DCCP header on the wire: 48-bit sequence and acknowledgement numbers (RFC 4340 §5.1,
//! X = 1), the Ack Vector as racc models it (up to 12 run entries of 2 state bits and a 14-bit
//! run length − 1, RFC 4340 §11.4's encoding with longer runs), the Ack Ratio (RFC 4341 §6),
//! the VCP family's echo byte and 64-bit ns timestamps.
//!
//! ```text
//!  0     6     12      13     14          16       24       32             56
//!  | seq | ack | runs n | echo | ack_ratio | ts_val | ts_ecr | 12 runs × u16 |
//! ```

use super::{check_len, get_u16, get_u48, get_u64, put_u16, put_u48, put_u64, Result, WireError, SEQ48};
use crate::packet::{AckVector, DccpHeader, MAX_ACK_VECTOR_RUNS};

pub const LEN: usize = 32 + 2 * MAX_ACK_VECTOR_RUNS;

/// Parse a DCCP header; returns it and its length.
pub fn parse(buf: &[u8]) -> Result<(DccpHeader, usize)> {
    check_len(buf, LEN)?;
    let n = buf[12] as usize;
    if n > MAX_ACK_VECTOR_RUNS {
        return Err(WireError::BadLength { field: "Ack Vector runs", value: n });
    }
    let mut runs = [0u16; MAX_ACK_VECTOR_RUNS];
    for (i, r) in runs.iter_mut().enumerate().take(n) {
        *r = get_u16(buf, 32 + 2 * i);
    }
    let ack_vector = AckVector::from_raw(&runs[..n]).expect("checked");
    let h = DccpHeader {
        seq: get_u48(buf, 0),
        ack: get_u48(buf, 6),
        ack_vector,
        echo: buf[13],
        ack_ratio: get_u16(buf, 14),
        ts_val: get_u64(buf, 16),
        ts_ecr: get_u64(buf, 24),
    };
    Ok((h, LEN))
}

/// Write `h` at the start of `buf`. Sequence numbers must fit 48 bits (RFC 4340's space).
pub fn emit(h: &DccpHeader, buf: &mut [u8]) -> Result<usize> {
    check_len(buf, LEN)?;
    if h.seq > SEQ48 || h.ack > SEQ48 {
        return Err(WireError::Unsupported("DCCP sequence number beyond 48 bits"));
    }
    let runs = h.ack_vector.raw();
    put_u48(buf, 0, h.seq);
    put_u48(buf, 6, h.ack);
    buf[12] = runs.len() as u8;
    buf[13] = h.echo;
    put_u16(buf, 14, h.ack_ratio);
    put_u64(buf, 16, h.ts_val);
    put_u64(buf, 24, h.ts_ecr);
    for i in 0..MAX_ACK_VECTOR_RUNS {
        put_u16(buf, 32 + 2 * i, runs.get(i).copied().unwrap_or(0));
    }
    Ok(LEN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_at_the_edges_of_the_48_bit_space() {
        let mut ack_vector = AckVector::default();
        for (state, n) in [(0, 1 << 14), (3, 1), (1, 64), (0, 1)] {
            assert!(ack_vector.push(state, n));
        }
        let h = DccpHeader { seq: SEQ48, ack: 1, ack_vector, ack_ratio: 2, echo: 3, ts_val: 5, ts_ecr: 6 };
        let mut buf = [0u8; LEN];
        assert_eq!(emit(&h, &mut buf), Ok(LEN));
        assert_eq!(parse(&buf), Ok((h, LEN)));
        assert!(emit(&DccpHeader { seq: SEQ48 + 1, ..h }, &mut buf).is_err());
        assert!(matches!(parse(&buf[..LEN - 1]), Err(WireError::Truncated { .. })));
        buf[12] = MAX_ACK_VECTOR_RUNS as u8 + 1;
        assert!(parse(&buf).is_err());
    }
}
