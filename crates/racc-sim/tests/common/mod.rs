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
