//! racc's headers as bytes, for the live runtime and pcap files: the racc shim, the TCP-like and
//! DCCP transport headers and every congestion header (docs/PROTOCOLS.md §1), big-endian.
//!
//! In the style of smoltcp's `wire` module: each header has a checked *view* over a byte buffer
//! (`new_checked` verifies every length before any field is read, so malformed bytes give a
//! [`WireError`], never a panic) and a separate parsed *representation* (`…Repr`) that emits
//! bytes; `parse(emit(x)) == x` for every header. Emitting writes into a caller's buffer and
//! allocates nothing.
//!
//! A racc datagram (the UDP payload in the live runtime) is: shim, transport header, congestion
//! header, application bytes. The IP layer around it carries the ECN bits and the IP ID
//! ([`ipv4`]); [`datagram`] turns a whole [`Packet`](crate::packet::Packet) into bytes and back.

pub mod cong;
pub mod datagram;
pub mod dccp;
pub mod ip_packet;
pub mod ipv4;
pub mod selfcheck;
pub mod shim;
pub mod tcp;

use std::fmt;

/// Why bytes are not a racc header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Fewer bytes than the header (or a length field) needs.
    Truncated { need: usize, have: usize },
    /// A length field that contradicts the header's layout.
    BadLength { field: &'static str, value: usize },
    /// Not a racc shim (magic bytes differ).
    BadMagic,
    /// A shim version this build does not speak.
    BadVersion(u8),
    /// An unknown value in an enumerated field.
    BadValue { field: &'static str, value: u8 },
    /// An IPv4 header checksum that does not verify.
    BadChecksum,
    /// A packet the wire format cannot carry (the simulator's modelled IPsec outer header).
    Unsupported(&'static str),
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Truncated { need, have } => write!(f, "truncated: {have} bytes, need {need}"),
            WireError::BadLength { field, value } => write!(f, "bad length in {field}: {value}"),
            WireError::BadMagic => write!(f, "not a racc datagram (bad magic)"),
            WireError::BadVersion(v) => write!(f, "unsupported racc wire version {v}"),
            WireError::BadValue { field, value } => write!(f, "bad {field}: {value}"),
            WireError::BadChecksum => write!(f, "bad IPv4 header checksum"),
            WireError::Unsupported(what) => write!(f, "cannot be put on the wire: {what}"),
        }
    }
}

impl std::error::Error for WireError {}

pub type Result<T> = std::result::Result<T, WireError>;

/// `buf` holds at least `need` bytes.
#[inline]
pub(crate) fn check_len(buf: &[u8], need: usize) -> Result<()> {
    if buf.len() < need {
        Err(WireError::Truncated { need, have: buf.len() })
    } else {
        Ok(())
    }
}

// Big-endian field access on buffers whose length was checked.
#[inline]
pub(crate) fn get_u16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}
#[inline]
pub(crate) fn get_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
#[inline]
pub(crate) fn get_u64(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(x)
}
#[inline]
pub(crate) fn put_u16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}
#[inline]
pub(crate) fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}
#[inline]
pub(crate) fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_be_bytes());
}

/// The end of the fixed part both racc transport headers share (`tcp.rs` at 18, `dccp.rs` at
/// 14): the VCP family's echo byte, the count of the list after the fixed part (SACK blocks, Ack
/// Vector runs), and the 64-bit ns timestamps (ts_val, ts_ecr): 18 bytes from `at`.
#[inline]
pub(crate) fn put_echo_tail(b: &mut [u8], at: usize, echo: u8, count: usize, ts: (u64, u64)) {
    b[at] = echo;
    b[at + 1] = count as u8;
    put_u64(b, at + 2, ts.0);
    put_u64(b, at + 10, ts.1);
}

/// The 48-bit DCCP sequence number space (RFC 4340 §7.1).
pub(crate) const SEQ48: u64 = (1 << 48) - 1;
#[inline]
pub(crate) fn get_u48(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x[2..].copy_from_slice(&b[at..at + 6]);
    u64::from_be_bytes(x)
}
#[inline]
pub(crate) fn put_u48(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 6].copy_from_slice(&(v & SEQ48).to_be_bytes()[2..]);
}

#[cfg(test)]
mod fuzz_tests;
