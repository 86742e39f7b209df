//! Metrics: counters sampled at a fixed interval into column vectors (no per-packet log),
//! handed to Python as columns for Parquet; plus the end-of-run summary.

use racc_proto::time::Time;

/// One row per (sample, port).
#[derive(Default, Debug, Clone, PartialEq)]
pub struct PortSeries {
    pub time_s: Vec<f64>,
    pub port: Vec<u32>,
    pub tx_bytes: Vec<u64>,
    pub tx_pkts: Vec<u64>,
    pub throughput_bps: Vec<f64>,
    pub utilisation: Vec<f64>,
    pub queue_pkts: Vec<u32>,
    pub queue_bytes: Vec<u64>,
    pub drops: Vec<u64>,
    pub losses: Vec<u64>,
    pub marks: Vec<u64>,
    pub arrivals: Vec<u64>,
}

/// One row per (sample, active flow).
#[derive(Default, Debug, Clone, PartialEq)]
pub struct FlowSeries {
    pub time_s: Vec<f64>,
    pub flow: Vec<u32>,
    pub goodput_bps: Vec<f64>,
    pub cwnd_bytes: Vec<f64>,
    pub rate_bps: Vec<f64>,
    pub srtt_s: Vec<f64>,
    pub acked_bytes: Vec<u64>,
    /// Cumulative retransmitted data packets and retransmission timeouts.
    pub retransmits: Vec<u64>,
    pub timeouts: Vec<u64>,
    /// Cumulative timeouts found spurious and undone (RFC 3522), a subset of `timeouts`.
    pub spurious_timeouts: Vec<u64>,
    /// Chain protocols (seed 000 §3.4): cumulative exceptions, VCP fallbacks and resumes, and
    /// whether the sender is in VCP mode at the sample (0/1); zero for other protocols.
    pub chain_exceptions: Vec<u64>,
    pub vcp_fallbacks: Vec<u64>,
    pub chain_resumes: Vec<u64>,
    pub vcp_mode: Vec<u32>,
}

/// One row per (sample, recorded port, flow group that has crossed the port): the bytes each
/// aggregate sent and its share of the capacity (PROTOCOLS.md §15 "link share").
#[derive(Default, Debug, Clone, PartialEq)]
pub struct GroupSeries {
    pub time_s: Vec<f64>,
    pub port: Vec<u32>,
    pub group: Vec<u16>,
    pub tx_bytes: Vec<u64>,
    pub share: Vec<f64>,
}

/// One row per finished finite flow.
#[derive(Default, Debug, Clone, PartialEq)]
pub struct Completions {
    pub flow: Vec<u32>,
    pub size_bytes: Vec<u64>,
    pub start_s: Vec<f64>,
    pub end_s: Vec<f64>,
    pub fct_s: Vec<f64>,
}

impl Completions {
    pub fn push(&mut self, flow: u32, size: u64, start: Time, end: Time) {
        self.flow.push(flow);
        self.size_bytes.push(size);
        self.start_s.push(start as f64 * 1e-9);
        self.end_s.push(end as f64 * 1e-9);
        self.fct_s.push((end - start) as f64 * 1e-9);
    }
}

/// Packet accounting for the conservation law: sent = delivered + dropped + lost + in flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conservation {
    /// Packets handed to the network by endpoints.
    pub sent: u64,
    /// Packets that reached the endpoint they were addressed to.
    pub delivered: u64,
    /// Dropped by a buffer or a router module.
    pub dropped: u64,
    /// Lost on a wire by a loss model.
    pub lost: u64,
    /// Held by ports right now (waiting or propagating).
    pub in_flight: u64,
}

impl Conservation {
    pub fn holds(&self) -> bool {
        self.sent == self.delivered + self.dropped + self.lost + self.in_flight
    }
}

/// Jain's fairness index (PROTOCOLS.md §15): (Σx)² / (n Σx²); 1 for an empty set.
pub fn jain(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if n == 0.0 || s2 == 0.0 {
        1.0
    } else {
        s * s / (n * s2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_bounds() {
        assert!((jain(&[1.0, 1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        // (1+2+3)^2 / (3 * 14) = 36/42
        assert!((jain(&[1.0, 2.0, 3.0]) - 36.0 / 42.0).abs() < 1e-12);
    }
}
