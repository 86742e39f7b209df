//! The SACK scoreboard of RFC 6675 §3: which bytes above snd_una the receiver has reported,
//! which unreported ones count as lost, and the `pipe` estimate of what is still in the
//! network. Offsets are absolute payload bytes (`seq.rs`).
//!
//! IsLost (RFC 6675 §4): a byte is lost once more than (DupThresh − 1)·SMSS bytes above it have
//! been SACKed. For an unSACKed byte that count only grows the lower the byte, so the lost
//! bytes are exactly the unSACKed ones below one point, `lost_below`; the walk that finds it is
//! O(ranges), and nothing here allocates once the range vector has its capacity.

/// SACKed ranges [start, end) above snd_una, sorted, disjoint and never touching.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scoreboard {
    ranges: Vec<(u64, u64)>,
}

impl Scoreboard {
    pub fn with_capacity(n: usize) -> Scoreboard {
        Scoreboard { ranges: Vec::with_capacity(n) }
    }

    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Record a SACK block, merging it with the ranges it overlaps or touches.
    pub fn add(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        let i = self.ranges.partition_point(|r| r.1 < start);
        let mut j = i;
        let (mut s, mut e) = (start, end);
        while j < self.ranges.len() && self.ranges[j].0 <= e {
            s = s.min(self.ranges[j].0);
            e = e.max(self.ranges[j].1);
            j += 1;
        }
        if i == j {
            self.ranges.insert(i, (s, e));
        } else {
            self.ranges[i] = (s, e);
            self.ranges.drain(i + 1..j);
        }
    }

    /// snd_una moved to `una`: forget what lies below it.
    pub fn advance(&mut self, una: u64) {
        let k = self.ranges.partition_point(|r| r.1 <= una);
        self.ranges.drain(..k);
        if let Some(first) = self.ranges.first_mut() {
            first.0 = first.0.max(una);
        }
    }

    pub fn clear(&mut self) {
        self.ranges.clear();
    }

    /// The end of the SACKed range holding `off`, if it is SACKed.
    pub fn sacked_end(&self, off: u64) -> Option<u64> {
        let i = self.ranges.partition_point(|r| r.1 <= off);
        self.ranges.get(i).filter(|r| r.0 <= off).map(|r| r.1)
    }

    /// SACKed bytes in [a, b).
    fn sacked_in(&self, a: u64, b: u64) -> u64 {
        self.ranges.iter().map(|&(s, e)| e.min(b).saturating_sub(s.max(a))).sum()
    }

    /// UnSACKed bytes below this point are lost (RFC 6675 IsLost with `more_than` =
    /// (DupThresh − 1)·SMSS SACKed bytes above them); 0 when none is.
    pub fn lost_below(&self, more_than: u64) -> u64 {
        let mut above = 0;
        for &(s, e) in self.ranges.iter().rev() {
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
        let unsacked = |a: u64, b: u64| if b > a { (b - a) - self.sacked_in(a, b) } else { 0 };
        let lost_below = self.lost_below(more_than).max(una);
        unsacked(lost_below, snd_max) + unsacked(una, high_rxt.min(snd_max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_touching_and_overlapping_blocks_and_advances() {
        let mut b = Scoreboard::default();
        b.add(5000, 6000);
        b.add(2000, 3000);
        b.add(3000, 4000);
        b.add(7000, 7000);
        assert_eq!(b.ranges(), &[(2000, 4000), (5000, 6000)]);
        b.add(3500, 5500);
        assert_eq!(b.ranges(), &[(2000, 6000)]);
        b.add(8000, 9000);
        assert_eq!((b.sacked_end(2000), b.sacked_end(5999), b.sacked_end(6000)), (Some(6000), Some(6000), None));
        b.advance(2500);
        assert_eq!(b.ranges(), &[(2500, 6000), (8000, 9000)]);
        b.advance(7000);
        assert_eq!(b.ranges(), &[(8000, 9000)]);
        b.clear();
        assert!(b.is_empty());
    }

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
