//! HyStart++ (RFC 9406) for CUBIC's slow start: leave slow start when the round's minimum RTT
//! rises by a threshold above the last round's, into Conservative Slow Start (CSS: a quarter of
//! slow start's growth) for up to CSS_ROUNDS rounds, back to slow start if the RTT falls again
//! (the increase was noise), else on to congestion avoidance with ssthresh = cwnd.
//!
//! Which HyStart: RFC 9406's HyStart++ (delay increase and CSS). Linux's `tcp_cubic.c` runs
//! the older HyStart (Ha & Rhee): ACK-train length and delay increase, 4-16 ms threshold, exit
//! straight to congestion avoidance, no CSS, from 16 segments up (`hystart_low_window`).
//! Used for the initial slow start only (RFC 9406 §4.3); a loss, an ECN-Echo or a timeout
//! ends it. The growth per ACK stays CUBIC's min(acked, SMSS) (RFC 9438 §4.10), so RFC 9406's
//! L does not enter.

use crate::time::{Time, NS_PER_MS};

/// The delay threshold's floor and ceiling (RFC 9406 §4.3 MIN_RTT_THRESH, MAX_RTT_THRESH).
pub const MIN_RTT_THRESH: Time = 4 * NS_PER_MS;
pub const MAX_RTT_THRESH: Time = 16 * NS_PER_MS;
/// The threshold is lastRoundMinRTT / MIN_RTT_DIVISOR within those (RFC 9406 §4.3).
pub const MIN_RTT_DIVISOR: u64 = 8;
/// RTT samples a round needs before it is judged (RFC 9406 §4.3 N_RTT_SAMPLE).
pub const N_RTT_SAMPLE: u32 = 8;
/// CSS grows by 1/CSS_GROWTH_DIVISOR of slow start's increase (RFC 9406 §4.3).
pub const CSS_GROWTH_DIVISOR: f64 = 4.0;
/// Rounds of CSS before congestion avoidance (RFC 9406 §4.3 CSS_ROUNDS).
pub const CSS_ROUNDS: u32 = 5;

/// RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT / MIN_RTT_DIVISOR, MAX_RTT_THRESH))
/// (RFC 9406 §4.2).
pub fn rtt_thresh(last_round_min_rtt: Time) -> Time {
    (last_round_min_rtt / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH)
}

/// Where HyStart++ is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    SlowStart,
    Css,
    /// Left for good: congestion avoidance reached, or a congestion signal (RFC 9406 §4.3).
    Done,
}

/// What this ACK's slow-start growth is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Growth {
    /// Standard slow start: the whole increase.
    Full,
    /// CSS: the increase over CSS_GROWTH_DIVISOR.
    Css,
    /// CSS_ROUNDS rounds of CSS are over: ssthresh = cwnd, congestion avoidance.
    EnterAvoidance,
    /// HyStart++ is not running (slow start as without it).
    Off,
}

/// HyStart++'s state (RFC 9406 §4.2's variables). Rounds are counted in acknowledged bytes:
/// a round ends when the ACKs pass what was sent when it began (windowEnd = SND.NXT).
#[derive(Clone, Debug, PartialEq)]
pub struct HyStartPp {
    phase: Phase,
    acked: u64,
    window_end: u64,
    last_round_min_rtt: Option<Time>,
    current_round_min_rtt: Option<Time>,
    rtt_sample_count: u32,
    css_baseline_min_rtt: Option<Time>,
    css_rounds: u32,
    /// Entries into CSS and returns to slow start, for the results.
    css_entries: u64,
    css_returns: u64,
}

impl Default for HyStartPp {
    fn default() -> HyStartPp {
        HyStartPp {
            phase: Phase::SlowStart,
            acked: 0,
            window_end: 0,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            rtt_sample_count: 0,
            css_baseline_min_rtt: None,
            css_rounds: 0,
            css_entries: 0,
            css_returns: 0,
        }
    }
}

impl HyStartPp {
    pub fn phase(&self) -> Phase {
        self.phase
    }

    pub fn css_entries(&self) -> u64 {
        self.css_entries
    }

    pub fn css_returns(&self) -> u64 {
        self.css_returns
    }

    /// A congestion signal or the end of slow start: HyStart++ is over for this connection.
    pub fn stop(&mut self) {
        self.phase = Phase::Done;
    }

    /// One new ACK during slow start: `acked` bytes newly acknowledged, `flight` bytes still
    /// in flight after it (so acked + flight is SND.NXT in acknowledged bytes), `rtt` its RTT
    /// sample. Returns the growth this ACK gets (RFC 9406 §4.2).
    pub fn on_ack(&mut self, acked: u64, flight: u64, rtt: Option<Time>) -> Growth {
        if self.phase == Phase::Done {
            return Growth::Off;
        }
        self.acked += acked;
        if self.acked >= self.window_end {
            // A round ends: the next one ends at what has been sent by now.
            self.window_end = self.acked + flight;
            if self.phase == Phase::Css {
                self.css_rounds += 1;
                if self.css_rounds >= CSS_ROUNDS {
                    self.phase = Phase::Done;
                    return Growth::EnterAvoidance;
                }
            }
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = None;
            self.rtt_sample_count = 0;
        }
        // This ACK grows by the phase it arrived in.
        let growth = if self.phase == Phase::Css { Growth::Css } else { Growth::Full };
        if let Some(r) = rtt {
            self.current_round_min_rtt = Some(self.current_round_min_rtt.map_or(r, |m| m.min(r)));
            self.rtt_sample_count += 1;
        }
        let judged = self.rtt_sample_count >= N_RTT_SAMPLE;
        match (self.phase, self.current_round_min_rtt) {
            (Phase::SlowStart, Some(cur)) if judged => {
                if let Some(last) = self.last_round_min_rtt {
                    if cur >= last + rtt_thresh(last) {
                        self.css_baseline_min_rtt = Some(cur);
                        self.phase = Phase::Css;
                        self.css_rounds = 0;
                        self.css_entries += 1;
                    }
                }
            }
            (Phase::Css, Some(cur)) if judged && self.css_baseline_min_rtt.is_some_and(|b| cur < b) => {
                self.css_baseline_min_rtt = None;
                self.phase = Phase::SlowStart;
                self.css_returns += 1;
            }
            _ => {}
        }
        growth
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = NS_PER_MS;

    /// RttThresh = lastRoundMinRTT/8 clamped to [4, 16] ms (RFC 9406 §4.2).
    #[test]
    fn the_delay_threshold_by_hand() {
        assert_eq!(rtt_thresh(20 * MS), 4 * MS, "2.5 ms → the 4 ms floor");
        assert_eq!(rtt_thresh(32 * MS), 4 * MS);
        assert_eq!(rtt_thresh(80 * MS), 10 * MS);
        assert_eq!(rtt_thresh(128 * MS), 16 * MS);
        assert_eq!(rtt_thresh(200 * MS), 16 * MS, "25 ms → the 16 ms ceiling");
        assert_eq!((N_RTT_SAMPLE, CSS_GROWTH_DIVISOR, CSS_ROUNDS, MIN_RTT_DIVISOR), (8, 4.0, 5, 8));
    }

    /// One round of `n` ACKs of 1000 B with RTT `rtt`, `flight` bytes out after each; returns
    /// the growths.
    fn round(h: &mut HyStartPp, n: u64, rtt: Time) -> Vec<Growth> {
        // The round's first ACK ends the last round: the window end is what was sent then.
        (0..n).map(|_| h.on_ack(1000, n * 1000, Some(rtt))).collect()
    }

    /// 80 ms rounds, then one whose min RTT is 80 + 10 = 90 ms: CSS after its 8th sample
    /// (not before); 89.9 ms would not do.
    #[test]
    fn a_delay_increase_of_the_threshold_enters_css_after_eight_samples() {
        let mut h = HyStartPp::default();
        assert!(round(&mut h, 10, 80 * MS).iter().all(|g| *g == Growth::Full));
        let g = round(&mut h, 10, 90 * MS);
        // Samples 1-8 grow fully (the 8th decides, after its growth); 9 and 10 are CSS's.
        assert_eq!(g[..8], [Growth::Full; 8]);
        assert_eq!(g[8..], [Growth::Css; 2]);
        assert_eq!((h.phase(), h.css_entries()), (Phase::Css, 1));

        let mut h = HyStartPp::default();
        round(&mut h, 10, 80 * MS);
        round(&mut h, 10, 90 * MS - 100_000);
        assert_eq!(h.phase(), Phase::SlowStart, "89.9 ms < 80 + 10");
        // A round of 7 samples is not judged, however late.
        let mut h = HyStartPp::default();
        round(&mut h, 10, 80 * MS);
        round(&mut h, 7, 200 * MS);
        assert_eq!(h.phase(), Phase::SlowStart);
    }

    /// In CSS, a round whose min RTT falls below the baseline returns to slow start; else after
    /// CSS_ROUNDS = 5 rounds, congestion avoidance.
    #[test]
    fn css_returns_on_a_lower_rtt_or_ends_after_five_rounds() {
        let mut h = HyStartPp::default();
        round(&mut h, 10, 80 * MS);
        round(&mut h, 10, 95 * MS);
        assert_eq!(h.phase(), Phase::Css);
        round(&mut h, 10, 94 * MS);
        assert_eq!((h.phase(), h.css_returns()), (Phase::SlowStart, 1), "94 < the 95 ms baseline");

        let mut h = HyStartPp::default();
        round(&mut h, 10, 80 * MS);
        round(&mut h, 10, 95 * MS); // CSS from its 8th ACK: this round counts as CSS's first
        for _ in 0..3 {
            assert!(round(&mut h, 10, 95 * MS).iter().all(|g| *g == Growth::Css));
        }
        // The entry round and three more have ended; the fifth ends at the first ACK after
        // the next round.
        let g = round(&mut h, 10, 95 * MS);
        assert_eq!(g[..], [Growth::Css; 10]);
        assert_eq!(h.on_ack(1000, 10_000, Some(95 * MS)), Growth::EnterAvoidance);
        assert_eq!(h.phase(), Phase::Done);
        assert_eq!(h.on_ack(1000, 10_000, Some(95 * MS)), Growth::Off);
    }
}
