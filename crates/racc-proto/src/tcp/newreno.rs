//! NewReno window rules in bytes (RFC 5681 §3.1–3.2, RFC 6582 §3.2; PROTOCOLS.md §10).
//! The same rules serve Reno: only the recovery exit differs, and the transport picks it.

use super::window::{RecoveryExit, SenderCtx, WindowControl};
use crate::endpoint::FlowConfig;
use crate::packet::Packet;

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
    /// IW from `cfg` (PROTOCOLS.md §10), ssthresh = `cfg.initial_ssthresh` or ∞.
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

    /// RFC 5681 eq. (4): ssthresh = max(FlightSize/2, 2·SMSS).
    fn halve(&mut self, flight: u64) {
        self.ssthresh = (flight as f64 / 2.0).max(2.0 * self.smss);
    }
}

impl WindowControl for NewRenoWindow {
    fn cwnd_bytes(&self) -> f64 {
        self.cwnd
    }

    fn ssthresh_bytes(&self) -> f64 {
        self.ssthresh
    }

    /// RFC 5681 §3.1: the SYN was lost, so the window after the handshake is one segment.
    fn on_syn_timeout(&mut self, _ctx: &SenderCtx) {
        self.cwnd = self.smss;
    }

    /// Slow start: cwnd += min(acked, SMSS) (eq. 2); congestion avoidance: cwnd += SMSS²/cwnd
    /// per ACK (eq. 3).
    fn on_new_ack(&mut self, acked: u64, _ack: &Packet, _ctx: &SenderCtx) {
        if self.cwnd < self.ssthresh {
            self.cwnd += (acked as f64).min(self.smss);
        } else {
            self.cwnd += self.smss * self.smss / self.cwnd;
        }
    }

    /// RFC 5681 §3.2 steps 2–3: ssthresh = max(FlightSize/2, 2·SMSS), cwnd = ssthresh + 3·SMSS
    /// (dupthresh·SMSS: the segments that have left the network). With SACK, cwnd = ssthresh
    /// (RFC 6675 §5 step 4.2: the pipe estimate accounts for what has left).
    fn on_fast_retransmit(&mut self, _ack: &Packet, ctx: &SenderCtx) {
        self.halve(ctx.flight);
        self.cwnd = self.ssthresh + if ctx.sack { 0.0 } else { ctx.dupacks as f64 * self.smss };
    }

    /// RFC 5681 §3.2 step 4: inflate by one SMSS per further duplicate (not with SACK).
    fn on_recovery_dupack(&mut self, _ack: &Packet, ctx: &SenderCtx) {
        if !ctx.sack {
            self.cwnd += self.smss;
        }
    }

    /// RFC 6582 §3.2 step 4: deflate by the bytes acked, add back SMSS if acked ≥ SMSS.
    /// Floored at one SMSS (the RFC is silent; a negative window is meaningless). Not with
    /// SACK, whose window never inflated.
    fn on_partial_ack(&mut self, acked: u64, _ack: &Packet, ctx: &SenderCtx) {
        if ctx.sack {
            return;
        }
        self.cwnd -= acked as f64;
        if acked as f64 >= self.smss {
            self.cwnd += self.smss;
        }
        self.cwnd = self.cwnd.max(self.smss);
    }

    /// RFC 6582 §3.2 step 3 option (1): cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS)
    /// with FlightSize after this ACK. Reno (RFC 5681 step 6): cwnd = ssthresh.
    fn on_recovery_exit(&mut self, how: RecoveryExit, _ack: &Packet, ctx: &SenderCtx) {
        self.cwnd = match how {
            RecoveryExit::FullAck => self.ssthresh.min((ctx.flight as f64).max(self.smss) + self.smss),
            RecoveryExit::Reno => self.ssthresh,
        };
    }

    /// RFC 5681 eq. (4) and §3.1 (held on a repeated timeout of the same segment); cwnd = 1 SMSS.
    fn on_rto(&mut self, ctx: &SenderCtx) {
        if ctx.consecutive_rtos == 0 {
            self.before_rto = Some((self.cwnd, self.ssthresh));
            self.halve(ctx.flight);
        }
        self.cwnd = self.smss;
    }

    /// Back to the window and threshold the first timeout of the episode found (Linux
    /// `tcp_undo_cwnd_reduction`).
    fn on_spurious_rto(&mut self, _ctx: &SenderCtx) {
        if let Some((cwnd, ssthresh)) = self.before_rto.take() {
            (self.cwnd, self.ssthresh) = (cwnd, ssthresh);
        }
    }

    /// RFC 3168 §6.1.2: react as to a loss, without retransmitting.
    fn on_ecn_echo(&mut self, _ack: &Packet, ctx: &SenderCtx) {
        self.halve(ctx.flight);
        self.cwnd = self.ssthresh;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Kind, TcpHeader};

    const S: u32 = 1000;
    const SF: f64 = S as f64;

    fn ack() -> Packet {
        Packet::tcp(0, Kind::Ack, 40, 0, TcpHeader::default())
    }

    fn ctx(flight: u64, dupacks: u32) -> SenderCtx {
        SenderCtx { mss: S, snd_nxt: flight, snd_max: flight, flight, dupacks, ..Default::default() }
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
        w.on_new_ack(1000, &ack(), &ctx(0, 0));
        assert_eq!(w.cwnd(), 3000.0);
        w.on_new_ack(2000, &ack(), &ctx(0, 0));
        assert_eq!(w.cwnd(), 4000.0);
        // cwnd == ssthresh: congestion avoidance, + SMSS²/cwnd.
        w.on_new_ack(1000, &ack(), &ctx(0, 0));
        assert_eq!(w.cwnd(), 4250.0);
        w.on_new_ack(1000, &ack(), &ctx(0, 0));
        assert!((w.cwnd() - (4250.0 + 1e6 / 4250.0)).abs() < 1e-9);
        // About one SMSS per window of ACKs.
        let mut w = NewRenoWindow::with(10.0 * SF, 0.0, S);
        for _ in 0..10 {
            w.on_new_ack(1000, &ack(), &ctx(0, 0));
        }
        assert!((w.cwnd() - 11.0 * SF).abs() < 0.05 * SF, "{}", w.cwnd());
    }

    #[test]
    fn fast_retransmit_recovery_and_exit() {
        let mut w = NewRenoWindow::with(10.0 * SF, f64::INFINITY, S);
        w.on_fast_retransmit(&ack(), &ctx(10_000, 3));
        assert_eq!((w.ssthresh(), w.cwnd()), (5000.0, 8000.0));
        w.on_recovery_dupack(&ack(), &ctx(10_000, 4));
        assert_eq!(w.cwnd(), 9000.0);
        // Partial ACK of 3000: 9000 - 3000 + 1000.
        w.on_partial_ack(3000, &ack(), &ctx(7000, 4));
        assert_eq!(w.cwnd(), 7000.0);
        // Partial ACK below SMSS: no add-back.
        w.on_partial_ack(500, &ack(), &ctx(6500, 4));
        assert_eq!(w.cwnd(), 6500.0);
        // Full ACK leaving 2000 outstanding: min(5000, 2000 + 1000).
        w.on_recovery_exit(RecoveryExit::FullAck, &ack(), &ctx(2000, 4));
        assert_eq!(w.cwnd(), 3000.0);
        // Nothing outstanding: min(ssthresh, SMSS + SMSS).
        let mut w2 = w.clone();
        w2.on_recovery_exit(RecoveryExit::FullAck, &ack(), &ctx(0, 4));
        assert_eq!(w2.cwnd(), 2000.0);
        // Lots outstanding: capped at ssthresh; Reno always ssthresh.
        w2.on_recovery_exit(RecoveryExit::FullAck, &ack(), &ctx(9000, 4));
        assert_eq!(w2.cwnd(), 5000.0);
        w.on_recovery_exit(RecoveryExit::Reno, &ack(), &ctx(0, 4));
        assert_eq!(w.cwnd(), 5000.0);
    }

    #[test]
    fn ssthresh_floor_is_two_smss() {
        let mut w = NewRenoWindow::with(3.0 * SF, f64::INFINITY, S);
        w.on_fast_retransmit(&ack(), &ctx(3000, 3));
        assert_eq!((w.ssthresh(), w.cwnd()), (2000.0, 5000.0));
    }

    #[test]
    fn rto_and_repeated_rto() {
        let mut w = NewRenoWindow::with(20.0 * SF, f64::INFINITY, S);
        w.on_rto(&ctx(16_000, 0));
        assert_eq!((w.ssthresh(), w.cwnd()), (8000.0, 1000.0));
        // Second expiry for the same segment: ssthresh held (RFC 5681 §3.1), cwnd 1 SMSS.
        let mut c = ctx(1000, 0);
        c.consecutive_rtos = 1;
        w.on_rto(&c);
        assert_eq!((w.ssthresh(), w.cwnd()), (8000.0, 1000.0));
    }

    #[test]
    fn ecn_echo_halves_without_inflation() {
        let mut w = NewRenoWindow::with(12.0 * SF, f64::INFINITY, S);
        w.on_ecn_echo(&ack(), &ctx(12_000, 0));
        assert_eq!((w.ssthresh(), w.cwnd()), (6000.0, 6000.0));
    }

    #[test]
    fn syn_loss_gives_one_segment() {
        let mut w = NewRenoWindow::with(4.0 * SF, f64::INFINITY, S);
        w.on_syn_timeout(&ctx(0, 0));
        assert_eq!(w.cwnd(), 1000.0);
    }
}
