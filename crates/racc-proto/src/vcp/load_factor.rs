//! The VCP load-factor estimator of one output port (VCP-DCCP App. eqs. A1, A2; docs/PROTOCOLS.md
//! §2), standalone so that DPCP/TPCP and DCP-EW can quantise the same ρ into finer codes.
//!
//! ```text
//! on every arrival:   λ += wire bytes              (before the buffer check: drops count)
//! every t_q:          q_l = a·q_l + (1-a)·q(t)     (A2; q = bytes waiting)
//! every t_p:          ρ = (λ + k_q·q_l)/(γ·C·t_p) ; λ = 0      (A1; C in B/s)
//! ```
//!
//! `queue_term = "ns2"` replaces A2 by the VCP authors' ns-2 router's term: at every t_p the
//! mean of that interval's t_q samples, shifted right by `ns2_queue_shift` (`queue_term.rs`).
//!
//! Schedule. Both timers start at `start + φ`, where the phase φ is drawn uniformly in
//! [0, t_p) from the port's random stream so that routers do not synchronise (docs/PROTOCOLS.md §1,
//! [checked: ns-2 XCP]). The t_p boundary at `start + φ` only opens the first measurement
//! interval (λ is reset; the arrivals before it are not a full interval); the first ρ is
//! computed at `start + φ + t_p`, so every ρ covers exactly one t_p of arrivals. Until then ρ
//! is 0 and the code is 01 (docs/PROTOCOLS.md §2: "code = 01 until the first t_p"). When a t_q
//! sample and a t_p boundary fall on the same instant the sample is taken first, so ρ uses the
//! freshest q_l.

use super::queue_term::{IntervalQueue, QueueTerm, NS2_QUEUE_SHIFT};
use crate::packet::ecn;
use crate::params::{positive, ParamError};
use crate::rng::SimRng;
use crate::time::{secs, Dur, Time};

/// ρ below this is the low-load region (code 01, MI) [VCP-DCCP App.].
pub const RHO_HIGH: f64 = 0.8;
/// ρ at or above this is overload (code 11, MD) [VCP-DCCP App.].
pub const RHO_OVERLOAD: f64 = 1.0;

/// The 2-bit VCP code of a load factor (docs/PROTOCOLS.md §2 table): 01 for ρ < 0.8, 10 for
/// 0.8 ≤ ρ < 1, 11 for ρ ≥ 1. A NaN (impossible with validated parameters) reads as overload.
#[inline]
pub fn vcp_code(rho: f64) -> u8 {
    if rho < RHO_HIGH {
        ecn::ECT1 // 01: low load
    } else if rho < RHO_OVERLOAD {
        ecn::ECT0 // 10: high load
    } else {
        ecn::CE // 11: overload
    }
}

/// A1: ρ = (λ + k_q·q_l)/(γ·C·t_p), with λ and q_l in bytes, C in bits/s, t_p in seconds.
#[inline]
pub fn load_factor(lambda_bytes: f64, q_l_bytes: f64, k_q: f64, gamma: f64, capacity_bps: f64, t_p_s: f64) -> f64 {
    (lambda_bytes + k_q * q_l_bytes) / (gamma * capacity_bps / 8.0 * t_p_s)
}

/// A2: one EWMA step, `a` being the weight of the old value.
#[inline]
pub fn queue_ewma(q_l: f64, a: f64, q: f64) -> f64 {
    a * q_l + (1.0 - a) * q
}

/// Estimator parameters (a VCP router's `router_params`); defaults are VCP-DCCP's
/// (docs/PROTOCOLS.md §2, §16). Times in seconds.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct LoadFactorParams {
    /// Load-factor interval t_p, s [VCP-DCCP: 200 ms].
    pub t_p: f64,
    /// Queue-sampling interval t_q, s [VCP-DCCP: 10 ms].
    pub t_q: f64,
    /// Queue-drain weight k_q in A1 [VCP-DCCP: 0.5].
    pub k_q: f64,
    /// Weight of the old value in the A2 EWMA [VCP-DCCP: 0.875].
    pub a: f64,
    /// Target utilisation γ [VCP-DCCP: 0.98; reference code 0.95].
    pub gamma: f64,
    /// The queue term: "a2" (A2's EWMA, default [VCP-DCCP]) or "ns2" (the reference router's
    /// interval mean, shifted; `queue_term.rs`).
    pub queue_term: QueueTerm,
    /// The `"ns2"` term's right shift, bits [checked: 4, `vcp-queue.h` `moving_avg_int`].
    pub ns2_queue_shift: u32,
}

impl Default for LoadFactorParams {
    fn default() -> LoadFactorParams {
        LoadFactorParams {
            t_p: 0.2,
            t_q: 0.01,
            k_q: 0.5,
            a: 0.875,
            gamma: 0.98,
            queue_term: QueueTerm::A2,
            ns2_queue_shift: NS2_QUEUE_SHIFT,
        }
    }
}

/// Declares a load-factor router module's `router_params` table (DPCP/TPCP's, DCP-EW's): the
/// [`LoadFactorParams`] fields (defaulted as that table) followed by the module's own, each with
/// its default; `load_factor()` reads the estimator's fields back (`params_with_shared!`).
#[macro_export]
macro_rules! load_factor_router_params {
    ($($table:tt)*) => {
        $crate::params_with_shared! {
            shared $crate::vcp::LoadFactorParams,
            /// The load-factor estimator's parameters.
            fn load_factor {
                /// Load-factor interval t_p, s [VCP-DCCP: 200 ms].
                t_p: f64,
                /// Queue-sampling interval t_q, s [VCP-DCCP: 10 ms].
                t_q: f64,
                /// Queue-drain weight k_q in A1 [VCP-DCCP: 0.5].
                k_q: f64,
                /// Weight of the old value in the A2 EWMA [VCP-DCCP: 0.875].
                a: f64,
                /// Target utilisation γ [VCP-DCCP: 0.98].
                gamma: f64,
                /// A1's queue term: "a2" (default) or "ns2" (the reference router's;
                /// `vcp/queue_term.rs`), with its shift.
                queue_term: $crate::vcp::QueueTerm,
                ns2_queue_shift: u32,
            }
            $($table)*
        }
    };
}

impl LoadFactorParams {
    /// t_p, t_q > 0 (at least 1 µs, so the timers advance), k_q ≥ 0, 0 ≤ a < 1, 0 < γ ≤ 1,
    /// ns2_queue_shift < 64.
    pub fn validate(&self) -> Result<(), ParamError> {
        positive("t_p", self.t_p)?;
        positive("t_q", self.t_q)?;
        for (k, v) in [("t_p", self.t_p), ("t_q", self.t_q)] {
            if secs(v) < 1_000 {
                return Err(ParamError::new(k, format!("must be at least 1 µs, got {v} s")));
            }
        }
        if !(self.k_q.is_finite() && self.k_q >= 0.0) {
            return Err(ParamError::new("k_q", format!("must be a finite number >= 0, got {}", self.k_q)));
        }
        if !(0.0..1.0).contains(&self.a) {
            return Err(ParamError::new("a", format!("must be in [0, 1), got {}", self.a)));
        }
        if !(self.gamma > 0.0 && self.gamma <= 1.0) {
            return Err(ParamError::new("gamma", format!("must be in (0, 1], got {}", self.gamma)));
        }
        if self.ns2_queue_shift >= 64 {
            return Err(ParamError::new("ns2_queue_shift", format!("must be below 64, got {}", self.ns2_queue_shift)));
        }
        Ok(())
    }
}

/// The estimator of one port. No allocation, O(1) per arrival and per tick.
#[derive(Clone, Debug)]
pub struct LoadFactor {
    p: LoadFactorParams,
    t_p: Dur,
    t_q: Dur,
    /// Bytes arrived since the last t_p boundary (λ_l).
    lambda: u64,
    /// Persistent queue q_l, bytes.
    q_l: f64,
    /// The running interval's t_q samples (`queue_term = "ns2"`).
    interval_q: IntervalQueue,
    rho: f64,
    code: u8,
    next_q: Time,
    next_p: Time,
    /// The boundary at `start + φ` has passed: the running interval is a full one.
    opened: bool,
    /// ρ values computed so far.
    estimates: u64,
}

impl LoadFactor {
    /// An estimator whose timers start at `start` plus a phase drawn uniformly in [0, t_p)
    /// from `rng`. `p` must be valid (see [`LoadFactorParams::validate`]).
    pub fn new(p: &LoadFactorParams, start: Time, rng: &mut SimRng) -> LoadFactor {
        let phase = rng.below(secs(p.t_p).max(1));
        LoadFactor::with_phase(p, start, phase)
    }

    /// An estimator with a given first-tick phase (tests, and engines that align ticks).
    pub fn with_phase(p: &LoadFactorParams, start: Time, phase: Dur) -> LoadFactor {
        let first = start.saturating_add(phase);
        LoadFactor {
            p: p.clone(),
            t_p: secs(p.t_p).max(1),
            t_q: secs(p.t_q).max(1),
            lambda: 0,
            q_l: 0.0,
            interval_q: IntervalQueue::default(),
            rho: 0.0,
            code: ecn::ECT1,
            next_q: first,
            next_p: first,
            opened: false,
            estimates: 0,
        }
    }

    pub fn params(&self) -> &LoadFactorParams {
        &self.p
    }

    /// Count an arriving packet of `wire_bytes` (every packet, before the buffer check).
    #[inline]
    pub fn on_arrival(&mut self, wire_bytes: u32) {
        self.lambda += wire_bytes as u64;
    }

    /// When `on_tick` next has work: the earlier of the t_q and t_p timers.
    #[inline]
    pub fn next_tick(&self) -> Time {
        self.next_q.min(self.next_p)
    }

    /// Run every t_q sample and t_p boundary due by `now` (samples first at equal times).
    /// `queue_bytes` is the port's waiting queue now, `capacity_bps` its link rate.
    pub fn on_tick(&mut self, now: Time, queue_bytes: u64, capacity_bps: f64) {
        loop {
            if self.next_q <= now && self.next_q <= self.next_p {
                match self.p.queue_term {
                    QueueTerm::A2 => self.q_l = queue_ewma(self.q_l, self.p.a, queue_bytes as f64),
                    QueueTerm::Ns2 => self.interval_q.sample(queue_bytes),
                }
                self.next_q = self.next_q.saturating_add(self.t_q);
            } else if self.next_p <= now {
                if self.p.queue_term == QueueTerm::Ns2 {
                    self.q_l = self.interval_q.close(self.p.ns2_queue_shift) as f64;
                }
                if self.opened {
                    let t_p_s = self.t_p as f64 * 1e-9;
                    self.rho = load_factor(self.lambda as f64, self.q_l, self.p.k_q, self.p.gamma, capacity_bps, t_p_s);
                    self.code = vcp_code(self.rho);
                    self.estimates += 1;
                }
                self.opened = true;
                self.lambda = 0;
                self.next_p = self.next_p.saturating_add(self.t_p);
            } else {
                break;
            }
        }
    }

    /// The latest load factor (0 before the first full t_p).
    #[inline]
    pub fn rho(&self) -> f64 {
        self.rho
    }

    /// The latest 2-bit VCP code (01 before the first full t_p).
    #[inline]
    pub fn code(&self) -> u8 {
        self.code
    }

    /// The persistent queue q_l, bytes (with `"ns2"`, the term of the last closed interval).
    #[inline]
    pub fn q_l(&self) -> f64 {
        self.q_l
    }

    /// Bytes counted in the running t_p interval.
    #[inline]
    pub fn lambda(&self) -> u64 {
        self.lambda
    }

    /// Number of ρ values computed so far.
    #[inline]
    pub fn estimates(&self) -> u64 {
        self.estimates
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NS_PER_MS;

    const MS: Time = NS_PER_MS;

    #[test]
    fn code_boundaries() {
        assert_eq!(vcp_code(0.0), 0b01);
        assert_eq!(vcp_code(0.799_999), 0b01);
        assert_eq!(vcp_code(0.8), 0b10);
        assert_eq!(vcp_code(0.999_999), 0b10);
        assert_eq!(vcp_code(1.0), 0b11);
        assert_eq!(vcp_code(7.0), 0b11);
        assert_eq!(vcp_code(f64::NAN), 0b11);
    }

    /// A hand-computed trace of A1/A2 with round numbers: t_q = 50 ms, t_p = 100 ms, a = 0.5,
    /// k_q = 0.5, γ = 1, C = 8 Mb/s (1e6 B/s), so γ·C·t_p = 100 000 B; phase 30 ms.
    #[test]
    fn hand_computed_trace() {
        let p = LoadFactorParams { t_p: 0.1, t_q: 0.05, k_q: 0.5, a: 0.5, gamma: 1.0, ..Default::default() };
        p.validate().unwrap();
        let c = 8e6;
        let mut lf = LoadFactor::with_phase(&p, 0, 30 * MS);
        // Arrivals before the first boundary are not a full interval: reset at 30 ms.
        lf.on_arrival(5000);
        assert_eq!(lf.code(), 0b01, "code 01 before the first t_p");
        assert_eq!(lf.next_tick(), 30 * MS);
        // 30 ms: sample q = 4000 → q_l = 0.5·0 + 0.5·4000 = 2000; open the first interval.
        lf.on_tick(30 * MS, 4000, c);
        assert_eq!((lf.q_l(), lf.lambda(), lf.estimates(), lf.code()), (2000.0, 0, 0, 0b01));
        assert_eq!(lf.next_tick(), 80 * MS);
        // (30, 130]: 60 000 B arrive (say the last 10 000 are then tail-dropped: still counted).
        for _ in 0..60 {
            lf.on_arrival(1000);
        }
        // 80 ms: q = 8000 → q_l = 1000 + 4000 = 5000.
        lf.on_tick(80 * MS, 8000, c);
        assert_eq!(lf.q_l(), 5000.0);
        assert_eq!(lf.code(), 0b01, "still 01: no full t_p yet");
        // 130 ms: sample q = 6000 → q_l = 2500 + 3000 = 5500 first, then
        // ρ = (60 000 + 0.5·5500)/100 000 = 0.6275 → 01.
        assert_eq!(lf.next_tick(), 130 * MS);
        lf.on_tick(130 * MS, 6000, c);
        assert_eq!(lf.q_l(), 5500.0);
        assert!((lf.rho() - 0.6275).abs() < 1e-12, "{}", lf.rho());
        assert_eq!((lf.code(), lf.lambda(), lf.estimates()), (0b01, 0, 1));
        // (130, 230]: 90 000 B; q = 20 000 at 180 → q_l = 2750 + 10 000 = 12 750;
        // q = 30 000 at 230 → q_l = 6375 + 15 000 = 21 375;
        // ρ = (90 000 + 10 687.5)/100 000 = 1.006 875 → 11.
        lf.on_arrival(90_000);
        lf.on_tick(180 * MS, 20_000, c);
        assert_eq!(lf.q_l(), 12_750.0);
        lf.on_tick(230 * MS, 30_000, c);
        assert_eq!(lf.q_l(), 21_375.0);
        assert!((lf.rho() - 1.006_875).abs() < 1e-12, "{}", lf.rho());
        assert_eq!(lf.code(), 0b11);
        // (230, 330]: 80 000 B, empty queue: q_l = 10 687.5 then 5343.75;
        // ρ = (80 000 + 2671.875)/100 000 = 0.826 718 75 → 10.
        lf.on_arrival(80_000);
        lf.on_tick(280 * MS, 0, c);
        lf.on_tick(330 * MS, 0, c);
        assert_eq!(lf.q_l(), 5343.75);
        assert!((lf.rho() - 0.826_718_75).abs() < 1e-12, "{}", lf.rho());
        assert_eq!((lf.code(), lf.estimates()), (0b10, 3));
        // A tick that is not due changes nothing.
        let before = (lf.q_l(), lf.rho(), lf.next_tick());
        lf.on_tick(331 * MS, 1_000_000, c);
        assert_eq!(before, (lf.q_l(), lf.rho(), lf.next_tick()));
    }

    /// γ scales the capacity in A1's denominator only: ρ = (λ + k_q·q_l)/(γ·C·t_p). Same
    /// constants as the trace above, phase 0: a constant 8000 B queue gives q_l = 4000, 6000,
    /// 7000 at 0, 50 and 100 ms, and 76 000 B arrive in (0, 100]. So ρ = 79 500/(γ·100 000):
    /// 0.993 75 (code 10) with γ = 0.8 and 0.795 (code 01) with γ = 1. A γ applied anywhere else
    /// (to λ, or to the queue term) gives other values.
    #[test]
    fn hand_computed_gamma() {
        for (gamma, rho, code) in [(0.8, 0.993_75, 0b10), (1.0, 0.795, 0b01)] {
            let p = LoadFactorParams { t_p: 0.1, t_q: 0.05, k_q: 0.5, a: 0.5, gamma, ..Default::default() };
            let mut lf = LoadFactor::with_phase(&p, 0, 0);
            lf.on_tick(0, 8000, 8e6);
            lf.on_arrival(76_000);
            lf.on_tick(50 * MS, 8000, 8e6);
            lf.on_tick(100 * MS, 8000, 8e6);
            assert_eq!(lf.q_l(), 7000.0);
            assert!((lf.rho() - rho).abs() < 1e-12, "γ {gamma}: ρ {}", lf.rho());
            assert_eq!(lf.code(), code, "γ {gamma}");
        }
    }

    /// `queue_term = "ns2"` by hand (reference router, `queue_term.rs`): t_q = 50 ms, t_p =
    /// 100 ms, k_q = 0.5, γ = 1, C = 8 Mb/s (γ·C·t_p = 100 000 B), phase 30 ms. The samples at
    /// 80 and 130 ms (8000, 6000 B) give the mean 7000 B, 7000 >> 4 = 437 B, so
    /// ρ = (60 000 + 0.5·437)/100 000 = 0.602 185; with the shift 0, 7000 B and ρ = 0.635. The
    /// sample at 30 ms belongs to the interval the opening boundary closes, not to the next.
    #[test]
    fn hand_computed_ns2_queue_term() {
        for (shift, q_l, rho) in [(4, 437.0, 0.602_185), (0, 7000.0, 0.635)] {
            let p = LoadFactorParams {
                t_p: 0.1,
                t_q: 0.05,
                k_q: 0.5,
                gamma: 1.0,
                queue_term: QueueTerm::Ns2,
                ns2_queue_shift: shift,
                ..Default::default()
            };
            p.validate().unwrap();
            let mut lf = LoadFactor::with_phase(&p, 0, 30 * MS);
            lf.on_tick(30 * MS, 4000, 8e6);
            assert_eq!((lf.q_l(), lf.estimates()), ((4000u64 >> shift) as f64, 0));
            lf.on_arrival(60_000);
            lf.on_tick(80 * MS, 8000, 8e6);
            lf.on_tick(130 * MS, 6000, 8e6);
            assert_eq!(lf.q_l(), q_l, "shift {shift}");
            assert!((lf.rho() - rho).abs() < 1e-12, "shift {shift}: ρ {}", lf.rho());
            // An interval with an empty queue throughout: no memory, the term is 0.
            lf.on_arrival(60_000);
            lf.on_tick(180 * MS, 0, 8e6);
            lf.on_tick(230 * MS, 0, 8e6);
            assert_eq!(lf.q_l(), 0.0);
            assert!((lf.rho() - 0.6).abs() < 1e-12);
        }
    }

    #[test]
    fn constant_queue_gives_q_l_equal_to_it() {
        // A2 is a true EWMA: after n samples of a constant q, q_l = q·(1 − aⁿ) → q.
        let p = LoadFactorParams::default();
        let mut lf = LoadFactor::with_phase(&p, 0, 0);
        let q = 50_000u64;
        let mut n = 0;
        while n < 10 {
            let t = lf.next_tick();
            lf.on_tick(t, q, 10e6);
            n += 1;
        }
        // Ten ticks at 0, 10, …, 90 ms: all t_q samples (the boundary at 0 came after the sample).
        let want = q as f64 * (1.0 - 0.875f64.powi(10));
        assert!((lf.q_l() - want).abs() < 1e-6, "{} vs {want}", lf.q_l());
        for _ in 0..400 {
            let t = lf.next_tick();
            lf.on_tick(t, q, 10e6);
        }
        assert!((lf.q_l() - q as f64).abs() < 1e-6 * q as f64, "q_l {} for q {q}", lf.q_l());
        // With no arrivals, ρ is the queue term alone: 0.5·50 000/(0.98·1.25e6·0.2).
        assert!((lf.rho() - 25_000.0 / 245_000.0).abs() < 1e-6, "{}", lf.rho());
    }

    #[test]
    fn default_schedule_and_random_phase() {
        let p = LoadFactorParams::default();
        let mut seen = std::collections::HashSet::new();
        for port in 0..16 {
            let mut rng = SimRng::for_component(1, &format!("router/port{port}"));
            let lf = LoadFactor::new(&p, 5 * MS, &mut rng);
            let t = lf.next_tick();
            assert!((5 * MS..205 * MS).contains(&t), "first tick {t}");
            seen.insert(t);
        }
        assert!(seen.len() > 12, "phases should differ between ports");
        // Same seed, same label: same phase.
        let a = LoadFactor::new(&p, 0, &mut SimRng::for_component(3, "x")).next_tick();
        let b = LoadFactor::new(&p, 0, &mut SimRng::for_component(3, "x")).next_tick();
        assert_eq!(a, b);
        // With the defaults 20 t_q samples fall in each t_p; a full link gives ρ = 1/γ.
        let mut lf = LoadFactor::with_phase(&p, 0, 7 * MS);
        lf.on_arrival(3000); // before the opening boundary: not counted
        lf.on_tick(7 * MS, 0, 10e6);
        assert_eq!((lf.next_tick(), lf.lambda(), lf.estimates()), (17 * MS, 0, 0));
        lf.on_arrival(250_000); // 10 Mb/s for 200 ms
        let mut ticks = 0;
        while lf.estimates() == 0 {
            let t = lf.next_tick();
            lf.on_tick(t, 0, 10e6);
            ticks += 1;
        }
        assert_eq!(ticks, 20, "20 t_q samples, the last one together with the first ρ at 207 ms");
        assert!((lf.rho() - 1.0 / 0.98).abs() < 1e-12);
        assert_eq!((lf.code(), lf.next_tick()), (0b11, 217 * MS));
    }

    #[test]
    fn validation_names_the_key() {
        assert_eq!(LoadFactorParams::default().validate(), Ok(()));
        let bad = |p: LoadFactorParams| p.validate().unwrap_err().key;
        assert_eq!(bad(LoadFactorParams { t_p: 0.0, ..Default::default() }), "t_p");
        assert_eq!(bad(LoadFactorParams { t_q: 1e-9, ..Default::default() }), "t_q");
        assert_eq!(bad(LoadFactorParams { k_q: -1.0, ..Default::default() }), "k_q");
        assert_eq!(bad(LoadFactorParams { a: 1.0, ..Default::default() }), "a");
        assert_eq!(bad(LoadFactorParams { gamma: 1.2, ..Default::default() }), "gamma");
        assert_eq!(bad(LoadFactorParams { ns2_queue_shift: 64, ..Default::default() }), "ns2_queue_shift");
        let p: LoadFactorParams = crate::params::parse(&serde_json::json!({"queue_term": "ns2"})).unwrap();
        assert_eq!((p.queue_term, p.ns2_queue_shift), (QueueTerm::Ns2, 4));
        let e = crate::params::parse::<LoadFactorParams>(&serde_json::json!({"queue_term": "ewma"})).unwrap_err();
        assert_eq!(e.key, "queue_term");
        let e = crate::params::parse::<LoadFactorParams>(&serde_json::json!({"tp": 0.1})).unwrap_err();
        assert!(e.reason.contains("tp"), "{e}");
        let p: LoadFactorParams = crate::params::parse(&serde_json::json!({"gamma": 0.95})).unwrap();
        assert_eq!(p, LoadFactorParams { gamma: 0.95, ..Default::default() });
    }
}
