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

    /// SACKed bytes above `x`.
    pub fn sacked_above(&self, x: u64) -> u64 {
        let mut n = 0;
        for &(s, e) in self.sacked.ranges().iter().rev() {
            if e <= x {
                break;
            }
            n += e - s.max(x);
        }
        n
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
        assert_eq!(
            (b.sacked_above(0), b.sacked_above(6500), b.sacked_above(8000), b.sacked_above(9500)),
            (6000, 2500, 1000, 500)
        );
        let e = Scoreboard::default();
        assert_eq!((e.lost_below(k), e.next_lost(0, k), e.pipe(0, 5000, 0, k)), (0, None, 5000));
    }

    /// IsLost, NextSeg (rule 1) and SetPipe against RFC 6675's per-octet definitions, over
    /// random scoreboards.
    #[test]
    fn property_matches_rfc6675_per_octet() {
        use crate::rng::SimRng;
        const N: u64 = 300;
        let mut rng = SimRng::for_component(9, "tcp/scoreboard");
        for _ in 0..2000 {
            let mut b = Scoreboard::default();
            let una = rng.below(50);
            for _ in 0..rng.below(6) {
                let a = una + 1 + rng.below(N - una - 1);
                b.add(a, (a + 1 + rng.below(30)).min(N));
            }
            let more_than = rng.below(60);
            let high_rxt = una + rng.below(N - una + 1);
            let sacked = |x: u64| b.sacked_end(x).is_some();
            let sacked_above = |x: u64| (x + 1..N).filter(|&y| sacked(y)).count() as u64;
            let is_lost = |x: u64| !sacked(x) && sacked_above(x) > more_than;
            let pipe: u64 = (una..N).filter(|&x| !sacked(x)).map(|x| !is_lost(x) as u64 + (x < high_rxt) as u64).sum();
            assert_eq!(b.pipe(una, N, high_rxt, more_than), pipe, "{:?} k {more_than}", b.ranges());
            let from = una + rng.below(N - una);
            let next = (from..N).find(|&x| is_lost(x));
            // NextSeg rule 1 takes the first unSACKed byte at or after `from`, lost or not,
            // and sends it if it is lost; lost bytes form a prefix, so both agree.
            assert_eq!(b.next_lost(from, more_than), next, "{:?} from {from} k {more_than}", b.ranges());
        }
    }
}
