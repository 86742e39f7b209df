//! The SACK scoreboard of RFC 6675 §3: which bytes above snd_una the receiver has reported,
//! which unreported ones count as lost, and the `pipe` estimate of what is still in the
//! network. Offsets are absolute payload bytes (`seq.rs`).
//!
//! IsLost (RFC 6675 §4): a byte is lost once more than (DupThresh − 1)·SMSS bytes above it have
//! been SACKed. For an unSACKed byte that count only grows the lower the byte, so the lost
//! bytes are exactly the unSACKed ones below one point, `lost_below`; the walk that finds it is
//! O(ranges), and nothing here allocates once the range vector has its capacity.

use super::ranges::RangeSet;

/// SACKed ranges above snd_una.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scoreboard {
    sacked: RangeSet,
}

impl Scoreboard {
    pub fn with_capacity(n: usize) -> Scoreboard {
        Scoreboard { sacked: RangeSet::with_capacity(n) }
    }

    pub fn ranges(&self) -> &[(u64, u64)] {
        self.sacked.ranges()
    }

    /// Record a SACK block.
    pub fn add(&mut self, start: u64, end: u64) {
        self.sacked.add(start, end);
    }

    /// snd_una moved to `una`: forget what lies below it.
    pub fn advance(&mut self, una: u64) {
        self.sacked.advance(una);
    }

    /// The end of the SACKed range holding `off`, if it is SACKed.
    pub fn sacked_end(&self, off: u64) -> Option<u64> {
        self.sacked.end_of_range_holding(off)
    }

    /// UnSACKed bytes below this point are lost (RFC 6675 IsLost with `more_than` =
    /// (DupThresh − 1)·SMSS SACKed bytes above them); 0 when none is.
    pub fn lost_below(&self, more_than: u64) -> u64 {
        let mut above = 0;
        for &(s, e) in self.sacked.ranges().iter().rev() {
            above += e - s;
            if above > more_than {
                return s;
            }
        }
        0
    }

    /// RFC 6675 NextSeg rule (1): the first unSACKed byte at or after `from` that is lost.
    pub fn next_lost(&self, from: u64, more_than: u64) -> Option<u64> {
        let x = self.sacked_end(from).unwrap_or(from);
        (x < self.lost_below(more_than)).then_some(x)
    }

    /// RFC 6675 SetPipe over [una, snd_max): every unSACKed byte not lost, plus every unSACKed
    /// byte retransmitted in this recovery (below `high_rxt`).
    pub fn pipe(&self, una: u64, snd_max: u64, high_rxt: u64, more_than: u64) -> u64 {
        let unsacked = |a: u64, b: u64| if b > a { (b - a) - self.sacked.bytes_in(a, b) } else { 0 };
        let lost_below = self.lost_below(more_than).max(una);
        unsacked(lost_below, snd_max) + unsacked(una, high_rxt.min(snd_max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// snd_una 0, ten 1000-byte segments out, the receiver SACKs 1, 2, 3 and 6, 7: holes at
    /// 0, 4000–6000 and 8000–10 000. DupThresh 3: lost = more than 2000 bytes SACKed above.
    #[test]
    fn is_lost_next_seg_and_pipe() {
        let mut b = Scoreboard::default();
        b.add(1000, 4000);
        b.add(6000, 8000);
        let k = 2000;
        // Above 4000 only 2000 bytes are SACKed (not more than 2000): 4000–6000 is not lost yet;
        // below 1000 there are 5000: segment 0 is.
        assert_eq!(b.lost_below(k), 1000);
        assert_eq!(b.next_lost(0, k), Some(0));
        assert_eq!(b.next_lost(1000, k), None, "nothing lost after the first hole");
        // pipe: unSACKed and not lost = 4000–6000 and 8000–10 000 = 4000 bytes.
        assert_eq!(b.pipe(0, 10_000, 0, k), 4000);
        // Once segment 0 is retransmitted it counts again.
        assert_eq!(b.pipe(0, 10_000, 1000, k), 5000);
        // One more SACK above (9000–10 000): the 4000–6000 hole is lost too.
        b.add(9000, 10_000);
        assert_eq!(b.lost_below(k), 6000);
        assert_eq!(b.next_lost(1000, k), Some(4000));
        assert_eq!(b.pipe(0, 10_000, 1000, k), 1000 + 1000, "8000–9000, plus the retransmitted 0–1000");
        // No SACKs: nothing is lost, everything is in the pipe.
        let e = Scoreboard::default();
        assert_eq!((e.lost_below(k), e.next_lost(0, k), e.pipe(0, 5000, 0, k)), (0, None, 5000));
    }
}
