//! The receiver half of the congestion-header layer: what each forward packet's header says
//! goes back in the next ACK (or SYN-ACK, or REF answer) in the same header shape.
//! - XCP: H_feedback, **summed** over the packets an ACK covers, in reverse_feedback
//!   (docs/PROTOCOLS.md §5: with delayed ACKs the sender must still get every packet's share;
//!   ns-2 `xcp-end-sys`);
//! - RCP / PIQI-RCP: the rate of the latest packet (§6: "echo the rate");
//! - JetMax: the latest feedback and the id of the router that set it (§7);
//! - QFCP: the rate request of the latest packet, as the routers lowered it, becomes the ACK's
//!   rate feedback (QFCP §II step 3: "the receiver copies the rate-request field into the
//!   rate-feedback field of the corresponding ACK").
//!
//! ACKs carry the header on the return path too, so they pay its bytes (docs/PROTOCOLS.md §1).

use crate::packet::{CongHeader, Packet};
use crate::tcp::AckEcho;
use crate::time::Time;

/// Echoes every header shape; the shape of the ACK's header is that of the last forward one.
#[derive(Clone, Copy, Debug, Default)]
pub struct HeaderEcho {
    /// The latest forward header, its feedback fields as the routers left them.
    last: CongHeader,
    /// XCP feedback summed since the last ACK, bytes.
    xcp_sum: f64,
}

impl HeaderEcho {
    pub fn new() -> HeaderEcho {
        HeaderEcho::default()
    }
}

impl AckEcho for HeaderEcho {
    fn on_forward(&mut self, _now: Time, pkt: &Packet) {
        if let CongHeader::Xcp { feedback, .. } = pkt.cong {
            // +inf (no XCP router on the path) stays +inf in the sum.
            self.xcp_sum += feedback as f64;
        }
        if pkt.cong != CongHeader::None {
            self.last = pkt.cong;
        }
    }

    fn fill_ack(&mut self, _now: Time, ack: &mut Packet) {
        ack.cong = match self.last {
            CongHeader::None => CongHeader::None,
            CongHeader::Xcp { .. } => {
                let sum = std::mem::take(&mut self.xcp_sum);
                CongHeader::Xcp { rtt_us: 0, cwnd: 0, feedback: 0.0, reverse_feedback: sum as f32 }
            }
            CongHeader::Rcp { rate, .. } => CongHeader::Rcp { rate, rtt_us: 0 },
            CongHeader::JetMax { feedback, fb_id, .. } => {
                CongHeader::JetMax { rtt_us: 0, ipt_ns: 0, cur_id: 0, fb_id, feedback }
            }
            CongHeader::Qfcp { rate_request, .. } => {
                CongHeader::Qfcp { rtt_us: 0, rate_request: 0, rate_feedback: rate_request }
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::{Endpoint, FlowConfig};
    use crate::packet::{Kind, TcpHeader};
    use crate::tcp::{tcp_receiver_with, TcpReceiver};

    fn data(seq: u32, cong: CongHeader) -> Packet {
        let mut p = Packet::tcp(1, Kind::Data, 1040, 1000, TcpHeader { seq, ..Default::default() });
        p.cong = cong;
        p
    }

    fn xcp(feedback: f32) -> CongHeader {
        CongHeader::Xcp { rtt_us: 50_000, cwnd: 10_000, feedback, reverse_feedback: 0.0 }
    }

    #[test]
    fn xcp_feedback_is_summed_over_a_delayed_ack() {
        let mut cfg = FlowConfig::new(1, 1040);
        cfg.delayed_ack = true;
        let mut r = tcp_receiver_with(&cfg, Box::new(HeaderEcho::new()));
        r.on_packet(0, &data(0, xcp(120.0)));
        assert!(r.poll_transmit(0).is_none(), "first of two segments: ACK delayed");
        r.on_packet(1, &data(1000, xcp(-20.0)));
        let ack = r.poll_transmit(1).unwrap();
        assert_eq!(ack.cong, CongHeader::Xcp { rtt_us: 0, cwnd: 0, feedback: 0.0, reverse_feedback: 100.0 });
        assert_eq!(ack.size, 40 + 20, "the ACK pays the header's 20 bytes");
        // The next ACK starts a new sum.
        r.on_packet(2, &data(2000, xcp(5.0)));
        r.on_packet(3, &data(3000, xcp(5.0)));
        let ack = r.poll_transmit(3).unwrap();
        assert!(matches!(ack.cong, CongHeader::Xcp { reverse_feedback, .. } if reverse_feedback == 10.0));
    }

    #[test]
    fn rates_and_jetmax_feedback_are_copied_from_the_latest_packet() {
        let cfg = FlowConfig::new(1, 1040);
        let mut r: TcpReceiver = TcpReceiver::with_echo(&cfg, Box::new(HeaderEcho::new()));
        r.on_packet(0, &data(0, CongHeader::Rcp { rate: 5_000, rtt_us: 9 }));
        assert_eq!(r.poll_transmit(0).unwrap().cong, CongHeader::Rcp { rate: 5_000, rtt_us: 0 });
        let jm = CongHeader::JetMax { rtt_us: 1, ipt_ns: 2, cur_id: 3, fb_id: 7, feedback: 900 };
        r.on_packet(1, &data(1000, jm));
        let ack = r.poll_transmit(1).unwrap();
        assert_eq!(ack.cong, CongHeader::JetMax { rtt_us: 0, ipt_ns: 0, cur_id: 0, fb_id: 7, feedback: 900 });
        r.on_packet(2, &data(2000, CongHeader::Qfcp { rtt_us: 5, rate_request: 7_000, rate_feedback: 0 }));
        let ack = r.poll_transmit(2).unwrap();
        assert_eq!(
            ack.cong,
            CongHeader::Qfcp { rtt_us: 0, rate_request: 0, rate_feedback: 7_000 },
            "request → feedback"
        );
        assert_eq!(ack.size, 40 + 16);
    }

    #[test]
    fn a_ref_probe_is_answered_with_its_own_feedback_and_acks_nothing_new() {
        let cfg = FlowConfig::new(1, 1040);
        let mut r = TcpReceiver::with_echo(&cfg, Box::new(HeaderEcho::new()));
        r.on_packet(0, &data(0, CongHeader::Rcp { rate: 10, rtt_us: 0 }));
        let _ = r.poll_transmit(0).unwrap();
        let mut probe = Packet::tcp(1, Kind::Ref, 52, 0, TcpHeader { seq: 1000, ts_val: 77, ..Default::default() });
        probe.cong = CongHeader::Rcp { rate: 4_000, rtt_us: 0 };
        r.on_packet(5, &probe);
        let answer = r.poll_transmit(5).unwrap();
        assert_eq!(answer.kind, Kind::Ref);
        assert_eq!(answer.cong, CongHeader::Rcp { rate: 4_000, rtt_us: 0 });
        assert_eq!(answer.tcp_hdr().unwrap().ts_ecr, 77);
        assert_eq!(answer.size, 40 + 12);
        assert!(r.poll_transmit(5).is_none());
    }
}
