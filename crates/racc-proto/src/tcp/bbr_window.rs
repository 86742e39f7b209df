//! BBR's window through losses (a child of `bbr.rs`, so it sees the sender's state): the cwnd
//! after each ACK, and entering a recovery or a timeout's loss state, as Linux's `tcp_bbr.c`
//! `bbr_set_cwnd`, `bbr_save_cwnd` and `bbr_set_cwnd_to_recover_or_restore` do.

use super::{Bbr, LossState, Mode, MIN_CWND};
use crate::tcp::bbr_rate::RateSample;

impl Bbr {
    /// Linux `bbr_save_cwnd`.
    pub(super) fn save_cwnd(&mut self) {
        if self.prev_state < LossState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// The cwnd (BBR draft §4.2.3; Linux `bbr_set_cwnd` with
    /// `bbr_set_cwnd_to_recover_or_restore`): packet conservation for the first round of a
    /// recovery, the window before it restored at its end; otherwise grow by what was
    /// delivered up to cwnd_gain·BDP (without a cap before the pipe is full).
    pub(super) fn set_cwnd(&mut self, rs: &RateSample, bw: f64) {
        let acked = rs.acked_sacked as f64 / self.smss;
        self.last_acked = acked;
        self.losses += rs.lost as f64 / self.smss;
        if acked > 0.0 {
            let mut cwnd = self.cwnd;
            if self.losses > 0.0 {
                cwnd = (cwnd - self.losses).max(1.0);
            }
            self.losses = 0.0;
            let mut conserve = false;
            if self.prev_state >= LossState::Recovery && self.state < LossState::Recovery {
                cwnd = cwnd.max(self.prior_cwnd);
                self.packet_conservation = false;
            }
            self.prev_state = self.state;
            if self.packet_conservation {
                cwnd = cwnd.max(self.in_flight() + acked);
                conserve = true;
            }
            if !conserve {
                let target = self.inflight_target(bw, self.cwnd_gain);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || (self.rate.delivered() as f64) < self.init_cwnd * self.smss {
                    cwnd += acked;
                }
                cwnd = cwnd.max(MIN_CWND);
            }
            self.cwnd = cwnd;
        }
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(MIN_CWND);
        }
    }

    /// Entering a loss recovery (Linux `bbr_ssthresh` saves the window, `bbr_set_cwnd_to_
    /// recover_or_restore` starts packet conservation at flight + delivered).
    pub(super) fn enter_recovery(&mut self) {
        self.save_cwnd();
        if self.rate.mark_first_lost() {
            self.losses += 1.0;
        }
        self.state = LossState::Recovery;
        self.prev_state = LossState::Recovery;
        self.recovery_end = self.rate.high();
        self.packet_conservation = true;
        self.next_round_delivered = self.rate.delivered();
        self.cwnd = (self.in_flight() + self.last_acked).max(1.0);
    }

    /// A retransmission timeout (Linux `tcp_enter_loss` with `bbr_set_state(TCP_CA_Loss)`:
    /// the bandwidth plateau is forgotten and a new round begins; cwnd 1).
    pub(super) fn enter_loss(&mut self, first: bool) {
        if first {
            self.save_cwnd();
        }
        self.rate.mark_all_lost();
        self.state = LossState::Loss;
        self.prev_state = LossState::Loss;
        self.recovery_end = self.rate.high();
        self.full_bw = 0.0;
        self.round_start = true;
        self.packet_conservation = false;
        self.cwnd = 1.0;
    }
}
