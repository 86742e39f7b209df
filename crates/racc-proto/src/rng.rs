//! Deterministic random streams.
//!
//! Every random component (a loss model, a RED queue, a traffic generator) owns its own
//! stream, derived from the scenario seed and a stable component label, so that adding a
//! component or changing a protocol never shifts another component's draws. This is what
//! lets every protocol in a comparison see the identical arrival list (QFCP §III.A).

use rand_pcg::rand_core::{Rng as _, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// A seeded pseudo-random stream (PCG-64 MCG: fast, small state, portable output).
#[derive(Clone, Debug)]
pub struct SimRng(Pcg64Mcg);

/// SplitMix64 finaliser: spreads a 64-bit value over all bits.
#[inline]
fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl SimRng {
    /// The stream for component `label` (e.g. "loss/link3/fwd") under scenario seed `seed`.
    pub fn for_component(seed: u64, label: &str) -> SimRng {
        // FNV-1a over the label, then mixed with the seed: stable across platforms and releases.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in label.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        let a = mix64(seed ^ mix64(h));
        let b = mix64(a ^ 0x5851_F42D_4C95_7F2D);
        let seed128 = ((a as u128) << 64) | (b as u128);
        SimRng(Pcg64Mcg::from_seed(seed128.to_le_bytes()))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in (0, 1]: safe to take a logarithm or a negative power of.
    #[inline]
    pub fn uniform_pos(&mut self) -> f64 {
        1.0 - self.uniform()
    }

    /// True with probability `p`.
    #[inline]
    pub fn bernoulli(&mut self, p: f64) -> bool {
        self.uniform() < p
    }

    /// Exponential with the given mean: -ln(U) * mean, U in (0, 1] (docs/PROTOCOLS.md §13).
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -self.uniform_pos().ln() * mean
    }

    /// Pareto with scale x_m and shape a: x_m * U^(-1/a) (docs/PROTOCOLS.md §13).
    #[inline]
    pub fn pareto(&mut self, x_m: f64, shape: f64) -> f64 {
        x_m * self.uniform_pos().powf(-1.0 / shape)
    }

    /// Log-logistic with median `median` and shape `shape`, P{X > x} = [1 + (x/median)^shape]^-1
    /// (VCP-DCCP §4's think-time and file laws, after SRED): X = median·(U/(1−U))^(1/shape) with
    /// U in [0, 1) (docs/PROTOCOLS.md §13), so X is finite and may be 0.
    #[inline]
    pub fn log_logistic(&mut self, median: f64, shape: f64) -> f64 {
        let u = self.uniform();
        median * (u / (1.0 - u)).powf(1.0 / shape)
    }

    /// Uniform integer in [0, n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        // Lemire's multiply-shift; the tiny bias for huge n is irrelevant here and the
        // result is deterministic, which is what matters.
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let mut a = SimRng::for_component(1, "loss/0");
        let mut b = SimRng::for_component(1, "loss/0");
        let mut c = SimRng::for_component(1, "loss/1");
        let mut d = SimRng::for_component(2, "loss/0");
        let xa: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        let xd: Vec<u64> = (0..8).map(|_| d.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
        assert_ne!(xa, xd);
    }

    #[test]
    fn uniform_ranges() {
        let mut r = SimRng::for_component(7, "u");
        for _ in 0..100_000 {
            let u = r.uniform();
            assert!((0.0..1.0).contains(&u));
            let v = r.uniform_pos();
            assert!(v > 0.0 && v <= 1.0);
            assert!(r.below(10) < 10);
        }
    }

    #[test]
    fn exponential_and_pareto_means() {
        let mut r = SimRng::for_component(3, "dist");
        let n = 400_000;
        let m: f64 = (0..n).map(|_| r.exponential(2.0)).sum::<f64>() / n as f64;
        assert!((m - 2.0).abs() < 0.02, "exponential mean {m}");
        // Shape 3 has finite variance, so the sample mean converges: mean = a x_m/(a-1) = 1.5.
        let p: f64 = (0..n).map(|_| r.pareto(1.0, 3.0)).sum::<f64>() / n as f64;
        assert!((p - 1.5).abs() < 0.02, "pareto mean {p}");
    }
}
