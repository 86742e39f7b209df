//! What a live run measured: per flow (goodput, one-way delays, the endpoints' counters), per
//! emulated port (utilisation, drops, marks, as the simulator's port summary), and the router's
//! own figures (foreign packets, lateness, CPU cost per packet).

use crate::host::{EndReport, HostStats, Snapshot, BIN_NS, RECEIVER, SENDER};
use crate::router::{Router, RouterStats};
use racc_proto::endpoint::EndpointStats;
use racc_proto::time::Time;
use racc_sim::metrics::PortSeries;
use racc_sim::Spec;
use std::fmt;

#[derive(Clone, Debug)]
pub struct FlowReport {
    pub flow: usize,
    pub group: String,
    pub protocol: String,
    pub start_s: f64,
    /// Payload bytes delivered in order to the receiving application.
    pub rx_bytes: u64,
    /// `rx_bytes` over the time from the flow's start to the end of the run (or its completion).
    pub goodput_bps: f64,
    pub sender: EndpointStats,
    pub receiver: EndpointStats,
    pub done_s: Option<f64>,
    /// Datagrams lost at the hosts' sockets (outside the emulated network).
    pub tx_errors: u64,
    /// Wire bytes of data received per 100 ms bin of run time.
    pub rx_bins: Vec<u64>,
    /// One-way delays of the data packets received, ns, in arrival order.
    pub owd_ns: Vec<u32>,
    /// Each end's figures at the run's sample times ([`crate::host::Snapshot`]).
    pub sender_samples: Vec<Snapshot>,
    pub receiver_samples: Vec<Snapshot>,
    /// Datagrams each end sent (all kinds).
    pub tx_pkts: u64,
    /// The IP IDs of the data packets the sender sent, in order.
    pub sent_data_ids: Vec<u16>,
    /// Datagrams the flow's two ends dropped as not of this run, and as replays (`auth.rs`).
    pub rx_forged: u64,
    pub rx_replayed: u64,
}

impl FlowReport {
    /// Rate of data wire bytes at the receiver between `from_s` and `to_s` (whole bins), bit/s.
    pub fn rx_wire_bps(&self, from_s: f64, to_s: f64) -> f64 {
        let bin_s = BIN_NS as f64 * 1e-9;
        let (a, b) = ((from_s / bin_s).round() as usize, (to_s / bin_s).round() as usize);
        let bytes: u64 = (a..b).map(|i| self.rx_bins.get(i).copied().unwrap_or(0)).sum();
        bytes as f64 * 8.0 / ((b - a) as f64 * bin_s)
    }
}

#[derive(Clone, Debug)]
pub struct PortReport {
    pub name: String,
    pub router: &'static str,
    pub capacity_bps: f64,
    /// Wire bytes sent over the run's duration, as a fraction of the capacity.
    pub utilisation: f64,
    pub arrivals: u64,
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    pub drops: u64,
    pub losses: u64,
    pub marks: u64,
    pub max_queue_pkts: u32,
    /// Time-averaged waiting queue over the run (the simulator's port summary).
    pub mean_queue_pkts: f64,
    pub mean_queue_bytes: f64,
    pub delay_s: f64,
    pub limit_pkts: u32,
    pub limit_bytes: u64,
}

#[derive(Clone, Debug)]
pub struct LiveReport {
    pub name: String,
    /// How long the run lasted, ns (the scenario's duration unless interrupted).
    pub duration: Time,
    /// Leftovers of dead runs removed before this one.
    pub swept: Vec<String>,
    pub flows: Vec<FlowReport>,
    pub ports: Vec<PortReport>,
    pub router: RouterStats,
    /// The host threads' loops, summed.
    pub hosts: HostStats,
    /// The recorded ports' rows at the sample times (the `links` table).
    pub port_series: PortSeries,
    /// `--pcap`: packets written per port, and the error that stopped the capture, if any.
    pub pcap: Option<(Vec<u64>, Option<String>)>,
    /// What broke the run off before the scenario's end (a signal), if anything: the run is
    /// then incomplete and its results are marked so.
    pub stopped: Option<String>,
}

/// The `q`-quantile (0..=1) of `v` (sorted copy), or 0 when empty.
impl LiveReport {
    /// Packets dropped as not tied to this run (router and hosts; `auth.rs`).
    pub fn forged(&self) -> u64 {
        self.router.forged + self.flows.iter().map(|f| f.rx_forged).sum::<u64>()
    }

    /// Packets of this run dropped as replays (router and hosts).
    pub fn replayed(&self) -> u64 {
        self.router.replayed + self.flows.iter().map(|f| f.rx_replayed).sum::<u64>()
    }
}

pub fn quantile(v: &[u32], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_unstable();
    s[((s.len() - 1) as f64 * q).round() as usize] as f64
}

pub fn build(spec: &Spec, router: Router, ends: Vec<EndReport>, wall: Time, swept: Vec<String>) -> LiveReport {
    let dur_s = wall as f64 * 1e-9;
    let mut flows: Vec<FlowReport> = spec
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| FlowReport {
            flow: i,
            group: f.group.clone(),
            protocol: f.protocol.clone(),
            start_s: f.start as f64 * 1e-9,
            rx_bytes: 0,
            goodput_bps: 0.0,
            sender: EndpointStats::default(),
            receiver: EndpointStats::default(),
            done_s: None,
            tx_errors: 0,
            rx_bins: Vec::new(),
            owd_ns: Vec::new(),
            sender_samples: Vec::new(),
            receiver_samples: Vec::new(),
            tx_pkts: 0,
            sent_data_ids: Vec::new(),
            rx_forged: 0,
            rx_replayed: 0,
        })
        .collect();
    for e in ends {
        let fr = &mut flows[e.flow];
        fr.tx_errors += e.tx_errors;
        fr.tx_pkts += e.tx_pkts;
        fr.rx_forged += e.rx_forged;
        fr.rx_replayed += e.rx_replayed;
        if e.side == SENDER {
            fr.sender = e.stats;
            fr.done_s = e.done_at.map(|t| t as f64 * 1e-9);
            fr.sender_samples = e.samples;
            fr.sent_data_ids = e.sent_data_ids;
        } else if e.side == RECEIVER {
            fr.receiver = e.stats;
            fr.rx_bins = e.rx_bins;
            fr.owd_ns = e.owd_ns;
            fr.receiver_samples = e.samples;
        }
    }
    for fr in flows.iter_mut() {
        fr.rx_bytes = fr.receiver.bytes;
        let span = fr.done_s.unwrap_or(dur_s) - fr.start_s;
        fr.goodput_bps = if span > 0.0 { fr.rx_bytes as f64 * 8.0 / span } else { 0.0 };
    }
    let ports = router
        .ports
        .iter()
        .map(|p| {
            let c = p.c;
            PortReport {
                name: p.name.clone(),
                router: p.module_name(),
                capacity_bps: p.capacity_bps(),
                utilisation: p.wire_bytes(wall, &router.pkts) * 8.0 / (p.capacity_bps() * dur_s),
                arrivals: c.arrivals,
                tx_pkts: c.tx_pkts,
                tx_bytes: c.tx_bytes,
                drops: c.drops,
                losses: c.losses,
                marks: c.marks,
                max_queue_pkts: c.max_queue_pkts,
                mean_queue_pkts: c.queue_pkt_ns as f64 / wall.max(1) as f64,
                mean_queue_bytes: c.queue_byte_ns as f64 / wall.max(1) as f64,
                delay_s: p.delay as f64 * 1e-9,
                limit_pkts: p.limit_pkts,
                limit_bytes: p.limit_bytes,
            }
        })
        .collect();
    let pcap = router.capture_status().map(|c| (c.file.counts.clone(), c.error.clone()));
    LiveReport {
        pcap,
        name: spec.name.clone(),
        duration: wall,
        swept,
        flows,
        ports,
        router: router.stats,
        hosts: HostStats::default(),
        port_series: router.series,
        stopped: None,
    }
}

impl fmt::Display for LiveReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "live run `{}`: {:.3} s", self.name, self.duration as f64 * 1e-9)?;
        if let Some(why) = &self.stopped {
            writeln!(f, "INCOMPLETE: stopped by {why} at {:.3} s", self.duration as f64 * 1e-9)?;
        }
        if !self.swept.is_empty() {
            writeln!(f, "removed leftovers of dead runs: {}", self.swept.join(", "))?;
        }
        writeln!(
            f,
            "flow  protocol    goodput(Mb/s)  rx 2nd half(Mb/s)  retx  timeouts  owd p50/p99 (ms)  host drops"
        )?;
        let dur_s = self.duration as f64 * 1e-9;
        for fl in &self.flows {
            writeln!(
                f,
                "{:>4}  {:<10} {:>14.3} {:>18.3} {:>5} {:>9}  {:>7.3}/{:<7.3}  {:>10}",
                fl.flow,
                fl.protocol,
                fl.goodput_bps * 1e-6,
                fl.rx_wire_bps(dur_s / 2.0, dur_s) * 1e-6,
                fl.sender.retransmits,
                fl.sender.timeouts,
                quantile(&fl.owd_ns, 0.5) * 1e-6,
                quantile(&fl.owd_ns, 0.99) * 1e-6,
                fl.tx_errors
            )?;
        }
        writeln!(f, "port              router     capacity(Mb/s)  util    tx_pkts   drops  losses   marks  maxq")?;
        for p in &self.ports {
            if p.arrivals == 0 {
                continue;
            }
            writeln!(
                f,
                "{:<17} {:<10} {:>14.3} {:>5.3} {:>10} {:>7} {:>7} {:>7} {:>5}",
                p.name,
                p.router,
                p.capacity_bps * 1e-6,
                p.utilisation,
                p.tx_pkts,
                p.drops,
                p.losses,
                p.marks,
                p.max_queue_pkts
            )?;
        }
        let r = &self.router;
        let per_pkt = if r.rx_pkts > 0 { r.cpu_ns as f64 / r.rx_pkts as f64 } else { 0.0 };
        writeln!(
            f,
            "router: {} packets read, {} delivered, {} foreign (not IPv4 {}, not UDP {}, not racc {}, other wire version {}, misrouted {}), \
             {} write errors; CPU {:.0} ns per packet read ({:.0} ns in its write, {:.0} ns reads per packet), {} loops ({} slept through to a timer, {} polled); delivery lateness p50 {:.1} us, p99 {:.1} us; \
             {:.1} ms runnable but not running; {} lost in full receive rings",
            r.rx_pkts,
            r.delivered,
            r.foreign(),
            r.not_ipv4,
            r.not_udp,
            r.not_racc,
            r.bad_version,
            r.misrouted,
            r.write_errors + r.write_back_errors,
            per_pkt,
            r.write_ns as f64 / r.delivered.max(1) as f64,
            r.read_ns as f64 / r.rx_pkts.max(1) as f64,
            r.loops,
            r.coalesced,
            r.spins,
            quantile(&r.lateness_ns, 0.5) * 1e-3,
            quantile(&r.lateness_ns, 0.99) * 1e-3,
            r.run_delay_ns as f64 * 1e-6,
            r.ring_drops
        )?;
        writeln!(
            f,
            "authentication: {} forged and {} replayed racc packets dropped (router {} and {}, hosts {} and {})",
            self.forged(),
            self.replayed(),
            r.forged,
            r.replayed,
            self.forged() - r.forged,
            self.replayed() - r.replayed
        )?;
        let h = &self.hosts;
        writeln!(
            f,
            "hosts: CPU {:.0} ns per packet the router read, {} loops ({} held after receiving)",
            h.cpu_ns as f64 / r.rx_pkts.max(1) as f64,
            h.loops,
            h.held
        )
    }
}
