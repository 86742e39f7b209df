//! The standard benchmark (issue 2, issue 19): N long-lived NewReno flows (no SACK, an ACK per
//! packet, initial window 10, initial ssthresh = BDP/N) on a dumbbell: senders -> access link
//! 1 ms -> router -> bottleneck 48 ms -> router -> access link 1 ms -> receivers (RTT 100 ms),
//! DropTail buffers of one BDP at each link's rate, 1000-byte packets, seed 1. The bottleneck is
//! 100 Mb/s and the access links 1 Gb/s unless told otherwise (`--bottleneck-mbps`,
//! `--access-mbps`, as the htsim main of the speed anchor takes them). Shared by `racc bench`
//! and the bare `racc-bench` binary so both measure the same thing.

use crate::engine::Simulator;
use crate::scenario::raw::{RawFlows, RawLimits, RawLink, RawPortSelection, RawRecord, RawScenario, RawTopology};
use crate::scenario::units::{Amount, Buffer, Rate, Seconds, Size};
use crate::scenario::{from_raw, ScenarioError};
use std::time::Instant;

/// One benchmark run's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BenchConfig {
    pub flows: u32,
    pub simtime_s: f64,
    pub seed: u64,
    pub bottleneck_mbps: f64,
    pub access_mbps: f64,
}

impl BenchConfig {
    /// The standard form: 100 Mb/s bottleneck, 1 Gb/s access links.
    pub fn new(flows: u32, simtime_s: f64, seed: u64) -> BenchConfig {
        BenchConfig { flows, simtime_s, seed, bottleneck_mbps: 100.0, access_mbps: 1000.0 }
    }

    /// Refuse values the benchmark cannot run, naming the option.
    pub fn check(&self) -> Result<(), String> {
        if self.flows == 0 {
            return Err("--flows must be a positive integer, got 0".into());
        }
        if !(self.simtime_s.is_finite() && self.simtime_s > 0.0) {
            return Err(format!("--simtime must be a positive number of seconds, got {}", self.simtime_s));
        }
        for (opt, v) in [("--bottleneck-mbps", self.bottleneck_mbps), ("--access-mbps", self.access_mbps)] {
            // As the htsim main: link rates of at least 1 Mb/s (a BDP of at least 12.5 packets).
            if !(v.is_finite() && v >= 1.0) {
                return Err(format!("{opt} must be a number of Mb/s of at least 1, got {v}"));
            }
        }
        Ok(())
    }
}

/// TCP model settings the htsim anchor cannot switch off, to align the benchmark with it
/// (issue 40: at N = 10,000 racc's utilisation was 1.3 points below htsim's). The defaults are
/// racc's: the run's 200 ms RTO floor and RFC 3042 Limited Transmit on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpModel {
    /// The run's `min_rto`, s (htsim's TcpSrc: 0.25).
    pub min_rto_s: Option<f64>,
    /// RFC 3042 Limited Transmit (htsim's TcpSrc has none).
    pub limited_transmit: bool,
}

impl Default for TcpModel {
    fn default() -> TcpModel {
        TcpModel { min_rto_s: None, limited_transmit: true }
    }
}

impl TcpModel {
    /// Refuse values the benchmark cannot run, naming the option.
    pub fn check(&self) -> Result<(), String> {
        match self.min_rto_s {
            Some(v) if !(v.is_finite() && v > 0.0) => {
                Err(format!("--min-rto must be a positive number of seconds, got {v}"))
            }
            _ => Ok(()),
        }
    }
}

/// One BDP (RTT 100 ms) at `mbps`, in 1000-byte packets.
fn bdp_pkts(mbps: f64) -> u64 {
    (mbps * 1e6 * 0.1 / 8.0 / 1000.0).round().max(1.0) as u64
}

/// The benchmark scenario in its raw form, so that it goes through the same checks as any
/// scenario file; built in code rather than written out and parsed, because the parser's code
/// (serde, toml) is the larger part of the program's fixed memory (its pages are resident once
/// run: about 1 MB of the 4.5 MB at one flow). As a file it reads:
///
/// ```toml
/// name = "bench-N"
/// duration = SIMTIME
/// seed = SEED
/// packet_size = 1000
/// handshake = false
///
/// [topology]
/// kind = "dumbbell"
/// pairs = N
/// bottleneck = { capacity = "<bottleneck>Mbps", delay = "48ms", buffer = "<one BDP>pkt", router = "droptail" }
/// access = { capacity = "<access>Mbps", delay = "1ms", buffer = "<one BDP>pkt" }
///
/// [[flows]]
/// name = "bulk"
/// protocol = "newreno"
/// src = "s{i}"
/// dst = "d{i}"
/// count = N
/// initial_window = 10
/// initial_ssthresh = BDP / N    # bytes
///
/// # Only the bottleneck's time series: the benchmark measures the engine, whose memory
/// # must stay flat in simulated time.
/// [record]
/// interval = "1s"
/// flows = false
/// ports = ["r0->r1"]
/// ```
pub fn scenario(c: &BenchConfig) -> RawScenario {
    scenario_with(c, &TcpModel::default())
}

/// [`scenario`] with the TCP model `m` (racc's own model when `m` is the default: then the
/// scenario is exactly the standard one).
pub fn scenario_with(c: &BenchConfig, m: &TcpModel) -> RawScenario {
    let BenchConfig { flows, simtime_s, seed, bottleneck_mbps, access_mbps } = *c;
    // BDP = bottleneck rate x 100 ms (1.25 MB at 100 Mb/s); ssthresh BDP / N, as the htsim main.
    let ssthresh = bdp_pkts(bottleneck_mbps) * 1000 / flows.max(1) as u64;
    let link = |mbps: f64, delay_s: f64, router: Option<&str>| RawLink {
        a: None,
        b: None,
        capacity: Some(Rate(mbps * 1e6)),
        delay: Some(Seconds(delay_s)),
        buffer: Some(Buffer(Amount::Packets(bdp_pkts(mbps) as f64))),
        router: router.map(String::from),
        router_params: None,
        loss: None,
        loss_direction: None,
    };
    RawScenario {
        name: Some(format!("bench-{flows}")),
        description: None,
        duration: Seconds(simtime_s),
        seed,
        packet_size: 1000,
        min_rto: m.min_rto_s.map(Seconds),
        handshake: false,
        topology: RawTopology {
            kind: "dumbbell".into(),
            pairs: Some(flows as i64),
            bottleneck: Some(link(bottleneck_mbps, 48.0 * 1e-3, Some("droptail"))),
            access: Some(link(access_mbps, 1e-3, None)),
            access_delays: None,
            links: None,
            nodes: None,
            media: None,
            k: None,
            host: None,
            edge_agg: None,
            agg_core: None,
            ecmp: None,
        },
        flows: vec![RawFlows {
            name: Some("bulk".into()),
            protocol: "newreno".into(),
            src: "s{i}".into(),
            dst: "d{i}".into(),
            count: flows as i64,
            index_offset: 0,
            start: None,
            start_spread: None,
            stop: None,
            size: None,
            params: (!m.limited_transmit).then(|| serde_json::json!({ "limited_transmit": false })),
            ecn: None,
            delayed_ack: None,
            sack: None,
            initial_window: Some(10),
            initial_ssthresh: Some(Size(Amount::Bytes(ssthresh as f64))),
            handshake: None,
        }],
        traffic: Vec::new(),
        record: RawRecord {
            interval: Some(Seconds(1.0)),
            flows: false,
            ports: Some(RawPortSelection::Names(vec!["r0->r1".into()])),
            groups: false,
        },
        tunnels: Vec::new(),
        limits: RawLimits::default(),
    }
}

/// Figures of one benchmark run, printed as `key=value` pairs.
#[derive(Clone, Debug)]
pub struct BenchResult {
    pub flows: u32,
    pub simtime: f64,
    pub bottleneck_mbps: f64,
    pub access_mbps: f64,
    pub events: u64,
    pub bottleneck_tx_pkts: u64,
    pub bottleneck_drops: u64,
    pub util: f64,
    pub goodput_mbps: f64,
    pub delivered_pkts: u64,
    /// Packet-hops: packets that started serialisation on any port.
    pub link_tx_pkts: u64,
    /// Wall time of set-up and run.
    pub wall_s: f64,
    /// CPU time of the process for set-up (parsing, checking, routes, building) and for the
    /// whole (set-up and run); wall time where the platform gives no process CPU time.
    pub setup_cpu_s: f64,
    pub cpu_s: f64,
    /// Resident memory before set-up and the process's peak at the end (kB; 0 if unknown).
    pub base_rss_kb: u64,
    pub peak_rss_kb: u64,
}

impl BenchResult {
    pub fn events_per_s(&self) -> f64 {
        self.events as f64 / self.wall_s
    }
    pub fn pkthops_per_s(&self) -> f64 {
        self.link_tx_pkts as f64 / self.wall_s
    }
    pub fn mhops_per_cpu_s(&self) -> f64 {
        self.link_tx_pkts as f64 / self.cpu_s / 1e6
    }
    pub fn ns_per_hop(&self) -> f64 {
        self.cpu_s * 1e9 / self.link_tx_pkts.max(1) as f64
    }
    pub fn events_per_hop(&self) -> f64 {
        self.events as f64 / self.link_tx_pkts.max(1) as f64
    }
    /// Peak memory above what the process held before set-up, per flow.
    pub fn bytes_per_flow(&self) -> f64 {
        self.peak_rss_kb.saturating_sub(self.base_rss_kb) as f64 * 1024.0 / self.flows as f64
    }
    /// The issue's line format (the keys of earlier versions first, then issue 19's).
    pub fn line(&self) -> String {
        format!(
            "sim=racc flows={} simtime={} events={} bottleneck_tx_pkts={} bottleneck_drops={} util={:.4} goodput_mbps={:.3} delivered_pkts={} link_tx_pkts={} wall_s={:.3} events_per_s={:.0} pkthops_per_s={:.0} peak_rss_kb={} bottleneck_mbps={} access_mbps={} cpu_s={:.3} setup_s={:.4} mhops_per_cpu_s={:.2} ns_per_hop={:.1} events_per_hop={:.3} bytes_per_flow={:.0}",
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
            self.pkthops_per_s(),
            self.peak_rss_kb,
            self.bottleneck_mbps,
            self.access_mbps,
            self.cpu_s,
            self.setup_cpu_s,
            self.mhops_per_cpu_s(),
            self.ns_per_hop(),
            self.events_per_hop(),
            self.bytes_per_flow(),
        )
    }
}

/// Run the standard benchmark with `flows` flows (100 Mb/s bottleneck, 1 Gb/s access).
pub fn run(flows: u32, simtime_s: f64, seed: u64) -> Result<BenchResult, ScenarioError> {
    run_config(&BenchConfig::new(flows, simtime_s, seed))
}

/// Run the benchmark as `c` describes it.
pub fn run_config(c: &BenchConfig) -> Result<BenchResult, ScenarioError> {
    run_model(c, &TcpModel::default())
}

/// Run the benchmark as `c` describes it, with the TCP model `m`.
pub fn run_model(c: &BenchConfig, m: &TcpModel) -> Result<BenchResult, ScenarioError> {
    let err = |reason| ScenarioError { source: "bench".into(), key: String::new(), reason };
    c.check().map_err(err)?;
    m.check().map_err(err)?;
    let base_rss_kb = status_kb("VmRSS:").unwrap_or(0);
    let t0 = Instant::now();
    let cpu0 = process_cpu_s();
    let spec = from_raw(scenario_with(c, m), "bench")?;
    let mut sim = Simulator::new(spec)?;
    let cpu1 = process_cpu_s();
    sim.run();
    let cpu2 = process_cpu_s();
    let wall_s = t0.elapsed().as_secs_f64();
    let (setup_cpu_s, cpu_s) = match (cpu0, cpu1, cpu2) {
        (Some(a), Some(b), Some(e)) => (b - a, e - a),
        _ => (f64::NAN, wall_s),
    };
    // One port's summary at a time: the whole list would add to the run's peak memory.
    let mut link_tx_pkts = 0;
    let mut bn = None;
    for i in 0..sim.ports().len() {
        let p = sim.port_summary_of(i);
        link_tx_pkts += p.counters.tx_pkts;
        // The bottleneck is the r0 -> r1 port.
        if p.name == "r0->r1" {
            bn = Some(p);
        }
    }
    let bn = bn.expect("dumbbell has r0->r1");
    let cons = sim.conservation();
    Ok(BenchResult {
        flows: c.flows,
        simtime: c.simtime_s,
        bottleneck_mbps: c.bottleneck_mbps,
        access_mbps: c.access_mbps,
        events: sim.events(),
        bottleneck_tx_pkts: bn.counters.tx_pkts,
        bottleneck_drops: bn.counters.drops,
        util: bn.utilisation,
        goodput_mbps: sim.goodput_bytes() as f64 * 8.0 / c.simtime_s / 1e6,
        delivered_pkts: cons.delivered,
        link_tx_pkts,
        wall_s,
        setup_cpu_s,
        cpu_s,
        base_rss_kb,
        peak_rss_kb: peak_rss_kb().unwrap_or(0),
    })
}

/// Peak resident set size of this process in kB (Linux VmHWM), if readable.
pub fn peak_rss_kb() -> Option<u64> {
    status_kb("VmHWM:")
}

fn status_kb(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines().find(|l| l.starts_with(key))?.split_whitespace().nth(1)?.parse().ok()
}

/// CPU time this process has used, in seconds (`CLOCK_PROCESS_CPUTIME_ID`: nanosecond resolution,
/// unlike the scheduler-tick counters of /proc), if the platform gives it.
pub fn process_cpu_s() -> Option<f64> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    (r == 0).then_some(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::scenario::{from_toml, BufferSpec, Spec};

    /// The benchmark scenario as a file (`scenario`'s documentation), the form it had before.
    fn written(c: &BenchConfig) -> String {
        let BenchConfig { flows, simtime_s, seed, bottleneck_mbps, access_mbps } = *c;
        let ssthresh = bdp_pkts(bottleneck_mbps) * 1000 / flows.max(1) as u64;
        let (bn_buf, acc_buf) = (bdp_pkts(bottleneck_mbps), bdp_pkts(access_mbps));
        format!(
            r#"name = "bench-{flows}"
duration = {simtime_s}
seed = {seed}
packet_size = 1000
handshake = false

[topology]
kind = "dumbbell"
pairs = {flows}
bottleneck = {{ capacity = "{bottleneck_mbps}Mbps", delay = "48ms", buffer = "{bn_buf}pkt", router = "droptail" }}
access = {{ capacity = "{access_mbps}Mbps", delay = "1ms", buffer = "{acc_buf}pkt" }}

[[flows]]
name = "bulk"
protocol = "newreno"
src = "s{{i}}"
dst = "d{{i}}"
count = {flows}
initial_window = 10
initial_ssthresh = {ssthresh}

[record]
interval = "1s"
flows = false
ports = ["r0->r1"]
"#
        )
    }

    fn resolved(c: &BenchConfig) -> Spec {
        from_raw(scenario(c), "bench").unwrap()
    }

    #[test]
    fn the_scenario_built_in_code_is_the_written_one() {
        let configs = [
            BenchConfig::new(1, 60.0, 1),
            BenchConfig::new(1000, 5.0, 7),
            BenchConfig { bottleneck_mbps: 4000.0, access_mbps: 10000.0, ..BenchConfig::new(10_000, 10.0, 1) },
            BenchConfig { bottleneck_mbps: 1.5, access_mbps: 2.25, ..BenchConfig::new(3, 1.5, 2) },
        ];
        for c in configs {
            let from_file = from_toml(&written(&c), "bench").unwrap();
            let json = |s: &Spec| serde_json::to_string(s).unwrap();
            assert_eq!(json(&resolved(&c)), json(&from_file), "{c:?}");
        }
    }

    #[test]
    fn buffers_are_one_bdp_at_each_rate_and_ssthresh_bdp_over_n() {
        // 4 Gb/s x 100 ms = 50 MB = 50,000 packets; 10 Gb/s: 125,000; ssthresh 50 MB / 10,000.
        let c = BenchConfig { bottleneck_mbps: 4000.0, access_mbps: 10000.0, ..BenchConfig::new(10_000, 10.0, 1) };
        let s = resolved(&c);
        // Links: the 10,000 senders' access links, the bottleneck, the receivers' access links.
        let bn = &s.links[10_000];
        assert_eq!((bn.capacity_bps, bn.delay, bn.buffer), (4e9, 48_000_000, BufferSpec::Packets(50_000)));
        let acc = &s.links[0];
        assert_eq!((acc.capacity_bps, acc.delay, acc.buffer), (1e10, 1_000_000, BufferSpec::Packets(125_000)));
        assert_eq!(
            (s.flows.len(), s.flows[0].initial_ssthresh, s.flows[0].initial_window),
            (10_000, Some(5000), Some(10))
        );
        // The standard form: 1250 and 12,500 packets, ssthresh 1.25 MB / N.
        let s = resolved(&BenchConfig::new(10, 60.0, 1));
        assert_eq!((s.links[10].buffer, s.links[0].buffer), (BufferSpec::Packets(1250), BufferSpec::Packets(12_500)));
        assert_eq!(s.flows[0].initial_ssthresh, Some(125_000));
    }

    /// The htsim-aligned model changes only the RTO floor and Limited Transmit; the default
    /// model is the standard scenario.
    #[test]
    fn the_tcp_model_sets_the_rto_floor_and_limited_transmit_only() {
        let c = BenchConfig::new(10, 5.0, 1);
        let json = |s: &Spec| serde_json::to_value(s).unwrap();
        let std = resolved(&c);
        assert_eq!(json(&from_raw(scenario_with(&c, &TcpModel::default()), "bench").unwrap()), json(&std));
        let htsim = TcpModel { min_rto_s: Some(0.25), limited_transmit: false };
        let raw = scenario_with(&c, &htsim);
        assert_eq!(raw.min_rto, Some(Seconds(0.25)));
        assert_eq!(raw.flows[0].params, Some(serde_json::json!({ "limited_transmit": false })));
        let s = from_raw(raw, "bench").unwrap();
        assert_ne!(json(&s), json(&std));
        assert_eq!((s.links.len(), s.flows.len()), (std.links.len(), std.flows.len()));
        assert_eq!(
            TcpModel { min_rto_s: Some(0.0), ..htsim }.check().unwrap_err().split(' ').next(),
            Some("--min-rto")
        );
        assert!(run_model(&c, &TcpModel { min_rto_s: Some(f64::NAN), ..htsim }).is_err());
    }

    #[test]
    fn bad_options_are_refused_by_name() {
        let ok = BenchConfig::new(1, 1.0, 1);
        assert_eq!(ok.check(), Ok(()));
        let bad = [
            (BenchConfig { flows: 0, ..ok }, "--flows"),
            (BenchConfig { simtime_s: 0.0, ..ok }, "--simtime"),
            (BenchConfig { simtime_s: f64::NAN, ..ok }, "--simtime"),
            (BenchConfig { bottleneck_mbps: 0.5, ..ok }, "--bottleneck-mbps"),
            (BenchConfig { access_mbps: f64::INFINITY, ..ok }, "--access-mbps"),
        ];
        for (c, opt) in bad {
            let e = c.check().unwrap_err();
            assert!(e.starts_with(opt), "{e}");
            assert!(run_config(&c).unwrap_err().to_string().contains(opt));
        }
    }
}
