//! The standard benchmark (issue 2): N long-lived NewReno flows (no SACK, an ACK per packet,
//! initial window 10, initial ssthresh = BDP/N) on a dumbbell: senders -> 1 Gb/s 1 ms ->
//! router -> 100 Mb/s 48 ms -> router -> 1 Gb/s 1 ms -> receivers (RTT 100 ms), DropTail
//! bottleneck buffer of 1250 packets, 1000-byte packets, seed 1. Shared by `racc bench` and
//! the bare `racc-bench` binary so both measure the same thing.

use crate::engine::Simulator;
use crate::scenario::{from_toml, ScenarioError};
use std::time::Instant;

/// The benchmark scenario as a scenario file, so it goes through the same checks as any run.
pub fn scenario_toml(flows: u32, simtime_s: f64, seed: u64) -> String {
    // BDP = 100 Mb/s x 100 ms = 1.25 MB.
    let ssthresh = 1_250_000 / flows.max(1) as u64;
    format!(
        r#"name = "bench-{flows}"
duration = {simtime_s}
seed = {seed}
packet_size = 1000
handshake = false

[topology]
kind = "dumbbell"
pairs = {flows}
bottleneck = {{ capacity = "100Mbps", delay = "48ms", buffer = 1250, router = "droptail" }}
access = {{ capacity = "1Gbps", delay = "1ms" }}

[[flows]]
name = "bulk"
protocol = "newreno"
src = "s{{i}}"
dst = "d{{i}}"
count = {flows}
initial_window = 10
initial_ssthresh = {ssthresh}

# Only the bottleneck's time series: the benchmark measures the engine, whose memory
# must stay flat in simulated time.
[record]
interval = "1s"
flows = false
ports = ["r0->r1"]
"#
    )
}

/// Figures of one benchmark run, printed as `key=value` pairs.
#[derive(Clone, Debug)]
pub struct BenchResult {
    pub flows: u32,
    pub simtime: f64,
    pub events: u64,
    pub bottleneck_tx_pkts: u64,
    pub bottleneck_drops: u64,
    pub util: f64,
    pub goodput_mbps: f64,
    pub delivered_pkts: u64,
    pub link_tx_pkts: u64,
    pub wall_s: f64,
}

impl BenchResult {
    pub fn events_per_s(&self) -> f64 {
        self.events as f64 / self.wall_s
    }
    pub fn pkthops_per_s(&self) -> f64 {
        self.link_tx_pkts as f64 / self.wall_s
    }
    /// The issue's line format, without the memory figure (the caller measures its own).
    pub fn line(&self) -> String {
        format!(
            "sim=racc flows={} simtime={} events={} bottleneck_tx_pkts={} bottleneck_drops={} util={:.4} goodput_mbps={:.3} delivered_pkts={} link_tx_pkts={} wall_s={:.3} events_per_s={:.0} pkthops_per_s={:.0}",
            self.flows,
            self.simtime,
            self.events,
            self.bottleneck_tx_pkts,
            self.bottleneck_drops,
            self.util,
            self.goodput_mbps,
            self.delivered_pkts,
            self.link_tx_pkts,
            self.wall_s,
            self.events_per_s(),
            self.pkthops_per_s()
        )
    }
}

/// Run the standard benchmark with `flows` flows.
pub fn run(flows: u32, simtime_s: f64, seed: u64) -> Result<BenchResult, ScenarioError> {
    let spec = from_toml(&scenario_toml(flows, simtime_s, seed), "bench")?;
    let t0 = Instant::now();
    let mut sim = Simulator::new(spec)?;
    sim.run();
    let wall_s = t0.elapsed().as_secs_f64();
    let ports = sim.port_summary();
    // The bottleneck is the r0 -> r1 port.
    let bn = ports.iter().find(|p| p.name == "r0->r1").expect("dumbbell has r0->r1");
    let cons = sim.conservation();
    Ok(BenchResult {
        flows,
        simtime: simtime_s,
        events: sim.events(),
        bottleneck_tx_pkts: bn.counters.tx_pkts,
        bottleneck_drops: bn.counters.drops,
        util: bn.utilisation,
        goodput_mbps: sim.goodput_bytes() as f64 * 8.0 / simtime_s / 1e6,
        delivered_pkts: cons.delivered,
        link_tx_pkts: ports.iter().map(|p| p.counters.tx_pkts).sum(),
        wall_s,
    })
}

/// Peak resident set size of this process in kB (Linux VmHWM), if readable.
pub fn peak_rss_kb() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()
}
