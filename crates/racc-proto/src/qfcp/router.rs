//! The QFCP router module of one output port (QFCP §II; docs/PROTOCOLS.md §9).
//!
//! - `on_arrival` (before the buffer check, so packets the buffer then drops count): every
//!   packet's wire bytes go into the input traffic y, return-path ACKs included (below); a
//!   header RTT (> 0) into the interval's RTT sum; a QFCP packet of the data path leaves with
//!   rate_request = min(rate_request, R) (seed: "when a packet arrives at a router, the
//!   controller compares the value in the rate-request field with its own fair-share rate and
//!   copies the smaller value back"). The queue it finds feeds the interval's minimum queue q.
//! - `on_buffer_drop`: the dropped bytes join the virtual queue q + drops (eq. 6).
//! - `on_departure`: the output bytes and the queue it leaves, for the capacity probe (eq. 4)
//!   and the minimum queue.
//! - every T (`on_tick`; first tick at a random phase in [0, T0) from the port's own stream),
//!   [`control`]: N = max(1, y/R(t − T)) (eq. 1), then R = clamp((C − β·q_v/T)/N, R_min, C)
//!   (eq. 2) with C the probed estimate when probing, and T moves towards the mean RTT of the
//!   packets seen ("T is set to be a moving average of RTTs of seen packets").
//!
//! y is "the input traffic rate" of the port, every packet that arrives: return-path packets
//! (ACKs of flows the other way) count as well as data [reconstructed]. Eqs. (1) and (2) hold R
//! where y = C − β·q/T, so y must count all the traffic the port's C serves: the probe's C is
//! the output of every packet (eq. 4: "the output traffic rate"), and with ACKs left out of y
//! the fixed point keeps a standing queue of (ACK rate)·T/β and R rises whenever it is
//! smaller. On a shared medium (`router_scope = "medium"`, QFCP §III.B: the controller
//! "takes control of all packets in both directions") the uploads' ACKs then held the access
//! point's queue full and its downloads starved (docs/PROTOCOLS.md §9, "Both directions"). An ACK
//! stream counts in N = y/R as the fraction of a flow its rate is of R: the share of C it
//! takes. Only data-path packets carry a request to lower.
//!
//! Joins [racc; QFCP §II is silent on what a SYN gets]: N = y/R counts a flow only once its
//! traffic arrives, a round trip after its SYN, so on a quiet port every SYN of an interval read
//! R = C and n simultaneous first windows were n BDPs (docs/PROTOCOLS.md §9, "Starts"). A SYN
//! beyond the interval's usual number (a moving average of the joins per interval, which y
//! already carries in steady arrivals) counts as a flow at once: R = (C − β·q_v/T)/(y/R + k) for
//! every packet for the rest of the interval, k the excess joins, and the k flows join the next
//! interval's N (eq. 1), whose y does not hold them yet. The excess joins' grants together come
//! out of a headroom, C − y plus half the free buffer per T, as Quick-Start's routers grant only
//! what is spare (RFC 4782, whose framework QFCP §II extends); a SYN past it gets R_min and
//! learns its rate from its first ACK.
//!
//! Per-packet arithmetic: 1 addition per arrival (y), 2 more per data-path packet with an RTT
//! (Σrtt, the RTT count); 1 more per departure (output bytes) for the probe. The rate stamp is a
//! comparison, the minimum queue comparisons.

use super::params::{QfcpRouterParams, T_MAX, T_MIN};
use crate::metrics::{MetricSink, MetricValue};
use crate::packet::{CongHeader, Direction, Kind, Packet};
use crate::rcp::router::header_rate;
use crate::rng::SimRng;
use crate::router::{PortView, RouterModule, Verdict};
use crate::time::{secs, to_secs, Time};
use crate::xcc::CapacityProbe;

/// The wire size R_min is counted in when the port does not know its packet size.
const DEFAULT_PKT: f64 = 1000.0;

/// What an interval has seen.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Interval {
    /// Wire bytes of every arrival (both paths), dropped ones included.
    pub in_bytes: f64,
    /// Σ header RTT over the arrivals that carried one, µs, and their number.
    pub rtt_sum_us: f64,
    pub rtt_n: f64,
    /// Wire bytes the buffer dropped (both paths).
    pub drop_bytes: f64,
    /// Minimum queue seen, bytes.
    pub q_min_bytes: u64,
    /// SYNs (new flows) seen, data path.
    pub joins: f64,
}

/// One control decision (QFCP eqs. 1, 2, 6), SI units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Control {
    /// Input rate of the interval, B/s.
    pub y: f64,
    /// Flow-count estimate N = max(1, y/R(t − T)).
    pub n: f64,
    /// Virtual queue q + drops, bytes.
    pub q_virtual: f64,
    /// The new fair-share rate, B/s.
    pub rate: f64,
    /// The new control interval T, s.
    pub t: f64,
    /// The flows y/R counted, unfloored (0 on an idle port), with the last interval's joins.
    pub n_seen: f64,
    /// The numerator of eq. (2), C − β·q_v/T (B/s), which joins share.
    pub share: f64,
}

/// The end of an interval of `elapsed` s: `rate` the R in force during it (R(t − T)), `c` the
/// capacity (B/s), `t` the control interval in force (s), `r_min` B/s. Eq. (1): N = y/R,
/// floored at 1 [reconstructed: an idle or application-limited port would give R > C];
/// eq. (6): q_v = q_min + drops; eq. (2): R = (C − β·q_v/T)/N within [r_min, C]; T follows
/// the mean RTT seen with gain `p.t_gain` within [1 ms, 1 s].
#[allow(clippy::too_many_arguments)]
pub fn control(
    p: &QfcpRouterParams,
    iv: &Interval,
    elapsed: f64,
    rate: f64,
    c: f64,
    t: f64,
    r_min: f64,
    joins: f64,
) -> Control {
    let y = if elapsed > 0.0 { iv.in_bytes / elapsed } else { 0.0 };
    let seen = if rate > 0.0 { y / rate } else { 0.0 };
    let n_seen = seen + if p.count_joins { joins } else { 0.0 };
    let n = n_seen.max(1.0);
    let q_virtual = iv.q_min_bytes as f64 + iv.drop_bytes;
    let share = c - p.beta * q_virtual / t;
    let next = (share / n).max(r_min).min(c.max(r_min));
    let t_next = if iv.rtt_n > 0.0 {
        let mean = iv.rtt_sum_us / iv.rtt_n * 1e-6;
        (t + p.t_gain * (mean - t)).clamp(T_MIN, T_MAX)
    } else {
        t
    };
    Control { y, n, q_virtual, rate: next, t: t_next, n_seen, share }
}

/// The QFCP router module.
#[derive(Clone, Debug)]
pub struct QfcpRouter {
    p: QfcpRouterParams,
    iv: Interval,
    /// The decision in force (R, T, N, ...).
    ctrl: Control,
    /// The rate stamped now: R, lowered by the joins seen in this interval.
    granted: f64,
    r_min: f64,
    /// Joins per interval, moving average (the usual arrivals, already in y).
    join_avg: f64,
    /// What this interval's excess joins may still be granted together, B/s.
    headroom: f64,
    probe: CapacityProbe,
    last_tick: Time,
    next_tick: Time,
    /// Data-path packets whose request this port lowered.
    lowered: u64,
    drops: u64,
}

impl QfcpRouter {
    /// A module for a port of `capacity_bps` (0: learnt from the first `PortView`), first tick
    /// at a random phase in [0, initial_t) from `rng`. Validates `p`.
    pub fn new(
        p: &QfcpRouterParams,
        capacity_bps: f64,
        mut rng: SimRng,
    ) -> Result<QfcpRouter, crate::params::ParamError> {
        p.validate()?;
        let phase = rng.below(secs(p.initial_t).max(1));
        Ok(QfcpRouter::with_phase(p, capacity_bps, phase))
    }

    /// A module whose first tick is at `first_tick` (tests). `p` must be valid.
    pub fn with_phase(p: &QfcpRouterParams, capacity_bps: f64, first_tick: Time) -> QfcpRouter {
        let probe = CapacityProbe::new(p.capacity, p.alpha, p.initial_capacity_bps, capacity_bps);
        QfcpRouter {
            p: p.clone(),
            // The port starts empty: the first interval's minimum queue starts at 0.
            iv: Interval::default(),
            // Initial R = C [reconstructed].
            ctrl: Control {
                y: 0.0,
                n: 1.0,
                q_virtual: 0.0,
                rate: probe.capacity(),
                t: p.initial_t,
                n_seen: 0.0,
                share: probe.capacity(),
            },
            granted: probe.capacity(),
            probe,
            last_tick: 0,
            next_tick: first_tick,
            lowered: 0,
            drops: 0,
            r_min: p.r_min_pkts * DEFAULT_PKT / p.initial_t,
            join_avg: 0.0,
            headroom: f64::NAN,
        }
    }

    fn learn(&mut self, port: &PortView) {
        if self.probe.capacity() <= 0.0 {
            self.probe.learn(port.capacity_bps);
            self.ctrl.rate = self.probe.capacity();
            self.ctrl.share = self.ctrl.rate;
            self.granted = self.ctrl.rate;
        }
    }

    /// The decision in force.
    pub fn control(&self) -> &Control {
        &self.ctrl
    }

    /// R, B/s.
    pub fn rate(&self) -> f64 {
        self.ctrl.rate
    }

    /// The rate stamped now: R lowered by this interval's joins, B/s.
    pub fn granted(&self) -> f64 {
        self.granted
    }

    /// The capacity in force (told or probed), B/s.
    pub fn capacity(&self) -> f64 {
        self.probe.capacity()
    }

    pub fn interval(&self) -> &Interval {
        &self.iv
    }

    #[inline]
    fn see_queue(&mut self, port: &PortView) {
        self.iv.q_min_bytes = self.iv.q_min_bytes.min(port.queue_bytes);
        self.probe.see_queue(port.queue_pkts);
    }

    /// A SYN: the rate its flow starts at. Joins beyond the usual number per interval are
    /// counted as flows for the rest of the interval (R lowered for every packet), and their
    /// grants come out of the interval's headroom.
    fn join(&mut self) -> f64 {
        self.iv.joins += 1.0;
        let excess = self.iv.joins - self.join_avg;
        if !self.p.count_joins || excess <= 0.0 {
            return self.granted;
        }
        let n = (self.ctrl.n_seen + excess).max(1.0);
        let c = self.probe.capacity();
        self.granted = self.granted.min((self.ctrl.share / n).max(self.r_min).min(c.max(self.r_min)));
        let g = self.granted.min(self.headroom).max(self.r_min);
        self.headroom = (self.headroom - g).max(0.0);
        g
    }

    /// The rate new flows may take together in the interval starting now: what the last one
    /// left unused plus the free buffer drained over T, B/s.
    fn open_headroom(&mut self, port: &PortView) {
        let limit = if port.limit_bytes != u64::MAX {
            port.limit_bytes as f64
        } else {
            let s = if port.mean_pkt_size > 0 { port.mean_pkt_size as f64 } else { DEFAULT_PKT };
            port.limit_pkts as f64 * s
        };
        let free = (limit - port.queue_bytes as f64).max(0.0);
        self.headroom = (self.ctrl.share - self.ctrl.y).max(0.0) + self.p.join_buffer * free / self.ctrl.t;
    }
}

impl RouterModule for QfcpRouter {
    fn name(&self) -> &'static str {
        "qfcp"
    }

    #[inline]
    fn on_arrival(&mut self, _now: Time, pkt: &mut Packet, port: &PortView) -> Verdict {
        self.learn(port);
        if self.headroom.is_nan() {
            self.open_headroom(port);
        }
        self.see_queue(port);
        self.iv.in_bytes += pkt.size as f64;
        if pkt.dir != Direction::Forward {
            return Verdict::Forward;
        }
        if let CongHeader::Qfcp { rtt_us, rate_request, .. } = &mut pkt.cong {
            if *rtt_us > 0 {
                self.iv.rtt_sum_us += *rtt_us as f64;
                self.iv.rtt_n += 1.0;
            }
            let grant = if pkt.kind == Kind::Syn { self.join() } else { self.granted };
            let r = header_rate(grant);
            if *rate_request > r {
                *rate_request = r;
                self.lowered += 1;
            }
        }
        Verdict::Forward
    }

    fn on_buffer_drop(&mut self, _now: Time, pkt: &Packet, _port: &PortView) {
        // What y counted and the port did not serve (eq. 6).
        self.iv.drop_bytes += pkt.size as f64;
        self.drops += 1;
    }

    #[inline]
    fn on_departure(&mut self, _now: Time, pkt: &mut Packet, port: &PortView) -> bool {
        self.see_queue(port);
        self.probe.on_departure(pkt.size);
        false
    }

    fn next_tick(&self) -> Option<Time> {
        Some(self.next_tick)
    }

    fn on_tick(&mut self, now: Time, port: &PortView) {
        if now < self.next_tick {
            return;
        }
        self.learn(port);
        self.see_queue(port);
        let elapsed = to_secs(now.saturating_sub(self.last_tick));
        let c = self.probe.end_interval(elapsed, port.queue_pkts);
        if elapsed > 0.0 && c > 0.0 {
            let s = if port.mean_pkt_size > 0 { port.mean_pkt_size as f64 } else { DEFAULT_PKT };
            let r_min = self.p.r_min_pkts * s / self.ctrl.t;
            let excess = (self.iv.joins - self.join_avg).max(0.0);
            self.ctrl = control(&self.p, &self.iv, elapsed, self.ctrl.rate, c, self.ctrl.t, r_min, excess);
            self.r_min = r_min;
        }
        self.join_avg += self.p.t_gain * (self.iv.joins - self.join_avg);
        self.granted = self.ctrl.rate;
        self.open_headroom(port);
        self.iv = Interval { q_min_bytes: port.queue_bytes, ..Interval::default() };
        self.last_tick = now;
        self.next_tick = now + secs(self.ctrl.t).max(1);
    }

    fn metrics(&self, out: &mut dyn MetricSink) {
        out.put("fair_rate_bps", "bit/s", MetricValue::Gauge(self.ctrl.rate * 8.0));
        out.put("flow_estimate", "flows", MetricValue::Gauge(self.ctrl.n));
        out.put("granted_rate_bps", "bit/s", MetricValue::Gauge(self.granted * 8.0));
        out.put("input_rate_bps", "bit/s", MetricValue::Gauge(self.ctrl.y * 8.0));
        out.put("control_interval_s", "s", MetricValue::Gauge(self.ctrl.t));
        out.put("virtual_queue_bytes", "bytes", MetricValue::Gauge(self.ctrl.q_virtual));
        out.put("requests_lowered", "packets", MetricValue::Count(self.lowered));
        self.probe.metrics(out);
    }
}
