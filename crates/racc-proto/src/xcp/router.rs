//! The XCP router module of one output port (Katabi, Handley and Rohrs 2002, §3.5 and App. A;
//! PROTOCOLS.md §5).
//!
//! - `on_arrival`: every packet's wire bytes go into the interval's input traffic, before the
//!   buffer check (dropped packets count, PROTOCOLS.md §1); forward XCP data with H_rtt > 0 also
//!   into Σ rtt·s/cwnd and Σ rtt²·s/cwnd. Non-XCP bytes (and XCP packets without an RTT yet)
//!   count in y but not in the ξ sums. The queue an arrival finds feeds the persistent queue.
//! - every d (`on_tick`): the efficiency controller φ = α·d·(C − y) − β·Q, the shuffled traffic
//!   h = max(0, γ·y·d − |φ|), and the fairness controller's ξ_p, ξ_n ([`control`]), with the
//!   new d = Σ rtt²·s/cwnd / Σ rtt·s/cwnd (byte-weighted mean RTT) clamped to [1 ms, 1 s].
//!   XCP-b (`spare = "queue"`) replaces C − y by the queue-based spare bandwidth S and Q by
//!   Q − Q_target ([`super::blind`]).
//!   The first tick comes at a random phase in [0, initial_d) from the port's own stream.
//! - persistent queue Q: the minimum queue seen by arrivals over windows of (d − queue/C),
//!   about one propagation delay (App. A), on a second timer.
//! - `on_departure`: forward XCP data get fb = ξ_p·rtt²·s/cwnd − ξ_n·rtt·s, written only if it
//!   is lower than the header's H_feedback, and billed against the interval's budgets
//!   ([`XcpBudget`]); a spent budget zeroes its ξ until the next interval.
//!
//! The per-packet arithmetic is written once over [`Arith`] ([`arrival_xcp`], [`departure`])
//! and counted on the code that runs when `count_ops` is set. The header carries the RTT as an
//! integer count of µs, so the fast path works in µs and the interval's constants are scaled
//! once per tick (no unit conversion per packet); what an arrival computes that the departure
//! needs (rtt·s and rtt²·s/cwnd) is kept beside the buffer in arrival order, as a router keeps
//! per-packet metadata. Per XCP data packet through the port that is 6 additions,
//! 4 multiplications and 1 division by H_cwnd: arrival 3 + 2 + 1 (input bytes, Σa, Σb; rtt·s,
//! a·rtt; /cwnd), departure 3 + 2 (fb = pos − neg and the two budgets; ξ_p·, ξ_n·). Seed 004
//! says 6 additions + 3 multiplications; see `ops_per_packet` in the tests for why four
//! products is the least these quantities need in this form.
//!
//! **Throughput form** (`form = "throughput"`, [`XcpForm`]): the header carries X = rtt·s/cwnd
//! (ns) in H_cwnd's place and the feedback is a throughput change (B/s). Arrival:
//! input bytes + s, Σa + X, Σb + X·rtt ([`arrival_x`]: 3 additions, 1 multiplication, no
//! division); departure: pos = ξ_p·X and neg = ξ_n·s ([`departure`] on (s, X): 3 additions,
//! 2 multiplications), with the budgets of the interval divided by d. 6 + 3 per packet, as
//! XCC-Linux counts, and nothing is carried across the buffer.

use super::blind::BlindSpare;
use super::params::{XcpBudget, XcpForm, XcpRouterParams, XcpSpare, D_MAX, D_MIN};
use crate::metrics::{MetricSink, MetricValue};
use crate::packet::{CongHeader, Direction, Kind, Packet};
use crate::rng::SimRng;
use crate::router::{PortView, RouterModule, Verdict};
use crate::time::{secs, to_secs, Time};
use crate::xcc::ops::{self, Arith, Counted, OpCounts};
use crate::xcc::CapacityProbe;
use std::collections::VecDeque;

/// µs per second: the header's RTT unit.
const US_PER_S: f64 = 1e6;
/// ns per second: the unit of the throughput form's X.
const NS_PER_S: f64 = 1e9;

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
/// it across its own queue and the wire format stays PROTOCOLS.md §1's). The identifying
/// fields let a departure check that the entry is its own; one that is not (a packet left
/// the queue unseen) recomputes.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Carry {
    flow: u32,
    rtt_us: u32,
    cwnd: u32,
    size: u32,
    /// rtt·s (µs·B) and rtt²·s/cwnd (µs²).
    u: f64,
    b: f64,
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
    fn map<N: Arith>(self) -> Budget<N> {
        Budget {
            k_p: self.k_p.into(),
            k_n: self.k_n.into(),
            res_pos: self.res_pos.into(),
            res_neg: self.res_neg.into(),
        }
    }
}

impl<N: Arith> Budget<N> {
    fn unmap(self) -> Budget<f64> {
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

/// The XCP router module.
#[derive(Clone, Debug)]
pub struct XcpRouter {
    p: XcpRouterParams,
    sums: Sums,
    /// The decision in force (d, ξ, ...).
    ctrl: Control,
    budget: Budget<f64>,
    last_tick: Time,
    next_ctrl: Time,
    /// Persistent queue: the minimum queue arrivals saw in the last window, bytes, and the
    /// running minimum of the current window.
    q_persistent: u64,
    q_running_min: u64,
    next_q: Time,
    /// Arrival-order [`Carry`] of the XCP data packets in the buffer.
    carried: VecDeque<Carry>,
    /// Departures whose carried entry was missing or not their own.
    carry_misses: u64,
    ops: OpCounts,
    ops_packets: u64,
    /// C: the port's capacity, or the probed estimate (`capacity = "probe"`).
    probe: CapacityProbe,
    /// XCP-b's spare bandwidth from the queue (`spare = "queue"`), the bytes that left in the
    /// interval and the last interval's output rate (B/s: the queue window's drain rate, C
    /// being unknown).
    blind: BlindSpare,
    out_bytes: f64,
    drain: f64,
}

impl XcpRouter {
    /// A module whose first control tick comes at a phase drawn uniformly in [0, initial_d)
    /// from `rng` (the port's own stream). Validates `p`.
    pub fn new(p: &XcpRouterParams, mut rng: SimRng) -> Result<XcpRouter, crate::params::ParamError> {
        p.validate()?;
        let phase = rng.below(secs(p.initial_d).max(1));
        Ok(XcpRouter::with_phase(p, phase))
    }

    /// A module whose first tick is at `phase` (tests). `p` must be valid.
    pub fn with_phase(p: &XcpRouterParams, phase: Time) -> XcpRouter {
        XcpRouter {
            p: p.clone(),
            sums: Sums::default(),
            ctrl: Control { d: p.initial_d, y: 0.0, phi: 0.0, h: 0.0, xi_p: 0.0, xi_n: 0.0, pos: 0.0, neg: 0.0 },
            budget: Budget { k_p: 0.0, k_n: 0.0, res_pos: 0.0, res_neg: 0.0 },
            last_tick: 0,
            next_ctrl: phase,
            q_persistent: 0,
            q_running_min: u64::MAX,
            next_q: phase,
            carried: VecDeque::with_capacity(1024),
            carry_misses: 0,
            ops: OpCounts::default(),
            ops_packets: 0,
            probe: CapacityProbe::new(p.capacity, p.probe_alpha, p.initial_capacity_bps, 0.0),
            blind: BlindSpare::default(),
            out_bytes: 0.0,
            drain: 0.0,
        }
    }

    /// The capacity in force (the port's, or the probe's estimate), B/s; 0 before known.
    pub fn capacity(&self) -> f64 {
        self.probe.capacity()
    }

    /// The decision in force.
    pub fn control(&self) -> &Control {
        &self.ctrl
    }

    pub fn sums(&self) -> &Sums {
        &self.sums
    }

    /// What is left of the interval's budgets and the per-packet coefficients (header units).
    pub fn budget(&self) -> &Budget<f64> {
        &self.budget
    }

    /// Departures that found no carried entry of their own and recomputed it.
    pub fn carry_misses(&self) -> u64 {
        self.carry_misses
    }

    /// Reserve room for `n` carried entries (a port's buffer in packets), so that the per-packet
    /// path does not allocate.
    pub fn reserve(&mut self, n: usize) {
        self.carried.reserve(n.saturating_sub(self.carried.len()));
    }

    /// When the current control interval ends.
    pub fn next_control(&self) -> Time {
        self.next_ctrl
    }

    pub fn persistent_queue(&self) -> u64 {
        self.q_persistent
    }

    /// Arithmetic counted so far (with `count_ops`) and the XCP data packets it was for.
    pub fn ops(&self) -> (OpCounts, u64) {
        (self.ops, self.ops_packets)
    }

    fn end_interval(&mut self, now: Time, port: &PortView) {
        let elapsed = to_secs(now.saturating_sub(self.last_tick));
        self.probe.learn(port.capacity_bps);
        let c = self.probe.end_interval(elapsed, port.queue_pkts);
        self.ctrl = match self.p.spare {
            XcpSpare::Capacity => control(&self.p, &self.sums, elapsed, c, self.q_persistent as f64, self.ctrl.d),
            XcpSpare::Queue => {
                let (blind, p) = (&mut self.blind, &self.p);
                let q_target = p.q_target_pkts * port.mean_pkt_size as f64;
                let spare = |y| blind.end_interval(p, elapsed, y, port.queue_bytes);
                let q = self.q_persistent as f64;
                self.drain = if elapsed > 0.0 { self.out_bytes / elapsed } else { 0.0 };
                self.out_bytes = 0.0;
                control_blind(p, &self.sums, elapsed, spare, q, q_target, self.ctrl.d)
            }
        };
        self.budget = match self.p.form {
            XcpForm::Window => Budget {
                k_p: self.ctrl.xi_p / (US_PER_S * US_PER_S),
                k_n: self.ctrl.xi_n / US_PER_S,
                res_pos: self.ctrl.pos,
                res_neg: self.ctrl.neg,
            },
            // Per packet ξ_p·X (X in ns) and ξ_n·s, B/s; the budgets in B/s.
            XcpForm::Throughput => Budget {
                k_p: self.ctrl.xi_p / NS_PER_S,
                k_n: self.ctrl.xi_n,
                res_pos: self.ctrl.pos / self.ctrl.d,
                res_neg: self.ctrl.neg / self.ctrl.d,
            },
        };
        self.sums = Sums::default();
        self.last_tick = now;
        self.next_ctrl = now + secs(self.ctrl.d).max(1);
    }

    /// The persistent queue of the window that ends now.
    fn end_queue_window(&mut self, port: &PortView) {
        self.q_persistent = self.q_running_min.min(port.queue_bytes);
        self.q_running_min = u64::MAX;
    }

    /// The next queue window: d − queue/C, at least 1 ms, with the d in force.
    fn next_queue_window(&mut self, now: Time, port: &PortView) {
        let c = if self.p.spare == XcpSpare::Queue {
            self.drain
        } else if self.probe.probing() {
            self.probe.capacity()
        } else {
            port.capacity_bps / 8.0
        };
        let queue_delay = if c > 0.0 { port.queue_bytes as f64 / c } else { 0.0 };
        self.next_q = now + secs((self.ctrl.d - queue_delay).max(D_MIN));
    }
}

/// H_rtt and H_cwnd (X in the throughput form) of a forward XCP data packet.
#[inline]
fn xcp_data(pkt: &Packet) -> Option<(u32, u32)> {
    match pkt.cong {
        CongHeader::Xcp { rtt_us, cwnd, .. } if pkt.kind == Kind::Data && pkt.dir == Direction::Forward => {
            Some((rtt_us, cwnd))
        }
        _ => None,
    }
}

impl RouterModule for XcpRouter {
    fn name(&self) -> &'static str {
        "xcp"
    }

    #[inline]
    fn on_arrival(&mut self, _now: Time, pkt: &mut Packet, port: &PortView) -> Verdict {
        self.q_running_min = self.q_running_min.min(port.queue_bytes);
        if self.probe.probing() {
            self.probe.see_queue(port.queue_pkts);
        }
        let s = pkt.size as f64;
        match xcp_data(pkt) {
            Some((rtt_us, x_ns)) if rtt_us > 0 && self.p.form == XcpForm::Throughput => {
                let (rtt, x) = (rtt_us as f64, x_ns as f64);
                let Sums { in_bytes, sum_a, sum_b, .. } = self.sums;
                let (i, a, b) = if self.p.count_ops {
                    let ((i, a, b), n) = ops::count(|| {
                        arrival_x::<Counted>(
                            in_bytes.into(),
                            sum_a.into(),
                            sum_b.into(),
                            rtt.into(),
                            s.into(),
                            x.into(),
                        )
                    });
                    self.ops = self.ops + n;
                    (i.0, a.0, b.0)
                } else {
                    arrival_x(in_bytes, sum_a, sum_b, rtt, s, x)
                };
                (self.sums.in_bytes, self.sums.sum_a, self.sums.sum_b) = (i, a, b);
            }
            Some((rtt_us, cwnd)) if rtt_us > 0 => {
                let (rtt, cw) = (rtt_us as f64, cwnd.max(1) as f64);
                let Sums { in_bytes, sum_a, sum_b, .. } = self.sums;
                let ((i, a, b), (u, rb)) = if self.p.count_ops {
                    let (r, n) = ops::count(|| {
                        let ((i, a, b), (u, rb)) = arrival_xcp::<Counted>(
                            in_bytes.into(),
                            sum_a.into(),
                            sum_b.into(),
                            rtt.into(),
                            s.into(),
                            cw.into(),
                        );
                        ((i.into(), a.into(), b.into()), (u.into(), rb.into()))
                    });
                    self.ops = self.ops + n;
                    r
                } else {
                    arrival_xcp(in_bytes, sum_a, sum_b, rtt, s, cw)
                };
                (self.sums.in_bytes, self.sums.sum_a, self.sums.sum_b) = (i, a, b);
                self.carried.push_back(Carry { flow: pkt.flow, rtt_us, cwnd, size: pkt.size, u, b: rb });
            }
            _ => {
                self.sums.in_bytes += s;
                self.sums.other_bytes += s;
            }
        }
        Verdict::Forward
    }

    /// The buffer dropped the packet that just arrived: its carried entry is the last one.
    fn on_buffer_drop(&mut self, _now: Time, pkt: &Packet, _port: &PortView) {
        if self.p.form == XcpForm::Throughput {
            return;
        }
        if let Some((rtt_us, cwnd)) = xcp_data(pkt) {
            if rtt_us > 0 {
                let last = self.carried.back();
                if last.is_some_and(|c| (c.flow, c.rtt_us, c.cwnd, c.size) == (pkt.flow, rtt_us, cwnd, pkt.size)) {
                    self.carried.pop_back();
                }
            }
        }
    }

    #[inline]
    fn on_departure(&mut self, _now: Time, pkt: &mut Packet, port: &PortView) -> bool {
        if self.probe.probing() {
            self.probe.see_queue(port.queue_pkts);
            self.probe.on_departure(pkt.size);
        }
        if self.p.spare == XcpSpare::Queue {
            self.out_bytes += pkt.size as f64;
        }
        let Some((rtt_us, cwnd)) = xcp_data(pkt) else {
            return false;
        };
        let (flow, size) = (pkt.flow, pkt.size);
        let CongHeader::Xcp { feedback, .. } = &mut pkt.cong else {
            return false;
        };
        if rtt_us == 0 {
            // No RTT estimate: no share of the budgets, but never more than 0.
            if *feedback > 0.0 {
                *feedback = 0.0;
            }
            return false;
        }
        if self.p.form == XcpForm::Throughput {
            // H_cwnd's place holds X (ns): pos = ξ_p·X, neg = ξ_n·s, B/s.
            let (x, s, h) = (cwnd as f64, size as f64, *feedback as f64);
            let (budget, rule) = (self.budget, self.p.xcp_budget);
            let (fb, b) = if self.p.count_ops {
                let (r, n) = ops::count(|| {
                    let mut b: Budget<Counted> = budget.map();
                    let fb = departure(&mut b, Counted(s), Counted(x), Counted(h), rule);
                    (fb.0, b.unmap())
                });
                self.ops = self.ops + n;
                self.ops_packets += 1;
                r
            } else {
                let mut b = budget;
                (departure(&mut b, s, x, h, rule), b)
            };
            self.budget = b;
            if fb < h {
                *feedback = fb as f32;
            }
            return false;
        }
        // This packet's carried entry: the oldest one, unless packets left unseen.
        let mut mine = None;
        while let Some(c) = self.carried.pop_front() {
            if (c.flow, c.rtt_us, c.cwnd, c.size) == (flow, rtt_us, cwnd, size) {
                mine = Some(c);
                break;
            }
        }
        if mine.is_none() {
            self.carry_misses += 1;
        }
        let (rtt, s, cw, h) = (rtt_us as f64, size as f64, cwnd.max(1) as f64, *feedback as f64);
        let (budget, rule) = (self.budget, self.p.xcp_budget);
        let (fb, b) = if self.p.count_ops {
            let (r, n) = ops::count(|| {
                let (u, rb) = match mine {
                    Some(c) => (Counted(c.u), Counted(c.b)),
                    None => {
                        let (u, _, rb) = carry_terms(Counted(rtt), Counted(s), Counted(cw));
                        (u, rb)
                    }
                };
                let mut b: Budget<Counted> = budget.map();
                let fb = departure(&mut b, u, rb, Counted(h), rule);
                (fb.0, b.unmap())
            });
            self.ops = self.ops + n;
            self.ops_packets += 1;
            r
        } else {
            let (u, rb) = match mine {
                Some(c) => (c.u, c.b),
                None => {
                    let (u, _, rb) = carry_terms(rtt, s, cw);
                    (u, rb)
                }
            };
            let mut b = budget;
            (departure(&mut b, u, rb, h, rule), b)
        };
        self.budget = b;
        if fb < h {
            *feedback = fb as f32;
        }
        false
    }

    fn next_tick(&self) -> Option<Time> {
        Some(self.next_ctrl.min(self.next_q))
    }

    fn on_tick(&mut self, now: Time, port: &PortView) {
        // Q first, so that the control uses the freshest window; the next window after the
        // control, so that it spans the new d.
        let q_due = now >= self.next_q;
        if q_due {
            self.end_queue_window(port);
        }
        if now >= self.next_ctrl {
            self.end_interval(now, port);
        }
        if q_due {
            self.next_queue_window(now, port);
        }
    }

    fn metrics(&self, out: &mut dyn MetricSink) {
        out.put("xi_p", "B/s^2", MetricValue::Gauge(self.ctrl.xi_p));
        out.put("xi_n", "1/s", MetricValue::Gauge(self.ctrl.xi_n));
        out.put("control_interval_s", "s", MetricValue::Gauge(self.ctrl.d));
        out.put("persistent_queue_bytes", "bytes", MetricValue::Gauge(self.q_persistent as f64));
        if self.probe.probing() {
            self.probe.metrics(out);
        }
        if self.p.spare == XcpSpare::Queue {
            self.blind.metrics(out);
        }
        self.ops.report(self.ops_packets, out);
    }
}
