//! The PIQI-RCP router module **[reconstructed]** (PROTOCOLS.md §8; the IWQoS 2007 equations are
//! unavailable). The per-packet half is RCP's ([`RateCore`]: arrival bytes, byte-weighted RTT
//! and d0, min(rate, R) written into SYN/REF/DATA at dequeue), so data packets cost what RCP's
//! cost: 2 additions + 2 multiplications (P7).
//!
//! Every Δ (10 ms, first tick at a random phase), with T the interval just ended:
//! ```text
//! y   = in_bytes / T
//! g   = min(1, T/d0)                                  # the interval's share of one RTT
//! N̂   = max(1, y/R̄ + J)                              # flows: usage in units of the rate y reflects, plus newcomers
//! e   = (γC − y) / N̂                                  # per-flow rate error: no queue term
//! R   = clamp(R + K_i·g·e + K_p·(e − e_prev), R_min, γC) ; e_prev = e
//! R̄  += g·(R − R̄) ; J *= 1 − g ; d0 as RCP
//! on a newcomer (a SYN, or a data packet with rtt 0: a flow's first request), on arrival:
//!     R = R·N̂/(N̂ + 1) ; N̂ += 1 ; J += 1              # room for it before it sends
//! ```
//! Why each change to §8's controller (R += K_i·e + K_p·Δe every max(10 ms, d0), N̂ = max(1, y/R)),
//! each checked by the fluid check in `piqi_rcp::fluid` (this router and RCP's, driven by
//! 1 ms fluid steps; 1 Gb/s):
//! - **Gain per RTT, not per interval (P8).** Linearised around γC/N, §8's loop is
//!   r(n+1) = r(n) − K_i·r(n − D) with D the feedback delay in intervals, stable only for
//!   K_i < 2 sin(π/(2(2D − 1))): stability hangs on RTT/Δ, which §8 keeps near 1 by stretching Δ
//!   to d0. Scaling the integral step by T/d0 instead gives r'(t) = −(K_i/d0)·r(t − τ), whose
//!   stability depends only on K_i·τ/d0 (< π/2), not on the delay itself: the same K_i is stable
//!   at 10 ms and at 1 s, and with mixed RTTs while K_i·τ_max/d0 < π/2 (K_i = 0.5 allows the
//!   longest RTT to be 3× the byte-weighted mean). A short fixed Δ then only samples the loop
//!   finely. The queue term stays out (queue-independent): the queue drains through γ < 1.
//! - **Newcomers counted from their first request (P2).** §8 learns of new flows only once their
//!   traffic shows in y, after they have started at the old R: ten flows joining a lone flow
//!   start at ≈γC each, and the overshoot outlasts RCP's. The rate request reaches the routers
//!   with the SYN (or, without handshake, with the one packet a flow sends before it knows a
//!   rate, whose rtt is 0), so the router makes room at once, R·N̂/(N̂+1): the newcomer's SYN-ACK
//!   and the old flows' next ACKs carry the lowered rate, and the peak load is about the old
//!   flows' rate for one RTT plus the newcomers' share. J keeps the newcomers in N̂ (decaying
//!   over one d0) until their traffic shows in y. This is feed-forward on a measured event; the
//!   feedback law stays a PI on the rate error. A FIN needs no such step: the flow's traffic
//!   leaves y within one interval.
//! - **N̂ from the rate y reflects.** y measures rates fed back about one RTT earlier; dividing
//!   by the current R undercounts flows while R rises (N̂ floors at 1 and every flow gets the
//!   whole spare capacity), so flows that start together overshoot. R̄, R averaged over d0, is
//!   the rate y reflects; in steady state R̄ = R and N̂ = y/R as in §8, which still counts a
//!   flow by its usage (mice count for what they send, P6).
//!
//! Defaults: γ 0.95, K_i 0.5 per d0, K_p 0, Δ 10 ms, R0 = 0.05·C and d0 = 200 ms as RCP.

use crate::metrics::{MetricSink, MetricValue};
use crate::packet::{CongHeader, Direction, Kind, Packet};
use crate::params::ParamError;
use crate::rcp::router::{r_min, RateCore};
use crate::rng::SimRng;
use crate::router::{PortView, RouterModule, Verdict};
use crate::time::{secs, Time};
use crate::xcc::ops::{self, Arith, Counted};

use super::params::PiqiRouterParams;

/// Room for one more flow: (R·N̂/(N̂ + 1), N̂ + 1, J + 1).
#[inline]
pub fn admit<N: Arith>(rate: N, n_hat: N, j: N) -> (N, N, N) {
    let one = N::from(1.0);
    let n1 = n_hat + one;
    (rate * n_hat / n1, n1, j + one)
}

/// The PI law of one interval (module docs): returns (R, N̂, e).
#[allow(clippy::too_many_arguments)]
pub fn pi_step(
    p: &PiqiRouterParams,
    r: f64,
    r_bar: f64,
    j: f64,
    e_prev: f64,
    c: f64,
    y: f64,
    g: f64,
    r_min: f64,
) -> (f64, f64, f64) {
    let n_hat = (if r_bar > 0.0 { y / r_bar } else { 0.0 } + j).max(1.0);
    let e = (p.gamma * c - y) / n_hat;
    let next = r + p.k_i * g * e + p.k_p * (e - e_prev);
    (next.max(r_min).min(p.gamma * c), n_hat, e)
}

/// Is this packet a flow's first request: a SYN, or data carrying no RTT yet?
#[inline]
fn newcomer(pkt: &Packet) -> bool {
    pkt.dir == Direction::Forward
        && matches!(pkt.kind, Kind::Syn | Kind::Data)
        && matches!(pkt.cong, CongHeader::Rcp { rtt_us: 0, .. })
}

/// The PIQI-RCP router module.
#[derive(Clone, Debug)]
pub struct PiqiRouter {
    core: RateCore,
    p: PiqiRouterParams,
    /// R averaged over d0 (0 until the first tick after C is known, which starts it at R0).
    r_bar: f64,
    /// The flow count of the last interval, raised by newcomers since.
    n_hat: f64,
    /// Newcomers not yet in y (decaying over d0).
    j: f64,
    e_prev: f64,
    newcomers: u64,
}

impl PiqiRouter {
    /// A module for a port of `capacity_bps` (0: learnt from the first `PortView`), first tick
    /// at a random phase in [0, Δ) from `rng`. Validates `p`.
    pub fn new(p: &PiqiRouterParams, capacity_bps: f64, mut rng: SimRng) -> Result<PiqiRouter, ParamError> {
        p.validate()?;
        let phase = secs(rng.uniform() * p.delta);
        Ok(PiqiRouter::with_phase(p, capacity_bps, phase))
    }

    /// A module whose first tick is at `first_tick` (tests).
    pub fn with_phase(p: &PiqiRouterParams, capacity_bps: f64, first_tick: Time) -> PiqiRouter {
        PiqiRouter {
            core: RateCore::new(p.d0, p.rcp_d0_gain, p.count_ops, first_tick, p.initial_rate, capacity_bps),
            p: p.clone(),
            r_bar: 0.0,
            n_hat: 1.0,
            j: 0.0,
            e_prev: 0.0,
            newcomers: 0,
        }
    }

    pub fn core(&self) -> &RateCore {
        &self.core
    }

    /// R, B/s.
    pub fn rate(&self) -> f64 {
        self.core.rate
    }

    pub fn d0(&self) -> f64 {
        self.core.d0
    }

    /// The flow count N̂ in force.
    pub fn n_hat(&self) -> f64 {
        self.n_hat
    }

    /// Newcomers counted so far.
    pub fn newcomers(&self) -> u64 {
        self.newcomers
    }

    #[cold]
    fn admit_newcomer(&mut self) {
        self.newcomers += 1;
        if self.core.counting() {
            let ((r, n, j), done) = ops::count(|| admit(Counted(self.core.rate), Counted(self.n_hat), Counted(self.j)));
            (self.core.rate, self.n_hat, self.j) = (r.0, n.0, j.0);
            self.core.add_ops(done);
        } else {
            (self.core.rate, self.n_hat, self.j) = admit(self.core.rate, self.n_hat, self.j);
        }
    }
}

impl RouterModule for PiqiRouter {
    fn name(&self) -> &'static str {
        "piqi-rcp"
    }

    #[inline]
    fn on_arrival(&mut self, _now: Time, pkt: &mut Packet, port: &PortView) -> Verdict {
        self.core.arrive(pkt, port);
        if self.p.count_newcomers && newcomer(pkt) {
            self.admit_newcomer();
        }
        Verdict::Forward
    }

    #[inline]
    fn on_departure(&mut self, _now: Time, pkt: &mut Packet, port: &PortView) -> bool {
        self.core.depart(pkt, port)
    }

    fn next_tick(&self) -> Option<Time> {
        Some(self.core.next_tick)
    }

    fn on_tick(&mut self, now: Time, port: &PortView) {
        let Some((t, y, mean)) = self.core.due(now, port) else { return };
        let c = self.core.capacity();
        if t > 0.0 && c > 0.0 {
            if self.r_bar <= 0.0 {
                // R̄ starts at R0, the rate when C became known (R itself may have made room
                // for newcomers since).
                self.r_bar = self.p.initial_rate * c;
            }
            let d0 = self.core.d0;
            let g = (t / d0).min(1.0);
            let r_min = r_min(self.p.r_min_pkts, port, d0).min(self.p.gamma * c);
            let r_ref = if self.p.smoothed_count { self.r_bar } else { self.core.rate };
            let (r, n_hat, e) = pi_step(&self.p, self.core.rate, r_ref, self.j, self.e_prev, c, y, g, r_min);
            self.core.rate = r;
            (self.n_hat, self.e_prev) = (n_hat, e);
            self.r_bar += g * (r - self.r_bar);
            self.j *= 1.0 - g;
            self.core.update_d0(t, mean, r / c);
        }
        self.core.next_tick = now + secs(self.p.delta).max(1);
    }

    fn metrics(&self, out: &mut dyn MetricSink) {
        self.core.metrics(out);
        out.put("n_hat", "flows", MetricValue::Gauge(self.n_hat));
        out.put("newcomers", "flows", MetricValue::Count(self.newcomers));
    }
}
