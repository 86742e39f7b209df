//! The DCCP header on the wire: 48-bit sequence and acknowledgement numbers (RFC 4340 §5.1,
//! X = 1), the Ack Ratio (RFC 4341 §6), the VCP family's echo byte, 64-bit ns timestamps and the
//! Ack Vector's runs (RFC 4340 §11.4: 2 state bits; racc keeps 14 length bits per run, as the
//! simulator's `AckVector` holds them).
//!
//! ```text
//!  0     6     12          14     15      16       24       32
//!  | seq | ack | ack_ratio | echo | nruns | ts_val | ts_ecr | runs (u16 each)…
//! ```

use super::{check_len, get_u16, get_u48, get_u64, put_echo_tail, put_u16, put_u48, Result, WireError, SEQ48};
use crate::packet::{AckVector, DccpHeader, MAX_ACK_VECTOR_RUNS};

/// Bytes before the runs.
pub const FIXED_LEN: usize = 32;

/// Bytes `h` takes on the wire.
pub fn wire_len(h: &DccpHeader) -> usize {
    FIXED_LEN + 2 * h.ack_vector.len()
}

/// Parse a DCCP header; returns it and its length.
pub fn parse(buf: &[u8]) -> Result<(DccpHeader, usize)> {
    check_len(buf, FIXED_LEN)?;
    let nruns = buf[15] as usize;
    if nruns > MAX_ACK_VECTOR_RUNS {
        return Err(WireError::BadLength { field: "Ack Vector runs", value: nruns });
    }
    let len = FIXED_LEN + 2 * nruns;
    check_len(buf, len)?;
    let mut ack_vector = AckVector::default();
    for i in 0..nruns {
        let r = get_u16(buf, FIXED_LEN + 2 * i);
        ack_vector.push((r >> 14) as u8, (r & 0x3fff) as u64 + 1);
    }
    let h = DccpHeader {
        seq: get_u48(buf, 0),
        ack: get_u48(buf, 6),
        ack_ratio: get_u16(buf, 12),
        echo: buf[14],
        ack_vector,
        ts_val: get_u64(buf, 16),
        ts_ecr: get_u64(buf, 24),
    };
    Ok((h, len))
}

/// Write `h` at the start of `buf`. Sequence numbers must fit 48 bits (RFC 4340's space).
pub fn emit(h: &DccpHeader, buf: &mut [u8]) -> Result<usize> {
    let len = wire_len(h);
    check_len(buf, len)?;
    if h.seq > SEQ48 || h.ack > SEQ48 {
        return Err(WireError::Unsupported("DCCP sequence number beyond 48 bits"));
    }
    put_u48(buf, 0, h.seq);
    put_u48(buf, 6, h.ack);
    put_u16(buf, 12, h.ack_ratio);
    put_echo_tail(buf, 14, h.echo, h.ack_vector.len(), (h.ts_val, h.ts_ecr));
    for (i, (state, run)) in h.ack_vector.iter().enumerate() {
        put_u16(buf, FIXED_LEN + 2 * i, ((state as u16 & 0b11) << 14) | (run - 1) as u16);
    }
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_at_the_edges_of_the_48_bit_space() {
        let mut v = AckVector::default();
        v.push(0, 5);
        v.push(3, 1);
        v.push(0, AckVector::MAX_RUN);
        let h = DccpHeader { seq: SEQ48, ack: 1, ack_vector: v, ack_ratio: 2, echo: 3, ts_val: 5, ts_ecr: 6 };
        let mut buf = [0u8; 64];
        let n = emit(&h, &mut buf).unwrap();
        assert_eq!(n, FIXED_LEN + 6);
        assert_eq!(parse(&buf[..n]), Ok((h, n)));
        assert!(emit(&DccpHeader { seq: SEQ48 + 1, ..h }, &mut buf).is_err());
        assert!(matches!(parse(&buf[..n - 1]), Err(WireError::Truncated { .. })));
        buf[15] = MAX_ACK_VECTOR_RUNS as u8 + 1;
        assert!(parse(&buf).is_err());
    }
}
