//! Capacity probing for ports whose capacity the router is not told (QFCP §II eq. 4; a
//! wireless link's rate is not known to the router). Shared by QFCP's router and XCP-b (XCP
//! with this probe; QFCP §III.C compares the two).
//!
//! At the end of every control interval, with q the minimum queue (packets waiting, the one on
//! the wire not counted) seen in the interval and `output` the rate that left the port:
//! - q ≥ 1 packet: the port never ran dry, so what it sent is what the link can carry:
//!   C = output;
//! - q < 1 packet: the link was sometimes idle: try C·(1 + α), α = 0.1, and "wait a control
//!   interval to see whether the queue is going to build up".
//! - [reconstructed] q < 1 packet but the interval ends with a queue (≥ 1 packet): the queue is
//!   building up, so the estimate is not raised; nor is it set to the output, which the idle
//!   part of the interval lowered. The next interval, which starts with that queue, judges.
//!   Why: a rise reaches the senders one RTT (≈ T) later, so the interval in which its traffic
//!   arrives starts with the queue it had before, empty; judging by the minimum alone raised the
//!   estimate again while the queue was already building (3 rises in a row, C 1.33× the link's,
//!   buffer overflows, R falling to R_min: docs/PROTOCOLS.md §9, "The probe").
//!
//! The estimate is kept within [`C_MIN`, `C_MAX`] B/s [reconstructed: the seed gives no
//! bound; an idle port would otherwise grow it without end].

use crate::metrics::{MetricSink, MetricValue};
use serde::Deserialize;

/// Bounds of the estimate, B/s: 1 kB/s and the largest rate the 32-bit rate fields carry.
pub const C_MIN: f64 = 1e3;
pub const C_MAX: f64 = (u32::MAX - 1) as f64;

/// Where a router's capacity C comes from (router parameter `capacity`).
#[derive(Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CapacitySource {
    /// The router is told the link's capacity (or `initial_capacity_bps`), and keeps it.
    #[default]
    Link,
    /// The router probes it by eq. (4), starting from `initial_capacity_bps` or the link's.
    Probe,
}

/// QFCP eq. (4): the next estimate from the interval's minimum queue `q_min_pkts`
/// (packets), its output rate `output` (B/s) and the estimate in force `c` (B/s).
#[inline]
pub fn probe(c: f64, q_min_pkts: u32, output: f64, alpha: f64) -> f64 {
    let next = if q_min_pkts >= 1 { output } else { (1.0 + alpha) * c };
    next.clamp(C_MIN, C_MAX)
}

/// What an interval's end does to the estimate (eq. 4 with the wait for the queue).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// q ≥ 1 packet all interval: C = output.
    Settle,
    /// q < 1 packet and the interval ends without a queue: C·(1 + α).
    Rise,
    /// q < 1 packet but a queue (≥ 1 packet) at the interval's end: it is building up; C holds
    /// [reconstructed].
    Wait,
}

/// The step from the interval's minimum queue and the queue it ends with (packets).
#[inline]
pub fn step(q_min_pkts: u32, q_end_pkts: u32) -> Step {
    if q_min_pkts >= 1 {
        Step::Settle
    } else if q_end_pkts >= 1 {
        Step::Wait
    } else {
        Step::Rise
    }
}

/// One port's capacity estimate and what the current interval has seen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CapacityProbe {
    source: CapacitySource,
    alpha: f64,
    /// The estimate in force, B/s (0 until known).
    c: f64,
    /// Minimum queue seen in the interval, packets.
    q_min: u32,
    /// Wire bytes that started serialisation in the interval.
    out_bytes: f64,
    /// Intervals that raised the estimate by (1 + α), that set it to the output rate, and that
    /// held it because the queue was building up.
    rises: u64,
    settles: u64,
    waits: u64,
}

impl CapacityProbe {
    /// A probe (or a fixed capacity, `Link`) starting at `initial_bps` b/s if given, else at
    /// the link's `link_bps` (0: learnt from the first [`learn`](Self::learn)).
    pub fn new(source: CapacitySource, alpha: f64, initial_bps: Option<f64>, link_bps: f64) -> CapacityProbe {
        // The port starts empty: the first interval's minimum starts at 0.
        let mut p = CapacityProbe { source, alpha, c: 0.0, q_min: 0, out_bytes: 0.0, rises: 0, settles: 0, waits: 0 };
        match initial_bps {
            Some(b) => p.c = b / 8.0,
            None => p.learn(link_bps),
        }
        p
    }

    /// The link's capacity (b/s) as the port reports it: taken only while nothing is known.
    #[inline]
    pub fn learn(&mut self, link_bps: f64) {
        if self.c <= 0.0 && link_bps > 0.0 {
            self.c = link_bps / 8.0;
        }
    }

    /// The estimate in force, B/s (0 until known).
    #[inline]
    pub fn capacity(&self) -> f64 {
        self.c
    }

    pub fn probing(&self) -> bool {
        self.source == CapacitySource::Probe
    }

    /// The queue (packets waiting) as an arrival or a departure sees it.
    #[inline]
    pub fn see_queue(&mut self, pkts: u32) {
        self.q_min = self.q_min.min(pkts);
    }

    /// A packet of `wire` bytes starts serialisation.
    #[inline]
    pub fn on_departure(&mut self, wire: u32) {
        self.out_bytes += wire as f64;
    }

    /// Minimum queue of the interval so far, packets (`u32::MAX` if nothing was seen).
    pub fn q_min(&self) -> u32 {
        self.q_min
    }

    /// The interval of `t` s ends with `queue_now` packets waiting: eq. (4) when probing (no
    /// rise while the queue is building up, [`step`]), then a new interval. Returns the
    /// estimate in force for the next interval.
    pub fn end_interval(&mut self, t: f64, queue_now: u32) -> f64 {
        self.see_queue(queue_now);
        if self.probing() && t > 0.0 && self.c > 0.0 {
            let output = self.out_bytes / t;
            match step(self.q_min, queue_now) {
                Step::Settle => {
                    self.c = probe(self.c, self.q_min, output, self.alpha);
                    self.settles += 1;
                }
                Step::Rise => {
                    self.c = probe(self.c, self.q_min, output, self.alpha);
                    self.rises += 1;
                }
                Step::Wait => self.waits += 1,
            }
        }
        // The next interval's minimum starts from the queue it begins with.
        self.q_min = queue_now;
        self.out_bytes = 0.0;
        self.c
    }

    /// capacity_estimate_bps and, when probing, the rises, settles and waits.
    pub fn metrics(&self, out: &mut dyn MetricSink) {
        out.put("capacity_estimate_bps", "bit/s", MetricValue::Gauge(self.c * 8.0));
        if self.probing() {
            out.put("probe_rises", "intervals", MetricValue::Count(self.rises));
            out.put("probe_settles", "intervals", MetricValue::Count(self.settles));
            out.put("probe_waits", "intervals", MetricValue::Count(self.waits));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eq. (4) by hand: below one packet of minimum queue the estimate gains 10 %, from one
    /// packet on it is the output rate.
    #[test]
    fn rises_below_one_packet_and_settles_at_the_output_rate() {
        assert_eq!(probe(125_000.0, 0, 50_000.0, 0.1), 137_500.0);
        assert_eq!(probe(125_000.0, 1, 1_375_000.0, 0.1), 1_375_000.0);
        assert_eq!(probe(125_000.0, 7, 90_000.0, 0.1), 90_000.0, "a busy port may also lower it");
        assert_eq!(probe(C_MAX, 0, 0.0, 0.1), C_MAX);

        assert_eq!(step(0, 0), Step::Rise);
        assert_eq!(step(0, 1), Step::Wait, "the queue is building up");
        assert_eq!(step(1, 0), Step::Settle);
        assert_eq!(step(2, 7), Step::Settle);

        // 1 Mb/s start, 100 ms intervals: while the queue stays empty the estimate rises by
        // (1.1)^k; an interval that ends with a queue holds it (the queue is building up); the
        // next interval, whose minimum queue is one packet, sets it to the output.
        let mut p = CapacityProbe::new(CapacitySource::Probe, 0.1, Some(1e6), 11e6);
        assert_eq!(p.capacity(), 125_000.0);
        for k in 1..=3 {
            p.see_queue(0);
            p.on_departure(1000);
            let c = p.end_interval(0.1, 0);
            assert!((c - 125_000.0 * 1.1f64.powi(k)).abs() < 1e-6, "{c}");
        }
        // The fourth interval's minimum is 0 but it ends with 3 packets queued: the estimate
        // holds (125 kB/s · 1.1³ = 166.375 kB/s), and the fifth's minimum starts at 3.
        p.see_queue(0);
        assert!((p.end_interval(0.1, 3) - 166_375.0).abs() < 1e-6);
        assert_eq!(p.q_min(), 3);
        for q in [3, 1, 2] {
            p.see_queue(q);
        }
        for _ in 0..137 {
            p.on_departure(1000);
        }
        assert_eq!(p.end_interval(0.1, 4), 1_370_000.0, "137 kB in 0.1 s");
        assert_eq!((p.rises, p.waits, p.settles), (3, 1, 1));
        // A fixed capacity never moves.
        let mut f = CapacityProbe::new(CapacitySource::Link, 0.1, None, 8e6);
        f.see_queue(0);
        assert_eq!(f.end_interval(0.1, 0), 1e6);
    }
}
