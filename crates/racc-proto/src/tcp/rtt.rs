//! RFC 6298 retransmission-timeout estimator (docs/PROTOCOLS.md §10, §1 host rules), integer ns.
//!
//! - §2.1: before any sample RTO = the initial RTO (1 s by default).
//! - §2.2: first sample R: SRTT = R, RTTVAR = R/2.
//! - §2.3: later samples: RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|, then SRTT = 7/8 SRTT + 1/8 R.
//! - RTO = SRTT + max(G, 4 RTTVAR), kept within [min_rto, max_rto] (§2.4, §2.5).
//! - `RtoRule::Linux` instead floors the variance term: RTO = SRTT + max(min_rto, 4 RTTVAR)
//!   (Linux `tcp_set_rto`, whose RTTVAR never drops below `tcp_rto_min`), so the RTO keeps
//!   200 ms above SRTT however steady the RTT. Linux's per-RTT decay of its RTTVAR toward the
//!   largest deviation of the last RTT is not modelled.
//! - §5.5: on expiry RTO doubles (capped at max_rto); the backed-off value is kept until the
//!   next valid sample (Karn), which recomputes RTO from SRTT/RTTVAR.
//!
//! Integer arithmetic rounds each step to the nearest nanosecond.

use crate::time::Dur;

/// Where `min_rto` applies (TCP param `rto_rule`).
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum RtoRule {
    /// RFC 6298 (and ns-2): RTO = max(min_rto, SRTT + max(G, 4·RTTVAR)).
    #[default]
    Rfc6298,
    /// Linux: RTO = SRTT + max(min_rto, 4·RTTVAR).
    Linux,
}

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Dur>,
    rttvar: Dur,
    rto: Dur,
    min_rto: Dur,
    max_rto: Dur,
    /// The least variance term, fixed by the rule: G (RFC 6298), or min_rto if larger (Linux).
    floor: Dur,
    backoffs: u32,
}

impl RttEstimator {
    /// `min_rto` wins over `max_rto` if a configuration inverts them.
    pub fn new(initial_rto: Dur, min_rto: Dur, max_rto: Dur, granularity: Dur, rule: RtoRule) -> RttEstimator {
        let floor = match rule {
            RtoRule::Rfc6298 => granularity,
            RtoRule::Linux => min_rto.max(granularity),
        };
        let mut e = RttEstimator { srtt: None, rttvar: 0, rto: 0, min_rto, max_rto, floor, backoffs: 0 };
        e.rto = e.bound(initial_rto);
        e
    }

    #[inline]
    fn bound(&self, rto: Dur) -> Dur {
        rto.min(self.max_rto).max(self.min_rto)
    }

    /// Feed one RTT measurement (the caller has applied Karn's rule).
    pub fn sample(&mut self, r: Dur) {
        let srtt = match self.srtt {
            None => {
                self.rttvar = r.div_ceil(2);
                r
            }
            Some(srtt) => {
                let err = srtt.abs_diff(r);
                self.rttvar = (3 * self.rttvar + err + 2) / 4;
                (7 * srtt + r + 4) / 8
            }
        };
        self.srtt = Some(srtt);
        self.rto = self.bound(srtt.saturating_add(self.floor.max(self.rttvar.saturating_mul(4))));
        self.backoffs = 0;
    }

    /// RFC 6298 §5.5: the timer expired; double the RTO.
    pub fn backoff(&mut self) {
        self.rto = self.bound(self.rto.saturating_mul(2));
        self.backoffs += 1;
    }

    /// Current RTO, back-off included.
    #[inline]
    pub fn rto(&self) -> Dur {
        self.rto
    }

    #[inline]
    pub fn srtt(&self) -> Option<Dur> {
        self.srtt
    }

    #[inline]
    pub fn rttvar(&self) -> Dur {
        self.rttvar
    }

    /// Back-offs since the last valid sample.
    #[inline]
    pub fn backoffs(&self) -> u32 {
        self.backoffs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{NS_PER_MS, NS_PER_SEC};

    const MS: Dur = NS_PER_MS;

    fn est() -> RttEstimator {
        RttEstimator::new(NS_PER_SEC, 200 * MS, 60 * NS_PER_SEC, MS, RtoRule::Rfc6298)
    }

    #[test]
    fn initial_rto_is_one_second() {
        let e = est();
        assert_eq!(e.rto(), NS_PER_SEC);
        assert_eq!(e.srtt(), None);
    }

    #[test]
    fn hand_computed_sequence() {
        let mut e = est();
        // First sample 100 ms: SRTT 100, RTTVAR 50, RTO = 100 + 4*50 = 300 ms.
        e.sample(100 * MS);
        assert_eq!((e.srtt(), e.rttvar(), e.rto()), (Some(100 * MS), 50 * MS, 300 * MS));
        // 180 ms: RTTVAR = 0.75*50 + 0.25*80 = 57.5; SRTT = 0.875*100 + 0.125*180 = 110;
        // RTO = 110 + 230 = 340 ms.
        e.sample(180 * MS);
        assert_eq!(e.rttvar(), 57_500_000);
        assert_eq!(e.srtt(), Some(110 * MS));
        assert_eq!(e.rto(), 340 * MS);
        // 110 ms: RTTVAR = 0.75*57.5 = 43.125; SRTT 110; RTO = 110 + 172.5 = 282.5 ms.
        e.sample(110 * MS);
        assert_eq!(e.rttvar(), 43_125_000);
        assert_eq!(e.srtt(), Some(110 * MS));
        assert_eq!(e.rto(), 282_500_000);
    }

    /// Linux floors 4·RTTVAR at min_rto instead of clamping the sum: the same samples as
    /// `hand_computed_sequence` give 100 + max(200, 200) = 300, 110 + 230 = 340 and
    /// 110 + max(200, 172.5) = 310 ms (RFC 6298: 282.5); a steady 10 ms path gives 10 + 200
    /// = 210 ms where RFC 6298 gives its floor of 200 ms; back-off doubles as before.
    #[test]
    fn linux_rule_floors_the_variance_term() {
        let mut e = RttEstimator::new(NS_PER_SEC, 200 * MS, 60 * NS_PER_SEC, MS, RtoRule::Linux);
        for (sample, rto) in [(100, 300), (180, 340), (110, 310)] {
            e.sample(sample * MS);
            assert_eq!(e.rto(), rto * MS, "after {sample} ms");
        }
        let mut e = RttEstimator::new(NS_PER_SEC, 200 * MS, 60 * NS_PER_SEC, MS, RtoRule::Linux);
        for _ in 0..200 {
            e.sample(10 * MS);
        }
        assert_eq!(e.rto(), 210 * MS);
        e.backoff();
        assert_eq!(e.rto(), 420 * MS);
    }

    #[test]
    fn clamped_to_min_rto_and_granularity() {
        let mut e = est();
        // 10 ms: SRTT 10, RTTVAR 5 -> 30 ms, clamped up to min_rto 200 ms.
        e.sample(10 * MS);
        assert_eq!(e.rto(), 200 * MS);
        // With min_rto below it, G dominates when RTTVAR is tiny: stable 10 ms samples drive
        // RTTVAR to ~0 and RTO to SRTT + G.
        let mut e = RttEstimator::new(NS_PER_SEC, 0, 60 * NS_PER_SEC, MS, RtoRule::Rfc6298);
        for _ in 0..200 {
            e.sample(10 * MS);
        }
        assert!(e.rttvar() < 10, "{}", e.rttvar()); // ns-level rounding residue
        assert_eq!(e.rto(), 11 * MS);
    }

    #[test]
    fn backoff_doubles_caps_and_resets_on_sample() {
        let mut e = est();
        e.sample(100 * MS); // RTO 300 ms
        e.backoff();
        assert_eq!(e.rto(), 600 * MS);
        e.backoff();
        assert_eq!(e.rto(), 1200 * MS);
        assert_eq!(e.backoffs(), 2);
        for _ in 0..20 {
            e.backoff();
        }
        assert_eq!(e.rto(), 60 * NS_PER_SEC, "capped at max_rto");
        // A valid sample (Karn) recomputes from SRTT/RTTVAR: SRTT 100, RTTVAR 37.5 -> 250 ms.
        e.sample(100 * MS);
        assert_eq!(e.rto(), 250 * MS);
        assert_eq!(e.backoffs(), 0);
    }
}
