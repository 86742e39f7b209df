//! XCP-b's spare bandwidth (QFCP §III.C cites XCP-b, "a XCP variant enhanced with an
//! algorithm to probe the available bandwidth when the link capacity is unknown"; Abrantes and
//! Ricardo, "XCP for shared-access multi-rate media", CCR 2006; docs/PROTOCOLS.md §5 "XCP-b").
//!
//! XCP's efficiency controller needs the spare bandwidth C − y, which a router that does not
//! know C cannot compute. XCP-b reads it from the queue instead [reconstructed from the
//! docs/PROTOCOLS.md §5 summary of XCP-b]:
//! - while the queue is not empty, its speed: S = −(q(n) − q(n−1))/d (a draining queue is
//!   spare bandwidth, a growing one is excess), with q(n) the queue at the end of interval n;
//! - φ = α·d·S − β·(Q − Q_target): the persistent queue is held at Q_target = 2 packets
//!   ("above-zero queue stabilisation") so that an empty queue means an idle link;
//! - once the queue has ended `late_intervals` (2) intervals in a row empty ("late reaction":
//!   one empty interval may be noise), the link is taken as under-used and a fixed probe
//!   S = 0.1·y is granted per interval, until a queue builds again.
//!
//! The probe is XCP-b's own; QFCP's eq. (4) probe (`xcc::capacity_probe`) estimates C and leaves
//! XCP's C − y in place, which is a different controller.

use super::params::XcpRouterParams;
use crate::metrics::{MetricSink, MetricValue};

/// XCP-b's queue-based estimate of the spare bandwidth of one port.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlindSpare {
    /// The queue at the end of the last interval, bytes (None before the first).
    q_prev: Option<u64>,
    /// Consecutive intervals that ended with an empty queue.
    empty: u32,
    /// The last estimate S, B/s.
    spare: f64,
    /// Intervals that granted the fixed probe.
    probes: u64,
}

impl Default for BlindSpare {
    fn default() -> BlindSpare {
        BlindSpare { q_prev: None, empty: 0, spare: 0.0, probes: 0 }
    }
}

impl BlindSpare {
    /// The interval of `elapsed` s with input rate `y` (B/s) ends with `q_now` bytes queued:
    /// the spare bandwidth S (B/s) for φ = α·d·S − β·(Q − Q_target).
    pub fn end_interval(&mut self, p: &XcpRouterParams, elapsed: f64, y: f64, q_now: u64) -> f64 {
        self.empty = if q_now == 0 { self.empty.saturating_add(1) } else { 0 };
        let prev = self.q_prev.unwrap_or(q_now);
        self.spare = if self.empty >= p.late_intervals {
            self.probes += 1;
            p.blind_probe * y
        } else if elapsed > 0.0 {
            -(q_now as f64 - prev as f64) / elapsed
        } else {
            0.0
        };
        self.q_prev = Some(q_now);
        self.spare
    }

    /// The last estimate, B/s.
    pub fn spare(&self) -> f64 {
        self.spare
    }

    /// spare_estimate_bps and blind_probes.
    pub fn metrics(&self, out: &mut dyn MetricSink) {
        out.put("spare_estimate_bps", "bit/s", MetricValue::Gauge(self.spare * 8.0));
        out.put("blind_probes", "intervals", MetricValue::Count(self.probes));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: a draining queue is spare bandwidth, a growing one excess; the probe comes only
    /// at the second interval in a row that ends empty, and stops when a queue builds.
    #[test]
    fn spare_from_the_queue_speed_and_the_late_probe() {
        let p = XcpRouterParams::default();
        let mut b = BlindSpare::default();
        // First interval: no earlier queue, no speed.
        assert_eq!(b.end_interval(&p, 0.1, 1e6, 5_000), 0.0);
        // 5 000 → 8 000 B in 0.1 s: 30 kB/s too much.
        assert_eq!(b.end_interval(&p, 0.1, 1e6, 8_000), -30_000.0);
        // Drained to 0 in 0.1 s: 80 kB/s spare (first empty interval: no probe yet).
        assert_eq!(b.end_interval(&p, 0.1, 1e6, 0), 80_000.0);
        // Second empty interval: the fixed probe 0.1·y.
        assert_eq!(b.end_interval(&p, 0.1, 1e6, 0), 100_000.0);
        assert_eq!(b.end_interval(&p, 0.1, 2e6, 0), 200_000.0);
        assert_eq!(b.probes, 2);
        // A queue builds: back to its speed.
        assert_eq!(b.end_interval(&p, 0.1, 1e6, 1_000), -10_000.0);
        assert_eq!(b.empty, 0);
    }
}
