//! The TCP-like transport header on the wire. Not TCP's own layout: racc's fields are TCP's
//! (ports, 32-bit seq/ack, flags with TCP's bit values, window, the modelled checksum) plus
//! the reserved-bit echo of the VCP family as a byte of its own, 64-bit ns timestamps (the
//! simulator's clock, RFC 7323's role) and up to three SACK blocks (RFC 2018).
//!
//! ```text
//!  0        2        4     8     12    13     14      16        18    19     20       28       36
//!  | sport  | dport  | seq | ack | hlen | flags | window | checksum | echo | nsack | ts_val | ts_ecr | sack…
//! ```
//! `hlen` is the header length in 4-byte words: 9 + 2·nsack.

use super::{check_len, get_u16, get_u32, get_u64, put_echo_tail, put_u16, put_u32, Result, WireError};
use crate::packet::{SackBlocks, TcpHeader, MAX_SACK_BLOCKS};

/// Bytes before the SACK blocks.
pub const FIXED_LEN: usize = 36;

/// A checked view over a TCP-like header.
pub struct TcpView<'a> {
    buf: &'a [u8],
}

impl<'a> TcpView<'a> {
    /// Verify every length before any field is read.
    pub fn new_checked(buf: &'a [u8]) -> Result<TcpView<'a>> {
        check_len(buf, FIXED_LEN)?;
        let nsack = buf[19] as usize;
        if nsack > MAX_SACK_BLOCKS {
            return Err(WireError::BadLength { field: "SACK block count", value: nsack });
        }
        let len = FIXED_LEN + 8 * nsack;
        if buf[12] as usize * 4 != len {
            return Err(WireError::BadLength { field: "TCP header length", value: buf[12] as usize * 4 });
        }
        check_len(buf, len)?;
        Ok(TcpView { buf })
    }

    pub fn header_len(&self) -> usize {
        self.buf[12] as usize * 4
    }

    pub fn seq(&self) -> u32 {
        get_u32(self.buf, 4)
    }

    pub fn ack(&self) -> u32 {
        get_u32(self.buf, 8)
    }

    pub fn flags(&self) -> u8 {
        self.buf[13]
    }

    pub fn repr(&self) -> TcpHeader {
        let b = self.buf;
        let mut sack = SackBlocks::default();
        for i in 0..b[19] as usize {
            let at = FIXED_LEN + 8 * i;
            sack.push(get_u32(b, at), get_u32(b, at + 4));
        }
        TcpHeader {
            src_port: get_u16(b, 0),
            dst_port: get_u16(b, 2),
            seq: self.seq(),
            ack: self.ack(),
            flags: self.flags(),
            window: get_u16(b, 14),
            checksum: get_u16(b, 16),
            echo: b[18],
            ts_val: get_u64(b, 20),
            ts_ecr: get_u64(b, 28),
            sack,
        }
    }
}

/// Bytes `h` takes on the wire.
pub fn wire_len(h: &TcpHeader) -> usize {
    FIXED_LEN + 8 * h.sack.len()
}

/// Parse a TCP-like header; returns it and its length.
pub fn parse(buf: &[u8]) -> Result<(TcpHeader, usize)> {
    let v = TcpView::new_checked(buf)?;
    Ok((v.repr(), v.header_len()))
}

/// Write `h` at the start of `buf`; returns the bytes written.
pub fn emit(h: &TcpHeader, buf: &mut [u8]) -> Result<usize> {
    let len = wire_len(h);
    check_len(buf, len)?;
    put_u16(buf, 0, h.src_port);
    put_u16(buf, 2, h.dst_port);
    put_u32(buf, 4, h.seq);
    put_u32(buf, 8, h.ack);
    buf[12] = (len / 4) as u8;
    buf[13] = h.flags;
    put_u16(buf, 14, h.window);
    put_u16(buf, 16, h.checksum);
    put_echo_tail(buf, 18, h.echo, h.sack.len(), (h.ts_val, h.ts_ecr));
    for (i, (l, r)) in h.sack.iter().enumerate() {
        put_u32(buf, FIXED_LEN + 8 * i, l);
        put_u32(buf, FIXED_LEN + 8 * i + 4, r);
    }
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::flags;

    #[test]
    fn round_trip_with_and_without_sack() {
        let mut h = TcpHeader {
            src_port: 1,
            dst_port: 2,
            seq: 0xdead_beef,
            ack: 7,
            flags: flags::ACK | flags::ECE,
            echo: 0b101,
            window: 65535,
            checksum: 0x1234,
            ts_val: 123_456_789_012,
            ts_ecr: u64::MAX,
            sack: SackBlocks::default(),
        };
        let mut buf = [0u8; 64];
        for n in 0..=3 {
            if n > 0 {
                h.sack.push(n * 100, n * 100 + 50);
            }
            let len = emit(&h, &mut buf).unwrap();
            assert_eq!(len, 36 + 8 * n as usize);
            assert_eq!(parse(&buf[..len]).unwrap(), (h, len));
            // One byte short is an error, not a panic.
            assert!(matches!(parse(&buf[..len - 1]), Err(WireError::Truncated { .. })));
        }
    }

    #[test]
    fn refuses_a_length_that_contradicts_the_sack_count() {
        let h = TcpHeader::default();
        let mut buf = [0u8; 64];
        emit(&h, &mut buf).unwrap();
        buf[19] = 4;
        assert_eq!(parse(&buf), Err(WireError::BadLength { field: "SACK block count", value: 4 }));
        buf[19] = 1;
        assert!(matches!(parse(&buf), Err(WireError::BadLength { field: "TCP header length", .. })));
        assert!(matches!(emit(&h, &mut buf[..10]), Err(WireError::Truncated { need: 36, have: 10 })));
    }
}
