//! The VCP receiver hook (docs/PROTOCOLS.md §2 "Receiver"): remember the code of every data packet
//! and put the **largest** code seen since the last ACK into the next ACK's reserved-bit echo
//! (bits 0–1; bit 2, the DPCP position bit, stays 0 for VCP). TCP/VCP ACKs every packet
//! [checked]; an ACK that covers several packets (delayed ACK) echoes the largest code
//! [reconstructed], so an overload report is never lost to ACK thinning.
//!
//! The code read is the larger of the inner ECN bits and the outer (tunnel) header's, if the
//! packet still carries one: routers write the bits they can see (`Packet::visible_ecn`), and a
//! max-aggregated code survives this merge whichever header a router raised.

use crate::packet::{Kind, Packet, Transport};
use crate::tcp::AckEcho;
use crate::time::Time;

/// VCP's `AckEcho` for the TCP receiver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VcpEcho {
    /// Largest code among the data packets not yet covered by an ACK (0 = none).
    pending: u8,
}

impl VcpEcho {
    pub fn new() -> VcpEcho {
        VcpEcho::default()
    }

    /// The code the next ACK would carry.
    pub fn pending(&self) -> u8 {
        self.pending
    }
}

impl AckEcho for VcpEcho {
    fn on_forward(&mut self, _now: Time, pkt: &Packet) {
        if pkt.kind == Kind::Data {
            let code = (pkt.ecn & 0b11).max(pkt.visible_ecn());
            self.pending = self.pending.max(code);
        }
    }

    fn fill_ack(&mut self, _now: Time, ack: &mut Packet) {
        let code = self.pending;
        // Bits 0–1 the code, bit 2 (position) 0: VCP has one code per packet. TCP and DCCP
        // ACKs carry it in the same reserved-bit field.
        match &mut ack.transport {
            Transport::Tcp(h) => h.echo = code & 0b11,
            Transport::Dccp(h) => h.echo = code & 0b11,
        }
        self.pending = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::{Endpoint, FlowConfig};
    use crate::packet::{ecn, OuterIp, TcpHeader};
    use crate::tcp::{SeqSpace, TcpReceiver};
    use crate::time::NS_PER_MS;

    const MS: Time = NS_PER_MS;

    fn data(off: u64, code: u8) -> Packet {
        let h = TcpHeader { seq: SeqSpace::new(0).wire(off), ..Default::default() };
        let mut p = Packet::tcp(1, Kind::Data, 1040, 1000, h);
        p.ecn = code;
        p
    }

    fn acks(r: &mut TcpReceiver, now: Time) -> Vec<u8> {
        std::iter::from_fn(|| r.poll_transmit(now)).map(|a| a.tcp_hdr().unwrap().echo).collect()
    }

    #[test]
    fn every_packet_acked_echoes_its_code() {
        let mut r = TcpReceiver::with_echo(&FlowConfig::new(1, 1040), Box::new(VcpEcho::new()));
        for (i, code) in [ecn::ECT1, ecn::CE, ecn::ECT0, ecn::ECT1].into_iter().enumerate() {
            r.on_packet(i as Time * MS, &data(i as u64 * 1000, code));
            assert_eq!(acks(&mut r, i as Time * MS), vec![code], "packet {i}");
        }
    }

    #[test]
    fn delayed_ack_echoes_the_largest_code_it_covers() {
        let mut cfg = FlowConfig::new(1, 1040);
        cfg.delayed_ack = true;
        let mut r = TcpReceiver::with_echo(&cfg, Box::new(VcpEcho::new()));
        // 11 then 01: the ACK of both says 11 (the overload report is not thinned away).
        r.on_packet(0, &data(0, ecn::CE));
        assert!(acks(&mut r, 0).is_empty(), "first segment: ACK delayed");
        r.on_packet(MS, &data(1000, ecn::ECT1));
        assert_eq!(acks(&mut r, MS), vec![ecn::CE]);
        // The next pair starts afresh: 01 and 10 → 10.
        r.on_packet(2 * MS, &data(2000, ecn::ECT1));
        r.on_packet(3 * MS, &data(3000, ecn::ECT0));
        assert_eq!(acks(&mut r, 3 * MS), vec![ecn::ECT0]);
        // A lone segment ACKed by the delayed-ACK timer carries its own code.
        r.on_packet(4 * MS, &data(4000, ecn::ECT1));
        let t = r.poll_timeout().unwrap();
        r.on_timeout(t);
        assert_eq!(acks(&mut r, t), vec![ecn::ECT1]);
        // Position bit (bit 2) is never set by VCP.
        r.on_packet(t + MS, &data(5000, ecn::CE));
        r.on_packet(t + MS, &data(6000, ecn::CE));
        assert_eq!(acks(&mut r, t + MS), vec![0b011]);
    }

    #[test]
    fn tunnel_code_and_non_data() {
        let mut e = VcpEcho::new();
        // Inside a tunnel routers raised the outer bits: the larger code wins.
        let mut p = data(0, ecn::ECT1);
        p.outer = Some(OuterIp { tunnel: 1, ecn: ecn::CE, ip_id: 0 });
        e.on_forward(0, &p);
        assert_eq!(e.pending(), ecn::CE);
        let mut a = Packet::tcp(1, Kind::Ack, 40, 0, TcpHeader::default());
        e.fill_ack(0, &mut a);
        assert_eq!((a.tcp_hdr().unwrap().echo, e.pending()), (ecn::CE, 0));
        // SYNs carry no code; an ACK with nothing pending echoes 00.
        let mut syn = Packet::tcp(1, Kind::Syn, 40, 0, TcpHeader::default());
        syn.ecn = ecn::CE;
        e.on_forward(0, &syn);
        e.fill_ack(0, &mut a);
        assert_eq!(a.tcp_hdr().unwrap().echo, 0);
    }
}
