//! The retransmission timer's expiry (RFC 6298 §5.4–5.6, go-back-N) and the undo of a timeout
//! found spurious (RFC 3522 detection, RFC 4015 response).

use super::{State, TcpSender};
use crate::cc::Signal;
use crate::packet::TcpHeader;
use crate::time::Time;

/// What the first timeout of an episode (outside fast recovery) found: RFC 3522's
/// RetransmitTS and the transport state an undo puts back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct RtoUndo {
    /// When the timeout retransmitted: an ACK of new data echoing an older timestamp
    /// acknowledges an original transmission.
    pub(super) retransmit_ts: Time,
    /// RFC 6582's `recover` before the timeout moved it to snd_max: after an undo at most one
    /// segment was resent, so later duplicates are news and may start fast retransmit.
    recover: u64,
    recover_set: bool,
    /// The ECN gate (RFC 3168 §6.1.2) before the timeout closed it for the whole window.
    ecn_high: u64,
    cwr_pending: bool,
}

impl TcpSender {
    /// RFC 3522 detected a spurious timeout: the originals were only delayed. Resume with new
    /// data at snd_max instead of going back N (RFC 4015 §3.2 step 5), take the RTT sample the
    /// echoed timestamp gives (RFC 7323: it names the original transmission, so Karn's rule
    /// does not apply), and let the controller undo.
    pub(super) fn undo_spurious_rto(&mut self, now: Time, h: &TcpHeader, u: RtoUndo) {
        self.spurious_timeouts += 1;
        self.snd_nxt = self.snd_max;
        self.consecutive_rtos = 0;
        (self.recover, self.recover_set) = (u.recover, u.recover_set);
        (self.ecn_high, self.cwr_pending) = (u.ecn_high, u.cwr_pending);
        self.sample_rtt(now.saturating_sub(h.ts_ecr));
        let ctx = self.ctx(now);
        self.cc.on_spurious_timeout(&ctx);
    }

    pub(super) fn on_rto(&mut self, now: Time) {
        match self.state {
            State::Idle => {}
            State::SynSent => {
                self.timeouts += 1;
                self.rtt.backoff();
                self.syn_pending = true;
                self.syn_retransmitted = true;
                let ctx = self.ctx(now);
                let response = self.cc.on_congestion(Signal::SynTimeout, &ctx);
                self.apply(response, Signal::SynTimeout, &ctx);
                self.arm_rto(now);
            }
            State::Established => {
                if self.snd_una >= self.snd_max {
                    return;
                }
                self.timeouts += 1;
                // The go-back-N retransmission leaves at this instant, stamped `now`. Not inside
                // fast recovery: there the timeout is NewReno's deliberate way out of repairing
                // one hole per RTT (the "impatient" timer, RFC 6582 §4), and its go-back-N
                // repairs the rest of the window, which no undo could without SACK.
                if self.eifel && self.consecutive_rtos == 0 && !self.in_recovery() {
                    self.rto_undo = Some(RtoUndo {
                        retransmit_ts: now,
                        recover: self.recover,
                        recover_set: self.recover_set,
                        ecn_high: self.ecn_high,
                        cwr_pending: self.cwr_pending,
                    });
                }
                // The response sees the flight before the go-back-N reset; a running recovery
                // ends without its exit.
                self.timeouts_in_recovery += self.in_recovery() as u64;
                let ctx = self.ctx(now);
                let response = self.cc.on_congestion(Signal::Timeout, &ctx);
                self.apply(response, Signal::Timeout, &ctx);
                self.fast_recovery = None;
                // RFC 6582 §3.2 step 1 / docs/PROTOCOLS.md §10: recover = highest seq sent; go-back-N.
                self.recover = self.snd_max;
                self.recover_set = true;
                self.dupacks = 0;
                self.retx_pending = false;
                self.snd_nxt = self.snd_una;
                // The go-back-N resends every retransmission still missing.
                self.rxt_log.clear();
                // ns-2 `reset_rtx_timer`: a timeout stops the round trip being timed.
                self.timed = None;
                self.consecutive_rtos += 1;
                if self.ecn_on {
                    self.ecn_high = self.snd_max;
                    self.cwr_pending = true;
                }
                // RFC 6298 §5.5–5.6.
                self.rtt.backoff();
                self.arm_rto(now);
            }
        }
    }
}
