//! NewReno's fast recovery for windows that keep their own laws outside it (VCP, DPCP/TPCP,
//! DCP-EW): for the length of one recovery the window is [`NewRenoWindow`]'s byte arithmetic
//! (RFC 5681 §3.2 inflation, RFC 6582 §3.2 partial-ACK deflation); at the exit the owner takes
//! the window back in its own units.

use super::newreno::NewRenoWindow;
use super::window::{RecoveryExit, SenderCtx, WindowControl};
use crate::packet::Packet;

/// One fast recovery at a time, or none.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FastRecovery {
    nr: Option<NewRenoWindow>,
}

impl FastRecovery {
    pub fn active(&self) -> bool {
        self.nr.is_some()
    }

    /// NewReno's cwnd, bytes, while recovery lasts.
    #[inline]
    pub fn cwnd(&self) -> Option<f64> {
        self.nr.as_ref().map(NewRenoWindow::cwnd)
    }

    /// NewReno's ssthresh, bytes, while recovery lasts.
    #[inline]
    pub fn ssthresh(&self) -> Option<f64> {
        self.nr.as_ref().map(NewRenoWindow::ssthresh)
    }

    /// Start with TCP's halving (RFC 5681 eq. 4 from the flight) from a window of `cwnd` bytes.
    pub fn start_halving(&mut self, cwnd: f64, smss: u32, ack: &Packet, ctx: &SenderCtx) {
        let mut nr = NewRenoWindow::with(cwnd, f64::INFINITY, smss);
        nr.on_fast_retransmit(ack, ctx);
        self.nr = Some(nr);
    }

    /// Start around a window the owner chose (`ssthresh` bytes), inflated by the duplicate ACKs
    /// that have left the network (RFC 5681 §3.2 step 3; with SACK not inflated, RFC 6675).
    pub fn start_at(&mut self, ssthresh: f64, smss: u32, ctx: &SenderCtx) {
        let inflation = if ctx.sack { 0.0 } else { ctx.dupacks as f64 * smss as f64 };
        self.nr = Some(NewRenoWindow::with(ssthresh + inflation, ssthresh, smss));
    }

    pub fn on_dupack(&mut self, ack: &Packet, ctx: &SenderCtx) {
        if let Some(nr) = self.nr.as_mut() {
            nr.on_recovery_dupack(ack, ctx);
        }
    }

    pub fn on_partial_ack(&mut self, acked: u64, ack: &Packet, ctx: &SenderCtx) {
        if let Some(nr) = self.nr.as_mut() {
            nr.on_partial_ack(acked, ack, ctx);
        }
    }

    /// End recovery: NewReno's exit window in bytes (RFC 6582 §3.2 step 3 / RFC 5681 step 6),
    /// `None` if no recovery was running.
    pub fn exit(&mut self, how: RecoveryExit, ack: &Packet, ctx: &SenderCtx) -> Option<f64> {
        let mut nr = self.nr.take()?;
        nr.on_recovery_exit(how, ack, ctx);
        Some(nr.cwnd())
    }

    /// An RTO ends recovery without NewReno's exit.
    pub fn abort(&mut self) {
        self.nr = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Kind, TcpHeader};

    fn ctx(flight: u64, dupacks: u32) -> SenderCtx {
        SenderCtx { mss: 1000, flight, dupacks, in_recovery: true, ..Default::default() }
    }

    #[test]
    fn halving_inflation_deflation_and_exit() {
        let a = Packet::tcp(0, Kind::Ack, 40, 0, TcpHeader::default());
        let mut r = FastRecovery::default();
        assert_eq!((r.active(), r.cwnd(), r.exit(RecoveryExit::FullAck, &a, &ctx(0, 0))), (false, None, None));
        r.start_halving(20_000.0, 1000, &a, &ctx(20_000, 3));
        assert_eq!((r.cwnd(), r.ssthresh()), (Some(13_000.0), Some(10_000.0)), "flight/2 + 3 MSS");
        r.on_dupack(&a, &ctx(20_000, 4));
        assert_eq!(r.cwnd(), Some(14_000.0));
        r.on_partial_ack(3000, &a, &ctx(17_000, 0));
        assert_eq!(r.cwnd(), Some(12_000.0), "deflate by 3000, add back one MSS");
        assert_eq!(r.exit(RecoveryExit::FullAck, &a, &ctx(4000, 0)), Some(5000.0), "min(ssthresh, flight + MSS)");
        assert!(!r.active());
        // Around a chosen window; an RTO drops it.
        r.start_at(7000.0, 1000, &ctx(20_000, 3));
        assert_eq!((r.cwnd(), r.ssthresh()), (Some(10_000.0), Some(7000.0)));
        r.abort();
        assert_eq!(r.cwnd(), None);
    }
}
