//! XCP's per-packet arithmetic (Katabi et al. 2002 App. A; docs/PROTOCOLS.md §5), written once over
//! [`Arith`] so that the router runs it on `f64` and counts it on [`crate::xcc::ops::Counted`]:
//! an arrival's sums ([`arrival_xcp`], [`arrival_x`]), the terms it carries across the queue
//! ([`carry_terms`]), and a departure's feedback against the interval's budget ([`departure`]).
//! The router module that drives it is `router.rs`; the cost per packet is counted there.

use super::params::XcpBudget;
use crate::packet::{CongHeader, Direction, Kind, Packet};
use crate::xcc::ops::Arith;

/// µs per second: the header's RTT unit.
pub(super) const US_PER_S: f64 = 1e6;
/// ns per second: the unit of the throughput form's X.
pub(super) const NS_PER_S: f64 = 1e9;

/// What the current interval has seen so far. RTTs in µs (the header's unit); a = rtt·s/cwnd
/// in µs (window form) or ns (throughput form: the header's X).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sums {
    /// Wire bytes of every arriving packet.
    pub in_bytes: f64,
    /// Wire bytes that do not enter the ξ sums: non-XCP packets, ACKs, XCP data with H_rtt = 0.
    pub other_bytes: f64,
    /// Σ rtt·s/cwnd over XCP data (µs, or ns in the throughput form).
    pub sum_a: f64,
    /// Σ rtt²·s/cwnd over XCP data (µs², or ns·µs in the throughput form).
    pub sum_b: f64,
}

/// The per-packet arithmetic of an XCP data packet's arrival (H_rtt = `rtt_us` > 0, wire size
/// `s`, H_cwnd `cwnd`): the interval's (input bytes + s, Σa + a, Σb + b) with a = rtt·s/cwnd
/// and b = a·rtt, and the [`Carry`] values u = rtt·s and b its departure reuses.
#[inline]
pub fn arrival_xcp<N: Arith>(in_bytes: N, sum_a: N, sum_b: N, rtt_us: N, s: N, cwnd: N) -> ((N, N, N), (N, N)) {
    let (u, a, b) = carry_terms(rtt_us, s, cwnd);
    ((in_bytes + s, sum_a + a, sum_b + b), (u, b))
}

/// The per-packet arithmetic of an XCP data packet's arrival in the throughput form (H_rtt =
/// `rtt_us` > 0, wire size `s`, the header's X = rtt·s/cwnd in ns): (input bytes + s, Σa + X,
/// Σb + X·rtt). 3 additions + 1 multiplication.
#[inline]
pub fn arrival_x<N: Arith>(in_bytes: N, sum_a: N, sum_b: N, rtt_us: N, s: N, x_ns: N) -> (N, N, N) {
    (in_bytes + s, sum_a + x_ns, sum_b + x_ns * rtt_us)
}

/// u = rtt·s, a = u/cwnd and b = a·rtt = rtt²·s/cwnd: 2 multiplications and the division by
/// H_cwnd.
#[inline]
pub fn carry_terms<N: Arith>(rtt_us: N, s: N, cwnd: N) -> (N, N, N) {
    let u = rtt_us * s;
    let a = u / cwnd;
    (u, a, a * rtt_us)
}

/// What an XCP data packet's arrival computed and its departure reuses, kept by the port in
/// arrival order beside its buffer, as a router keeps per-packet metadata with the packet
/// (the paper removes the per-packet division by carrying rtt·s/cwnd; here the router carries
/// it across its own queue and the wire format stays docs/PROTOCOLS.md §1's). The identifying
/// fields let a departure check that the entry is its own; one that is not (a packet left
/// the queue unseen) recomputes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Carry {
    pub(super) flow: u32,
    pub(super) rtt_us: u32,
    pub(super) cwnd: u32,
    pub(super) size: u32,
    /// rtt·s (µs·B) and rtt²·s/cwnd (µs²).
    pub(super) u: f64,
    pub(super) b: f64,
}

/// The interval's feedback state as the departure path uses it: per-packet coefficients in
/// the header's units (k_p = ξ_p/10¹² per µs², k_n = ξ_n/10⁶ per µs) and what is left of the
/// positive and negative budgets, bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget<N> {
    pub k_p: N,
    pub k_n: N,
    pub res_pos: N,
    pub res_neg: N,
}

impl Budget<f64> {
    pub(super) fn map<N: Arith>(self) -> Budget<N> {
        Budget {
            k_p: self.k_p.into(),
            k_n: self.k_n.into(),
            res_pos: self.res_pos.into(),
            res_neg: self.res_neg.into(),
        }
    }
}

impl<N: Arith> Budget<N> {
    pub(super) fn unmap(self) -> Budget<f64> {
        Budget {
            k_p: self.k_p.into(),
            k_n: self.k_n.into(),
            res_pos: self.res_pos.into(),
            res_neg: self.res_neg.into(),
        }
    }
}

/// The per-packet arithmetic of an XCP data packet's departure: this router's feedback
/// pos − neg with pos = ξ_p·rtt²·s/cwnd = k_p·b and neg = ξ_n·rtt·s = k_n·u (u and b from
/// [`carry_terms`], in header units; each part at most what is left of its budget), the
/// header's new H_feedback (the lower of the two), and the billing of `rule`. `header` is the
/// H_feedback the packet arrives with (+inf from a sender that asks for all). The throughput
/// form calls it with u = s and b = X (pos = ξ_p·X, neg = ξ_n·s, B/s).
#[inline]
pub fn departure<N: Arith>(b: &mut Budget<N>, u: N, rtt2_s_by_cwnd: N, header: N, rule: XcpBudget) -> N {
    let zero = N::from(0.0);
    let mut pos = b.k_p * rtt2_s_by_cwnd;
    let mut neg = b.k_n * u;
    if pos > b.res_pos {
        pos = b.res_pos;
    }
    if neg > b.res_neg {
        neg = b.res_neg;
    }
    let fb = pos - neg;
    let out = if header >= fb {
        b.res_pos = b.res_pos - pos;
        b.res_neg = b.res_neg - neg;
        fb
    } else {
        match rule {
            XcpBudget::Granted => {
                if header >= zero {
                    b.res_pos = b.res_pos - header;
                } else {
                    b.res_neg = b.res_neg + header;
                }
            }
            XcpBudget::Ns235 => {
                let mut neg2 = neg + (fb - header);
                if neg2 > b.res_neg {
                    neg2 = b.res_neg;
                }
                b.res_pos = b.res_pos - (header + neg2);
                b.res_neg = b.res_neg - neg2;
            }
        }
        header
    };
    if b.res_pos <= zero {
        b.res_pos = zero;
        b.k_p = zero;
    }
    if b.res_neg <= zero {
        b.res_neg = zero;
        b.k_n = zero;
    }
    out
}

/// H_rtt and H_cwnd (X in the throughput form) of a forward XCP data packet.
#[inline]
pub(super) fn xcp_data(pkt: &Packet) -> Option<(u32, u32)> {
    match pkt.cong {
        CongHeader::Xcp { rtt_us, cwnd, .. } if pkt.kind == Kind::Data && pkt.dir == Direction::Forward => {
            Some((rtt_us, cwnd))
        }
        _ => None,
    }
}

/// A departing packet's two terms of [`departure`]: given (the window form's carried u and b,
/// or the throughput form's s and X), or computed here by [`carry_terms`] from its header.
#[derive(Clone, Copy)]
pub(super) enum Terms {
    Given(f64, f64),
    Carry { rtt_us: f64, s: f64, cwnd: f64 },
}

/// A packet's feedback and the budget after it, in the number type `N`: `f64` to run,
/// [`Counted`] to count what the same arithmetic costs (one definition for both, so the count
/// is of the code that runs).
#[inline(always)]
pub(super) fn feedback_in<N: Arith>(
    budget: Budget<f64>,
    rule: XcpBudget,
    terms: Terms,
    header: f64,
) -> (f64, Budget<f64>) {
    let (u, b) = match terms {
        Terms::Given(u, b) => (N::from(u), N::from(b)),
        Terms::Carry { rtt_us, s, cwnd } => {
            let (u, _, b) = carry_terms(N::from(rtt_us), N::from(s), N::from(cwnd));
            (u, b)
        }
    };
    let mut budget: Budget<N> = budget.map();
    let fb = departure(&mut budget, u, b, N::from(header), rule);
    (fb.into(), budget.unmap())
}
