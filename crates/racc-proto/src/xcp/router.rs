//! The XCP router module of one output port (Katabi, Handley and Rohrs 2002, §3.5 and App. A;
//! docs/PROTOCOLS.md §5).
//!
//! - `on_arrival`: every packet's wire bytes go into the interval's input traffic, before the
//!   buffer check (dropped packets count, docs/PROTOCOLS.md §1); forward XCP data with H_rtt > 0 also
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
//! a·rtt; /cwnd), departure 3 + 2 (fb = pos − neg and the two budgets; ξ_p·, ξ_n·). XCC-Linux
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
use super::control::{control, control_blind, Control};
use super::params::{XcpForm, XcpRouterParams, XcpSpare, D_MIN};
use super::per_packet::{
    arrival_x, arrival_xcp, feedback_in, xcp_data, Budget, Carry, Sums, Terms, NS_PER_S, US_PER_S,
};
use crate::metrics::{MetricSink, MetricValue};
use crate::packet::{CongHeader, Packet};
use crate::rng::SimRng;
use crate::router::{PortView, RouterModule, Verdict};
use crate::time::{secs, to_secs, Time};
use crate::xcc::ops::{self, Counted, OpCounts};
use crate::xcc::CapacityProbe;
use std::collections::VecDeque;

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

impl XcpRouter {
    /// This packet's feedback from the interval's budget (which it draws down), counting the
    /// operations when `count_ops` is on.
    #[inline(always)]
    fn feedback(&mut self, terms: Terms, header: f64) -> f64 {
        let (budget, rule) = (self.budget, self.p.xcp_budget);
        let (fb, b) = if self.p.count_ops {
            let (r, n) = ops::count(|| feedback_in::<Counted>(budget, rule, terms, header));
            self.ops = self.ops + n;
            self.ops_packets += 1;
            r
        } else {
            feedback_in::<f64>(budget, rule, terms, header)
        };
        self.budget = b;
        fb
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
        let h = *feedback as f64;
        if self.p.form == XcpForm::Throughput {
            // H_cwnd's place holds X (ns): pos = ξ_p·X, neg = ξ_n·s, B/s.
            let fb = self.feedback(Terms::Given(size as f64, cwnd as f64), h);
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
        let terms = match mine {
            Some(c) => Terms::Given(c.u, c.b),
            None => Terms::Carry { rtt_us: rtt_us as f64, s: size as f64, cwnd: cwnd.max(1) as f64 },
        };
        let fb = self.feedback(terms, h);
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
