//! Live packets tied to their run (issue 37 item 8): replayed or bit-flipped racc packets were
//! taken as genuine and cut an unrelated flow by 76 %.
//!
//! Each run draws a random 128-bit key. Every racc datagram a host sends carries a trailer
//! right after its racc headers: a per-sender counter (8 bytes) and a SipHash-2-4 tag of the
//! racc headers and the counter under the run's key (8 bytes). The router checks the tag and,
//! per flow and direction, that the counter is new (a 64-packet sliding window, as IPsec's
//! anti-replay window, RFC 4303 §3.4.3), before a packet reaches any port; a module's
//! rewrite is sealed again on delivery, and the receiving host checks the tag and its own
//! window. A packet that fails is counted as forged and dropped.
//!
//! The trailer is in the bytes the datagram is padded with up to its modelled size, so a data
//! packet's length does not change; a packet whose headers fill it (a pure ACK) grows by
//! [`TRAILER`] real bytes. Ports account the modelled size, from the shim, as before.

use racc_proto::wire::ip_packet::UDP_LEN;
use racc_proto::wire::ipv4;
use siphasher::sip::SipHasher24;
use std::hash::Hasher;

/// Counter (8 bytes, big-endian) and tag (8 bytes).
pub const TRAILER: usize = 16;

/// A run's key.
#[derive(Clone, Copy)]
pub struct Key([u8; 16]);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(..)")
    }
}

impl Key {
    /// A fresh key from the kernel's random source.
    pub fn random() -> std::io::Result<Key> {
        let mut k = [0u8; 16];
        // SAFETY: writes at most 16 bytes into `k`.
        let n = unsafe { libc::getrandom(k.as_mut_ptr().cast(), k.len(), 0) };
        if n != k.len() as isize {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Key(k))
    }

    /// A fixed key (tests that forge packets of a known run).
    pub fn from_bytes(k: [u8; 16]) -> Key {
        Key(k)
    }

    /// The tag of racc headers `racc` sent with `counter`.
    #[inline]
    pub fn tag(&self, racc: &[u8], counter: u64) -> u64 {
        let mut h = SipHasher24::new_with_key(&self.0);
        h.write(racc);
        h.write(&counter.to_be_bytes());
        h.finish()
    }

    /// Write the trailer for `counter` after the racc headers `payload[..racc_len]`.
    #[inline]
    pub fn seal(&self, payload: &mut [u8], racc_len: usize, counter: u64) {
        let tag = self.tag(&payload[..racc_len], counter);
        payload[racc_len..racc_len + 8].copy_from_slice(&counter.to_be_bytes());
        payload[racc_len + 8..racc_len + TRAILER].copy_from_slice(&tag.to_be_bytes());
    }

    /// The counter of a UDP payload whose racc headers take `racc_len` bytes, if its tag is
    /// this run's.
    #[inline]
    pub fn open(&self, payload: &[u8], racc_len: usize) -> Option<u64> {
        let t = payload.get(racc_len..racc_len + TRAILER)?;
        let counter = u64::from_be_bytes(t[..8].try_into().expect("8 bytes"));
        let tag = u64::from_be_bytes(t[8..].try_into().expect("8 bytes"));
        (self.tag(&payload[..racc_len], counter) == tag).then_some(counter)
    }
}

/// Make room for the trailer in a whole IPv4 packet `buf[..total]` whose IPv4, UDP and racc
/// headers take `headers` bytes: a packet padded to its size has it already; one whose headers
/// fill it grows, with the IPv4 total length, checksum and UDP length rewritten. Returns the
/// new total length, or `None` if `buf` is too short.
pub fn make_room(buf: &mut [u8], headers: usize, total: usize) -> Option<usize> {
    let want = headers + TRAILER;
    if total >= want {
        return Some(total);
    }
    if buf.len() < want {
        return None;
    }
    let ihl = ((buf[0] & 0x0f) as usize) * 4;
    buf[2..4].copy_from_slice(&(want as u16).to_be_bytes());
    buf[10..12].fill(0);
    let c = ipv4::checksum(&buf[..ihl]);
    buf[10..12].copy_from_slice(&c.to_be_bytes());
    buf[ihl + 4..ihl + 6].copy_from_slice(&((want - ihl) as u16).to_be_bytes());
    buf[total..want].fill(0);
    debug_assert!(ihl + UDP_LEN <= headers);
    Some(want)
}

/// Which counters of one sender have been seen: the highest, and a bitmap of the 64 below it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Window {
    top: u64,
    seen: u64,
    any: bool,
}

/// How many counters below the highest seen a late packet may still carry.
pub const WINDOW: u64 = 64;

impl Window {
    /// True (and recorded) if `c` has not been seen and is not older than the window.
    #[inline]
    pub fn accept(&mut self, c: u64) -> bool {
        if !self.any {
            (self.any, self.top, self.seen) = (true, c, 1);
            return true;
        }
        if c > self.top {
            let d = c - self.top;
            self.seen = if d >= WINDOW { 1 } else { (self.seen << d) | 1 };
            self.top = c;
            return true;
        }
        let d = self.top - c;
        if d >= WINDOW || self.seen & (1 << d) != 0 {
            return false;
        }
        self.seen |= 1 << d;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flipped_bit_a_wrong_key_or_a_short_trailer_fails_the_tag() {
        let k = Key::from_bytes([7; 16]);
        let mut p = vec![0u8; 60];
        for (i, b) in p[..40].iter_mut().enumerate() {
            *b = i as u8;
        }
        k.seal(&mut p, 40, 9);
        assert_eq!(k.open(&p, 40), Some(9));
        assert_eq!(Key::from_bytes([8; 16]).open(&p, 40), None);
        for bit in 0..(40 + TRAILER) * 8 {
            let mut q = p.clone();
            q[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(k.open(&q, 40), None, "bit {bit}");
        }
        assert_eq!(k.open(&p[..50], 40), None);
    }

    #[test]
    fn a_pure_ack_grows_by_the_trailer_and_a_padded_packet_keeps_its_length() {
        use racc_proto::packet::{Direction, Kind, Packet, TcpHeader};
        use racc_proto::wire::ip_packet;
        let k = Key::from_bytes([3; 16]);
        let addrs = [[10, 99, 0, 1], [10, 99, 0, 2]];
        let mut ack = Packet::tcp(0, Kind::Ack, 40, 0, TcpHeader { ack: 9, ..Default::default() });
        ack.dir = Direction::Return;
        let data = Packet::tcp(0, Kind::Data, 1000, 960, TcpHeader { seq: 9, ..Default::default() });
        for (p, grows) in [(ack, true), (data, false)] {
            let mut buf = [0u8; 1500];
            let (n, total) = ip_packet::emit(&p, addrs, &mut buf).unwrap();
            let sealed = make_room(&mut buf, n, total).unwrap();
            assert_eq!(sealed, if grows { n + TRAILER } else { total });
            let racc = n - racc_proto::wire::ip_packet::IP_UDP_LEN;
            k.seal(&mut buf[racc_proto::wire::ip_packet::IP_UDP_LEN..sealed], racc, 5);
            // The router's parse takes it (lengths and checksum right), with its modelled size.
            let f = crate::frame::parse(&buf[..sealed]).unwrap();
            assert_eq!((f.pkt, f.racc_len as usize), (p, racc));
            assert_eq!(k.open(&buf[racc_proto::wire::ip_packet::IP_UDP_LEN..sealed], racc), Some(5));
        }
    }

    #[test]
    fn the_window_takes_each_counter_once_and_late_ones_within_it() {
        let mut w = Window::default();
        assert!(w.accept(5));
        assert!(!w.accept(5));
        assert!(w.accept(7));
        assert!(w.accept(6), "late but new");
        assert!(!w.accept(6));
        assert!(w.accept(7 + WINDOW - 1 + 3));
        assert!(!w.accept(7), "older than the window");
        assert!(w.accept(1000));
        assert!(!w.accept(1000 - WINDOW));
        assert!(w.accept(1000 - WINDOW + 1));
    }
}
