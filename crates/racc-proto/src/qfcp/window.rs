//! QFCP's congestion controller for the TCP transport (QFCP §II; docs/PROTOCOLS.md §9 "Sender").
//!
//! - Every packet carries the 16-byte QFCP header: rtt = SRTT in µs (0 before the first
//!   sample), rate_request = the desired rate (0xFFFF_FFFF: as much as allowed), which each
//!   router lowers to its R; the receiver returns it as rate_feedback. The SYN carries the
//!   first request, and the SYN-ACK's feedback sets the first window (feedback·rtt, with the
//!   handshake's RTT), so the routers count the flow before it sends data.
//! - Each new ACK: **cwnd = max(feedback·rtt, MSS)** (eq. 3), rtt the sender's SRTT.
//! - Duplicate ACKs: **cwnd = feedback·rtt + num_dupACK** (eq. 5), no halving. The transport
//!   owns recovery: the first two duplicates inflate the window through its Limited Transmit
//!   (RFC 3042), the third retransmits and answers `Signal::Loss` with
//!   `Response::SetWindow(feedback·rtt)`, around which the transport's recovery adds one MSS
//!   per duplicate; `recovery_base` moves that base with every ACK's feedback during the
//!   recovery. The recovery (num_dupACK) ends when an ACK covers all data sent before the loss
//!   (NewReno's full ACK); partial ACKs retransmit the next hole and deflate by what they
//!   cover [reconstructed: the seed leaves "complicated situations" open].
//! - Timeout: **cwnd = 1 MSS**; the next ACK's feedback restores it (eq. 3).
//! - `pace_first_window` (on by default without SACK): the first window leaves at cwnd/rtt instead of in one
//!   burst, until the first new ACK, as ns-2's Quick-Start sender paces its approved window
//!   (QFCP §II builds on "a similar framework of Quick-Start"; docs/PROTOCOLS.md §9, "Starts").
//!
//! Units: the routers' rates are wire bytes per second, so the controller keeps cwnd in wire
//! bytes (feedback·rtt, floor s = the flow's packet size) and gives the transport the same
//! number of packets in payload bytes (× MSS/s), as XCP's controller does.

use super::params::QfcpParams;
use crate::cc::{Ack, CongestionControl, Response, SenderCtx, Signal};
use crate::endpoint::FlowConfig;
use crate::metrics::{MetricSink, MetricValue};
use crate::packet::{CongHeader, Kind, Packet};
use crate::rcp::router::header_rate;
use crate::time::{to_secs, Dur, NS_PER_US};

/// Bytes the QFCP header adds to every packet (docs/PROTOCOLS.md §1).
pub const QFCP_HEADER_BYTES: u32 = 16;
/// The header's "no limit".
pub const NO_LIMIT: u32 = u32::MAX;

/// QFCP's controller.
#[derive(Clone, Debug)]
pub struct QfcpWindow {
    /// Congestion window, wire bytes.
    cwnd: f64,
    /// Wire size of a full data packet, and its payload.
    s: f64,
    mss: f64,
    /// What the sender asks for (header units).
    request: u32,
    /// The latest rate feedback, wire B/s (`None` before the first).
    feedback: Option<f64>,
    /// The RTT the window is computed with: SRTT, or the handshake's until there is one.
    rtt: Option<Dur>,
    before_rto: Option<f64>,
    feedback_updates: u64,
    /// Pace the first window (`QfcpParams::pace_first_window`), and whether it is being paced.
    pace_first: bool,
    first_paced: bool,
    /// Payload bytes of the flight a timeout found still to be acknowledged: until they are,
    /// the go-back-N is paced at cwnd/rtt (docs/PROTOCOLS.md §9, "Starts").
    regain: Option<f64>,
    /// Whether a timeout's go-back-N is paced: without SACK only, where it resends data the
    /// receiver may hold (with SACK the scoreboard skips it).
    pace_go_back_n: bool,
}

impl QfcpWindow {
    /// One packet until the first feedback (or `cfg.initial_window` packets).
    pub fn new(cfg: &FlowConfig, mss: u32, p: &QfcpParams) -> QfcpWindow {
        let (s, cwnd) = cfg.first_window();
        QfcpWindow {
            cwnd,
            s,
            request: p.desired_rate.map_or(NO_LIMIT, header_rate),
            mss: mss.max(1) as f64,
            feedback: None,
            rtt: None,
            before_rto: None,
            feedback_updates: 0,
            pace_first: p.pace_first_window.unwrap_or(!cfg.sack),
            first_paced: false,
            regain: None,
            pace_go_back_n: p.pace_go_back_n && !cfg.sack,
        }
    }

    /// cwnd in wire bytes.
    pub fn cwnd_wire(&self) -> f64 {
        self.cwnd
    }

    /// The latest rate feedback, B/s.
    pub fn feedback(&self) -> Option<f64> {
        self.feedback
    }

    /// feedback·rtt in wire bytes, at least one packet (eq. 3); `None` before both are known.
    pub fn target(&self) -> Option<f64> {
        Some((self.feedback? * to_secs(self.rtt?)).max(self.s))
    }

    fn see(&mut self, ctx: &SenderCtx) {
        if let Some(r) = ctx.srtt {
            self.rtt = Some(r);
        }
    }

    /// eq. (3): cwnd = max(feedback·rtt, MSS), once both are known.
    fn follow(&mut self) {
        if let Some(w) = self.target() {
            self.cwnd = w;
        }
    }

    fn to_payload(&self, wire: f64) -> f64 {
        wire * self.mss / self.s
    }

    /// The SYN-ACK set the first window: pace it if asked (ns-2's Quick-Start sender spaces its
    /// approved window by RTT/cwnd per packet, `send_much` while `qs_approved_`).
    fn start_first_window(&mut self) {
        self.first_paced = self.pace_first && self.target().is_some();
    }

    /// The first new ACK (or a timeout) ends the first window's pacing: from there the window
    /// is ACK-clocked (ns-2's `endQuickStart` on the first ACK beyond the last).
    fn end_first_window(&mut self) {
        self.first_paced = false;
    }

    /// The first window's pacing rate, cwnd/rtt in wire B/s, while it is paced.
    fn first_window_rate(&self) -> Option<f64> {
        let rtt = to_secs(self.rtt?);
        ((self.first_paced || self.regain.is_some()) && rtt > 0.0).then(|| self.cwnd / rtt)
    }

    /// A new ACK covered `acked` bytes of what a timeout left in flight.
    fn regained(&mut self, acked: u64) {
        if let Some(r) = self.regain.as_mut() {
            *r -= acked as f64;
            if *r <= 0.0 {
                self.regain = None;
            }
        }
    }
}

impl CongestionControl for QfcpWindow {
    fn window(&self) -> f64 {
        self.to_payload(self.cwnd)
    }

    /// The transport's window (payload bytes) back into wire bytes, at least one packet.
    fn set_window(&mut self, window: f64, _ssthresh: f64) {
        self.cwnd = (window * self.s / self.mss).max(self.s);
    }

    /// New and duplicate ACKs alike: the window is feedback·rtt (for duplicates the transport
    /// adds num_dupACK, eq. 5).
    fn on_ack(&mut self, ack: &Ack<'_>, ctx: &SenderCtx) {
        self.see(ctx);
        if !ack.is_duplicate() {
            self.end_first_window();
            self.regained(ack.acked_bytes);
        }
        self.follow();
    }

    fn on_congestion(&mut self, signal: Signal, ctx: &SenderCtx) -> Response {
        self.see(ctx);
        match signal {
            // No halving: recover around feedback·rtt (eq. 5).
            Signal::Loss => Response::SetWindow(self.to_payload(self.target().unwrap_or(self.cwnd))),
            Signal::Timeout => {
                self.end_first_window();
                if ctx.consecutive_rtos == 0 {
                    self.before_rto = Some(self.cwnd);
                }
                if self.pace_go_back_n {
                    self.regain = Some(self.regain.unwrap_or(0.0).max(ctx.flight as f64));
                }
                Response::SetWindow(ctx.mss as f64)
            }
            Signal::SynTimeout => Response::SetWindow(ctx.mss as f64),
            Signal::EcnEcho => Response::Keep,
        }
    }

    fn recovery_base(&self, ctx: &SenderCtx) -> Option<f64> {
        let rtt = ctx.srtt.or(self.rtt)?;
        Some(self.to_payload((self.feedback? * to_secs(rtt)).max(self.s)))
    }

    fn on_spurious_timeout(&mut self, _ctx: &SenderCtx) {
        self.regain = None;
        if let Some(c) = self.before_rto.take() {
            self.cwnd = c;
        }
    }

    fn on_send(&mut self, pkt: &mut Packet, ctx: &SenderCtx) {
        self.see(ctx);
        let rtt_us = self.rtt.map_or(0, |r| (r / NS_PER_US).clamp(1, u32::MAX as u64) as u32);
        pkt.cong = CongHeader::Qfcp { rtt_us, rate_request: self.request, rate_feedback: 0 };
    }

    /// The feedback of every SYN-ACK and ACK, also during the transport's recovery. The
    /// SYN-ACK's sets the first window with the handshake's RTT (the age of the echoed
    /// timestamp: the transport has not sampled it yet).
    fn on_wire_arrival(&mut self, pkt: &mut Packet, ctx: &SenderCtx) {
        self.see(ctx);
        if !matches!(pkt.kind, Kind::SynAck | Kind::Ack) {
            return;
        }
        if let CongHeader::Qfcp { rate_feedback, .. } = pkt.cong {
            if rate_feedback != NO_LIMIT && rate_feedback > 0 && self.feedback != Some(rate_feedback as f64) {
                self.feedback = Some(rate_feedback as f64);
                self.feedback_updates += 1;
            }
        }
        if pkt.kind == Kind::SynAck && self.rtt.is_none() {
            if let Some(h) = pkt.tcp_hdr() {
                self.rtt = Some(ctx.now.saturating_sub(h.ts_ecr).max(NS_PER_US));
            }
            self.follow();
            self.start_first_window();
        }
    }

    fn header_bytes(&self) -> u32 {
        QFCP_HEADER_BYTES
    }

    fn pacing_rate(&self) -> Option<f64> {
        self.first_window_rate()
    }

    fn metrics(&self, out: &mut dyn MetricSink) {
        out.put("qfcp_feedback_bps", "bit/s", MetricValue::Gauge(self.feedback.unwrap_or(0.0) * 8.0));
        out.put("qfcp_feedback_updates", "events", MetricValue::Count(self.feedback_updates));
    }
}
