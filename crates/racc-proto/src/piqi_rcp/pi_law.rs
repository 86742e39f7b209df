//! PIQI-RCP's router rule **[reconstructed]** (docs/PROTOCOLS.md §8; the router module's docs in
//! `router.rs` say why each term): every interval, N̂ = max(1, y/R̄ + J) flows share the rate
//! error e = (γC − y)/N̂, with no queue term, and R moves by the PI law
//! R += K_i·g·e + K_p·(e − e_prev), clamped to [R_min, γC]; and the shares newcomers are
//! given and admitted at ([`admit`], [`fair_with`], [`start_share`], [`file_newcomer`],
//! [`admit_on_traffic`]), written over [`Arith`] where a packet pays for them.

use super::params::PiqiRouterParams;
use crate::xcc::ops::Arith;

/// The PI controller's state entering an interval: the rate R, the reference R̄ the flows are
/// counted in, the newcomers J not yet in y, and the last rate error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PiState {
    pub r: f64,
    pub r_bar: f64,
    pub j: f64,
    pub e_prev: f64,
}

/// The PI law of one interval (module docs): returns (R, N̂, e).
pub fn pi_step(p: &PiqiRouterParams, s: PiState, c: f64, y: f64, g: f64, r_min: f64) -> (f64, f64, f64) {
    let PiState { r, r_bar, j, e_prev } = s;
    let n_hat = (if r_bar > 0.0 { y / r_bar } else { 0.0 } + j).max(1.0);
    let e = (p.gamma * c - y) / n_hat;
    let next = r + p.k_i * g * e + p.k_p * (e - e_prev);
    (next.max(r_min).min(p.gamma * c), n_hat, e)
}

/// Room for one more flow: (R·N̂/(N̂ + 1), N̂ + 1, J + 1).
#[inline]
pub fn admit<N: Arith>(rate: N, n_hat: N, j: N) -> (N, N, N) {
    let one = N::from(1.0);
    let n1 = n_hat + one;
    (rate * n_hat / n1, n1, j + one)
}

/// The fair rate once `k` newcomers join old flows that use `y` at rate `r` (γC = `cap`):
/// the room they need is taken from the old flows in proportion, γC·R/(y + k·R), and never
/// above R (a link with room to spare cuts nobody).
#[inline]
pub fn fair_with<N: Arith>(r: N, y: N, k: N, cap: N) -> N {
    let f = cap * r / (y + k * r);
    if f < r {
        f
    } else {
        r
    }
}

/// The start share of the `k`-th pending newcomer (k ≥ 1): k·F(k) − (k−1)·F(k−1) with
/// F = [`fair_with`]. One newcomer gets its fair share; a burst of them together gets
/// k·F(k) < γC in all, however many (the telescoping sum), so their first RTT cannot
/// overshoot by more than the link.
#[inline]
pub fn start_share<N: Arith>(r: N, y: N, k: N, cap: N) -> N {
    let k1 = k - N::from(1.0);
    k * fair_with(r, y, k, cap) - k1 * fair_with(r, y, k1, cap)
}

/// A newcomer's request under admission on traffic: (pending k + 1, its start share (at least
/// 1 B/s), pending start shares + it). 6 additions, 6 multiplications, 2 divisions.
#[inline]
pub fn file_newcomer<N: Arith>(r: N, y: N, pend: N, pend_rate: N, cap: N) -> (N, N, N) {
    let k = pend + N::from(1.0);
    let s = start_share(r, y, k, cap);
    let s = if s < N::from(1.0) { N::from(1.0) } else { s };
    (k, s, pend_rate + s)
}

/// Admission on traffic, at a tick: `x` B/s of new persistent traffic against `pend` pending
/// newcomers given `pend_rate` B/s of start shares; old flows used `y_old` at rate `r`.
/// Returns (R, newcomers admitted m, the part of a flow each admitted one does not yet show in
/// y). m = pend·min(1, x/pend_rate); R = min(R, γC·R/(y_old + m·R)).
pub fn admit_on_traffic(r: f64, y_old: f64, x: f64, pend: f64, pend_rate: f64, cap: f64) -> (f64, f64, f64) {
    if pend <= 0.0 || pend_rate <= 0.0 || x <= 0.0 {
        return (r, 0.0, 0.0);
    }
    let m = pend * (x / pend_rate).min(1.0);
    let unseen = (1.0 - pend_rate / pend / r).max(0.0);
    (fair_with(r, y_old, m, cap), m, unseen)
}
