//! The DPCP/TPCP receiver hook [seed 000 §3.2, §3.3; PROTOCOLS.md §3].
//!
//! - `on_wire_arrival`: a data packet's seq/ack are put back (n = 2: seq is the field nearer
//!   rcv_nxt, a tie is undone by the checksum; n ≥ 3: the checksum offset is added back to ack)
//!   **before** the transport reads them; the packet's code and position are kept.
//! - `fill_ack`: the ACK echoes that code (bits 0–1 of the reserved-bit echo) and **takes the
//!   position of the data packet whose bits it echoes** [reconstructed], imposed the same way
//!   as on data (the seed's "the same logic is followed for the ACK packet"), so a lost packet
//!   cannot shift the pairing. Bits 2–3 of the echo repeat the position for inspection; the
//!   sender reads it from the ACK's order.
//!
//! The ACK echoes the last data packet that arrived: TCP/DPCP ACKs every packet (delayed ACKs
//! would echo every other position only, and the sender would fall back to VCP mode).

use super::ordering::{impose, undo, Anchor, Position};
use crate::packet::{ecn, Kind, Packet};
use crate::tcp::AckEcho;
use crate::time::Time;

/// DPCP's `AckEcho` for the TCP receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DpcpEcho {
    n: u8,
    /// rcv_nxt on the wire: the first data byte (or the SYN's seq + 1), then each ACK's ack.
    anchor: u32,
    /// This end's own next seq (its ACKs' seq): the ack every data packet carries, as this end
    /// sends no data. Unknown until the first ACK or SYN-ACK leaves.
    own: Option<u32>,
    code: u8,
    pos: Position,
}

impl DpcpEcho {
    /// An echo for n-packet chains; `isn` is the wire seq of the first data byte.
    pub fn new(n: u8, isn: u32) -> DpcpEcho {
        DpcpEcho { n, anchor: isn, own: None, code: ecn::NOT_ECT, pos: Position::MSP }
    }

    /// The code and position the next ACK carries.
    pub fn pending(&self) -> (u8, Position) {
        (self.code, self.pos)
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
                    self.pos = undo(h, self.n, Anchor::Seq { near: self.anchor, other: self.own });
                    self.code = code;
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
        if let Some(h) = ack.tcp_hdr_mut() {
            self.anchor = h.ack;
            h.echo = self.code | (self.pos.0 << 2);
            // After the transport's checksum: a tie adjustment leaves it invalid on purpose.
            impose(h, self.pos, self.n);
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
