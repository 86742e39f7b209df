//! DCTCP (RFC 8257) as a congestion controller on the TCP transport (the registry's "dctcp").
//!
//! The sender estimates the fraction of its bytes marked, α ← (1 − g)·α + g·F once per window
//! of data (RFC 8257 §3.3), and on an ECN-Echo cuts cwnd to cwnd·(1 − α/2), at most once per
//! window (the transport's RFC 3168 gate). Growth, loss and timeouts are Reno's (RFC 8257
//! §3.5). The receiver echoes CE exactly, ACK by ACK (RFC 8257 §3.2), instead of RFC 3168's
//! latch; racc's receiver ACKs every segment by default, where that echo is exact. With
//! delayed ACKs an ACK carries the CE state of the last segment it covers: RFC 8257 §3.2's
//! immediate ACK at a change of state is not done (the transport decides when ACKs go).
//! Flows are ECN-capable whatever the scenario's `ecn` says.

use crate::cc::{Ack, CongestionControl, Response, SenderCtx, Signal};
use crate::endpoint::{Endpoint, FlowConfig};
use crate::packet::{ecn, flags, Kind, Packet};
use crate::params::{parse, ParamError};
use crate::protocol::FlowProtocol;
use crate::tcp::{mss_for, tcp_receiver_with, tcp_sender_with, AckEcho, NewRenoWindow, Recovery, TcpParams};
use crate::time::Time;
use std::sync::Arc;

/// g (RFC 8257 §4.2: 1/16; Linux `tcp_dctcp.c` `dctcp_shift_g` = 4).
pub const G: f64 = 1.0 / 16.0;
/// α's starting value (Linux `tcp_dctcp.c` `dctcp_alpha_on_init` = 1024, i.e. 1: the first cut
/// halves, as Reno's would; RFC 8257 §4.2 leaves it to the implementation).
pub const ALPHA_INIT: f64 = 1.0;

/// The `params` table of a "dctcp" flow.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpParams {
    /// g, the weight of the newest window's fraction in α (RFC 8257 §3.3).
    pub g: f64,
    /// α before the first window's estimate.
    pub alpha_init: f64,
    /// The TCP transport's knobs.
    pub tcp: TcpParams,
}

impl Default for DctcpParams {
    fn default() -> DctcpParams {
        DctcpParams { g: G, alpha_init: ALPHA_INIT, tcp: TcpParams::default() }
    }
}

impl DctcpParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(ParamError::new("g", format!("must be in (0, 1], got {}", self.g)));
        }
        if !(0.0..=1.0).contains(&self.alpha_init) {
            return Err(ParamError::new("alpha_init", format!("must be in [0, 1], got {}", self.alpha_init)));
        }
        self.tcp.validate().map_err(|e| ParamError::new(format!("tcp.{}", e.key), e.reason))
    }
}

/// α ← (1 − g)·α + g·F (RFC 8257 §3.3 step 8).
pub fn alpha_update(alpha: f64, g: f64, marked: f64, acked: f64) -> f64 {
    let f = if acked > 0.0 { marked / acked } else { 0.0 };
    (1.0 - g) * alpha + g * f
}

/// The window after an ECN-Echo: cwnd·(1 − α/2), at least two segments (RFC 8257 §3.3 step 9;
/// Linux `dctcp_ssthresh`).
pub fn cut(cwnd: f64, alpha: f64, smss: f64) -> f64 {
    (cwnd * (1.0 - alpha / 2.0)).max(2.0 * smss)
}

/// DCTCP's sender: Reno's window with α's estimate and cut.
#[derive(Clone, Debug)]
pub struct Dctcp {
    reno: NewRenoWindow,
    smss: f64,
    g: f64,
    alpha: f64,
    /// Bytes acknowledged and marked in the current observation window (RFC 8257 §3.3).
    acked: f64,
    marked: f64,
    /// All bytes ever acknowledged here, and where the observation window ends in that count
    /// (SND.NXT when it began: what was acknowledged plus what was in flight).
    total: u64,
    window_end: u64,
    cuts: u64,
}

impl Dctcp {
    pub fn new(cfg: &FlowConfig, smss: u32, p: &DctcpParams) -> Dctcp {
        Dctcp::around(NewRenoWindow::new(cfg, smss), smss, p)
    }

    /// Around a given Reno window (tests).
    pub fn around(reno: NewRenoWindow, smss: u32, p: &DctcpParams) -> Dctcp {
        Dctcp {
            reno,
            smss: smss as f64,
            g: p.g,
            alpha: p.alpha_init,
            acked: 0.0,
            marked: 0.0,
            total: 0,
            window_end: 0,
            cuts: 0,
        }
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl CongestionControl for Dctcp {
    fn window(&self) -> f64 {
        self.reno.window()
    }

    fn ssthresh(&self) -> f64 {
        self.reno.ssthresh()
    }

    fn set_window(&mut self, window: f64, ssthresh: f64) {
        self.reno.set_window(window, ssthresh);
    }

    /// RFC 8257 §3.3 steps 1-8: count acked and marked bytes; once the ACKs pass the end of the
    /// observation window, fold its fraction into α and start the next one. Then Reno's growth.
    fn on_ack(&mut self, ack: &Ack<'_>, ctx: &SenderCtx) {
        if ack.is_duplicate() {
            return;
        }
        let bytes = ack.acked_bytes as f64;
        self.acked += bytes;
        if ack.packet.tcp_hdr().is_some_and(|h| h.flags & flags::ECE != 0) {
            self.marked += bytes;
        }
        self.total += ack.acked_bytes;
        if self.total >= self.window_end {
            self.alpha = alpha_update(self.alpha, self.g, self.marked, self.acked);
            (self.acked, self.marked) = (0.0, 0.0);
            self.window_end = self.total + ctx.flight;
        }
        self.reno.on_ack(ack, ctx);
    }

    /// ECN-Echo: cwnd = ssthresh = cwnd·(1 − α/2) (RFC 8257 §3.3 step 9, once per window by the
    /// transport's gate). Loss, timeout and a lost SYN: Reno's (RFC 8257 §3.5).
    fn on_congestion(&mut self, signal: Signal, ctx: &SenderCtx) -> Response {
        match signal {
            Signal::EcnEcho => {
                let w = cut(self.reno.window(), self.alpha, self.smss);
                self.reno.set_window(w, w);
                self.cuts += 1;
                Response::SetWindow(w)
            }
            _ => self.reno.on_congestion(signal, ctx),
        }
    }

    fn on_spurious_timeout(&mut self, ctx: &SenderCtx) {
        self.reno.on_spurious_timeout(ctx);
    }

    fn plain_window(&self) -> bool {
        true
    }

    fn metrics(&self, out: &mut dyn crate::metrics::MetricSink) {
        use crate::metrics::MetricValue;
        out.put("dctcp_alpha", "", MetricValue::Gauge(self.alpha));
        out.put("dctcp_cuts", "events", MetricValue::Count(self.cuts));
    }
}

/// RFC 8257 §3.2: every ACK's ECE is the CE state of the data it acknowledges (the last
/// segment that arrived), not RFC 3168's echo held until CWR.
#[derive(Debug, Default)]
pub struct DctcpEcho {
    ce: bool,
}

impl AckEcho for DctcpEcho {
    fn on_forward(&mut self, _now: Time, pkt: &Packet) {
        if pkt.kind == Kind::Data && pkt.payload > 0 {
            self.ce = pkt.ecn == ecn::CE;
        }
    }

    fn fill_ack(&mut self, _now: Time, ack: &mut Packet) {
        if ack.kind != Kind::Ack {
            return; // the SYN-ACK's ECE is ECN's setup (RFC 3168 §6.1.1)
        }
        let ce = self.ce;
        if let Some(h) = ack.tcp_hdr_mut() {
            h.flags = if ce { h.flags | flags::ECE } else { h.flags & !flags::ECE };
        }
    }
}

/// A "dctcp" flow's checked parameters.
#[derive(Debug)]
struct DctcpFlow(DctcpParams);

fn ecn_capable(cfg: &FlowConfig) -> FlowConfig {
    FlowConfig { ecn: true, ..cfg.clone() }
}

impl FlowProtocol for DctcpFlow {
    fn sender(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        let cfg = ecn_capable(cfg);
        let cc = Dctcp::new(&cfg, mss_for(&cfg, 0), &self.0);
        tcp_sender_with(&cfg, Recovery::NewReno, &self.0.tcp, Box::new(cc))
    }

    fn receiver(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        tcp_receiver_with(&ecn_capable(cfg), Box::new(DctcpEcho::default()))
    }
}

/// The registry's "dctcp".
pub fn parse_dctcp(params: &serde_json::Value) -> Result<Arc<dyn FlowProtocol>, ParamError> {
    let p: DctcpParams = parse(params)?;
    p.validate()?;
    Ok(Arc::new(DctcpFlow(p)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::TcpHeader;
    use crate::tcp::recovery::drive;

    const S: u32 = 1000;
    const SF: f64 = S as f64;

    fn ack(w: &mut Dctcp, bytes: u64, ece: bool, flight: u64) {
        let h = TcpHeader { flags: flags::ACK | if ece { flags::ECE } else { 0 }, ..Default::default() };
        let p = Packet::tcp(0, Kind::Ack, 40, 0, h);
        let c = SenderCtx { mss: S, flight, ..Default::default() };
        w.on_ack(&Ack { packet: &p, acked_bytes: bytes, reported_pkts: 1.0 }, &c);
    }

    #[test]
    fn alpha_and_cut_by_hand() {
        // α = 1, F = 0.5: 15/16 + 1/32 = 0.96875; α = 0, F = 1: 1/16.
        assert!((alpha_update(1.0, G, 5.0, 10.0) - 0.96875).abs() < 1e-15);
        assert!((alpha_update(0.0, G, 10.0, 10.0) - 0.0625).abs() < 1e-15);
        assert_eq!(alpha_update(0.5, G, 0.0, 0.0), 0.5 * 15.0 / 16.0);
        // cwnd 100 segments at α = 0.25: 100·(1 − 0.125) = 87.5; α = 1 halves.
        assert_eq!(cut(100.0 * SF, 0.25, SF), 87.5 * SF);
        assert_eq!(cut(100.0 * SF, 1.0, SF), 50.0 * SF);
        assert_eq!(cut(3.0 * SF, 1.0, SF), 2.0 * SF, "at least two segments");
    }

    /// Windows of 10 segments: the first ACK closes the (empty) starting window; then a window
    /// with 4 of 10 marked gives α = (15/16)·α + (1/16)·0.4, and the ECN-Echo cuts by α/2.
    #[test]
    fn alpha_per_window_of_data_and_the_cut() {
        let p = DctcpParams { alpha_init: 0.0, ..Default::default() };
        let mut w = Dctcp::around(NewRenoWindow::with(10.0 * SF, 0.0, S), S, &p);
        ack(&mut w, 1000, false, 10_000); // closes window 0 (no data): α = 0; next ends at 11000
        assert_eq!(w.alpha(), 0.0);
        for i in 0..10 {
            ack(&mut w, 1000, i < 4, 10_000);
        }
        assert!((w.alpha() - 0.4 / 16.0).abs() < 1e-12, "α {}", w.alpha());
        let before = w.window();
        let r = w.on_congestion(Signal::EcnEcho, &SenderCtx { mss: S, ..Default::default() });
        let want = before * (1.0 - 0.0125);
        assert_eq!(r, Response::SetWindow(want));
        drive::signal(&mut w, Signal::EcnEcho, &SenderCtx { mss: S, ..Default::default() });
        assert!(w.window() < want && w.ssthresh() == w.window());
        // A loss is Reno's halving.
        assert_eq!(w.on_congestion(Signal::Loss, &SenderCtx::default()), Response::Halve);
    }

    #[test]
    fn the_receiver_echoes_each_acks_ce_state() {
        let mut e = DctcpEcho::default();
        let mut d = Packet::tcp(0, Kind::Data, 1000, 960, TcpHeader::default());
        let mut a =
            Packet::tcp(0, Kind::Ack, 40, 0, TcpHeader { flags: flags::ACK | flags::ECE, ..Default::default() });
        d.ecn = ecn::ECT0;
        e.on_forward(0, &d);
        e.fill_ack(0, &mut a);
        assert_eq!(a.tcp_hdr().unwrap().flags & flags::ECE, 0, "RFC 3168's latch cleared");
        d.ecn = ecn::CE;
        e.on_forward(0, &d);
        e.fill_ack(0, &mut a);
        assert_ne!(a.tcp_hdr().unwrap().flags & flags::ECE, 0);
        let mut sa = Packet::tcp(0, Kind::SynAck, 40, 0, TcpHeader { flags: flags::ECE, ..Default::default() });
        d.ecn = ecn::ECT0;
        e.on_forward(0, &d);
        e.fill_ack(0, &mut sa);
        assert_ne!(sa.tcp_hdr().unwrap().flags & flags::ECE, 0, "the SYN-ACK's setup stays");
        assert_eq!(parse_dctcp(&serde_json::json!({"g": 0})).unwrap_err().key, "g");
    }
}
