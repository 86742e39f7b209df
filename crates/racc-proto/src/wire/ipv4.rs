//! The IPv4 header (RFC 791) as the live router sees it: the ECN bits (RFC 3168) and the
//! IP ID are the fields the load-factor protocols and DCP-EW work on. The router rewrites them
//! in place and fixes the header checksum ([`set_ecn`], [`set_ident`]).

use super::{check_len, get_u16, put_u16, Result, WireError};

pub const MIN_LEN: usize = 20;
/// IP protocol number of UDP, which carries racc datagrams.
pub const PROTO_UDP: u8 = 17;

/// The parsed header. Options are kept as a length only (racc never sends any).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Repr {
    /// The whole TOS byte: DSCP in the upper six bits, ECN in the lower two.
    pub tos: u8,
    pub ident: u16,
    /// Flags and fragment offset as on the wire.
    pub flags_frag: u16,
    pub ttl: u8,
    pub protocol: u8,
    pub src: [u8; 4],
    pub dst: [u8; 4],
    /// Bytes after the header.
    pub payload_len: u16,
}

impl Ipv4Repr {
    pub fn ecn(&self) -> u8 {
        self.tos & 0b11
    }

    /// Parse and verify the header at the start of `buf`; returns it and the header length.
    /// Bytes after `total_len` (link padding) are ignored.
    pub fn parse(buf: &[u8]) -> Result<(Ipv4Repr, usize)> {
        check_len(buf, MIN_LEN)?;
        if buf[0] >> 4 != 4 {
            return Err(WireError::BadValue { field: "IP version", value: buf[0] >> 4 });
        }
        let ihl = (buf[0] & 0x0f) as usize * 4;
        if ihl < MIN_LEN {
            return Err(WireError::BadLength { field: "IPv4 header length", value: ihl });
        }
        check_len(buf, ihl)?;
        let total = get_u16(buf, 2) as usize;
        if total < ihl {
            return Err(WireError::BadLength { field: "IPv4 total length", value: total });
        }
        check_len(buf, total)?;
        if checksum(&buf[..ihl]) != 0 {
            return Err(WireError::BadChecksum);
        }
        let repr = Ipv4Repr {
            tos: buf[1],
            ident: get_u16(buf, 4),
            flags_frag: get_u16(buf, 6),
            ttl: buf[8],
            protocol: buf[9],
            src: [buf[12], buf[13], buf[14], buf[15]],
            dst: [buf[16], buf[17], buf[18], buf[19]],
            payload_len: (total - ihl) as u16,
        };
        Ok((repr, ihl))
    }

    /// Write a 20-byte header with a correct checksum; returns 20.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        check_len(buf, MIN_LEN)?;
        let total = MIN_LEN + self.payload_len as usize;
        if total > u16::MAX as usize {
            return Err(WireError::BadLength { field: "IPv4 total length", value: total });
        }
        buf[0] = 0x45;
        buf[1] = self.tos;
        put_u16(buf, 2, total as u16);
        put_u16(buf, 4, self.ident);
        put_u16(buf, 6, self.flags_frag);
        buf[8] = self.ttl;
        buf[9] = self.protocol;
        put_u16(buf, 10, 0);
        buf[12..16].copy_from_slice(&self.src);
        buf[16..20].copy_from_slice(&self.dst);
        let c = checksum(&buf[..MIN_LEN]);
        put_u16(buf, 10, c);
        Ok(MIN_LEN)
    }
}

/// The Internet checksum (RFC 1071) of `bytes`: 0 over a header whose checksum is right.
pub fn checksum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut chunks = bytes.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [last] = chunks.remainder() {
        sum += (*last as u32) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Header length of the (already verified) header at the start of `buf`.
fn header_len(buf: &[u8]) -> Result<usize> {
    check_len(buf, MIN_LEN)?;
    let ihl = (buf[0] & 0x0f) as usize * 4;
    if ihl < MIN_LEN {
        return Err(WireError::BadLength { field: "IPv4 header length", value: ihl });
    }
    check_len(buf, ihl)?;
    Ok(ihl)
}

fn refresh_checksum(buf: &mut [u8], ihl: usize) {
    put_u16(buf, 10, 0);
    let c = checksum(&buf[..ihl]);
    put_u16(buf, 10, c);
}

/// Rewrite the ECN bits of the header at the start of `buf` and fix its checksum.
pub fn set_ecn(buf: &mut [u8], bits: u8) -> Result<()> {
    let ihl = header_len(buf)?;
    buf[1] = (buf[1] & !0b11) | (bits & 0b11);
    refresh_checksum(buf, ihl);
    Ok(())
}

/// Rewrite the IP ID of the header at the start of `buf` and fix its checksum.
pub fn set_ident(buf: &mut [u8], ident: u16) -> Result<()> {
    let ihl = header_len(buf)?;
    put_u16(buf, 4, ident);
    refresh_checksum(buf, ihl);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr() -> Ipv4Repr {
        Ipv4Repr {
            tos: 0b10,
            ident: 0xbeef,
            flags_frag: 0x4000,
            ttl: 64,
            protocol: PROTO_UDP,
            src: [10, 0, 0, 1],
            dst: [10, 0, 1, 1],
            payload_len: 8,
        }
    }

    #[test]
    fn round_trip_and_checksum_of_a_known_header() {
        // RFC 1071's worked example style: a header whose checksum verifies to 0.
        let mut buf = [0u8; 28];
        assert_eq!(repr().emit(&mut buf), Ok(20));
        assert_eq!(checksum(&buf[..20]), 0);
        assert_eq!(Ipv4Repr::parse(&buf), Ok((repr(), 20)));
        // The classic example from Wikipedia's IPv4 checksum article: 0xb861.
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8,
            0x00, 0xc7,
        ];
        assert_eq!(checksum(&h), 0xb861);
    }

    #[test]
    fn rewrites_keep_the_checksum_right() {
        let mut buf = [0u8; 28];
        repr().emit(&mut buf).unwrap();
        set_ecn(&mut buf, 0b11).unwrap();
        set_ident(&mut buf, 7).unwrap();
        let (r, _) = Ipv4Repr::parse(&buf).unwrap();
        assert_eq!((r.ecn(), r.ident, r.tos >> 2), (0b11, 7, 0));
    }

    #[test]
    fn malformed_headers_are_errors() {
        let mut buf = [0u8; 28];
        repr().emit(&mut buf).unwrap();
        let mut b = buf;
        b[0] = 0x65;
        assert!(Ipv4Repr::parse(&b).is_err());
        let mut b = buf;
        b[0] = 0x44;
        assert!(Ipv4Repr::parse(&b).is_err());
        let mut b = buf;
        b[3] = 200; // total length beyond the buffer
        assert!(matches!(Ipv4Repr::parse(&b), Err(WireError::Truncated { .. })));
        let mut b = buf;
        b[8] ^= 1;
        assert_eq!(Ipv4Repr::parse(&b), Err(WireError::BadChecksum));
        assert!(Ipv4Repr::parse(&buf[..19]).is_err());
    }
}
