//! What an arriving ACK does to the sender: the SYN-ACK, new and partial ACKs, duplicates,
//! fast recovery's entry and exit, ECN-Echo; and how a controller's response to a congestion
//! signal is applied, the same for every controller.

use super::{State, TcpSender};
use crate::cc::{Ack, Response, SenderCtx, Signal};
use crate::packet::{flags, Packet, TcpHeader};
use crate::tcp::recovery::{self, FastRecovery, RecoveryExit};
use crate::tcp::{segments, PartialAckTimer, RecoverCheck, Recovery, RtoInRecovery, SsthreshFrom};
use crate::time::{Time, NEVER};

impl TcpSender {
    pub(super) fn on_syn_ack(&mut self, now: Time, h: &TcpHeader) {
        if self.state != State::SynSent {
            return;
        }
        self.state = State::Established;
        self.syn_pending = false;
        // The SYN/SYN-ACK exchange gives the first RTT sample, unless the SYN was resent (Karn).
        if !self.syn_retransmitted {
            self.sample_rtt(now.saturating_sub(h.ts_ecr));
        }
        self.ecn_on = self.ecn_wanted && h.flags & flags::ECE != 0;
        self.rto_deadline = NEVER;
        self.consecutive_rtos = 0;
    }

    pub(super) fn on_ack(&mut self, now: Time, pkt: &Packet, h: &TcpHeader) {
        let ack = self.seq.unwrap(h.ack, self.snd_una);
        if ack > self.snd_max || ack < self.snd_una {
            return; // acks unsent data, or an old ACK
        }
        if self.sack {
            for (l, r) in h.sack.iter() {
                let (start, end) = (self.seq.unwrap(l, self.snd_una), self.seq.unwrap(r, self.snd_una));
                if ack <= start && start < end && end <= self.snd_max {
                    self.board.add(start, end);
                }
            }
            self.board.advance(ack);
            // `TcpParams::sack_rtt`: the timed segment's first report may be a SACK block.
            if self.sack_rtt {
                if let Some((end, sent)) = self.timed {
                    if end > ack && self.board.sacked_end(end - 1).is_some() {
                        self.timed = None;
                        if !self.timed_resent {
                            self.sample_rtt(now.saturating_sub(sent));
                        }
                    }
                }
            }
        }
        // A controller whose recovery window follows its feedback moves the recovery's base
        // with every ACK the recovery sees (`CongestionControl::recovery_base`).
        if self.fast_recovery.is_some() {
            let ctx = self.ctx(now);
            if let (Some(w), Some(fr)) = (self.cc.recovery_base(&ctx), self.fast_recovery.as_mut()) {
                fr.rebase(w);
            }
        }
        if ack > self.snd_una {
            // RFC 4015 §3.2: no undo when the detecting ACK signals congestion itself.
            // (Tested before it is taken: taking moves the whole record on every ACK.)
            if self.rto_undo.is_some() {
                let u = self.rto_undo.take().expect("tested");
                if h.ts_ecr < u.retransmit_ts && h.flags & flags::ECE == 0 {
                    self.undo_spurious_rto(now, h, u);
                }
            }
            self.on_new_ack(now, ack, pkt, h);
        } else if self.snd_max > self.snd_una && pkt.payload == 0 {
            self.on_dup_ack(now, pkt);
        }
        // Retransmissions found lost go again at the next poll (`TcpParams::lost_retransmit`);
        // the lowest hole's is timed from now, as a fast retransmit is.
        if self.lost_retransmit && self.detect_lost_retransmissions() {
            self.arm_rto(now);
        }
        // RFC 3168 §6.1.2: react to ECE at most once per window of data, never in recovery.
        if self.ecn_on && h.flags & flags::ECE != 0 && !self.in_recovery() && ack > self.ecn_high {
            self.ecn_high = self.snd_max;
            self.cwr_pending = true;
            self.ecn_reactions += 1;
            let ctx = self.ctx(now);
            let response = self.cc.on_congestion(Signal::EcnEcho, &ctx);
            self.apply(response, Signal::EcnEcho, &ctx);
        }
    }

    fn on_new_ack(&mut self, now: Time, ack: u64, pkt: &Packet, h: &TcpHeader) {
        let acked = ack - self.snd_una;
        let old_una = self.snd_una;
        self.last_advance = ack - old_una;
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        self.consecutive_rtos = 0;
        // Karn (RFC 6298 §3): sample only from ACKs that cover no retransmitted byte; with
        // `once-per-rtt`, only from the ACK that covers the timed segment.
        if self.once_per_rtt {
            if let Some((end, sent)) = self.timed.filter(|&(end, _)| ack >= end) {
                self.timed = None;
                // With `sack_rtt` an ACK that first reports the timed segment was sent at its
                // arrival (had it arrived earlier, a SACK block would have reported it).
                let clean =
                    if self.sack_rtt { !self.timed_resent } else { old_una >= self.retx_hi && end > self.retx_hi };
                if clean {
                    self.sample_rtt(now.saturating_sub(sent));
                }
            }
        } else if old_una >= self.retx_hi {
            self.sample_rtt(now.saturating_sub(h.ts_ecr));
        }
        // Packets this ACK covers (one division at most, shared by both uses below).
        let covered = segments(acked, self.mss);
        let mut restart = true;
        if let Some(mut fr) = self.fast_recovery {
            if ack >= self.recover || self.recovery == Recovery::Reno {
                self.fast_recovery = None;
                self.retx_pending = false;
                let how = if self.recovery == Recovery::Reno { RecoveryExit::Reno } else { RecoveryExit::FullAck };
                self.dupacks = 0;
                let flight = self.snd_nxt - self.snd_una;
                self.cc.set_window(fr.exit(how, flight), fr.ssthresh());
            } else {
                // RFC 6582 §3.2 step 4: retransmit the next hole; restart the timer only on
                // the first partial ACK. With SACK, NextSeg finds the lost holes; the one at
                // snd_una still goes at once if this recovery has not resent it (fewer than
                // DupThresh segments may have been SACKed above it).
                self.retx_pending = !self.sack || self.snd_una >= self.high_rxt;
                restart = !self.partial_seen
                    || self.sack
                    || match self.partial_ack_timer {
                        PartialAckTimer::First => false,
                        PartialAckTimer::Every => true,
                        PartialAckTimer::Sparse => acked > self.dupthresh as u64 * self.mss as u64,
                    };
                self.partial_seen = true;
                fr.on_partial_ack(acked);
                self.fast_recovery = Some(fr);
            }
        } else {
            self.dupacks = 0;
            let ctx = self.ctx(now);
            // `growth_packets(acked, ..)` with the segment count already made (acked > 0).
            let reported_pkts = covered.saturating_sub(self.dupacks_covered).max(1) as f64;
            self.cc.on_ack(&Ack { packet: pkt, acked_bytes: acked, reported_pkts }, &ctx);
        }
        // Up to all but one of the packets this ACK covered had been reported by duplicates.
        self.dupacks_covered = self.dupacks_covered.saturating_sub(covered.saturating_sub(1));
        // RFC 6298 §5.2/5.3.
        if self.snd_una >= self.snd_max {
            self.rto_deadline = NEVER;
        } else if restart {
            self.arm_rto(now);
        }
    }

    fn on_dup_ack(&mut self, now: Time, pkt: &Packet) {
        self.dupacks = self.dupacks.saturating_add(1);
        self.dupacks_covered += 1;
        if self.dupacks == 1 {
            self.snd_max_at_first_dupack = self.snd_max;
        }
        // RFC 6675 §5 step 2 (C): with SACK, loss is also declared once IsLost(snd_una),
        // though duplicates (or the ACKs that carried them) fell short of DupThresh.
        let sack_lost = self.sack
            && self.dupacks < self.dupthresh
            && self.board.next_lost(self.snd_una, self.lost_threshold()) == Some(self.snd_una);
        if let Some(fr) = self.fast_recovery.as_mut() {
            fr.on_dupack();
        } else if (self.dupacks == self.dupthresh || sack_lost) && self.past_recover() {
            // RFC 5681 §3.2 step 2 with RFC 6582 §3.2 step 1: only if the ACK covers more
            // than `recover` (so not for the old window after an RTO or a Reno exit).
            self.partial_seen = false;
            self.fast_retransmits += 1;
            self.recover = self.snd_max;
            self.recover_set = true;
            self.high_rxt = self.snd_una;
            self.retx_pending = true;
            // Time the retransmission from now, as Linux (tcp_xmit_retransmit_queue re-arms
            // the timer for the head segment) and ns-2 (dupack_action: reset_rtx_timer) do.
            // Otherwise, when the queue is full and RTTVAR small, the RTO set by the last new
            // ACK expires before the retransmission can be acknowledged one queue-full RTT
            // later: a spurious timeout and a go-back-N burst.
            self.arm_rto(now);
            if self.ecn_on {
                self.ecn_high = self.snd_max;
                self.cwr_pending = true;
            }
            let mut ctx = self.ctx(now);
            if self.limited_transmit {
                ctx.flight = ctx.flight.min(self.snd_max_at_first_dupack.saturating_sub(self.snd_una));
            }
            let response = self.cc.on_congestion(Signal::Loss, &ctx);
            self.apply(response, Signal::Loss, &ctx);
        } else {
            if self.dupacks == self.dupthresh {
                self.fast_retransmits_refused += 1;
            }
            let ctx = self.ctx(now);
            self.cc.on_ack(&Ack { packet: pkt, acked_bytes: 0, reported_pkts: 0.0 }, &ctx);
        }
    }

    /// RFC 6582 §3.2 step 1: may duplicates start fast retransmit? `recover` is exclusive
    /// (one past the highest byte sent when it was set), so an ACK covering more than
    /// RFC 6582's (inclusive) recover is one beyond it.
    fn past_recover(&self) -> bool {
        let beyond = !self.recover_set || self.snd_una > self.recover;
        match self.recover_check {
            RecoverCheck::Beyond => beyond,
            RecoverCheck::At => self.snd_una >= self.recover,
            RecoverCheck::Off => true,
            // RFC 6582 §4.2's ACK heuristic: before `recover`, duplicates that follow an ACK
            // which advanced at most 4·SMSS point at a lost segment; after a larger advance they
            // are likely the receiver's answers to retransmissions of data it already holds
            // (a go-back-N after a timeout, a recovery's repairs).
            RecoverCheck::Heuristic => {
                beyond || (self.cwnd() > self.mss as f64 && self.last_advance <= 4 * self.mss as u64)
            }
        }
    }

    /// What TCP's halving halves for `signal` (`TcpParams::ssthresh_from`, `rto_in_recovery`),
    /// given the state the signal found.
    pub(super) fn halving_base(&self, signal: Signal, ctx: &SenderCtx) -> f64 {
        match (&self.fast_recovery, signal) {
            // ns-2 halves the recovery's window; Linux keeps its ssthresh (2·x / 2 = x exactly).
            (Some(r), Signal::Timeout) => match self.rto_in_recovery {
                RtoInRecovery::HalveWindow => r.ssthresh(),
                RtoInRecovery::Keep => 2.0 * r.ssthresh(),
                RtoInRecovery::HalveFlight => ctx.flight as f64,
            },
            _ => match self.ssthresh_from {
                SsthreshFrom::Cwnd => self.cc.window(),
                SsthreshFrom::Flight => ctx.flight as f64,
            },
        }
    }

    /// Carry out a controller's response to `signal`: a loss starts the transport's recovery.
    /// A timeout's caller ends a running recovery after this (the base reads it).
    pub(super) fn apply(&mut self, response: Response, signal: Signal, ctx: &SenderCtx) {
        let base = self.halving_base(signal, ctx);
        if signal == Signal::Loss {
            self.fast_recovery = Some(FastRecovery::start(response, ctx, self.cc.window(), base, self.sack));
        } else {
            recovery::apply(self.cc.as_mut(), response, signal, ctx, base);
        }
    }
}
