//! The transport's fast recovery window (RFC 5681 §3.2, RFC 6582 §3.2, RFC 6675 §5): for the
//! length of one recovery the TCP transport, not the congestion controller, owns the window.
//! It starts from the controller's [`Response`](crate::cc::Response) to the loss (TCP's halving
//! of the flight, or a window the controller chose), inflates by one MSS per duplicate ACK,
//! deflates on partial ACKs, and at the exit hands the controller the window to go on from.
//! With SACK the window is not inflated (the transport sends by its `pipe` estimate).
//! [`apply`] carries out a response to the other signals, the same for every controller.

use crate::cc::{CongestionControl, Response, SenderCtx, Signal};

/// How fast recovery ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryExit {
    /// NewReno (RFC 6582 §3.2 step 3): an ACK covers everything up to `recover`.
    FullAck,
    /// Reno (RFC 5681 §3.2 step 6): the first ACK of new data, full or partial.
    Reno,
}

/// One recovery's window arithmetic, bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FastRecovery {
    cwnd: f64,
    ssthresh: f64,
    smss: f64,
    sack: bool,
    /// The controller chose the window (`Response::SetWindow`): the exit returns to it.
    chosen: bool,
}

impl FastRecovery {
    /// The recovery a controller's response to `Signal::Loss` asks for: TCP's halving of
    /// `base` (the flight or the window, per the transport's `ssthresh_from`), around the
    /// window it chose, or around its current `window` (`Keep`). `ctx` gives the duplicates and
    /// the MSS.
    pub fn start(response: Response, ctx: &SenderCtx, window: f64, base: f64, sack: bool) -> FastRecovery {
        match response {
            Response::Halve => FastRecovery::halving(base, ctx.dupacks, ctx.mss, sack),
            Response::SetWindow(w) => FastRecovery::around(w, ctx.dupacks, ctx.mss, sack),
            Response::Keep => FastRecovery::around(window, ctx.dupacks, ctx.mss, sack),
        }
    }

    /// TCP's halving: ssthresh = max(base/2, 2·SMSS) (RFC 5681 eq. 4 with base = FlightSize;
    /// ns-2 and Linux halve cwnd), cwnd = ssthresh +
    /// dupacks·SMSS (step 3: the segments that have left the network; RFC 6675: not with SACK).
    pub fn halving(base: f64, dupacks: u32, smss: u32, sack: bool) -> FastRecovery {
        let ssthresh = halved(base, smss);
        let smss = smss as f64;
        let mut r = FastRecovery { cwnd: ssthresh, ssthresh, smss, sack, chosen: false };
        r.inflate(dupacks);
        r
    }

    /// Around a window the controller chose (`ssthresh` bytes), inflated likewise; the exit
    /// returns to it.
    pub fn around(ssthresh: f64, dupacks: u32, smss: u32, sack: bool) -> FastRecovery {
        let mut r = FastRecovery { cwnd: ssthresh, ssthresh, smss: smss as f64, sack, chosen: true };
        r.inflate(dupacks);
        r
    }

    fn inflate(&mut self, dupacks: u32) {
        if !self.sack {
            self.cwnd = self.ssthresh + dupacks as f64 * self.smss;
        }
    }

    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    pub fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    /// Move a recovery around a chosen window to a new base `w` (bytes), keeping what
    /// inflation and deflation added (`CongestionControl::recovery_base`); a halving recovery
    /// is left as it is.
    pub fn rebase(&mut self, w: f64) {
        if self.chosen {
            self.cwnd = (self.cwnd + w - self.ssthresh).max(self.smss);
            self.ssthresh = w;
        }
    }

    /// RFC 5681 §3.2 step 4: inflate by one SMSS per further duplicate (not with SACK).
    pub fn on_dupack(&mut self) {
        if !self.sack {
            self.cwnd += self.smss;
        }
    }

    /// RFC 6582 §3.2 step 4: deflate by the bytes acked, add back SMSS if acked ≥ SMSS.
    /// Floored at one SMSS (the RFC is silent; a negative window is meaningless).
    pub fn on_partial_ack(&mut self, acked: u64) {
        if self.sack {
            return;
        }
        self.cwnd -= acked as f64;
        if acked as f64 >= self.smss {
            self.cwnd += self.smss;
        }
        self.cwnd = self.cwnd.max(self.smss);
    }

    /// The window the controller goes on from, bytes: the one it chose, else RFC 6582 §3.2
    /// step 3 option (1), min(ssthresh, max(FlightSize, SMSS) + SMSS) with FlightSize after the
    /// exit ACK, or for Reno (RFC 5681 step 6) ssthresh.
    pub fn exit(&self, how: RecoveryExit, flight: u64) -> f64 {
        if self.chosen {
            return self.ssthresh;
        }
        match how {
            RecoveryExit::FullAck => self.ssthresh.min((flight as f64).max(self.smss) + self.smss),
            RecoveryExit::Reno => self.ssthresh,
        }
    }
}

/// RFC 5681 eq. (4): ssthresh = max(base/2, 2·SMSS), base the FlightSize (RFC) or cwnd (ns-2,
/// Linux `tcp_reno_ssthresh`).
#[inline]
pub fn halved(base: f64, mss: u32) -> f64 {
    (base / 2.0).max(2.0 * mss as f64)
}

/// Carry out `cc`'s response to a signal other than a loss (`cc::Response` says what each
/// means); `ctx` is the state the signal found (the flight before a timeout's go-back-N) and
/// `base` what `Halve` halves.
pub fn apply(cc: &mut dyn CongestionControl, response: Response, signal: Signal, ctx: &SenderCtx, base: f64) {
    let mss = ctx.mss as f64;
    match (response, signal) {
        (Response::Keep, _) => {}
        (Response::SetWindow(w), _) => {
            let ssthresh = cc.ssthresh();
            cc.set_window(w, ssthresh);
        }
        (Response::Halve, Signal::EcnEcho) => {
            let ssthresh = halved(base, ctx.mss);
            cc.set_window(ssthresh, ssthresh);
        }
        // RFC 5681 §3.1: ssthresh held on a repeated timeout of the same segment.
        (Response::Halve, Signal::Timeout) => {
            let ssthresh = if ctx.consecutive_rtos == 0 { halved(base, ctx.mss) } else { cc.ssthresh() };
            cc.set_window(mss, ssthresh);
        }
        (Response::Halve, Signal::SynTimeout | Signal::Loss) => {
            let ssthresh = cc.ssthresh();
            cc.set_window(mss, ssthresh);
        }
    }
}

/// Test drivers: a controller's responses carried out as the transport does.
#[cfg(test)]
pub(crate) mod drive {
    use super::*;

    /// A loss: the controller's response, then the recovery it asks for.
    pub fn loss(cc: &mut dyn CongestionControl, ctx: &SenderCtx) -> FastRecovery {
        let r = cc.on_congestion(Signal::Loss, ctx);
        FastRecovery::start(r, ctx, cc.window(), ctx.flight as f64, false)
    }

    /// The NewReno exit of `r` with `flight` bytes outstanding.
    pub fn exit(cc: &mut dyn CongestionControl, r: &FastRecovery, flight: u64) {
        cc.set_window(r.exit(RecoveryExit::FullAck, flight), r.ssthresh());
    }

    /// A timeout (or another non-loss signal) and its response applied.
    pub fn signal(cc: &mut dyn CongestionControl, signal: Signal, ctx: &SenderCtx) {
        let r = cc.on_congestion(signal, ctx);
        apply(cc, r, signal, ctx, ctx.flight as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halving_inflation_deflation_and_exit() {
        let mut r = FastRecovery::halving(20_000.0, 3, 1000, false);
        assert_eq!((r.cwnd(), r.ssthresh()), (13_000.0, 10_000.0), "flight/2 + 3 MSS");
        r.on_dupack();
        assert_eq!(r.cwnd(), 14_000.0);
        r.on_partial_ack(3000);
        assert_eq!(r.cwnd(), 12_000.0, "deflate by 3000, add back one MSS");
        r.on_partial_ack(500);
        assert_eq!(r.cwnd(), 11_500.0, "below one MSS: no add-back");
        assert_eq!(r.exit(RecoveryExit::FullAck, 4000), 5000.0, "min(ssthresh, flight + MSS)");
        assert_eq!(r.exit(RecoveryExit::FullAck, 0), 2000.0, "SMSS + SMSS");
        assert_eq!(r.exit(RecoveryExit::FullAck, 20_000), 10_000.0, "capped at ssthresh");
        assert_eq!(r.exit(RecoveryExit::Reno, 0), 10_000.0);
        // The floor: ssthresh at least 2 SMSS; cwnd never below one SMSS.
        let mut r = FastRecovery::halving(3000.0, 3, 1000, false);
        assert_eq!((r.ssthresh(), r.cwnd()), (2000.0, 5000.0));
        r.on_partial_ack(9000);
        assert_eq!(r.cwnd(), 1000.0);
    }

    #[test]
    fn around_a_chosen_window_and_with_sack() {
        let r = FastRecovery::around(7000.0, 3, 1000, false);
        assert_eq!((r.cwnd(), r.ssthresh()), (10_000.0, 7000.0));
        assert_eq!(r.exit(RecoveryExit::FullAck, 0), 7000.0, "returns to the chosen window");
        // A moving base (QFCP): inflation kept, the base replaced; a halving does not move.
        let mut r = FastRecovery::around(7000.0, 3, 1000, false);
        r.on_dupack();
        r.rebase(9000.0);
        assert_eq!((r.cwnd(), r.ssthresh()), (13_000.0, 9000.0));
        assert_eq!(r.exit(RecoveryExit::FullAck, 0), 9000.0);
        let mut h = FastRecovery::halving(20_000.0, 3, 1000, false);
        h.rebase(1.0);
        assert_eq!((h.cwnd(), h.ssthresh()), (13_000.0, 10_000.0));
        // SACK (RFC 6675): no inflation, no deflation.
        let mut r = FastRecovery::halving(20_000.0, 3, 1000, true);
        assert_eq!(r.cwnd(), 10_000.0);
        r.on_dupack();
        r.on_partial_ack(3000);
        assert_eq!(r.cwnd(), 10_000.0);
    }
}
