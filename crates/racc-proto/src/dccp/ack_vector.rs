//! The receiver's record of what it received (RFC 4340 §11.4) and its encoding into the Ack
//! Vector of each ACK; the sender's reading of a vector as ranges.
//!
//! The receiver reports every packet from `low` (the oldest packet not yet known to have been
//! reported: an acknowledgement of one of its ACKs moves it up, RFC 4340 §11.4.2) to the
//! greatest received. Packets arrive mostly in order, so the record holds only the runs that are
//! not plainly received (holes and ECN-marked packets): its size is bounded by what arrives
//! between two acknowledgements of ACKs, not by the flow's length.

use crate::packet::{ack_state, AckVector};
use std::collections::VecDeque;

/// What the receiver holds for its Ack Vectors.
#[derive(Clone, Debug)]
pub struct ReceiveLog {
    /// Lowest sequence number still reported.
    low: u64,
    /// One past the greatest sequence number received (`low` while nothing is held).
    top: u64,
    /// Runs [lo, hi] in `low..top` that are not plainly received, in increasing order, with
    /// their state (NOT_RECEIVED or ECN_MARKED).
    special: VecDeque<(u64, u64, u8)>,
}

impl ReceiveLog {
    /// A log for a sender whose first packet is `first`.
    pub fn new(first: u64) -> ReceiveLog {
        ReceiveLog { low: first, top: first, special: VecDeque::with_capacity(16) }
    }

    /// The greatest sequence number received, if any is held.
    pub fn greatest(&self) -> Option<u64> {
        (self.top > self.low).then(|| self.top - 1)
    }

    /// Packets the record spans, and the runs it holds: its size.
    pub fn span(&self) -> (u64, usize) {
        (self.top - self.low, self.special.len())
    }

    fn push_run(&mut self, lo: u64, hi: u64, state: u8) {
        if let Some(last) = self.special.back_mut() {
            if last.2 == state && last.1 + 1 == lo {
                last.1 = hi;
                return;
            }
        }
        self.special.push_back((lo, hi, state));
    }

    /// Data packet `seq` arrived, `marked` if it carries CE. False for a duplicate or a packet
    /// older than what is still reported.
    pub fn on_data(&mut self, seq: u64, marked: bool) -> bool {
        if seq < self.low {
            return false;
        }
        if seq >= self.top {
            if seq > self.top {
                self.push_run(self.top, seq - 1, ack_state::NOT_RECEIVED);
            }
            if marked {
                self.push_run(seq, seq, ack_state::ECN_MARKED);
            }
            self.top = seq + 1;
            return true;
        }
        // Late arrival into a hole (reordering): split the hole's run.
        let Some(i) =
            self.special.iter().position(|&(lo, hi, st)| st == ack_state::NOT_RECEIVED && lo <= seq && seq <= hi)
        else {
            return false; // already received
        };
        let (lo, hi, st) = self.special[i];
        self.special.remove(i);
        let mut at = i;
        for (a, b, s) in [
            (lo, seq.wrapping_sub(1), st),
            (seq, seq, if marked { ack_state::ECN_MARKED } else { ack_state::RECEIVED }),
            (seq + 1, hi, st),
        ] {
            if a <= b && a >= lo && b <= hi && s != ack_state::RECEIVED {
                self.special.insert(at, (a, b, s));
                at += 1;
            }
        }
        true
    }

    /// The sender has seen a vector that reported everything up to `upto`: stop reporting it.
    pub fn prune(&mut self, upto: u64) {
        let low = (upto + 1).min(self.top);
        if low <= self.low {
            return;
        }
        self.low = low;
        while let Some(front) = self.special.front_mut() {
            if front.1 < low {
                self.special.pop_front();
            } else {
                front.0 = front.0.max(low);
                break;
            }
        }
    }

    /// The Ack Vector from the greatest received packet down to `low`, as many runs as fit.
    pub fn encode(&self) -> AckVector {
        let mut v = AckVector::default();
        let mut cur = self.top; // one past the next packet to describe
        let put = |v: &mut AckVector, state: u8, mut n: u64| -> bool {
            while n > 0 {
                let k = n.min(AckVector::MAX_RUN);
                if !v.push(state, k) {
                    return false;
                }
                n -= k;
            }
            true
        };
        for &(lo, hi, st) in self.special.iter().rev() {
            if cur > hi + 1 && !put(&mut v, ack_state::RECEIVED, cur - (hi + 1)) {
                return v;
            }
            if !put(&mut v, st, hi + 1 - lo) {
                return v;
            }
            cur = lo;
        }
        if cur > self.low {
            put(&mut v, ack_state::RECEIVED, cur - self.low);
        }
        v
    }
}

/// The ranges a vector reports, from acknowledgement number `ack` downward: (lo, hi, state).
pub fn ranges(v: &AckVector, ack: u64) -> impl Iterator<Item = (u64, u64, u8)> + '_ {
    let mut hi = ack;
    v.iter().map_while(move |(state, n)| {
        let lo = hi.checked_sub(n - 1)?;
        let r = (lo, hi, state);
        hi = lo.wrapping_sub(1);
        Some(r)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ack_state::{ECN_MARKED as M, NOT_RECEIVED as N, RECEIVED as R};

    fn decoded(log: &ReceiveLog) -> Vec<(u64, u64, u8)> {
        ranges(&log.encode(), log.greatest().unwrap()).collect()
    }

    #[test]
    fn holes_and_marks_become_runs_from_the_top_down() {
        let mut log = ReceiveLog::new(100);
        for s in [100, 101, 102, 105, 106] {
            assert!(log.on_data(s, s == 106));
        }
        assert!(!log.on_data(101, false), "duplicate");
        assert_eq!(log.greatest(), Some(106));
        assert_eq!(decoded(&log), vec![(106, 106, M), (105, 105, R), (103, 104, N), (100, 102, R)]);
        // A late 104 splits the hole.
        assert!(log.on_data(104, false));
        assert_eq!(decoded(&log), vec![(106, 106, M), (104, 105, R), (103, 103, N), (100, 102, R)]);
        // The sender saw everything up to 104: the log forgets it.
        log.prune(104);
        assert_eq!(decoded(&log), vec![(106, 106, M), (105, 105, R)]);
        assert_eq!(log.span(), (2, 1));
        assert!(!log.on_data(103, false), "below what is still reported");
    }

    #[test]
    fn a_vector_that_cannot_hold_every_run_keeps_the_newest() {
        let mut log = ReceiveLog::new(0);
        for s in (0..40).step_by(2) {
            log.on_data(s, false);
        }
        let v = log.encode();
        assert_eq!(v.len(), crate::packet::MAX_ACK_VECTOR_RUNS);
        let r: Vec<_> = ranges(&v, 38).collect();
        assert_eq!(r[0], (38, 38, R));
        assert_eq!(r[1], (37, 37, N));
        assert_eq!(r.last().unwrap().0, 38 - 11);
    }

    #[test]
    fn long_runs_split_at_the_entry_limit() {
        let mut log = ReceiveLog::new(0);
        let n = AckVector::MAX_RUN + 10;
        for s in 0..n {
            log.on_data(s, false);
        }
        assert_eq!(decoded(&log), vec![(10, n - 1, R), (0, 9, R)]);
    }
}
