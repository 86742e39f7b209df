//! NewReno's congestion controller in bytes (RFC 5681 §3.1–3.2; docs/PROTOCOLS.md §10): slow start,
//! congestion avoidance, TCP's halving. Fast recovery (RFC 5681 §3.2, RFC 6582 §3.2) is the
//! transport's (`recovery.rs`); Reno differs only in its exit, which the transport picks.

use crate::cc::{Ack, CongestionControl, Response, SenderCtx, Signal};
use crate::endpoint::FlowConfig;

/// RFC 5681 §3.1 initial window for a given SMSS, in bytes.
pub fn rfc5681_iw(smss: u32) -> u64 {
    let s = smss as u64;
    if smss > 2190 {
        2 * s
    } else if smss > 1095 {
        3 * s
    } else {
        4 * s
    }
}

/// Initial window in bytes: `cfg.initial_window` packets if given, else RFC 5681's IW.
pub fn initial_window_bytes(cfg: &FlowConfig, smss: u32) -> u64 {
    match cfg.initial_window {
        Some(n) => n.max(1) as u64 * smss as u64,
        None => rfc5681_iw(smss),
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct NewRenoWindow {
    cwnd: f64,
    ssthresh: f64,
    smss: f64,
    /// (cwnd, ssthresh) before the first RTO of an episode, for a spurious-RTO undo.
    before_rto: Option<(f64, f64)>,
}

impl NewRenoWindow {
    /// IW from `cfg` (docs/PROTOCOLS.md §10), ssthresh = `cfg.initial_ssthresh` or ∞.
    pub fn new(cfg: &FlowConfig, smss: u32) -> NewRenoWindow {
        let ssthresh = cfg.initial_ssthresh.map_or(f64::INFINITY, |b| b as f64);
        NewRenoWindow::with(initial_window_bytes(cfg, smss) as f64, ssthresh, smss)
    }

    /// Explicit starting state (tests, and controllers that wrap NewReno).
    pub fn with(cwnd: f64, ssthresh: f64, smss: u32) -> NewRenoWindow {
        NewRenoWindow { cwnd, ssthresh, smss: smss as f64, before_rto: None }
    }

    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    pub fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    pub fn set_cwnd(&mut self, cwnd: f64) {
        self.cwnd = cwnd.max(self.smss);
    }
}

/// RFC 5681 §3.1 on a new ACK below ssthresh: slow start, cwnd += min(acked, SMSS) (eq. 2).
/// True when the ACK is done with: a duplicate (which changes nothing outside recovery) or slow
/// start's; false when cwnd ≥ ssthresh and congestion avoidance, the controller's own, is due.
pub fn slow_start(cwnd: &mut f64, ssthresh: f64, smss: f64, ack: &Ack<'_>) -> bool {
    if ack.is_duplicate() {
        return true;
    }
    if *cwnd < ssthresh {
        *cwnd += (ack.acked_bytes as f64).min(smss);
        return true;
    }
    false
}

impl CongestionControl for NewRenoWindow {
    cwnd_fields_as_window!();

    /// Slow start (eq. 2, [`slow_start`]); congestion avoidance: cwnd += SMSS²/cwnd per ACK
    /// (eq. 3).
    fn on_ack(&mut self, ack: &Ack<'_>, _ctx: &SenderCtx) {
        if !slow_start(&mut self.cwnd, self.ssthresh, self.smss, ack) {
            self.cwnd += self.smss * self.smss / self.cwnd;
        }
    }

    /// RFC 5681 eq. (4) on a loss (fast recovery is the transport's), an ECN-Echo (RFC 3168
    /// §6.1.2: as a loss, without retransmitting) and a timeout (§3.1: cwnd = 1 SMSS, ssthresh
    /// held on a repeated timeout of one segment); a lost SYN leaves one segment (§3.1).
    fn on_congestion(&mut self, signal: Signal, ctx: &SenderCtx) -> Response {
        match signal {
            Signal::Loss | Signal::EcnEcho => Response::Halve,
            Signal::Timeout => {
                if ctx.consecutive_rtos == 0 {
                    self.before_rto = Some((self.cwnd, self.ssthresh));
                }
                Response::Halve
            }
            Signal::SynTimeout => Response::SetWindow(self.smss),
        }
    }

    /// Back to the window and threshold the first timeout of the episode found (Linux
    /// `tcp_undo_cwnd_reduction`).
    fn on_spurious_timeout(&mut self, _ctx: &SenderCtx) {
        if let Some((cwnd, ssthresh)) = self.before_rto.take() {
            (self.cwnd, self.ssthresh) = (cwnd, ssthresh);
        }
    }

    /// NewReno keeps a window and nothing else: no header, no pacing, no timer.
    fn plain_window(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Kind, Packet, TcpHeader};

    const S: u32 = 1000;
    const SF: f64 = S as f64;

    fn new_ack(w: &mut NewRenoWindow, acked: u64) {
        let p = Packet::tcp(0, Kind::Ack, 40, 0, TcpHeader::default());
        let ack = Ack { packet: &p, acked_bytes: acked, reported_pkts: acked.div_ceil(S as u64) as f64 };
        w.on_ack(&ack, &SenderCtx { mss: S, ..Default::default() });
    }

    #[test]
    fn initial_window_by_smss() {
        assert_eq!(rfc5681_iw(1095), 4 * 1095);
        assert_eq!(rfc5681_iw(1096), 3 * 1096);
        assert_eq!(rfc5681_iw(1460), 3 * 1460);
        assert_eq!(rfc5681_iw(2190), 3 * 2190);
        assert_eq!(rfc5681_iw(2191), 2 * 2191);
        let mut cfg = FlowConfig::new(1, 1040);
        assert_eq!(initial_window_bytes(&cfg, 1000), 4000);
        cfg.initial_window = Some(2);
        cfg.initial_ssthresh = Some(8000);
        let w = NewRenoWindow::new(&cfg, 1000);
        assert_eq!((w.cwnd(), w.ssthresh()), (2000.0, 8000.0));
        assert_eq!(NewRenoWindow::new(&FlowConfig::new(1, 1040), 1000).ssthresh(), f64::INFINITY);
    }

    #[test]
    fn slow_start_then_congestion_avoidance() {
        let mut w = NewRenoWindow::with(2.0 * SF, 4.0 * SF, S);
        // Slow start: + min(acked, SMSS) per ACK (a stretch ACK of 2 SMSS adds only 1 SMSS).
        new_ack(&mut w, 1000);
        assert_eq!(w.cwnd(), 3000.0);
        new_ack(&mut w, 2000);
        assert_eq!(w.cwnd(), 4000.0);
        // cwnd == ssthresh: congestion avoidance, + SMSS²/cwnd.
        new_ack(&mut w, 1000);
        assert_eq!(w.cwnd(), 4250.0);
        new_ack(&mut w, 1000);
        assert!((w.cwnd() - (4250.0 + 1e6 / 4250.0)).abs() < 1e-9);
        // A duplicate ACK changes nothing.
        let before = w.cwnd();
        new_ack(&mut w, 0);
        assert_eq!(w.cwnd(), before);
        // About one SMSS per window of ACKs.
        let mut w = NewRenoWindow::with(10.0 * SF, 0.0, S);
        for _ in 0..10 {
            new_ack(&mut w, 1000);
        }
        assert!((w.cwnd() - 11.0 * SF).abs() < 0.05 * SF, "{}", w.cwnd());
    }

    /// The responses the transport applies (its tests check the arithmetic of applying them).
    #[test]
    fn responses_to_congestion_signals_and_undo() {
        let mut w = NewRenoWindow::with(20.0 * SF, f64::INFINITY, S);
        let c = SenderCtx { mss: S, flight: 16_000, ..Default::default() };
        assert_eq!(w.on_congestion(Signal::Loss, &c), Response::Halve);
        assert_eq!(w.on_congestion(Signal::EcnEcho, &c), Response::Halve);
        assert_eq!(w.on_congestion(Signal::SynTimeout, &c), Response::SetWindow(SF));
        // A timeout saves what it found for a spurious-timeout undo, once per episode.
        assert_eq!(w.on_congestion(Signal::Timeout, &c), Response::Halve);
        w.set_window(SF, 8000.0);
        assert_eq!((w.cwnd(), w.ssthresh()), (1000.0, 8000.0));
        w.on_congestion(Signal::Timeout, &SenderCtx { consecutive_rtos: 1, ..c });
        w.set_window(SF, 8000.0);
        w.on_spurious_timeout(&c);
        assert_eq!((w.cwnd(), w.ssthresh()), (20_000.0, f64::INFINITY));
        // Nothing to undo without a timeout.
        w.on_spurious_timeout(&c);
        assert_eq!(w.cwnd(), 20_000.0);
    }
}
