//! The RCP router module of one output port (docs/PROTOCOLS.md §6; Dukkipati et al. [checked]), and
//! [`RateCore`], the per-packet half it shares with PIQI-RCP (`piqi_rcp`).
//!
//! - `on_arrival` (before the buffer check, so packets the buffer then drops count): every
//!   forward packet's wire bytes go into `in_bytes`; a packet whose RCP header carries an RTT
//!   (> 0) adds rtt·wire to the byte-weighted RTT sum, one without adds its bytes to the bytes
//!   that carry no RTT (so the weight of the sum is in_bytes less those, with no third
//!   accumulator on the common path). Return-path packets (ACKs) are not counted: the brief's
//!   "every arriving forward packet".
//! - `on_departure` (dequeue): SYN, REF and DATA packets of the data path leave with
//!   rate = min(rate, R) (rate protocols aggregate the min over the path, docs/PROTOCOLS.md §1).
//!   Stamping at dequeue rather than arrival: the packet carries the R in force when it leaves,
//!   so the feedback reaching the senders is one propagation RTT old whatever the queue (at
//!   arrival it would also be a queueing delay older: a full buffer's worth when the queue is
//!   longest, which is when fresh feedback matters most). ns-2's RCP queue also writes the
//!   rate at dequeue; VCP marks at dequeue for the same reason.
//! - every T = min(T_slot, d0), first tick at a random phase in [0, T) drawn from the port's
//!   own stream: y = in_bytes/T (T the interval just ended),
//!   R = clamp(R·(1 + (T/d0)·(α(C − y) − β·q/d0)/C), R_min, C) with q the instantaneous queue,
//!   then d0 follows the interval's byte-weighted mean RTT ([`D0Gain`]).
//!
//! Per-packet arithmetic (XCC-Linux: RCP 2 additions + 2 multiplications): in_bytes + wire,
//! rtt_µs·1e-6 (the header's µs to seconds), ·wire, + into the sum: 2 + 2, exactly, on every
//! packet with an RTT; a packet without one costs 2 additions. The stamp is a comparison.
//! Counted on the code that runs when `count_ops = true` (xcc::ops).

use super::params::{D0Gain, RcpRouterParams, Stamp};
use crate::metrics::{MetricSink, MetricValue};
use crate::packet::{CongHeader, Direction, Kind, Packet};
use crate::rng::SimRng;
use crate::router::{PortView, RouterModule, Verdict};
use crate::time::{secs, to_secs, Time};
use crate::xcc::ops::{self, Arith, OpCounts};

/// µs to seconds.
const US: f64 = 1e-6;

/// The per-packet path for a packet carrying an RTT: (in_bytes + wire, rtt_w + rtt·wire), rtt
/// converted from the header's µs. 2 additions + 2 multiplications.
#[inline]
pub fn account<N: Arith>(in_bytes: N, rtt_w: N, wire: N, rtt_us: N) -> (N, N) {
    let rtt_s = rtt_us * N::from(US);
    (in_bytes + wire, rtt_w + rtt_s * wire)
}

/// The per-packet path for a packet without an RTT: (in_bytes + wire, no_rtt + wire).
/// 2 additions.
#[inline]
pub fn account_no_rtt<N: Arith>(in_bytes: N, no_rtt: N, wire: N) -> (N, N) {
    (in_bytes + wire, no_rtt + wire)
}

/// Is this a packet a rate router stamps: SYN, REF or DATA of the data path with a rate header?
#[inline]
pub fn stamped(pkt: &Packet) -> bool {
    pkt.dir == Direction::Forward
        && matches!(pkt.kind, Kind::Data | Kind::Syn | Kind::Ref)
        && matches!(pkt.cong, CongHeader::Rcp { .. })
}

/// A rate in B/s as the header's u32 (0xFFFF_FFFF means "no limit", so a rate is at most one
/// below; at least 1 B/s).
#[inline]
pub fn header_rate(r: f64) -> u32 {
    r.clamp(1.0, (u32::MAX - 1) as f64) as u32
}

/// What RCP and PIQI-RCP routers share: the port's capacity C (and R's start, a fraction of
/// it), the arrival counters, the byte-weighted RTT and d0, the rate R written into passing
/// headers, the tick clock, and the operation tallies; and the module glue around them
/// ([`RateCore::arrive`], [`RateCore::depart`], [`RateCore::due`]).
#[derive(Clone, Debug)]
pub struct RateCore {
    /// R, B/s (0 until the port's capacity is known).
    pub rate: f64,
    /// C, B/s (0 until known).
    c: f64,
    /// R when C becomes known, as a fraction of C.
    initial_rate: f64,
    /// Where R is written into passing headers.
    stamp_at: Stamp,
    /// The mean RTT estimate d0, s.
    pub d0: f64,
    in_bytes: f64,
    rtt_w: f64,
    no_rtt_bytes: f64,
    /// When the current interval began.
    last_tick: Time,
    /// The next tick.
    pub next_tick: Time,
    gain: D0Gain,
    count_ops: bool,
    ops: OpCounts,
    ops_packets: u64,
}

/// A router module around a [`RateCore`]: RCP's rate controller (RCP §3) and PIQI-RCP's, which
/// keeps R and d0 the same way (PIQI-RCP §III). The read-outs both give.
pub trait RateController {
    fn core(&self) -> &RateCore;

    /// R, B/s.
    #[inline]
    fn rate(&self) -> f64 {
        self.core().rate
    }

    /// The mean RTT estimate d0, s.
    #[inline]
    fn d0(&self) -> f64 {
        self.core().d0
    }
}

impl RateCore {
    /// d0 = `d0` s, first tick at `first_tick`; R = `initial_rate`·C from when the port's
    /// capacity is known (`capacity_bps`, or 0: learnt from the first `PortView`).
    pub fn new(
        d0: f64,
        gain: D0Gain,
        count_ops: bool,
        first_tick: Time,
        initial_rate: f64,
        capacity_bps: f64,
    ) -> RateCore {
        let mut core = RateCore {
            rate: 0.0,
            c: 0.0,
            initial_rate,
            stamp_at: Stamp::Departure,
            d0,
            in_bytes: 0.0,
            rtt_w: 0.0,
            no_rtt_bytes: 0.0,
            last_tick: 0,
            next_tick: first_tick,
            gain,
            count_ops,
            ops: OpCounts::default(),
            ops_packets: 0,
        };
        core.learn_capacity(capacity_bps);
        core
    }

    /// Take the port's capacity, once: C = `capacity_bps`/8 B/s and R = initial_rate·C.
    fn learn_capacity(&mut self, capacity_bps: f64) {
        if self.c <= 0.0 && capacity_bps > 0.0 {
            self.c = capacity_bps / 8.0;
            self.rate = self.initial_rate * self.c;
        }
    }

    /// Write R into passing headers at `at` (departure unless set).
    pub fn stamping_at(mut self, at: Stamp) -> RateCore {
        self.stamp_at = at;
        self
    }

    /// C, B/s (0 until known).
    pub fn capacity(&self) -> f64 {
        self.c
    }

    /// A module's `on_arrival`: learn C if not yet known, count the packet, and stamp
    /// min(rate, R) if stamping at arrival.
    #[inline]
    pub fn arrive(&mut self, pkt: &mut Packet, port: &PortView) {
        self.learn_capacity(port.capacity_bps);
        self.on_arrival(pkt);
        if self.stamp_at == Stamp::Arrival {
            self.stamp(pkt);
        }
    }

    /// A module's `on_departure`: learn C if not yet known, then stamp min(rate, R) if stamping
    /// at departure. A rate is not a congestion mark, so there is nothing for the engine to
    /// count (false).
    #[inline]
    pub fn depart(&mut self, pkt: &mut Packet, port: &PortView) -> bool {
        self.depart_under(pkt, port, f64::INFINITY)
    }

    /// [`RateCore::depart`] with the stamped rate held to at most `ceiling` (PIQI-RCP's due
    /// cut; R itself is left alone).
    #[inline]
    pub fn depart_under(&mut self, pkt: &mut Packet, port: &PortView, ceiling: f64) -> bool {
        self.learn_capacity(port.capacity_bps);
        if self.stamp_at == Stamp::Departure {
            self.stamp_with(pkt, self.rate.min(ceiling));
        }
        false
    }

    /// A module's `on_tick`: None before the tick is due; else C learnt if not yet known and
    /// the interval closed, `Some((T, y, mean RTT))` as [`RateCore::close_interval`]. The caller
    /// applies its rate law when T > 0 and C is known, then sets `next_tick`.
    pub fn due(&mut self, now: Time, port: &PortView) -> Option<(f64, f64, Option<f64>)> {
        if now < self.next_tick {
            return None;
        }
        self.learn_capacity(port.capacity_bps);
        Some(self.close_interval(now))
    }

    /// Count an arriving packet (every forward packet; return-path packets are ignored).
    #[inline]
    pub fn on_arrival(&mut self, pkt: &Packet) {
        if pkt.dir != Direction::Forward {
            return;
        }
        let wire = pkt.size as f64;
        let rtt_us = match pkt.cong {
            CongHeader::Rcp { rtt_us, .. } => rtt_us,
            _ => 0,
        };
        if self.count_ops {
            self.count(wire, rtt_us);
            return;
        }
        if rtt_us > 0 {
            (self.in_bytes, self.rtt_w) = account(self.in_bytes, self.rtt_w, wire, rtt_us as f64);
        } else {
            (self.in_bytes, self.no_rtt_bytes) = account_no_rtt(self.in_bytes, self.no_rtt_bytes, wire);
        }
    }

    /// The same path on counted numbers (`count_ops`): same results, tallies kept.
    #[cold]
    fn count(&mut self, wire: f64, rtt_us: u32) {
        use ops::Counted;
        let (in_b, rtt_w, no_rtt) = (Counted(self.in_bytes), Counted(self.rtt_w), Counted(self.no_rtt_bytes));
        let ((a, b, c), done) = ops::count(|| {
            if rtt_us > 0 {
                let (a, b) = account(in_b, rtt_w, Counted(wire), Counted(rtt_us as f64));
                (a, b, no_rtt)
            } else {
                let (a, c) = account_no_rtt(in_b, no_rtt, Counted(wire));
                (a, rtt_w, c)
            }
        });
        (self.in_bytes, self.rtt_w, self.no_rtt_bytes) = (a.0, b.0, c.0);
        self.ops = self.ops + done;
        self.ops_packets += 1;
    }

    /// Write min(rate, R) into a SYN, REF or DATA packet of the data path. True if lowered.
    #[inline]
    pub fn stamp(&self, pkt: &mut Packet) -> bool {
        self.stamp_with(pkt, self.rate)
    }

    /// Write min(rate, `r`) into a SYN, REF or DATA packet of the data path. True if lowered.
    #[inline]
    pub fn stamp_with(&self, pkt: &mut Packet, r: f64) -> bool {
        if !stamped(pkt) {
            return false;
        }
        if let CongHeader::Rcp { rate, .. } = &mut pkt.cong {
            let r = header_rate(r);
            if *rate > r {
                *rate = r;
                return true;
            }
        }
        false
    }

    /// Close the interval at `now`: (T in s, y in B/s, the byte-weighted mean RTT in s if any
    /// packet carried one); counters reset.
    pub fn close_interval(&mut self, now: Time) -> (f64, f64, Option<f64>) {
        let t = to_secs(now.saturating_sub(self.last_tick));
        self.last_tick = now;
        let y = if t > 0.0 { self.in_bytes / t } else { 0.0 };
        let w = self.in_bytes - self.no_rtt_bytes;
        let mean = (w > 0.0).then(|| self.rtt_w / w);
        self.in_bytes = 0.0;
        self.rtt_w = 0.0;
        self.no_rtt_bytes = 0.0;
        (t, y, mean)
    }

    /// d0 follows the interval's mean RTT (`mean`, s) with gain min(1, T/d0) ("symmetric"), or
    /// ns-2's: T/d0 rising, (R/C)·(mean/d0)·(T/d0) falling. `rate_frac` = R/C.
    pub fn update_d0(&mut self, t: f64, mean: Option<f64>, rate_frac: f64) {
        let Some(m) = mean.filter(|m| m.is_finite() && *m > 0.0) else { return };
        let g = (t / self.d0).min(1.0);
        let gain = match self.gain {
            D0Gain::Symmetric => g,
            D0Gain::Ns2 if m >= self.d0 => g,
            D0Gain::Ns2 => (rate_frac * (m / self.d0) * g).min(1.0),
        };
        self.d0 += gain * (m - self.d0);
    }

    /// Add tallies of work done outside the per-packet accounting (PIQI-RCP's newcomers).
    pub fn add_ops(&mut self, done: OpCounts) {
        self.ops = self.ops + done;
    }

    pub fn counting(&self) -> bool {
        self.count_ops
    }

    /// The tallies so far and the packets they cover.
    pub fn ops(&self) -> (OpCounts, u64) {
        (self.ops, self.ops_packets)
    }

    /// Bytes counted in the current interval.
    pub fn in_bytes(&self) -> f64 {
        self.in_bytes
    }

    /// The metrics both routers report: fair_rate_bps, d0_s, and the op tallies when counting.
    pub fn metrics(&self, out: &mut dyn MetricSink) {
        out.put("fair_rate_bps", "bit/s", MetricValue::Gauge(self.rate * 8.0));
        out.put("d0_s", "s", MetricValue::Gauge(self.d0));
        if self.count_ops {
            self.ops.report(self.ops_packets, out);
        }
    }
}

/// The wire size R_min is counted in when the port does not know its packet size.
const DEFAULT_PKT: f64 = 1000.0;

/// R_min = `pkts` packets of the port's data packet size per d0, B/s.
pub fn r_min(pkts: f64, port: &PortView, d0: f64) -> f64 {
    let s = if port.mean_pkt_size > 0 { port.mean_pkt_size as f64 } else { DEFAULT_PKT };
    pkts * s / d0
}

/// One control interval as RCP's rate law reads it: its length T and the mean RTT d0 (s), the
/// capacity C and the arrival rate y (B/s), the queue q (B) and the floor R_min (B/s).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateInterval {
    pub t: f64,
    pub d0: f64,
    pub c: f64,
    pub y: f64,
    pub q: f64,
    pub r_min: f64,
}

/// RCP's rate law for one interval: R·(1 + (T/d0)·(α(C − y) − β·q/d0)/C), clamped to
/// [r_min, C]. All in B/s, bytes and seconds.
pub fn rcp_rate(r: f64, alpha: f64, beta: f64, i: &RateInterval) -> f64 {
    let next = r * (1.0 + (i.t / i.d0) * (alpha * (i.c - i.y) - beta * i.q / i.d0) / i.c);
    next.max(i.r_min).min(i.c)
}

/// The RCP router module.
#[derive(Clone, Debug)]
pub struct RcpRouter {
    core: RateCore,
    p: RcpRouterParams,
}

impl RcpRouter {
    /// A module for a port of `capacity_bps` (0: learnt from the first `PortView`), first tick
    /// at a random phase in [0, min(T_slot, d0)) from `rng`, the port's own stream. Validates `p`.
    pub fn new(
        p: &RcpRouterParams,
        capacity_bps: f64,
        mut rng: SimRng,
    ) -> Result<RcpRouter, crate::params::ParamError> {
        p.validate()?;
        let phase = secs(rng.uniform() * p.t_slot.min(p.d0));
        Ok(RcpRouter::with_phase(p, capacity_bps, phase))
    }

    /// A module whose first tick is at `first_tick` (tests).
    pub fn with_phase(p: &RcpRouterParams, capacity_bps: f64, first_tick: Time) -> RcpRouter {
        let core = RateCore::new(p.d0, p.rcp_d0_gain, p.count_ops, first_tick, p.initial_rate, capacity_bps)
            .stamping_at(p.stamp);
        RcpRouter { core, p: p.clone() }
    }
}

impl RateController for RcpRouter {
    #[inline]
    fn core(&self) -> &RateCore {
        &self.core
    }
}

impl RouterModule for RcpRouter {
    fn name(&self) -> &'static str {
        "rcp"
    }

    #[inline]
    fn on_arrival(&mut self, _now: Time, pkt: &mut Packet, port: &PortView) -> Verdict {
        self.core.arrive(pkt, port);
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
            let d0 = self.core.d0;
            let r_min = r_min(self.p.r_min_pkts, port, d0).min(c);
            let q = port.queue_bytes as f64;
            let i = RateInterval { t, d0, c, y, q, r_min };
            self.core.rate = rcp_rate(self.core.rate, self.p.alpha, self.p.beta, &i);
            self.core.update_d0(t, mean, self.core.rate / c);
        }
        self.core.next_tick = now + secs(self.p.t_slot.min(self.core.d0)).max(1);
    }

    fn metrics(&self, out: &mut dyn MetricSink) {
        self.core.metrics(out);
    }
}
