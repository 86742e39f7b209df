//! Load-factor levels of MPCP: MPCP Table 1 (DPCP, n = 2), its n = 1 restriction (the
//! VCP code, MPCP §3.1 backward compatibility), and the TPCP refinement (n = 3, 4) of
//! docs/PROTOCOLS.md §3.
//!
//! A code is a chain of n 2-bit digits, most significant first (the MSP's ECN bits first),
//! each in {01, 10, 11}: 00 is excluded so that every packet stays ECN-capable (MPCP
//! §3.1), which leaves 3ⁿ levels. Their order is the order of ρ, so "worse" is "numerically
//! larger" for codes of the same length.
//!
//! | MSP LSP | ρ below | zone | ξ = h(1/ρ_ub − 1) | MD |
//! |---|---|---|---|---|
//! | 01 01 / 01 10 / 01 11 | 0.20 / 0.40 / 0.80 | low | 1.0 / 0.375 / 0.0625 | – |
//! | 10 01 / 10 10 / 10 11 | 0.85 / 0.95 / 1.00 | high | 0.0441 / 0.0132 / 0 | – |
//! | 11 01 / 11 10 / 11 11 | 1.05 / 1.40 / 2.00 (clamp above) | over | – | 0.875 / 0.6 / 0.43 |
//!
//! Thresholds and MD factors are [seed] (MPCP Table 1). ξ is [reconstructed] (VCP-DCCP's
//! F(x) = h(1 − x)/x at the level's upper bound, MPCP §3.1 "conservatively ... the upper
//! bound"). n ≥ 3 is [reconstructed] (docs/PROTOCOLS.md §3): every further digit splits its parent
//! interval into 3 equal sub-intervals; ξ from the sub-interval's upper bound (no lower than
//! 0.2, see [`Lf::xi`]), MD from the parent DPCP level. n = 1 is VCP (thresholds 0.8 / 1.0, MD 0.875; VCP-DCCP App.).

/// Longest chain supported (4 digits fit one byte; the position needs 2 echo bits).
pub const MAX_CHAIN: u8 = 4;

/// h in F(x) = h(1 − x)/x [VCP-DCCP §2; docs/PROTOCOLS.md §2].
pub const H: f64 = 0.25;

/// MPCP Table 1: level j (0..9, MSP-major) holds ρ < `THRESHOLDS[j]`; the last level
/// also holds everything above 2.0 (clamp).
pub const THRESHOLDS: [f64; 9] = [0.20, 0.40, 0.80, 0.85, 0.95, 1.00, 1.05, 1.40, 2.00];

/// MPCP Table 1: MD factor of the overload levels 11 01, 11 10, 11 11.
pub const MD_FACTORS: [f64; 3] = [0.875, 0.6, 0.43];

/// VCP's β, the MD of a one-digit code 11 [VCP-DCCP A5].
pub const VCP_BETA: f64 = 0.875;

/// Congestion zone, given by the most significant digit (MPCP §3.1: the MSP alone is a
/// VCP code).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Zone {
    /// MSP 01: ρ < 0.8, MI + AI.
    Low,
    /// MSP 10: 0.8 ≤ ρ < 1, MI + AI.
    High,
    /// MSP 11: ρ ≥ 1, MD.
    Over,
}

/// A load-factor code of `n` 2-bit digits (1 ≤ n ≤ 4), each in 1..=3, packed most significant
/// digit first: digit i sits at bits 2(n−1−i). For equal `n` the packed value orders the
/// levels by ρ, which is what routers compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Lf {
    packed: u8,
    n: u8,
}

/// Digit value of the worst level in a zone (11).
pub const WORST: u8 = 0b11;

impl Lf {
    /// The code from its packed digits. Panics (debug) on a digit 00 or a bad length.
    #[inline]
    pub fn from_packed(n: u8, packed: u8) -> Lf {
        debug_assert!((1..=MAX_CHAIN).contains(&n));
        let lf = Lf { packed, n };
        debug_assert!((0..n).all(|i| lf.digit(i) != 0), "digit 00 in {packed:#b}");
        lf
    }

    /// A DPCP code (MSP, LSP).
    #[inline]
    pub fn dpcp(msp: u8, lsp: u8) -> Lf {
        Lf::from_packed(2, (msp << 2) | lsp)
    }

    /// The lowest level (01 01 …): the sender's saved LF before any echo (MPCP §3.3).
    #[inline]
    pub fn lowest(n: u8) -> Lf {
        Lf::from_packed(n, (0..n).fold(0, |a, _| (a << 2) | 0b01))
    }

    /// The worst level of the zone of `msp` (msp 11 11 …): what the sender assumes on an MSP
    /// alone (MPCP §3.3).
    #[inline]
    pub fn zone_worst(n: u8, msp: u8) -> Lf {
        Lf::lowest(n).with_digit(0, msp).with_tail_worst(1)
    }

    /// Chain length.
    #[inline]
    pub fn n(self) -> u8 {
        self.n
    }

    #[inline]
    pub fn packed(self) -> u8 {
        self.packed
    }

    /// Digit `i` (0 = MSP).
    #[inline]
    pub fn digit(self, i: u8) -> u8 {
        (self.packed >> (2 * (self.n - 1 - i))) & 0b11
    }

    /// This code with digit `i` replaced by `d` (1..=3).
    #[inline]
    pub fn with_digit(self, i: u8, d: u8) -> Lf {
        debug_assert!((1..=3).contains(&d) && i < self.n);
        let s = 2 * (self.n - 1 - i);
        Lf { packed: (self.packed & !(0b11 << s)) | (d << s), n: self.n }
    }

    /// This code with digits `from..n` set to 11 (the worst refinement still possible).
    #[inline]
    pub fn with_tail_worst(self, from: u8) -> Lf {
        (from..self.n).fold(self, |lf, i| lf.with_digit(i, WORST))
    }

    /// Quantise ρ into n digits. Every comparison is `ρ < bound` (Table 1's "below"); ρ at or
    /// above 2.0 clamps to the top level; NaN reads as the top level (safe side), a negative
    /// ρ as the bottom.
    pub fn from_rho(rho: f64, n: u8) -> Lf {
        debug_assert!((1..=MAX_CHAIN).contains(&n));
        let rho = if rho.is_nan() { f64::INFINITY } else { rho };
        let j = THRESHOLDS[..8].iter().take_while(|&&t| rho >= t).count();
        if n == 1 {
            return Lf { packed: (j / 3 + 1) as u8, n: 1 };
        }
        let mut packed = (((j / 3 + 1) << 2) | (j % 3 + 1)) as u8;
        let (mut lo, mut hi) = dpcp_bounds(j);
        for _ in 2..n {
            let d = 1 + (rho >= split(lo, hi, 1)) as u8 + (rho >= split(lo, hi, 2)) as u8;
            (lo, hi) = (split(lo, hi, d - 1), split(lo, hi, d));
            packed = (packed << 2) | d;
        }
        Lf { packed, n }
    }

    /// Zone of the most significant digit.
    #[inline]
    pub fn zone(self) -> Zone {
        match self.digit(0) {
            0b01 => Zone::Low,
            0b10 => Zone::High,
            _ => Zone::Over,
        }
    }

    /// Index 0..9 of the DPCP level (the first two digits); for n = 1 the zone's worst level.
    #[inline]
    fn dpcp_index(self) -> usize {
        let msp = self.digit(0) as usize;
        let lsp = if self.n >= 2 { self.digit(1) as usize } else { 3 };
        (msp - 1) * 3 + (lsp - 1)
    }

    /// The ρ interval [lo, hi) this level stands for; the top level's hi is 2.0 (above it the
    /// code clamps). For n = 1: [0, 0.8), [0.8, 1), [1, 2].
    pub fn rho_bounds(self) -> (f64, f64) {
        if self.n == 1 {
            let j = self.dpcp_index(); // 2, 5 or 8
            return (if j == 2 { 0.0 } else { THRESHOLDS[j - 3] }, THRESHOLDS[j]);
        }
        let (mut lo, mut hi) = dpcp_bounds(self.dpcp_index());
        for i in 2..self.n {
            let d = self.digit(i);
            (lo, hi) = (split(lo, hi, d - 1), split(lo, hi, d));
        }
        (lo, hi)
    }

    /// Upper bound of the level's ρ interval: what growth is computed from (MPCP §3.1).
    #[inline]
    pub fn rho_upper(self) -> f64 {
        self.rho_bounds().1
    }

    /// ξ = h(1/ρ_ub − 1): the MI factor of the low and high zones [reconstructed, docs/PROTOCOLS.md
    /// §3]; 0 in the overload zone, which does not grow.
    ///
    /// ρ_ub is taken no lower than Table 1's first threshold, 0.2 [reconstructed]: so ξ ≤ h·4
    /// (1.0), the fastest growth MPCP tested. Without the floor TPCP's sub-levels of
    /// [0, 0.2) would get ξ = 3.5 and 1.63; one RTT of ACKs at the σ_MI exponent multiplies
    /// cwnd by (1+ξ)^2.5 (43x at ξ = 3.5) before the first feedback on the new load returns,
    /// taking ρ from < 0.067 to ≈ 2.9 and overflowing any buffer, where DPCP's 5.66x from
    /// ρ < 0.2 stays near 1.1.
    #[inline]
    pub fn xi(self, h: f64) -> f64 {
        match self.zone() {
            Zone::Over => 0.0,
            _ => h * (1.0 / self.rho_upper().max(THRESHOLDS[0]) - 1.0),
        }
    }

    /// The MD factor of an overload level: MPCP Table 1 by the LSP (n ≥ 2; further
    /// digits inherit the parent level's factor), VCP's 0.875 for n = 1. `None` outside the
    /// overload zone.
    #[inline]
    pub fn md_factor(self) -> Option<f64> {
        self.md_factor_of(&MD_FACTORS)
    }

    /// [`Lf::md_factor`] with the overload levels' factors `f` in place of Table 1's (the
    /// `md_factors` parameter).
    #[inline]
    pub fn md_factor_of(self, f: &[f64; 3]) -> Option<f64> {
        match (self.zone(), self.n) {
            (Zone::Over, 1) => Some(VCP_BETA),
            (Zone::Over, _) => Some(f[self.digit(1) as usize - 1]),
            _ => None,
        }
    }
}

/// MPCP Table 1 interval of DPCP level j.
#[inline]
fn dpcp_bounds(j: usize) -> (f64, f64) {
    (if j == 0 { 0.0 } else { THRESHOLDS[j - 1] }, THRESHOLDS[j])
}

/// Boundary i ∈ 0..=3 of the 3-way split of [lo, hi); 0 and 3 are exact, so sub-intervals
/// tile the parent without gaps and classification and bounds use the very same numbers.
#[inline]
fn split(lo: f64, hi: f64, i: u8) -> f64 {
    match i {
        0 => lo,
        3 => hi,
        _ => lo + (hi - lo) * i as f64 / 3.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn below(x: f64) -> f64 {
        f64::from_bits(x.to_bits() - 1)
    }

    const TABLE1: [(u8, u8); 9] = [
        (0b01, 0b01),
        (0b01, 0b10),
        (0b01, 0b11),
        (0b10, 0b01),
        (0b10, 0b10),
        (0b10, 0b11),
        (0b11, 0b01),
        (0b11, 0b10),
        (0b11, 0b11),
    ];

    #[test]
    fn table1_bit_exact_at_and_around_every_threshold() {
        assert_eq!(Lf::from_rho(0.0, 2), Lf::dpcp(0b01, 0b01));
        assert_eq!(Lf::from_rho(-1.0, 2), Lf::dpcp(0b01, 0b01));
        for (j, &t) in THRESHOLDS.iter().enumerate() {
            let (m, l) = TABLE1[j];
            // Just below the threshold: level j; at it: the next level (or the clamp).
            assert_eq!(Lf::from_rho(below(t), 2), Lf::dpcp(m, l), "below {t}");
            let (m2, l2) = TABLE1[(j + 1).min(8)];
            assert_eq!(Lf::from_rho(t, 2), Lf::dpcp(m2, l2), "at {t}");
            assert_eq!(Lf::from_rho(t, 2).packed(), (m2 << 2) | l2);
        }
        for rho in [2.0, 2.5, 1e9, f64::INFINITY, f64::NAN] {
            assert_eq!(Lf::from_rho(rho, 2), Lf::dpcp(0b11, 0b11), "clamp {rho}");
        }
        // Levels order as ρ does.
        let mut prev = 0;
        for rho in (0..250).map(|i| i as f64 * 0.01) {
            let p = Lf::from_rho(rho, 2).packed();
            assert!(p >= prev);
            prev = p;
        }
    }

    #[test]
    fn zones_bounds_xi_and_md() {
        let xi = [1.0, 0.375, 0.0625, 0.25 * (1.0 / 0.85 - 1.0), 0.25 * (1.0 / 0.95 - 1.0), 0.0];
        for (j, &(m, l)) in TABLE1.iter().enumerate() {
            let lf = Lf::dpcp(m, l);
            assert_eq!(lf.rho_upper(), THRESHOLDS[j]);
            assert_eq!(lf.zone(), [Zone::Low, Zone::High, Zone::Over][j / 3]);
            if j < 6 {
                assert!((lf.xi(H) - xi[j]).abs() < 1e-15, "{j}: {}", lf.xi(H));
                assert_eq!(lf.md_factor(), None);
            } else {
                assert_eq!(lf.md_factor(), Some(MD_FACTORS[j - 6]));
            }
        }
        // docs/PROTOCOLS.md §3's rounded column.
        assert!((Lf::dpcp(0b10, 0b01).xi(H) - 0.0441).abs() < 1e-4);
        assert!((Lf::dpcp(0b10, 0b10).xi(H) - 0.0132).abs() < 1e-4);
        assert_eq!(Lf::dpcp(0b01, 0b11).xi(H), 0.0625, "= VCP's μ");
        assert_eq!(Lf::dpcp(0b10, 0b11).xi(H), 0.0);
    }

    #[test]
    fn every_md_lands_below_rho_one() {
        // MPCP §3.1 "a safe descent to the high-load zone": β_k·ρ_ub < 1 for every level.
        for (l, want) in [(0b01, 0.91875), (0b10, 0.84), (0b11, 0.86)] {
            let lf = Lf::dpcp(0b11, l);
            let after = lf.md_factor().unwrap() * lf.rho_upper();
            assert!((after - want).abs() < 1e-12 && after < 1.0, "11 {l:02b}: {after}");
        }
        // Also for TPCP sub-levels (same factor, same or lower upper bound).
        for p in 0..27u8 {
            let lf = Lf::from_packed(3, 0b11_00_00 | ((p / 9 % 3 + 1) << 2) | (p % 3 + 1));
            assert!(lf.md_factor().unwrap() * lf.rho_upper() < 1.0, "{lf:?}");
        }
    }

    #[test]
    fn one_digit_is_vcp() {
        for (rho, code) in [(0.0, 0b01), (below(0.8), 0b01), (0.8, 0b10), (below(1.0), 0b10), (1.0, 0b11), (5.0, 0b11)]
        {
            let lf = Lf::from_rho(rho, 1);
            assert_eq!(lf.packed(), code, "{rho}");
            assert_eq!(lf.packed(), Lf::from_rho(rho, 2).digit(0), "MSP = VCP code");
        }
        assert_eq!(Lf::from_packed(1, 0b01).rho_bounds(), (0.0, 0.8));
        assert_eq!(Lf::from_packed(1, 0b10).rho_bounds(), (0.8, 1.0));
        assert_eq!(Lf::from_packed(1, 0b11).rho_bounds(), (1.0, 2.0));
        assert_eq!(Lf::from_packed(1, 0b01).xi(H), 0.0625);
        assert_eq!(Lf::from_packed(1, 0b11).md_factor(), Some(0.875));
    }

    #[test]
    fn tpcp_splits_each_level_in_three() {
        for (j, &(m, l)) in TABLE1.iter().enumerate() {
            let (lo, hi) = dpcp_bounds(j);
            let w = (hi - lo) / 3.0;
            for d in 1..=3u8 {
                let lf = Lf::from_packed(3, (m << 4) | (l << 2) | d);
                let (a, b) = lf.rho_bounds();
                assert!((a - (lo + (d - 1) as f64 * w)).abs() < 1e-12 && (b - (lo + d as f64 * w)).abs() < 1e-12);
                // Classification agrees with the bounds, bit-exactly at the boundaries.
                assert_eq!(Lf::from_rho(a, 3), lf, "at {a}");
                assert_eq!(Lf::from_rho((a + b) / 2.0, 3), lf);
                if j < 8 || d < 3 {
                    assert_eq!(Lf::from_rho(below(b), 3), lf, "below {b}");
                    assert_ne!(Lf::from_rho(b, 3), lf, "at {b}");
                }
                // The parent level and its MD factor.
                assert_eq!((lf.digit(0), lf.digit(1)), (m, l));
                assert_eq!(lf.md_factor(), Lf::dpcp(m, l).md_factor());
                if lf.zone() != Zone::Over {
                    assert_eq!(lf.xi(H), H * (1.0 / b.max(0.2) - 1.0));
                    assert!(lf.xi(H) <= Lf::dpcp(0b01, 0b01).xi(H), "no sub-level grows faster than 01 01");
                }
            }
            // The top sub-interval's bound is the parent's: same ξ.
            assert_eq!(Lf::from_packed(3, (m << 4) | (l << 2) | 3).rho_upper(), hi);
        }
        // Examples: 01 01 01 = [0, 0.0667) and 01 01 10 = [0.0667, 0.133) grow with 01 01's
        // ξ = 1 (the floor on ρ_ub), 01 10 01 = [0.2, 0.267) with its own 0.25·2.75; 11 11 11
        // clamps above 2.
        assert_eq!(Lf::from_packed(3, 0b01_01_01).xi(H), 1.0);
        assert_eq!(Lf::from_packed(3, 0b01_01_10).xi(H), 1.0);
        assert!((Lf::from_packed(3, 0b01_10_01).xi(H) - 0.6875).abs() < 1e-12);
        assert_eq!(Lf::from_rho(7.0, 3).packed(), 0b11_11_11);
        assert_eq!(Lf::from_rho(f64::NAN, 4).packed(), 0b11_11_11_11);
        assert_eq!(Lf::from_rho(1.7, 3).packed(), 0b11_11_10);
        assert_eq!(Lf::from_rho(0.86, 3).packed(), 0b10_10_01); // [0.85, 0.8833)
        assert_eq!(Lf::from_rho(0.9, 3).packed(), 0b10_10_10); // [0.8833, 0.9167)
                                                               // n = 4 refines n = 3 the same way, and ρ orders every length's codes.
        for n in 1..=MAX_CHAIN {
            let mut prev = 0;
            for i in 0..2200 {
                let rho = i as f64 * 0.001;
                let lf = Lf::from_rho(rho, n);
                let (a, b) = lf.rho_bounds();
                assert!(a <= rho && (rho < b || b == 2.0), "n {n} rho {rho} in [{a}, {b})");
                assert!(lf.packed() >= prev);
                prev = lf.packed();
                assert!((0..n).all(|k| lf.digit(k) != 0));
            }
        }
    }

    #[test]
    fn digits_edit() {
        let lf = Lf::dpcp(0b10, 0b01);
        assert_eq!((lf.digit(0), lf.digit(1)), (0b10, 0b01));
        assert_eq!(lf.with_digit(1, 0b11), Lf::dpcp(0b10, 0b11));
        assert_eq!(Lf::zone_worst(2, 0b01), Lf::dpcp(0b01, 0b11));
        assert_eq!(Lf::lowest(2), Lf::dpcp(0b01, 0b01));
        assert_eq!(Lf::zone_worst(4, 0b10).packed(), 0b10_11_11_11);
        assert_eq!(Lf::lowest(3).packed(), 0b01_01_01);
    }
}
