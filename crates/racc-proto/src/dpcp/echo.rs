//! The DPCP/TPCP receiver hook [MPCP §3.2, §3.3; docs/PROTOCOLS.md §3].
//!
//! - `on_wire_arrival`: a data packet's seq/ack are put back (n = 2: seq is the field nearer
//!   rcv_nxt, a tie is undone by the checksum; n ≥ 3: the checksum offset is added back to ack,
//!   the wrap settled by this end's own seq, which every data packet carries as its ack)
//!   **before** the transport reads them; the packet's code and position are kept.
//! - `fill_ack`: the ACK echoes one (code, position) (bits 0–1 of the reserved-bit echo) and
//!   **takes the position of the data packet whose bits it echoes** [reconstructed], imposed the
//!   same way as on data (the seed's "the same logic is followed for the ACK packet"), so a lost
//!   packet cannot shift the pairing. Bits 2–3 of the echo repeat the position (bit 2 is the
//!   1-bit position of docs/PROTOCOLS.md §1; the sender reads the position from the ACK's order).
//!
//! **Which packet an ACK echoes** [reconstructed]. With one ACK per data packet (TCP/DPCP's
//! default) it is simply the last data packet that arrived. A delayed ACK (RFC 1122/5681: every
//! 2nd full segment, or the delack timeout) covers two packets but carries one echo, and VCP's
//! rule (the largest code, docs/PROTOCOLS.md §2) does not fit chains: an MSP and its LSP are digits of
//! one number, and echoing the last packet (always the LSP) makes the sender see LSP LSP LSP and
//! fall back to VCP mode (MPCP §3.4). TCP's ACK clock is left alone; the echo instead
//! **walks one chain at a time, one position per ACK**:
//!
//! 1. if the sender's next expected position (the one after the last echo) of the chain being
//!    echoed has arrived, echo it (the LSP held back from an ACK that covered MSP and LSP);
//! 2. else, if the newest chain's MSP has not been echoed, start on that chain: echo its MSP,
//!    raised to the largest MSP code that arrived since the last ACK (two MSPs under one ACK are
//!    the seed's "consecutive MSPs", whose higher value the sender would use anyway; in VCP mode
//!    every packet is an MSP and this is VCP's max-code echo);
//! 3. else echo the last packet that arrived, as with one ACK per packet (an orphan LSP after a
//!    loss stays visible to the sender as the exception it is).
//!
//! With delayed ACKs over M L | M L | … the sender sees M₁ L₁ M₃ L₃ …: every other chain, each
//! whole and in sequence, the LSP one ACK late; TPCP (M L₁ | L₂ M | L₁ L₂ | …) sees one whole
//! chain per three ACKs. Echoing a chain whole rather than the freshest digit of each position
//! keeps the pair coherent: Alg. 2 guarantees the max LF per chain, not across chains, so an MSP
//! from one chain and an LSP from the next can name a level no link has. With one ACK per packet
//! the three rules reduce to "the last packet" (property-tested), so such runs are unchanged.
//! The sender's decoder needs no change: it sees in-sequence echoes.

use super::levels::MAX_CHAIN;
use super::ordering::{impose, undo, Anchor, Position};
use crate::packet::{ecn, Kind, Packet};
use crate::tcp::AckEcho;
use crate::time::Time;

/// Codes of one chain's positions 0..len, contiguous in arrival order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Chain {
    codes: [u8; MAX_CHAIN as usize],
    len: u8,
}

impl Chain {
    fn start(code: u8) -> Chain {
        let mut c = Chain::default();
        c.push(code);
        c
    }

    fn push(&mut self, code: u8) {
        self.codes[self.len as usize] = code;
        self.len += 1;
    }
}

/// Which rule picks the next echo (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pick {
    /// Rule 1: the next position of the chain being echoed.
    Held,
    /// Rule 2: the MSP of the newest chain.
    NewChain,
    /// Rule 3: the last packet that arrived.
    Last,
}

/// DPCP's `AckEcho` for the TCP receiver. No allocation: a chain is at most 4 codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DpcpEcho {
    n: u8,
    /// rcv_nxt on the wire: the first data byte (or the SYN's seq + 1), then each ACK's ack.
    anchor: u32,
    /// This end's own next seq (its ACKs' seq): the ack every data packet carries, as this end
    /// sends no data. Unknown until the first ACK or SYN-ACK leaves.
    own: Option<u32>,
    /// The last data packet that arrived: its code and position.
    last: (u8, Position),
    /// The chain now arriving (len 0: none, or broken by an out-of-sequence position).
    newest: Chain,
    /// The newest chain's MSP has been echoed.
    newest_echoed: bool,
    /// The chain the ACKs are walking, and whether arrivals still extend it (it is `newest`).
    echoing: Chain,
    tracking: bool,
    /// The position the sender expects next: the one after the last echo.
    next: u8,
    /// Largest MSP code that arrived since the last ACK (0: none).
    msp_max: u8,
}

impl DpcpEcho {
    /// An echo for n-packet chains; `isn` is the wire seq of the first data byte.
    pub fn new(n: u8, isn: u32) -> DpcpEcho {
        DpcpEcho {
            n: n.clamp(1, MAX_CHAIN),
            anchor: isn,
            own: None,
            last: (ecn::NOT_ECT, Position::MSP),
            newest: Chain::default(),
            newest_echoed: false,
            echoing: Chain::default(),
            tracking: false,
            next: 0,
            msp_max: 0,
        }
    }

    /// The code and position the next ACK carries.
    pub fn pending(&self) -> (u8, Position) {
        let (code, pos, _) = self.pick();
        (code, pos)
    }

    fn pick(&self) -> (u8, Position, Pick) {
        if self.next != 0 && self.echoing.len > self.next {
            (self.echoing.codes[self.next as usize], Position(self.next), Pick::Held)
        } else if self.newest.len > 0 && !self.newest_echoed {
            (self.newest.codes[0].max(self.msp_max), Position::MSP, Pick::NewChain)
        } else {
            (self.last.0, self.last.1, Pick::Last)
        }
    }

    /// One data packet's code at its position (after the wire order was undone).
    fn on_data(&mut self, code: u8, pos: Position) {
        self.last = (code, pos);
        if pos.is_msp() {
            self.newest = Chain::start(code);
            self.newest_echoed = false;
            self.tracking = false;
            self.msp_max = self.msp_max.max(code);
        } else if self.newest.len > 0 && self.newest.len == pos.0 {
            self.newest.push(code);
            if self.tracking {
                self.echoing = self.newest;
            }
        } else {
            // Out of sequence (loss or reordering): no chain continues here.
            self.newest.len = 0;
            self.tracking = false;
        }
    }

    /// Take the next echo (module docs) and advance.
    fn take(&mut self) -> (u8, Position) {
        let (code, pos, how) = self.pick();
        match how {
            Pick::Held => {}
            Pick::NewChain => {
                self.echoing = self.newest;
                self.tracking = true;
                self.newest_echoed = true;
            }
            Pick::Last => {
                self.echoing.len = 0;
                self.tracking = false;
            }
        }
        self.next = (pos.0 + 1) % self.n;
        self.msp_max = 0;
        (code, pos)
    }
}

impl AckEcho for DpcpEcho {
    fn on_wire_arrival(&mut self, _now: Time, pkt: &mut Packet) {
        match pkt.kind {
            Kind::Syn => {
                if let Some(h) = pkt.tcp_hdr() {
                    self.anchor = h.seq.wrapping_add(1);
                }
            }
            Kind::Data => {
                // The larger of the inner and a remaining outer header's bits (as VCP's echo).
                let code = (pkt.ecn & 0b11).max(pkt.visible_ecn());
                if let Some(h) = pkt.tcp_hdr_mut() {
                    let pos = undo(h, self.n, Anchor::Seq { near: self.anchor, other: self.own });
                    self.on_data(code, pos);
                }
            }
            _ => {}
        }
    }

    fn on_forward(&mut self, _now: Time, _pkt: &Packet) {}

    fn fill_ack(&mut self, _now: Time, ack: &mut Packet) {
        if let Some(h) = ack.tcp_hdr() {
            // A SYN-ACK occupies its seq: the ACKs that follow carry seq + 1.
            self.own = Some(if ack.kind == Kind::SynAck { h.seq.wrapping_add(1) } else { h.seq });
        }
        if ack.kind != Kind::Ack {
            return;
        }
        let (code, pos) = self.take();
        if let Some(h) = ack.tcp_hdr_mut() {
            self.anchor = h.ack;
            h.echo = code | (pos.0 << 2);
            // After the transport's checksum: a tie adjustment leaves it invalid on purpose.
            impose(h, pos, self.n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dpcp::ordering::{position_n, restore, wire_position, Sequencer};
    use crate::endpoint::{Endpoint, FlowConfig};
    use crate::packet::{flags, tcp_checksum, TcpHeader};
    use crate::tcp::TcpReceiver;

    const ISN: u32 = 0x8000_0000;

    fn rx(n: u8) -> TcpReceiver {
        let mut c = FlowConfig::new(1, 1040);
        c.isn = ISN;
        TcpReceiver::with_echo(&c, Box::new(DpcpEcho::new(n, ISN)))
    }

    /// Data at `off` as a DPCP sender emits it: checksum first, then the chain position.
    fn data(seq: &mut Sequencer, off: u32, code: u8) -> Packet {
        let mut h = TcpHeader { seq: ISN.wrapping_add(off), flags: flags::ACK, ..Default::default() };
        h.checksum = tcp_checksum(&h);
        seq.stamp(&mut h, true);
        let mut p = Packet::tcp(1, Kind::Data, 1040, 1000, h);
        p.ecn = code;
        p
    }

    #[test]
    fn receiver_restores_data_and_orders_its_acks() {
        for n in [2u8, 3] {
            let mut r = rx(n);
            let mut s = Sequencer::new(n);
            let codes = [0b10, 0b01, 0b11, 0b11, 0b01, 0b10];
            // Packet 2 is lost: the receiver still ACKs every other packet with its own position.
            for (i, &code) in codes.iter().enumerate() {
                let p = data(&mut s, i as u32 * 1000, code);
                if i == 2 {
                    continue;
                }
                let pos = position_n(&p, n);
                r.on_packet(0, &p);
                let a = r.poll_transmit(0).unwrap();
                assert!(r.poll_transmit(0).is_none());
                let mut h = *a.tcp_hdr().unwrap();
                assert_eq!(h.echo, code | (pos.0 << 2), "n {n} packet {i}");
                assert_eq!(position_n(&a, n), pos, "the ACK takes the data packet's position");
                // The sender side restores it: ack = rcv_nxt on the wire.
                let want = if i < 2 { (i as u32 + 1) * 1000 } else { 2000 };
                if n == 2 {
                    assert_eq!(wire_position(&h), pos);
                    let res = restore(&mut h, Anchor::ack(ISN));
                    assert!(res.checksum_ok);
                } else {
                    crate::dpcp::ordering::restore_offset(&mut h, n);
                    assert_eq!(tcp_checksum(&h), h.checksum);
                }
                assert_eq!(h.ack, ISN.wrapping_add(want), "n {n} packet {i}");
            }
            // The transport saw the real seq numbers: 0..2000 in order, 3000..6000 buffered.
            assert_eq!(r.rcv_nxt(), 2000);
            assert_eq!(r.ooo_ranges(), &[(3000, 6000)]);
        }
    }

    /// One ACK per data packet: the three rules reduce to "echo the last packet" (so default
    /// runs are unchanged), over random position streams with losses, reordering and orphans.
    #[test]
    fn per_packet_acks_echo_the_last_packet() {
        let mut rng = crate::rng::SimRng::for_component(7, "dpcp/echo");
        for n in 2..=MAX_CHAIN {
            let mut e = DpcpEcho::new(n, ISN);
            let mut k = 0u8;
            for i in 0..100_000 {
                // Mostly in sequence; sometimes a skipped, repeated or random position.
                let pos = match rng.below(10) {
                    0 => rng.below(n as u64) as u8,
                    1 => (k + 1) % n,
                    _ => k,
                };
                k = (pos + 1) % n;
                let code = 1 + rng.below(3) as u8;
                e.on_data(code, Position(pos));
                assert_eq!(e.pending(), (code, Position(pos)), "n {n} packet {i}");
                assert_eq!(e.take(), (code, Position(pos)), "n {n} packet {i}");
            }
        }
    }

    /// Delayed-ACK receiver: data packets of `chains` (one code per position) in order; the
    /// (code, position) of every ACK, checked against the ACK's wire order as the sender reads it.
    fn delayed_echoes(n: u8, chains: &[&[u8]], lone_first: bool) -> Vec<(u8, u8)> {
        let mut c = FlowConfig::new(1, 1040);
        c.isn = ISN;
        c.delayed_ack = true;
        let mut r = TcpReceiver::with_echo(&c, Box::new(DpcpEcho::new(n, ISN)));
        let mut s = Sequencer::new(n);
        let mut out = vec![];
        for (i, &code) in chains.iter().flat_map(|c| c.iter()).enumerate() {
            let t = i as Time * 1_000_000;
            r.on_packet(t, &data(&mut s, i as u32 * 1000, code));
            if lone_first && i == 0 {
                r.on_timeout(r.poll_timeout().unwrap()); // the delack timer: an ACK of one packet
            }
            while let Some(a) = r.poll_transmit(t) {
                let h = a.tcp_hdr().unwrap();
                let pos = position_n(&a, n);
                assert_eq!(h.echo >> 2, pos.0, "the ACK takes the position it echoes");
                out.push((h.echo & 0b11, pos.0));
            }
        }
        out
    }

    #[test]
    fn delayed_acks_echo_whole_chains_in_sequence() {
        // DPCP: chains (MSP, LSP) under one ACK each. Every other chain reaches the sender,
        // whole: M1 L1 M3 L3 (never the LSP of one chain with the MSP of another).
        let ch: [&[u8]; 4] = [&[0b10, 0b01], &[0b11, 0b11], &[0b11, 0b10], &[0b01, 0b01]];
        assert_eq!(delayed_echoes(2, &ch, false), vec![(0b10, 0), (0b01, 1), (0b11, 0), (0b10, 1)]);
        // Shifted by a lone MSP ACKed on the timer: ACKs cover (L, M) and still pair correctly.
        assert_eq!(
            delayed_echoes(2, &ch, true),
            vec![(0b10, 0), (0b01, 1), (0b11, 0), (0b10, 1)],
            "M1 | L1 M2 | L2 M3 | L3 M4: chains 1 and 3, whole (L4 waits for its timer)"
        );
        // TPCP: M L1 | L2 M | L1 L2 | …: one whole chain per three ACKs.
        let ch: [&[u8]; 4] = [&[0b10, 0b01, 0b11], &[0b11, 0b11, 0b11], &[0b01, 0b10, 0b10], &[0b11, 0b01, 0b01]];
        assert_eq!(
            delayed_echoes(3, &ch, false),
            vec![(0b10, 0), (0b01, 1), (0b11, 2), (0b01, 0), (0b10, 1), (0b10, 2)]
        );
    }

    #[test]
    fn delayed_acks_let_the_sender_decode_the_full_lf() {
        use crate::dpcp::{Decoder, DecoderParams, Lf, Mode};
        for n in [2u8, 3] {
            // A steady path at the level just below its zone's worst, so a lost digit would show.
            let lf = if n == 2 { Lf::dpcp(0b10, 0b01) } else { Lf::from_packed(3, 0b10_01_10) };
            let chain: Vec<u8> = (0..n).map(|k| lf.digit(k)).collect();
            let chains: Vec<&[u8]> = (0..40).map(|_| chain.as_slice()).collect();
            let echoes = delayed_echoes(n, &chains, false);
            assert_eq!(echoes.len(), 40 * n as usize / 2, "one ACK per two packets");
            let mut d = Decoder::new(DecoderParams { n, ..DecoderParams::dpcp(0) });
            for (i, &(code, pos)) in echoes.iter().enumerate() {
                d.on_echo(i as Time, code, Position(pos), 100_000_000, 10.0);
            }
            assert_eq!(d.lf(), lf, "n {n}");
            assert_eq!((d.stats().exceptions, d.mode()), (0, Mode::Chains), "n {n}");
        }
    }

    #[test]
    fn delayed_acks_over_msps_only_echo_the_largest_code() {
        // A sender in VCP mode sends MSPs only: one ACK covering two echoes the larger code
        // (VCP's rule, docs/PROTOCOLS.md §2), as an MSP.
        let mut e = DpcpEcho::new(2, ISN);
        for (a, b) in [(0b11, 0b01), (0b01, 0b10), (0b01, 0b01)] {
            e.on_data(a, Position::MSP);
            e.on_data(b, Position::MSP);
            assert_eq!(e.take(), (a.max(b), Position::MSP));
        }
        // An orphan LSP after a lost MSP is echoed as itself (the sender's exception).
        e.on_data(0b10, Position::LSP);
        assert_eq!(e.take(), (0b10, Position::LSP));
    }

    #[test]
    fn ties_at_the_wrap_reach_the_transport_intact() {
        // The sequence space crosses 2^32 and the ack field (0) ties with seq at offset 0.
        let isn = u32::MAX - 1999; // offset 2000 has wire seq 0
        let mut c = FlowConfig::new(1, 1040);
        c.isn = isn;
        let mut r = TcpReceiver::with_echo(&c, Box::new(DpcpEcho::new(2, isn)));
        let mut s = Sequencer::new(2);
        for i in 0..5u32 {
            let mut h = TcpHeader { seq: isn.wrapping_add(i * 1000), flags: flags::ACK, ..Default::default() };
            h.checksum = tcp_checksum(&h);
            s.stamp(&mut h, true);
            let mut p = Packet::tcp(1, Kind::Data, 1040, 1000, h);
            p.ecn = ecn::ECT1;
            r.on_packet(0, &p);
            let a = r.poll_transmit(0).unwrap();
            let mut ah = *a.tcp_hdr().unwrap();
            // The sender knows the receiver's seq (0, the seq of every ACK).
            restore(&mut ah, Anchor::Ack { near: isn.wrapping_add(i * 1000), other: Some(0) });
            assert_eq!(ah.ack, isn.wrapping_add((i + 1) * 1000));
        }
        assert_eq!(r.rcv_nxt(), 5000);
        assert!(r.ooo_ranges().is_empty());
    }
}
