//! A set of byte ranges above a cumulative point: the receiver's out-of-order data and the
//! sender's SACK scoreboard are both one. Sorted, disjoint and never touching, so that a
//! block or a cumulative ACK is a binary search plus a splice; no allocation once the vector
//! has its capacity.

#[derive(Clone, Debug, Default, PartialEq)]
pub struct RangeSet {
    ranges: Vec<(u64, u64)>,
}

impl RangeSet {
    pub fn with_capacity(n: usize) -> RangeSet {
        RangeSet { ranges: Vec::with_capacity(n) }
    }

    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    pub fn clear(&mut self) {
        self.ranges.clear();
    }

    /// Add [start, end), merging with the ranges it overlaps or touches.
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

    /// The cumulative point moved to `to`: forget what lies below it.
    pub fn advance(&mut self, to: u64) {
        let k = self.ranges.partition_point(|r| r.1 <= to);
        self.ranges.drain(..k);
        if let Some(first) = self.ranges.first_mut() {
            first.0 = first.0.max(to);
        }
    }

    /// A cumulative point at `to` swallows every range it reaches: the new point, with those
    /// ranges gone (the receiver's rcv_nxt when a segment fills a gap).
    pub fn absorb(&mut self, to: u64) -> u64 {
        let k = self.ranges.partition_point(|r| r.0 <= to);
        let reached = self.ranges[..k].iter().fold(to, |a, r| a.max(r.1));
        self.ranges.drain(..k);
        reached
    }

    /// The end of the range holding `off`, if one does.
    pub fn end_of_range_holding(&self, off: u64) -> Option<u64> {
        let i = self.ranges.partition_point(|r| r.1 <= off);
        self.ranges.get(i).filter(|r| r.0 <= off).map(|r| r.1)
    }

    /// Bytes of the set in [a, b).
    pub fn bytes_in(&self, a: u64, b: u64) -> u64 {
        self.ranges.iter().map(|&(s, e)| e.min(b).saturating_sub(s.max(a))).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_touching_and_overlapping_ranges_advances_and_absorbs() {
        let mut b = RangeSet::default();
        b.add(5000, 6000);
        b.add(2000, 3000);
        b.add(3000, 4000);
        b.add(7000, 7000);
        assert_eq!(b.ranges(), &[(2000, 4000), (5000, 6000)]);
        b.add(3500, 5500);
        assert_eq!(b.ranges(), &[(2000, 6000)]);
        b.add(8000, 9000);
        assert_eq!(b.bytes_in(0, 8500), 4500);
        let ends = (b.end_of_range_holding(2000), b.end_of_range_holding(5999), b.end_of_range_holding(6000));
        assert_eq!(ends, (Some(6000), Some(6000), None));
        b.advance(2500);
        assert_eq!(b.ranges(), &[(2500, 6000), (8000, 9000)]);
        // A point at 2500 reaches the range starting there; one at 6000 does not reach 8000.
        assert_eq!(b.absorb(2500), 6000);
        assert_eq!(b.ranges(), &[(8000, 9000)]);
        assert_eq!(b.absorb(7000), 7000);
        assert_eq!(b.absorb(8000), 9000);
        assert!(b.is_empty());
        b.add(1, 2);
        b.clear();
        assert!(b.is_empty());
    }

    /// Random adds, advances and absorbs against a bitmap: same content, and the ranges stay
    /// sorted, disjoint and never touching.
    #[test]
    fn property_matches_a_bitmap() {
        use crate::rng::SimRng;
        const N: u64 = 400;
        let mut rng = SimRng::for_component(5, "tcp/ranges");
        for _ in 0..300 {
            let mut set = RangeSet::default();
            let mut bits = [false; N as usize];
            let mut low = 0u64; // everything below is forgotten
            for _ in 0..40 {
                match rng.below(6) {
                    0 => {
                        low = (low + rng.below(30)).min(N);
                        set.advance(low);
                        bits[..low as usize].iter_mut().for_each(|b| *b = false);
                    }
                    1 => {
                        let to = (low + rng.below(30)).min(N);
                        let mut want = to;
                        while want < N && bits[want as usize] {
                            want += 1;
                        }
                        assert_eq!(set.absorb(to), want);
                        bits[..want as usize].iter_mut().for_each(|b| *b = false);
                        low = want;
                    }
                    _ => {
                        let a = low + rng.below(N - low + 1);
                        let b = (a + rng.below(40)).min(N);
                        set.add(a, b);
                        bits[a as usize..b as usize].iter_mut().for_each(|x| *x = true);
                    }
                }
                let r = set.ranges();
                assert!(r.windows(2).all(|w| w[0].1 < w[1].0), "sorted, disjoint, apart: {r:?}");
                assert!(r.iter().all(|&(a, b)| a < b));
                for x in 0..N {
                    let inside = set.end_of_range_holding(x).is_some();
                    assert_eq!(inside, bits[x as usize], "byte {x} in {r:?}");
                }
                assert_eq!(set.bytes_in(0, N), bits.iter().filter(|&&b| b).count() as u64);
            }
        }
    }
}
