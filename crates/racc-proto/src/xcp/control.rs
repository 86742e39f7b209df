//! XCP's controllers at the end of each control interval d (Katabi et al. 2002 §3.5, App. A):
//! the efficiency controller's aggregate feedback φ and the fairness controller's ξ_p, ξ_n
//! ([`control`]); XCP-b's φ from the queue-based spare bandwidth ([`control_blind`]).

use super::params::{XcpForm, XcpRouterParams, D_MAX, D_MIN};
use super::per_packet::{Sums, NS_PER_S, US_PER_S};

/// One control decision (App. A, in SI units): what an interval's sums give.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Control {
    /// The new control interval, s.
    pub d: f64,
    /// Input traffic rate over the interval just ended, B/s.
    pub y: f64,
    /// Aggregate feedback φ and shuffled traffic h, bytes.
    pub phi: f64,
    pub h: f64,
    /// Fairness coefficients: ξ_p in B/s² (per packet ξ_p·rtt²·s/cwnd), ξ_n in 1/s.
    pub xi_p: f64,
    pub xi_n: f64,
    /// Positive and negative budgets, h + max(φ, 0) and h + max(−φ, 0), bytes.
    pub pos: f64,
    pub neg: f64,
}

/// The unit of Σa per second: µs (window form) or ns (throughput form's X).
fn a_per_s(form: XcpForm) -> f64 {
    match form {
        XcpForm::Window => US_PER_S,
        XcpForm::Throughput => NS_PER_S,
    }
}

/// App. A's end of interval: `elapsed` s since the last tick, capacity `c` B/s, persistent
/// queue `q` bytes, `d_prev` the interval in force (kept if no XCP packet had an RTT).
pub fn control(p: &XcpRouterParams, sums: &Sums, elapsed: f64, c: f64, q: f64, d_prev: f64) -> Control {
    control_with(p, sums, elapsed, d_prev, |d, y| p.alpha * d * (c - y) - p.beta * q)
}

/// XCP-b's end of interval ([`super::blind`]): φ = α·d·S − β·(Q − Q_target), with the spare
/// bandwidth S (B/s) that `spare(y)` gives for the interval's input rate y.
pub fn control_blind(
    p: &XcpRouterParams,
    sums: &Sums,
    elapsed: f64,
    mut spare: impl FnMut(f64) -> f64,
    q: f64,
    q_target: f64,
    d_prev: f64,
) -> Control {
    control_with(p, sums, elapsed, d_prev, |d, y| p.alpha * d * spare(y) - p.beta * (q - q_target))
}

/// The interval's decision with the aggregate feedback φ = `phi(d, y)`.
fn control_with(
    p: &XcpRouterParams,
    sums: &Sums,
    elapsed: f64,
    d_prev: f64,
    mut phi: impl FnMut(f64, f64) -> f64,
) -> Control {
    let y = if elapsed > 0.0 { sums.in_bytes / elapsed } else { 0.0 };
    let d = if sums.sum_a > 0.0 { (sums.sum_b / sums.sum_a / US_PER_S).clamp(D_MIN, D_MAX) } else { d_prev };
    let phi = phi(d, y);
    let h = (p.gamma * y * d - phi.abs()).max(0.0);
    let pos = h + phi.max(0.0);
    let neg = h + (-phi).max(0.0);
    let sum_a_s = sums.sum_a / a_per_s(p.form);
    let xcp_bytes = sums.in_bytes - sums.other_bytes;
    let xi_p = if sum_a_s > 0.0 { pos / (d * sum_a_s) } else { 0.0 };
    let xi_n = if xcp_bytes > 0.0 { neg / (d * xcp_bytes) } else { 0.0 };
    Control { d, y, phi, h, xi_p, xi_n, pos, neg }
}
