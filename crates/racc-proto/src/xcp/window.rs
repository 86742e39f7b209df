//! XCP's congestion controller for the TCP transport (docs/PROTOCOLS.md §5 "Sender").
//!
//! - Every data packet carries H_cwnd = cwnd, H_rtt = SRTT in µs (0 before the first sample)
//!   and H_feedback = (r_desired·rtt − cwnd)/(cwnd/s) when a desired rate is set, else +inf.
//! - Every ACK the transport passes on (duplicates included: each one reports a packet, and
//!   the receiver sums the feedback of the packets an ACK covers) applies
//!   cwnd = max(cwnd + reverse_feedback, s). +inf comes back when no XCP router was on the
//!   path: cwnd is left alone [reconstructed].
//! - Start at one packet, no slow start. Loss: NewReno's halving and recovery; a timeout or a
//!   lost SYN: one packet [checked].
//!
//! - Throughput form (`form = "throughput"`, [`XcpForm`]): H_cwnd's place carries X =
//!   srtt·s/cwnd in ns, H_feedback = (r_desired − cwnd/srtt)/(cwnd/s) (B/s) or +inf, and an ACK's
//!   reverse feedback (B/s) becomes cwnd = max(cwnd + fb·srtt, s).
//!
//! Units: the routers count wire bytes (y, C, Q and so the feedback), so the controller keeps
//! cwnd in **wire bytes** (s = the flow's packet size, all headers included) and gives the
//! transport the same number of packets in payload bytes (× MSS/s). H_cwnd is the wire figure,
//! so a router's ξ sums, its feedback and the sender's window are in one unit. ACKs that arrive
//! during the transport's loss recovery are not passed to the controller and their feedback is
//! lost, as a lost ACK's is (docs/PROTOCOLS.md §5 pitfalls); the recovery owns the window then.

use super::params::{XcpForm, XcpParams};
use crate::cc::{Ack, CongestionControl, Response, SenderCtx, Signal};
use crate::endpoint::FlowConfig;
use crate::metrics::{MetricSink, MetricValue};
use crate::packet::{CongHeader, Kind, Packet};
use crate::time::to_secs;

/// Bytes the XCP header adds to every data packet and ACK (docs/PROTOCOLS.md §1).
pub const XCP_HEADER_BYTES: u32 = 20;

/// XCP's controller.
#[derive(Clone, Debug)]
pub struct XcpWindow {
    /// Congestion window, wire bytes.
    cwnd: f64,
    /// Wire size of a full data packet.
    s: f64,
    /// Payload bytes of a full data packet.
    mss: f64,
    desired_rate: Option<f64>,
    form: XcpForm,
    before_rto: Option<f64>,
    /// Feedback applied so far, bytes: positive and negative parts, and ACKs without any
    /// (+inf: no XCP router on the path).
    gained: f64,
    lost: f64,
    unrouted_acks: u64,
}

impl XcpWindow {
    /// A window for `mss`-byte segments of `cfg.packet_size` wire bytes: one packet, or
    /// `cfg.initial_window` packets.
    pub fn new(cfg: &FlowConfig, mss: u32, p: &XcpParams) -> XcpWindow {
        let (s, cwnd) = cfg.first_window();
        XcpWindow {
            cwnd,
            s,
            mss: mss.max(1) as f64,
            desired_rate: p.desired_rate,
            form: p.form,
            before_rto: None,
            gained: 0.0,
            lost: 0.0,
            unrouted_acks: 0,
        }
    }

    /// cwnd in wire bytes (what H_cwnd carries).
    pub fn cwnd_wire(&self) -> f64 {
        self.cwnd
    }

    /// The feedback the sender asks for per packet: (r_desired·rtt − cwnd)/(cwnd/s) bytes, or in
    /// the throughput form that over rtt, (r_desired − cwnd/rtt)/(cwnd/s) B/s; +inf without a
    /// desired rate or an RTT estimate.
    pub fn requested_feedback(&self, srtt_s: Option<f64>) -> f64 {
        match (self.desired_rate, srtt_s, self.form) {
            (Some(r), Some(rtt), XcpForm::Window) => (r * rtt - self.cwnd) / (self.cwnd / self.s),
            (Some(r), Some(rtt), XcpForm::Throughput) => (r - self.cwnd / rtt) / (self.cwnd / self.s),
            _ => f64::INFINITY,
        }
    }

    /// The throughput form's X = srtt·s/cwnd, ns (at least 1), as the header's u32; 0 without
    /// an RTT estimate.
    pub fn inter_packet_ns(&self, srtt_ns: Option<u64>) -> u32 {
        srtt_ns.map_or(0, |r| (r as f64 * self.s / self.cwnd).round().clamp(1.0, u32::MAX as f64) as u32)
    }

    /// Apply one ACK's reverse feedback (bytes): cwnd = max(cwnd + fb, s); +inf or NaN
    /// leaves cwnd as it is.
    pub fn apply_feedback(&mut self, fb: f64) {
        if !fb.is_finite() {
            self.unrouted_acks += 1;
            return;
        }
        if fb >= 0.0 {
            self.gained += fb;
        } else {
            self.lost -= fb;
        }
        self.cwnd = (self.cwnd + fb).max(self.s);
    }
}

impl CongestionControl for XcpWindow {
    fn window(&self) -> f64 {
        self.cwnd * self.mss / self.s
    }

    /// The transport's window (payload bytes) back into wire bytes, at least one packet.
    fn set_window(&mut self, window: f64, _ssthresh: f64) {
        self.cwnd = (window * self.s / self.mss).max(self.s);
    }

    fn on_ack(&mut self, ack: &Ack<'_>, ctx: &SenderCtx) {
        if let CongHeader::Xcp { reverse_feedback, .. } = ack.packet.cong {
            let fb = reverse_feedback as f64;
            match self.form {
                XcpForm::Window => self.apply_feedback(fb),
                // B/s times the RTT: bytes of window. Routers give nothing positive to a
                // packet without an RTT, so without one there is nothing to scale.
                XcpForm::Throughput => {
                    self.apply_feedback(if fb.is_finite() { ctx.srtt.map_or(0.0, |r| fb * to_secs(r)) } else { fb })
                }
            }
        }
    }

    fn on_congestion(&mut self, signal: Signal, ctx: &SenderCtx) -> Response {
        match signal {
            Signal::Loss => Response::Halve,
            Signal::Timeout => {
                if ctx.consecutive_rtos == 0 {
                    self.before_rto = Some(self.cwnd);
                }
                Response::SetWindow(ctx.mss as f64)
            }
            Signal::SynTimeout => Response::SetWindow(ctx.mss as f64),
            Signal::EcnEcho => Response::Keep,
        }
    }

    fn on_spurious_timeout(&mut self, _ctx: &SenderCtx) {
        if let Some(c) = self.before_rto.take() {
            self.cwnd = c;
        }
    }

    fn on_send(&mut self, pkt: &mut Packet, ctx: &SenderCtx) {
        if pkt.kind != Kind::Data {
            return;
        }
        let srtt = ctx.srtt.map(to_secs);
        let rtt_us = ctx.srtt.map_or(0, |r| (r / 1_000).clamp(1, u32::MAX as u64) as u32);
        let cwnd = match self.form {
            XcpForm::Window => self.cwnd.round().clamp(1.0, u32::MAX as f64) as u32,
            XcpForm::Throughput => self.inter_packet_ns(ctx.srtt),
        };
        pkt.cong =
            CongHeader::Xcp { rtt_us, cwnd, feedback: self.requested_feedback(srtt) as f32, reverse_feedback: 0.0 };
    }

    fn header_bytes(&self) -> u32 {
        XCP_HEADER_BYTES
    }

    fn metrics(&self, out: &mut dyn MetricSink) {
        out.put("xcp_feedback_gained", "bytes", MetricValue::Gauge(self.gained));
        out.put("xcp_feedback_lost", "bytes", MetricValue::Gauge(self.lost));
        out.put("xcp_unrouted_acks", "packets", MetricValue::Count(self.unrouted_acks));
    }
}
