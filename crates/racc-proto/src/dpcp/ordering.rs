//! Packet ordering: where a packet sits in its chain, carried in the TCP header itself.
//!
//! - **n = 2, Alg. 1** [MPCP §3.2]: seq > ack marks an MSP, seq < ack an LSP. The sender
//!   swaps the two fields when their order is wrong, which leaves the Internet checksum valid
//!   (the sum is commutative). A tie (seq == ack) is broken by decrementing the field that must
//!   be the smaller, **without** updating the checksum, so a tie-adjusted packet arrives with an
//!   invalid checksum and a difference of 1 [seed]. Tie at 0 [reconstructed, docs/PROTOCOLS.md §3]:
//!   decrementing 0 would wrap to 2³² − 1 and reverse the order, so add 1 to the field that
//!   must be the larger instead. The receiving end puts seq back [reconstructed]: if it knows
//!   the exact value of the *other* field (a receiver that sends no data knows the ack every
//!   data packet carries: its own next seq; a sender knows the seq of the receiver's ACKs) and
//!   exactly one field has it, that field is the other one; otherwise seq is the field nearer
//!   the receive window (an anchor: rcv_nxt at a data receiver, the last seq sent at a sender
//!   reading ACKs). The exact rule keeps working where the two fields cross (they meet once
//!   every 2³² bytes); the window rule needs them "sufficiently apart" (MPCP §3.2). A tie
//!   is then undone by trying both repairs (smaller + 1, larger − 1) and keeping the one whose
//!   checksum verifies.
//! - **n ≥ 3, checksum offsets** [MPCP §5; details reconstructed, docs/PROTOCOLS.md §3]: the
//!   sender subtracts the position k from ack without updating the checksum; anyone
//!   recomputing the checksum finds it exceeds the stored one by k (mod 0xFFFF). If ack wrapped
//!   below 0 the difference reads k − 1 (2³² ≡ 1 mod 0xFFFF), so a reader that sees
//!   ack ≥ 2³² − (n − 1) adds 1 ([`read_offset`], the plain rule). It misreads a packet whose
//!   true ack lies in [2³² − (n − 1) + k, 2³²): routers, which know nothing of the flow, keep
//!   it and misread a position with probability ≈ n·2⁻³² per packet (one exception at the
//!   sender's decoder, MPCP §3.4). The receiving end adds k back.
//! - **TPCP wrap at the ends** [reconstructed]: a wire ack A and difference d admit the
//!   no-wrap reading (k = d, ack A + d) iff A + d < 2³², and the wrap reading (k = d + 1, ack
//!   A + d + 1 − 2³²) iff A + d ≥ 2³² − 1; both only when A + d = 2³² − 1, i.e. true ack 2³² − 1
//!   at position d or true ack 0 at position d + 1, one byte apart. So an anchor settles it only
//!   if it is the exact ack: a data receiver has it (its own next seq, which every data packet
//!   carries as ack; rcv_nxt anchors seq, not ack), and takes the reading that lands nearer it
//!   ([`restore_offset_near`]). A sender reading ACKs does not (the cumulative ack lies
//!   anywhere in its window, and "nearer the last seq sent" would pick the larger reading
//!   whatever the truth); it settles the tie by the 1-bit position the ACK's echo carries
//!   (docs/PROTOCOLS.md §1; bits 2–3 of `echo`), whose parity differs between the two readings
//!   ([`restore_offset_parity`]). Both ends are then exact on both sides of the wrap.
//!
//! Everything here is a pure function of the header: routers call [`position`] /
//! [`position_n`] on a `&Packet` with no per-flow state.

use crate::packet::{tcp_checksum, Packet, TcpHeader};

/// Place of a packet in its chain: 0 = MSP (sent first), n − 1 = the least significant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position(pub u8);

impl Position {
    pub const MSP: Position = Position(0);
    pub const LSP: Position = Position(1);

    #[inline]
    pub fn is_msp(self) -> bool {
        self.0 == 0
    }
}

/// What Alg. 1 did to a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ordered {
    /// Already in the wanted order.
    Kept,
    /// seq and ack swapped (checksum still valid).
    Swapped,
    /// seq == ack: one field moved by 1 (checksum now invalid, on purpose).
    Tie,
}

/// Alg. 1 at a sending end (MPCP §3.2): make seq > ack for an MSP, seq < ack for an LSP.
/// The checksum is left as computed over the original fields.
#[inline]
pub fn order(h: &mut TcpHeader, msp: bool) -> Ordered {
    use std::cmp::Ordering::*;
    match (msp, h.seq.cmp(&h.ack)) {
        (true, Greater) | (false, Less) => Ordered::Kept,
        (true, Less) | (false, Greater) => {
            std::mem::swap(&mut h.seq, &mut h.ack);
            Ordered::Swapped
        }
        // Tie: decrement the field that must be the smaller; at 0, raise the larger instead.
        (true, Equal) => {
            if h.ack == 0 {
                h.seq = 1;
            } else {
                h.ack -= 1;
            }
            Ordered::Tie
        }
        (false, Equal) => {
            if h.seq == 0 {
                h.ack = 1;
            } else {
                h.seq -= 1;
            }
            Ordered::Tie
        }
    }
}

/// The DPCP position a header shows on the wire: seq > ack MSP, seq < ack LSP. A packet no
/// DPCP sender ordered (seq == ack) reads as an MSP, i.e. as VCP would treat it.
#[inline]
pub fn wire_position(h: &TcpHeader) -> Position {
    if h.seq < h.ack {
        Position::LSP
    } else {
        Position::MSP
    }
}

/// A router's reading of a DPCP packet's position (n = 2). Inside an IPsec tunnel the TCP
/// header is encrypted, so the packet reads as an MSP (plain VCP) [MPCP §5 pitfall].
#[inline]
pub fn position(pkt: &Packet) -> Position {
    match (pkt.outer, pkt.tcp_hdr()) {
        (None, Some(h)) => wire_position(h),
        _ => Position::MSP,
    }
}

/// A router's reading of the position in an n-packet chain: n = 1 always MSP, n = 2 the
/// seq/ack order, n ≥ 3 the checksum offset (an offset ≥ n reads as MSP).
#[inline]
pub fn position_n(pkt: &Packet, n: u8) -> Position {
    match n {
        0 | 1 => Position::MSP,
        2 => position(pkt),
        _ => match (pkt.outer, pkt.tcp_hdr()) {
            (None, Some(h)) => Position(read_offset(h, n).unwrap_or(0)),
            _ => Position::MSP,
        },
    }
}

/// What the receiving end knows about the two fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchor {
    /// A data receiver: seq lies near rcv_nxt (`near`); ack is exactly `other` if known.
    Seq { near: u32, other: Option<u32> },
    /// A sender reading ACKs: ack lies near `near`; seq is exactly `other` if known.
    Ack { near: u32, other: Option<u32> },
}

impl Anchor {
    /// Seq anchored near `near`, nothing known of ack.
    pub fn seq(near: u32) -> Anchor {
        Anchor::Seq { near, other: None }
    }

    /// Ack anchored near `near`, nothing known of seq.
    pub fn ack(near: u32) -> Anchor {
        Anchor::Ack { near, other: None }
    }
}

/// What [`restore`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Restored {
    /// The position the packet showed on the wire.
    pub pos: Position,
    pub swapped: bool,
    /// A tie adjustment was undone by the checksum.
    pub tie: bool,
    /// The restored header's checksum verifies.
    pub checksum_ok: bool,
}

/// Modular distance between two 32-bit wire values.
#[inline]
fn dist(a: u32, b: u32) -> u32 {
    (a.wrapping_sub(b) as i32).unsigned_abs()
}

/// Undo Alg. 1 at the receiving end of an n = 2 chain (module docs). The caller guarantees the
/// seed's premise (seq and ack "sufficiently apart", MPCP §3.2): the anchored field is
/// the one nearer the anchor.
pub fn restore(h: &mut TcpHeader, anchor: Anchor) -> Restored {
    let pos = wire_position(h);
    let seq_in_place = match anchor {
        Anchor::Seq { other: Some(o), .. } if (h.seq == o) != (h.ack == o) => h.ack == o,
        Anchor::Ack { other: Some(o), .. } if (h.seq == o) != (h.ack == o) => h.seq == o,
        Anchor::Seq { near, .. } => dist(h.seq, near) <= dist(h.ack, near),
        Anchor::Ack { near, .. } => dist(h.ack, near) <= dist(h.seq, near),
    };
    if !seq_in_place {
        std::mem::swap(&mut h.seq, &mut h.ack);
    }
    let mut r = Restored { pos, swapped: !seq_in_place, tie: false, checksum_ok: tcp_checksum(h) == h.checksum };
    // A tie shows as a difference of 1 with a bad checksum: try both repairs (smaller + 1,
    // larger − 1; neither can wrap) and keep the one that verifies.
    if !r.checksum_ok && h.seq.abs_diff(h.ack) == 1 {
        let lo = h.seq.min(h.ack);
        for v in [lo + 1, lo] {
            let t = TcpHeader { seq: v, ack: v, ..*h };
            if tcp_checksum(&t) == h.checksum {
                *h = t;
                r.tie = true;
                r.checksum_ok = true;
                break;
            }
        }
    }
    r
}

/// TPCP at a sending end: subtract the position k from ack, checksum untouched.
#[inline]
pub fn mark_offset(h: &mut TcpHeader, k: u8) {
    h.ack = h.ack.wrapping_sub(k as u32);
}

/// The checksum difference a TPCP offset leaves (module docs).
#[inline]
fn offset_diff(h: &TcpHeader) -> u32 {
    (tcp_checksum(h) as u32 + 0xFFFF - h.checksum as u32) % 0xFFFF
}

/// TPCP, the plain rule (routers): the position k read from the checksum difference, with the
/// wrap correction for an ack ≥ 2³² − (n − 1); `None` if the difference is not a position of an
/// n-chain. Misreads a true ack in [2³² − (n − 1) + k, 2³²) (module docs).
#[inline]
pub fn read_offset(h: &TcpHeader, n: u8) -> Option<u8> {
    let mut d = offset_diff(h);
    if n >= 2 && h.ack >= u32::MAX - (n as u32 - 2) {
        d = (d + 1) % 0xFFFF;
    }
    (d < n as u32).then_some(d as u8)
}

/// TPCP: the readings of the offset consistent with the header, (no wrap, wrap) (module docs).
#[inline]
fn offset_readings(h: &TcpHeader, n: u8) -> (Option<u8>, Option<u8>) {
    let d = offset_diff(h) as u64;
    let end = h.ack as u64 + d;
    let plain = (d < n as u64 && end <= u32::MAX as u64).then_some(d as u8);
    let wrapped = (d + 1 < n as u64 && end >= u32::MAX as u64).then_some(d as u8 + 1);
    (plain, wrapped)
}

/// Add k back to ack; an unreadable offset is left alone and reads as position 0.
#[inline]
fn add_back(h: &mut TcpHeader, k: Option<u8>) -> Position {
    let k = k.unwrap_or(0);
    h.ack = h.ack.wrapping_add(k as u32);
    Position(k)
}

/// TPCP at an end that knows the true ack exactly (`expect`, a data receiver's own next seq):
/// of two consistent readings the one whose ack lands nearer `expect`. Restores ack.
#[inline]
pub fn restore_offset_near(h: &mut TcpHeader, n: u8, expect: u32) -> Position {
    let k = match offset_readings(h, n) {
        (Some(a), Some(b)) => {
            let near = |k: u8| dist(h.ack.wrapping_add(k as u32), expect);
            Some(if near(b) < near(a) { b } else { a })
        }
        (a, b) => a.or(b),
    };
    add_back(h, k)
}

/// TPCP at a sender reading an ACK: of two consistent readings (their k differ by 1) the one
/// whose parity is the echoed position's low bit `parity` (module docs). Restores ack.
#[inline]
pub fn restore_offset_parity(h: &mut TcpHeader, n: u8, parity: u8) -> Position {
    let k = match offset_readings(h, n) {
        (Some(a), Some(b)) => Some(if a & 1 == parity & 1 { a } else { b }),
        (a, b) => a.or(b),
    };
    add_back(h, k)
}

/// TPCP at the receiving end: read k and add it back to ack. An unreadable offset is left
/// alone and reads as position 0.
#[inline]
pub fn restore_offset(h: &mut TcpHeader, n: u8) -> Position {
    let k = read_offset(h, n).unwrap_or(0);
    h.ack = h.ack.wrapping_add(k as u32);
    Position(k)
}

/// Impose position `pos` of an n-chain on an outgoing header (Alg. 1 for n = 2, the offset
/// for n ≥ 3, nothing for n = 1). Receivers use it for ACKs, which take the position of the
/// data packet they echo (docs/PROTOCOLS.md §3).
#[inline]
pub fn impose(h: &mut TcpHeader, pos: Position, n: u8) {
    match n {
        0 | 1 => {}
        2 => {
            order(h, pos.is_msp());
        }
        _ => mark_offset(h, pos.0),
    }
}

/// Undo [`impose`] at the receiving end; returns the position the packet carried. For n ≥ 3 a
/// data receiver that knows its own seq (`Anchor::Seq { other: Some(_) }`) and a sender reading
/// an ACK (`Anchor::Ack`, by the echo's position bit) settle the wrap exactly (module docs);
/// otherwise the plain rule.
#[inline]
pub fn undo(h: &mut TcpHeader, n: u8, anchor: Anchor) -> Position {
    match (n, anchor) {
        (0 | 1, _) => Position::MSP,
        (2, _) => restore(h, anchor).pos,
        (_, Anchor::Seq { other: Some(own), .. }) => restore_offset_near(h, n, own),
        (_, Anchor::Ack { .. }) => restore_offset_parity(h, n, (h.echo >> 2) & 1),
        _ => restore_offset(h, n),
    }
}

/// The sending end's position counter (MPCP §3.2: "a binary flag MSP ... flips over" per
/// packet sent; the first data packet is an MSP), generalised to n positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sequencer {
    n: u8,
    next: u8,
}

impl Sequencer {
    pub fn new(n: u8) -> Sequencer {
        Sequencer { n: n.max(1), next: 0 }
    }

    /// The next packet starts a chain (connection start, return from VCP mode).
    #[inline]
    pub fn reset(&mut self) {
        self.next = 0;
    }

    /// Give the next packet its position and impose it on `h`. With `chains` false (VCP mode,
    /// MPCP §3.4) every packet is sent as an MSP and the counter does not move.
    #[inline]
    pub fn stamp(&mut self, h: &mut TcpHeader, chains: bool) -> Position {
        let pos = if chains { Position(self.next) } else { Position::MSP };
        if chains {
            self.next = (self.next + 1) % self.n;
        }
        if self.n == 2 {
            // VCP mode still imposes seq > ack, so every node reads an MSP.
            order(h, pos.is_msp());
        } else {
            impose(h, pos, self.n);
        }
        pos
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{flags, Kind};
    use crate::rng::SimRng;

    const MAX: u32 = u32::MAX;

    fn hdr(seq: u32, ack: u32) -> TcpHeader {
        let mut h = TcpHeader {
            src_port: 1234,
            dst_port: 80,
            seq,
            ack,
            flags: flags::ACK,
            window: 65535,
            ..Default::default()
        };
        h.checksum = tcp_checksum(&h);
        h
    }

    #[test]
    fn alg1_every_branch() {
        // (msp, seq, ack) → (result, seq', ack')
        let cases = [
            (true, 10, 5, Ordered::Kept, 10, 5),
            (true, 5, 10, Ordered::Swapped, 10, 5),
            (true, 7, 7, Ordered::Tie, 7, 6),
            (true, 0, 0, Ordered::Tie, 1, 0), // tie at 0: raise seq instead
            (true, MAX, MAX, Ordered::Tie, MAX, MAX - 1),
            (true, MAX, 0, Ordered::Kept, MAX, 0),
            (true, 0, MAX, Ordered::Swapped, MAX, 0),
            (false, 5, 10, Ordered::Kept, 5, 10),
            (false, 10, 5, Ordered::Swapped, 5, 10),
            (false, 7, 7, Ordered::Tie, 6, 7),
            (false, 0, 0, Ordered::Tie, 0, 1), // tie at 0: raise ack instead
            (false, MAX, MAX, Ordered::Tie, MAX - 1, MAX),
            (false, MAX, 0, Ordered::Swapped, 0, MAX),
            (false, 1, 1, Ordered::Tie, 0, 1),
            (true, 1, 1, Ordered::Tie, 1, 0),
        ];
        for (msp, s, a, want, s2, a2) in cases {
            let mut h = hdr(s, a);
            let before = h.checksum;
            assert_eq!(order(&mut h, msp), want, "{msp} {s} {a}");
            assert_eq!((h.seq, h.ack), (s2, a2), "{msp} {s} {a}");
            assert_eq!(h.checksum, before, "the sender never updates the checksum");
            assert_eq!(wire_position(&h), if msp { Position::MSP } else { Position::LSP });
            // A swap keeps the checksum valid; a tie adjustment breaks it on purpose.
            assert_eq!(tcp_checksum(&h) == h.checksum, want != Ordered::Tie, "{msp} {s} {a}");
        }
    }

    #[test]
    fn restore_every_branch() {
        // MSP that needed a swap, at a data receiver anchored at seq 5000.
        let orig = hdr(5000, 9_000_000);
        let mut h = orig;
        order(&mut h, true);
        let r = restore(&mut h, Anchor::seq(4000));
        assert_eq!(h, orig);
        assert_eq!((r.pos, r.swapped, r.tie, r.checksum_ok), (Position::MSP, true, false, true));
        // LSP kept as is.
        let mut h = orig;
        order(&mut h, false);
        let r = restore(&mut h, Anchor::seq(5000));
        assert_eq!((h, r.pos, r.swapped), (orig, Position::LSP, false));
        // Ties, including at 0 and 2^32 - 1, for both positions and both anchors.
        for v in [0, 1, 2, 77, MAX - 1, MAX] {
            for msp in [true, false] {
                for anchor in [
                    Anchor::seq(v),
                    Anchor::ack(v),
                    Anchor::seq(v.wrapping_add(3)),
                    Anchor::Seq { near: 9, other: Some(v) },
                ] {
                    let orig = hdr(v, v);
                    let mut h = orig;
                    assert_eq!(order(&mut h, msp), Ordered::Tie);
                    let r = restore(&mut h, anchor);
                    assert_eq!(h, orig, "tie {v} msp {msp} {anchor:?}");
                    assert!(r.tie && r.checksum_ok);
                    assert_eq!(r.pos.is_msp(), msp);
                }
            }
        }
        // A genuine difference of 1 with a valid checksum is not a tie.
        let orig = hdr(100, 101);
        let mut h = orig;
        let r = restore(&mut h, Anchor::seq(100));
        assert_eq!((h, r.tie, r.checksum_ok), (orig, false, true));
        // A corrupted header is reported, not "repaired" into something else.
        let mut h = hdr(100, 101);
        h.checksum ^= 0x5555;
        let r = restore(&mut h, Anchor::seq(100));
        assert_eq!((h.seq, h.ack, r.tie, r.checksum_ok), (100, 101, false, false));
    }

    /// restore(order(h)) == h over random headers, anchors anywhere (wrap included), seq within
    /// ±2^20 of its anchor and ack at least 2^30 away (the seed's premise), plus ties.
    #[test]
    fn property_restore_inverts_order() {
        let mut rng = SimRng::for_component(11, "dpcp/ordering");
        let mut ties = 0;
        for i in 0..200_000u32 {
            let anchor = match i % 4 {
                0 => rng.next_u64() as u32,
                1 => (rng.below(1 << 21) as u32).wrapping_sub(1 << 20), // near 0
                2 => MAX - rng.below(1 << 21) as u32,                   // near 2^32
                _ => rng.below(4) as u32,
            };
            let near = anchor.wrapping_add((rng.below(1 << 21) as u32).wrapping_sub(1 << 20));
            let far = loop {
                let x = rng.next_u64() as u32;
                if dist(x, anchor) > 1 << 30 {
                    break x;
                }
            };
            let tie = rng.below(10) == 0;
            let other = if tie { near } else { far };
            // Data packet (seq anchored) and ACK (ack anchored); every third case the other
            // field is known exactly and may be anywhere, even next to the anchored one.
            let exact = i % 3 == 0;
            let other = if exact && !tie { anchor.wrapping_add(rng.below(64) as u32).wrapping_sub(32) } else { other };
            let known = exact.then_some(other);
            let (orig, a) = if i % 2 == 0 {
                (hdr(near, other), Anchor::Seq { near: anchor, other: known })
            } else {
                (hdr(other, near), Anchor::Ack { near: anchor, other: known })
            };
            if exact && near == other && !tie {
                continue; // equal fields are a tie, covered above
            }
            let mut orig = orig;
            orig.src_port = rng.next_u64() as u16;
            orig.window = rng.next_u64() as u16;
            orig.checksum = tcp_checksum(&orig);
            let msp = rng.below(2) == 0;
            let mut h = orig;
            let how = order(&mut h, msp);
            ties += (how == Ordered::Tie) as u32;
            assert_eq!(position(&Packet::tcp(1, Kind::Data, 100, 60, h)).is_msp(), msp);
            let r = restore(&mut h, a);
            assert_eq!(h, orig, "case {i}: {orig:?} msp {msp} {a:?}");
            assert_eq!((r.pos.is_msp(), r.tie, r.checksum_ok), (msp, how == Ordered::Tie, true));
        }
        assert!(ties > 15_000, "{ties}");
    }

    #[test]
    fn tpcp_offsets_both_sides_of_the_wrap() {
        let mut rng = SimRng::for_component(5, "dpcp/tpcp");
        for n in [3u8, 4] {
            let mut acks: Vec<u32> = (0..8).chain(MAX - 8..=MAX).collect();
            acks.extend((0..2000).map(|_| rng.next_u64() as u32));
            for ack in acks {
                for k in 0..n {
                    let orig = hdr(rng.next_u64() as u32, ack);
                    let mut h = orig;
                    mark_offset(&mut h, k);
                    let p = Packet::tcp(1, Kind::Data, 100, 60, h);
                    // Exact except where the true ack lies within n − 1 − k of 2^32 and did
                    // not wrap (docs/PROTOCOLS.md §3: ≈ n·2⁻³² per packet).
                    let misread = ack as u64 >= (1u64 << 32) - (n as u64 - 1) + k as u64;
                    assert_eq!(position_n(&p, n) != Position(k), misread, "n {n} ack {ack} k {k}");
                    if !misread {
                        assert_eq!(read_offset(&h, n), Some(k));
                        assert_eq!(restore_offset(&mut h, n), Position(k));
                        assert_eq!(h, orig);
                        assert_eq!(tcp_checksum(&h), h.checksum);
                    }
                }
            }
        }
        // The simulator's data packets carry ack 0: every offset wraps, and reads exactly.
        for k in 0..3 {
            let mut h = hdr(123_456, 0);
            mark_offset(&mut h, k);
            assert_eq!(read_offset(&h, 3), Some(k));
        }
        // An untouched header reads 0; a foreign difference reads None → MSP.
        assert_eq!(read_offset(&hdr(5, 9), 3), Some(0));
        let mut h = hdr(5, 9);
        h.ack -= 7;
        assert_eq!(read_offset(&h, 3), None);
        assert_eq!(position_n(&Packet::tcp(1, Kind::Data, 100, 60, h), 3), Position::MSP);
    }

    /// The ends settle the wrap exactly, on both sides of 2³², including a true ack in
    /// [2³² − n, 2³²) where the plain rule misreads: data at a receiver that knows its own seq
    /// (the data's ack), ACKs at a sender by the echoed position's parity.
    #[test]
    fn property_tpcp_ends_settle_the_wrap() {
        let mut rng = SimRng::for_component(9, "dpcp/tpcp-wrap");
        let mut plain_misreads = 0;
        for n in 3..=MAX_CHAIN_TEST {
            let mut acks: Vec<u32> = (0..2 * n as u32).chain(MAX - 2 * n as u32..=MAX).collect();
            acks.extend((0..5000).map(|_| rng.next_u64() as u32));
            for ack in acks {
                for k in 0..n {
                    let mut orig = hdr(rng.next_u64() as u32, ack);
                    orig.window = rng.next_u64() as u16;
                    orig.checksum = tcp_checksum(&orig);
                    let mut wire = orig;
                    mark_offset(&mut wire, k);
                    let mut plain = wire;
                    if restore_offset(&mut plain, n) != Position(k) {
                        plain_misreads += 1;
                        assert!(ack as u64 >= (1u64 << 32) - n as u64, "plain rule: only near 2^32");
                    }
                    // Data packet at its receiver: ack is this end's own seq, known exactly.
                    let mut h = wire;
                    let a = Anchor::Seq { near: orig.seq, other: Some(ack) };
                    assert_eq!(undo(&mut h, n, a), Position(k), "data n {n} ack {ack} k {k}");
                    assert_eq!(h, orig);
                    // ACK at its sender: ack anywhere near the last seq sent; echo bits 2-3 = k.
                    let mut h = TcpHeader { echo: 0b01 | (k << 2), ..wire };
                    let near = ack.wrapping_add(rng.below(1 << 16) as u32);
                    let a = Anchor::Ack { near, other: Some(orig.seq) };
                    assert_eq!(undo(&mut h, n, a), Position(k), "ACK n {n} ack {ack} k {k}");
                    assert_eq!(TcpHeader { echo: 0, ..h }, orig);
                    assert_eq!(tcp_checksum(&h), h.checksum);
                }
            }
        }
        assert!(plain_misreads >= 6, "the band the ends must settle is exercised: {plain_misreads}");
        // Both readings are consistent only at A + d = 2^32 − 1: true ack 2^32 − 1 at k = d, or
        // true ack 0 at k = d + 1, which look identical on the wire.
        let (mut x, mut y) = (hdr(7, MAX), hdr(7, 0));
        y.checksum = tcp_checksum(&y);
        x.checksum = tcp_checksum(&x);
        mark_offset(&mut x, 1);
        mark_offset(&mut y, 2);
        assert_eq!((x.ack, offset_readings(&x, 3)), (MAX - 1, (Some(1), Some(2))));
        assert_eq!((y.ack, offset_readings(&y, 3)), (MAX - 1, (Some(1), Some(2))));
        assert_eq!(restore_offset_near(&mut x.clone(), 3, MAX), Position(1));
        assert_eq!(restore_offset_near(&mut y.clone(), 3, 0), Position(2));
        assert_eq!(restore_offset_parity(&mut x, 3, 1), Position(1));
        assert_eq!(restore_offset_parity(&mut y, 3, 0), Position(2));
        // Without its own seq a data receiver keeps the plain rule (as a router).
        let mut h = hdr(7, MAX);
        mark_offset(&mut h, 1);
        assert_eq!(undo(&mut h, 3, Anchor::seq(7)), Position(2), "the plain rule's misread");
    }

    const MAX_CHAIN_TEST: u8 = crate::dpcp::levels::MAX_CHAIN;

    #[test]
    fn sequencer_alternates_and_vcp_mode_sends_msps() {
        let mut s = Sequencer::new(2);
        let mut got = vec![];
        for i in 0..6u32 {
            let mut h = hdr(1_000_000 + i, 0);
            got.push(s.stamp(&mut h, i != 4).0);
            assert_eq!(wire_position(&h).0, *got.last().unwrap());
        }
        assert_eq!(got, vec![0, 1, 0, 1, 0, 0], "first data packet is an MSP; VCP mode at i = 4");
        s.reset();
        let mut h = hdr(0, 5);
        assert_eq!(s.stamp(&mut h, true), Position::MSP);
        assert!(h.seq > h.ack);
        let mut t = Sequencer::new(3);
        let mut got = vec![];
        for i in 0..7u32 {
            let orig = hdr(1_000_000 + i, 0);
            let mut h = orig;
            let pos = t.stamp(&mut h, true);
            let p = Packet::tcp(1, Kind::Data, 100, 60, h);
            assert_eq!(position_n(&p, 3), pos);
            assert_eq!(undo(&mut h, 3, Anchor::seq(0)), pos);
            assert_eq!(h, orig);
            got.push(pos.0);
        }
        assert_eq!(got, vec![0, 1, 2, 0, 1, 2, 0]);
        // Inside a tunnel the header is unreadable: MSP.
        let mut h = hdr(1, 2);
        impose(&mut h, Position::LSP, 2);
        let mut p = Packet::tcp(1, Kind::Data, 100, 60, h);
        assert_eq!(position(&p), Position::LSP);
        p.outer = Some(crate::packet::OuterIp::default());
        assert_eq!(position(&p), Position::MSP);
        assert_eq!(position_n(&p, 3), Position::MSP);
    }
}
