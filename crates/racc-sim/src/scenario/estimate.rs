//! A run's cost, estimated from the scenario before it is built (issue 37, item 3): its peak
//! memory and its simulated events, refused above `limits.memory` and `limits.events`.
//!
//! Twice: [`before_build`] from the file's counts alone (flows, nodes, ports, sample rows), so that
//! `pairs = 1000000` or ten million flows are refused before any node or flow exists; then
//! [`Estimate::of`] from the built [`Spec`] (exact sample rows, packets in flight, events), before
//! the engine allocates anything. Both name the key to change.
//!
//! Memory is a sum of measured costs (`tests/python/test_bounds.py` checks it against the peak
//! resident size of five shipped scenarios): the interpreter and libraries, each sample row
//! (held once by the engine, then as the results' table and while its Parquet file is written),
//! each flow, port and node, and each packet in flight (at most every buffer full and every
//! link's wire full: capacity times delay).
//!
//! Events: each packet a port sends is about one event, and its acknowledgement another on the
//! way back. A port sends at most its capacity, and at most what the flows crossing it can
//! offer: each flow at most its path's slowest port, for its lifetime, and a sized flow no more
//! than its size. The sum over ports is an upper bound (losses retransmit a little more).

use super::ctx::Ctx;
use super::limits::Limits;
use super::raw::{RawPortSelection, RawScenario};
use super::spec::{BufferSpec, PortKind, Spec};
use super::ScenarioError;
use racc_proto::packet::hdr::payload;

/// Bytes of the process before a run: the interpreter, polars, numpy and the engine's library
/// (measured 95–100 MB for small runs; 120 MB keeps the estimate a bound across library versions).
pub const BASE_BYTES: f64 = 120e6;
/// Peak bytes per sample row: the engine's columns, then the results' table built from them
/// (the two coexist while it is built), and the Parquet writer's pages.
pub const BYTES_PER_ROW: f64 = 240.0;
/// Bytes per flow: its spec, its sender and receiver state, its summary row.
pub const BYTES_PER_FLOW: f64 = 2_000.0;
/// Bytes per port: queue, router module, counters, summary row.
pub const BYTES_PER_PORT: f64 = 6_000.0;
/// Bytes per node (name, routes through it).
pub const BYTES_PER_NODE: f64 = 200.0;
/// Bytes per packet in flight (slab slot and queue entry) and per pending event.
pub const BYTES_PER_PACKET: f64 = 100.0;

/// What a run is expected to cost.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Estimate {
    pub nodes: f64,
    pub ports: f64,
    pub flows: f64,
    /// Sample rows (an upper bound once built; a lower bound from the file alone).
    pub rows: f64,
    /// Packets in flight at most: every buffer full and every link's wire full.
    pub packets: f64,
    /// Simulated events (0 from the file alone).
    pub events: f64,
}

impl Estimate {
    /// Peak resident bytes of the process running it.
    pub fn memory_bytes(&self) -> f64 {
        BASE_BYTES
            + self.rows * BYTES_PER_ROW
            + self.flows * BYTES_PER_FLOW
            + self.ports * BYTES_PER_PORT
            + self.nodes * BYTES_PER_NODE
            + self.packets * BYTES_PER_PACKET
    }

    /// From the built scenario, before the engine exists.
    pub fn of(spec: &Spec) -> Estimate {
        let pm = spec.port_map();
        let n_ports = pm.count();
        let port = |p: usize| -> (f64, BufferSpec) {
            match pm.kind(p) {
                PortKind::Link { link, .. } => (spec.links[link].capacity_bps, spec.links[link].buffer),
                PortKind::Medium { medium, .. } => (spec.media[medium].capacity_bps, spec.media[medium].buffer),
            }
        };
        let pkt_bits = spec.packet_size as f64 * 8.0;
        let dur = spec.duration as f64 * 1e-9;
        let every: Vec<&super::FlowSpec> = spec.flows.iter().chain(spec.sources.iter().map(|s| &s.flow)).collect();
        // Per port: the packets the flows crossing it could offer, and the longest RTT (BDP buffers).
        let mut offered = vec![0f64; n_ports];
        let mut rtt = vec![0f64; n_ports];
        // Each flow's bottleneck (its route's slowest port) in both directions: what the flows
        // sharing a bottleneck hold in the network is bounded by its buffer plus its BDP, since
        // their windows overflow it beyond that. Other ports queue only bursts.
        let mut bottleneck = vec![false; n_ports];
        // Per forward bottleneck: the packets its flows offer, and their longest round trip in hops.
        let mut through = vec![0f64; n_ports];
        let mut hops = vec![0usize; n_ports];
        let slowest_port = |route: &[usize]| route.iter().copied().min_by(|&a, &b| port(a).0.total_cmp(&port(b).0));
        for f in &every {
            let (fwd, rev) = (&spec.routes[f.fwd_route], &spec.routes[f.rev_route]);
            let fwd_bottleneck = slowest_port(fwd);
            for p in [fwd_bottleneck, slowest_port(rev)].into_iter().flatten() {
                bottleneck[p] = true;
            }
            let slowest = fwd_bottleneck.map_or(f64::INFINITY, |p| port(p).0);
            let end = f.stop.unwrap_or(spec.duration).min(spec.duration);
            let life = end.saturating_sub(f.start) as f64 * 1e-9;
            let mut pkts = if slowest.is_finite() { slowest / pkt_bits * life } else { 0.0 };
            if let Some(b) = f.size_bytes {
                pkts = pkts.min(b as f64 / payload(spec.packet_size) as f64 + 2.0);
            }
            if let Some(b) = fwd_bottleneck {
                through[b] += pkts;
                hops[b] = hops[b].max(fwd.len() + rev.len());
            }
            let r = spec.propagation_rtt(f) as f64 * 1e-9;
            for &p in fwd.iter().chain(rev) {
                offered[p] += pkts;
                rtt[p] = rtt[p].max(r);
            }
        }
        let (mut every_port, mut at_bottlenecks, mut sent) = (0.0, 0.0, 0.0);
        for (p, (&o, &r)) in offered.iter().zip(&rtt).enumerate() {
            let (cap, buffer) = port(p);
            let buffer = match buffer {
                BufferSpec::Packets(n) => n as f64,
                BufferSpec::Bytes(b) => b as f64 / spec.packet_size as f64,
                BufferSpec::Bdp(x) => x * cap * r / pkt_bits,
            };
            // On the port's wire (its own delay), and in its buffer; never more than the flows offer.
            every_port += (cap * pm.delay(p) as f64 * 1e-9 / pkt_bits + buffer).min(o);
            if bottleneck[p] {
                // Its buffer and the whole path's round trip at its rate.
                at_bottlenecks += (buffer + cap * r / pkt_bits).min(o);
            }
            sent += o.min(cap / pkt_bits * dur);
        }
        let packets = every_port.min(at_bottlenecks.max(1.0));
        // The flows through a bottleneck send at most its capacity between them (twice it, for
        // what its buffer drops after earlier hops), each packet
        // (and its ACK) one event per hop: a second bound on the packet-hops.
        let by_bottleneck: f64 = (0..n_ports)
            .filter(|&p| hops[p] > 0)
            .map(|p| through[p].min(2.0 * port(p).0 / pkt_bits * dur) * hops[p] as f64)
            .sum();
        let sent = sent.min(by_bottleneck.max(1.0));
        let interval = spec.sample_interval.max(1);
        let times = spec.duration.div_ceil(interval) as f64 + 1.0;
        let per_port = if spec.record_groups {
            let mut groups: Vec<&str> = every.iter().map(|f| f.group.as_str()).collect();
            groups.sort_unstable();
            groups.dedup();
            1.0 + if groups.len() > 1 { groups.len() as f64 } else { 0.0 }
        } else {
            1.0
        };
        let flow_rows: f64 = if spec.record_flows {
            every
                .iter()
                .map(|f| {
                    let end = f.stop.unwrap_or(spec.duration).min(spec.duration);
                    end.saturating_sub(f.start).div_ceil(interval) as f64 + 2.0
                })
                .sum()
        } else {
            0.0
        };
        Estimate {
            nodes: spec.nodes.len() as f64,
            ports: n_ports as f64,
            flows: every.len() as f64,
            rows: times + times * spec.record_ports.len() as f64 * per_port + flow_rows,
            packets,
            // Each packet (data out, acknowledgements back) once per port it leaves, the samples,
            // and each flow's start, handshake and end.
            events: sent + times + 10.0 * every.len() as f64,
        }
    }
}

/// Counts from the file alone, before the topology or any flow is made: refuse what is already
/// certain to exceed `limits.samples` or `limits.memory` (a lower bound on both, so it never
/// refuses what the full estimate would accept).
pub(super) fn before_build(
    cx: &Ctx,
    raw: &RawScenario,
    lim: &Limits,
    duration: u64,
    interval: u64,
) -> Result<(), ScenarioError> {
    let t = &raw.topology;
    // Nodes, links and ports leaving a router, as the shortcut will make them.
    let (nodes, links, router_ports) = match t.kind.as_str() {
        "dumbbell" => {
            let n = t.pairs.unwrap_or(0).clamp(0, 1_000_000) as f64;
            (2.0 * n + 2.0, 2.0 * n + 1.0, 2.0 * n + 2.0)
        }
        "parking_lot" => {
            let k = t.links.as_ref().map_or(0, Vec::len) as f64;
            (3.0 * k + 3.0, 3.0 * k + 2.0, 4.0 * k + 2.0)
        }
        "fat_tree" => {
            let k = t.k.unwrap_or(0).clamp(0, super::fat_tree::MAX_K) as usize;
            let (hosts, pod, core) = super::fat_tree::counts(k);
            let links = 3.0 * hosts as f64;
            ((hosts + 2 * pod + core) as f64, links, 2.0 * links - hosts as f64)
        }
        _ => {
            let n = t.nodes.as_ref().map_or(0, Vec::len) as f64;
            let l = t.links.as_ref().map_or(0, Vec::len) as f64;
            (n, l, 0.0) // a lower bound: which end is a router is checked later
        }
    };
    let members: f64 = t.media.iter().flatten().map(|m| m.stations.len() as f64 + 1.0).sum();
    let ports = 2.0 * links + members;
    let recorded = match &raw.record.ports {
        None => ports,
        Some(RawPortSelection::Keyword(k)) if k == "all" => ports,
        Some(RawPortSelection::Keyword(k)) if k == "routers" => router_ports,
        Some(RawPortSelection::Keyword(_)) => 0.0,
        Some(RawPortSelection::Names(n)) => (n.len() as f64).min(ports).min(1.0),
    };
    let secs = |s: Option<super::units::Seconds>| s.map(|s| s.0 * 1e9).filter(|v| v.is_finite() && *v >= 0.0);
    let interval = interval.max(1) as f64;
    let dur = duration as f64;
    let times = (dur / interval).ceil() + 1.0;
    // Flows, and the rows each must record at least: from its latest possible start to its stop.
    let (mut flows, mut flow_rows) = (0.0, 0.0);
    for g in &raw.flows {
        let count = g.count.clamp(0, 10_000_000) as f64;
        let start = secs(g.start).unwrap_or(0.0) + secs(g.start_spread).unwrap_or(0.0);
        let end = secs(g.stop).unwrap_or(dur).min(dur);
        flows += count;
        flow_rows += count * (((end - start).max(0.0) / interval).ceil() + 2.0);
    }
    for tr in &raw.traffic {
        flows += match tr.kind.as_str() {
            // A connection matrix reaches the engine as a trace's rows.
            "trace" | "connection_matrix" => tr.arrivals.as_ref().map_or(0, |a| a.start.len()) as f64,
            "web" => tr.sources.unwrap_or(0).max(0) as f64,
            _ => 0.0, // Poisson: checked by `limits.flows` before any is drawn
        };
    }
    if !raw.record.flows {
        flow_rows = 0.0;
    }
    let rows = times + times * recorded + flow_rows;
    if rows > lim.samples as f64 {
        let key = if raw.record.interval.is_some() { "record.interval" } else { "limits.samples" };
        return Err(cx.err(
            key,
            format!(
                "the run would record at least {} sample rows ({} sample times, {} port rows over {recorded} recorded \
                 ports, {} flow rows over {flows} flows), more than `limits.samples` = {} (about {BYTES_PER_ROW} bytes \
                 each at the run's peak): sample less often (`record.interval`), record fewer ports \
                 (`record.ports`) or no per-flow series (`record.flows = false`), or raise `limits.samples` if the \
                 machine has room",
                rows as u128,
                times as u128,
                (times * recorded) as u128,
                flow_rows as u128,
                lim.samples
            ),
        ));
    }
    let est = Estimate { nodes, ports, flows, rows, packets: 0.0, events: 0.0 };
    check_memory(cx, lim, &est, "at least ")
}

/// The refusal of a run whose estimate exceeds `limits.memory` or `limits.events`.
pub(super) fn check(cx: &Ctx, lim: &Limits, est: &Estimate) -> Result<(), ScenarioError> {
    check_memory(cx, lim, est, "")?;
    if est.events > lim.events as f64 {
        return Err(cx.err(
            "limits.events",
            format!(
                "the run is estimated at up to {:.3e} simulated events ({:.3e} packets in flight, {} ports, {} \
                 flows), more than `limits.events` = {:.3e} (hours of computing at a few million events per \
                 second): shorten `duration`, lower the link capacities, or raise `limits.events`",
                est.events, est.packets, est.ports, est.flows, lim.events as f64
            ),
        ));
    }
    Ok(())
}

fn check_memory(cx: &Ctx, lim: &Limits, est: &Estimate, bound: &str) -> Result<(), ScenarioError> {
    let bytes = est.memory_bytes();
    if bytes <= lim.memory as f64 {
        return Ok(());
    }
    Err(cx.err(
        "limits.memory",
        format!(
            "the run is estimated to need {bound}{} of memory ({:.3e} sample rows, {} flows, {} ports, {} nodes, \
             {:.3e} packets in flight), more than `limits.memory` = {}: make it smaller (`record.interval`, \
             `record.ports`, `record.flows = false`, fewer flows or hosts), or raise `limits.memory` if the machine \
             has room",
            gb(bytes),
            est.rows,
            est.flows,
            est.ports,
            est.nodes,
            est.packets,
            gb(lim.memory as f64)
        ),
    ))
}

fn gb(bytes: f64) -> String {
    format!("{:.2} GB", bytes / 1e9)
}
