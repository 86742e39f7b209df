//! RCP's sender as the TCP transport's congestion controller (docs/PROTOCOLS.md §6): rate-based, no
//! congestion window.
//!
//! - Every packet carries the 12-byte RCP header: rate = 0xFFFF_FFFF (a request for as much as
//!   the path allows; routers lower it to their R) and rtt = the sender's SRTT in µs (0 before
//!   the first sample).
//! - The SYN carries the request; the flow starts at the R its SYN-ACK returns. Until a rate is
//!   known (no SYN-ACK yet, or `handshake = false`) the window is one packet, so exactly one
//!   packet carries the first request and the flow waits for its answer.
//! - Once a rate is known the window is infinite and the transport paces data at that rate
//!   (wire bytes per second). Every SYN-ACK, ACK and REF answer's rate applies at once, read in
//!   `on_wire_arrival`, so also during the transport's fast recovery.
//! - When the pacing gap (wire/rate) exceeds the RTT, a header-only REF probe goes once per
//!   RTT (`probe_due`, timed by `poll_timer`), so the rate is learnt at least once per RTT.
//! - Loss never changes the rate (`Response::Keep`): the transport retransmits (fast
//!   retransmit, or go-back-N at the paced rate after a timeout) [reconstructed, docs/PROTOCOLS.md §6].
//! - A finite flow sends a FIN once everything is acknowledged (`announces_end`); no probe
//!   follows it.

use crate::cc::{Ack, CongestionControl, Response, SenderCtx, Signal};
use crate::metrics::{MetricSink, MetricValue};
use crate::packet::{hdr, CongHeader, Kind, Packet};
use crate::time::{secs, to_secs, Dur, Time, NS_PER_US};

/// Bytes the RCP header adds (docs/PROTOCOLS.md §1).
pub const RCP_HEADER: u32 = 12;
/// The header's "no limit".
pub const NO_LIMIT: u32 = u32::MAX;

/// RCP's (and PIQI-RCP's) sender controller.
#[derive(Clone, Debug)]
pub struct RcpSender {
    mss: f64,
    /// Wire bytes of a full data packet.
    wire: f64,
    /// The rate fed back, B/s of wire bytes (`None` until the first answer).
    rate: Option<f64>,
    /// The latest SRTT the transport reported.
    rtt: Option<Dur>,
    /// When the last REF probe left.
    last_probe: Option<Time>,
    /// The timer found a probe due; the next `probe_due` sends it (the timer stays off until then).
    probe_armed: bool,
    /// The FIN has gone: no more probes.
    ended: bool,
    rate_updates: u64,
    probes: u64,
}

impl RcpSender {
    /// A controller for `mss`-byte segments (`tcp::mss_for(cfg, RCP_HEADER)`).
    pub fn new(mss: u32) -> RcpSender {
        RcpSender {
            mss: mss.max(1) as f64,
            wire: (mss.max(1) + hdr::IP_TCP + RCP_HEADER) as f64,
            rate: None,
            rtt: None,
            last_probe: None,
            probe_armed: false,
            ended: false,
            rate_updates: 0,
            probes: 0,
        }
    }

    /// The rate in force, B/s (`None` before the first answer).
    pub fn rate(&self) -> Option<f64> {
        self.rate
    }

    /// REF probes sent.
    pub fn probes(&self) -> u64 {
        self.probes
    }

    /// Does the pacing gap exceed the RTT? Then the RTT (ns) is returned.
    fn sparse(&self) -> Option<Dur> {
        let (rate, rtt) = (self.rate?, self.rtt?);
        (!self.ended && self.wire / rate > to_secs(rtt)).then_some(rtt.max(1))
    }

    /// When the next REF probe is due (`None`: none needed).
    fn next_probe(&self) -> Option<Time> {
        let rtt = self.sparse()?;
        Some(self.last_probe.map_or(0, |t| t.saturating_add(rtt)))
    }

    fn see(&mut self, ctx: &SenderCtx) {
        if let Some(r) = ctx.srtt.or(ctx.latest_rtt) {
            self.rtt = Some(r);
        }
    }
}

impl CongestionControl for RcpSender {
    /// Infinite once a rate is known (the rate alone regulates); one packet before.
    fn window(&self) -> f64 {
        if self.rate.is_some() {
            f64::INFINITY
        } else {
            self.mss
        }
    }

    /// The transport's windows (a recovery's exit) mean nothing to a rate.
    fn set_window(&mut self, _window: f64, _ssthresh: f64) {}

    fn on_ack(&mut self, _ack: &Ack<'_>, ctx: &SenderCtx) {
        self.see(ctx);
    }

    /// Loss and timeouts keep the rate; the transport retransmits.
    fn on_congestion(&mut self, _signal: Signal, ctx: &SenderCtx) -> Response {
        self.see(ctx);
        Response::Keep
    }

    fn on_send(&mut self, pkt: &mut Packet, ctx: &SenderCtx) {
        self.see(ctx);
        let rtt_us = self.rtt.map_or(0, |r| (r / NS_PER_US).clamp(1, u32::MAX as u64) as u32);
        pkt.cong = CongHeader::Rcp { rate: NO_LIMIT, rtt_us };
        if pkt.kind == Kind::Fin {
            self.ended = true;
        }
    }

    /// The rate of a SYN-ACK, ACK or REF answer applies at once (even in fast recovery);
    /// "no limit" (no RCP router on the path) changes nothing.
    fn on_wire_arrival(&mut self, pkt: &mut Packet, ctx: &SenderCtx) {
        self.see(ctx);
        if !matches!(pkt.kind, Kind::SynAck | Kind::Ack | Kind::Ref) {
            return;
        }
        // A SYN-ACK answering a resent SYN gives the transport no RTT sample (Karn), and data
        // without an RTT would read as a newcomer's first request at PIQI-RCP routers: take the
        // echoed timestamp's age as the header's RTT until the transport has a sample.
        if pkt.kind == Kind::SynAck && self.rtt.is_none() {
            if let Some(h) = pkt.tcp_hdr() {
                self.rtt = Some(ctx.now.saturating_sub(h.ts_ecr).max(NS_PER_US));
            }
        }
        if let CongHeader::Rcp { rate, .. } = pkt.cong {
            if rate != NO_LIMIT && rate > 0 && self.rate != Some(rate as f64) {
                self.rate = Some(rate as f64);
                self.rate_updates += 1;
            }
        }
    }

    fn header_bytes(&self) -> u32 {
        RCP_HEADER
    }

    fn pacing_rate(&self) -> Option<f64> {
        self.rate
    }

    /// The next REF probe, while the gap exceeds the RTT and none is waiting to be sent.
    fn poll_timer(&self) -> Option<Time> {
        if self.probe_armed {
            return None;
        }
        self.next_probe()
    }

    fn on_timer(&mut self, ctx: &SenderCtx) {
        self.see(ctx);
        if self.next_probe().is_some_and(|t| ctx.now >= t) {
            self.probe_armed = true;
        }
    }

    /// A REF once per RTT while wire/rate > RTT.
    fn probe_due(&mut self, ctx: &SenderCtx) -> bool {
        self.see(ctx);
        let due = self.next_probe().is_some_and(|t| ctx.now >= t);
        self.probe_armed = false;
        if due {
            self.last_probe = Some(ctx.now);
            self.probes += 1;
        }
        due
    }

    fn probes(&self) -> bool {
        true
    }

    fn announces_end(&self) -> bool {
        true
    }

    fn metrics(&self, out: &mut dyn MetricSink) {
        out.put("rate_updates", "events", MetricValue::Count(self.rate_updates));
        out.put("ref_probes", "packets", MetricValue::Count(self.probes));
    }
}

/// Seconds to the header's µs (for tests and tools).
pub fn rtt_us(s: f64) -> u32 {
    (secs(s) / NS_PER_US) as u32
}
