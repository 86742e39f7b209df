//! Helpers shared by the engine's integration tests.
#![allow(dead_code)]

use racc_sim::scenario::from_toml;
use racc_sim::Simulator;

pub fn sim(toml: &str) -> Simulator {
    let spec = from_toml(toml, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    Simulator::new(spec).unwrap_or_else(|e| panic!("{e}"))
}

/// Receiver goodput per flow (bits/s) averaged over samples with time in (from, to].
pub fn goodput_per_flow(s: &Simulator, n_flows: usize, from: f64, to: f64) -> Vec<f64> {
    let fs = &s.flow_series;
    let mut sum = vec![0.0; n_flows];
    let mut cnt = vec![0usize; n_flows];
    for i in 0..fs.time_s.len() {
        let t = fs.time_s[i];
        if t > from && t <= to {
            sum[fs.flow[i] as usize] += fs.goodput_bps[i];
            cnt[fs.flow[i] as usize] += 1;
        }
    }
    sum.iter().zip(&cnt).map(|(s, &c)| if c > 0 { s / c as f64 } else { 0.0 }).collect()
}

/// Whole-run summary of the port with this name.
pub fn port(s: &mut Simulator, name: &str) -> racc_sim::engine::PortSummary {
    s.port_summary().into_iter().find(|p| p.name == name).unwrap_or_else(|| panic!("no port {name}"))
}

/// Each flow's last value of a cumulative flows-table column (`column`, aligned with the
/// table's rows) among the rows with time at or before `until`.
pub fn last_per_flow(s: &Simulator, column: &[u64], until: f64) -> std::collections::BTreeMap<u32, u64> {
    let fs = &s.flow_series;
    let mut last = std::collections::BTreeMap::new();
    for ((&time, &flow), &value) in fs.time_s.iter().zip(&fs.flow).zip(column) {
        if time <= until {
            last.insert(flow, value);
        }
    }
    last
}

/// The port named `name` over samples with time in (from, to]: mean utilisation, drops, mean
/// and max sampled queue (packets).
pub fn port_window(s: &Simulator, name: &str, from: f64, to: f64) -> (f64, u64, f64, u32) {
    let idx = s.ports().iter().position(|p| p.name == name).unwrap() as u32;
    let ps = &s.port_series;
    let (mut u, mut d, mut q, mut qmax, mut n) = (0.0, 0, 0.0, 0, 0);
    for i in 0..ps.time_s.len() {
        if ps.port[i] == idx && ps.time_s[i] > from && ps.time_s[i] <= to {
            u += ps.utilisation[i];
            d += ps.drops[i];
            q += ps.queue_pkts[i] as f64;
            qmax = qmax.max(ps.queue_pkts[i]);
            n += 1;
        }
    }
    (u / n as f64, d, q / n as f64, qmax)
}

/// A sender's named metric at row `j` of the flow series (NaN where it reports none).
pub fn flow_metric(fs: &racc_sim::metrics::FlowSeries, name: &str, j: usize) -> f64 {
    match fs.named.get(name).map(|c| &c.values) {
        Some(racc_sim::metrics::ColumnValues::Gauge(v)) => v[j],
        Some(racc_sim::metrics::ColumnValues::Count(v)) => v[j] as f64,
        _ => f64::NAN,
    }
}
