//! From the raw file to a checked [`Spec`]: the order of the steps. Each step has its own file:
//! `topology.rs` expands the topology shortcuts, `links.rs` resolves each link (buffer, router
//! module, loss), `media.rs` each shared medium, `routes.rs` computes routes (per flow with ECMP), `flows.rs`
//! generates every flow (with `host_options.rs` and `sizes.rs`) and `web.rs` every web-like
//! source, `record.rs` and `tunnels.rs` resolve those sections, and `consistency.rs` checks what
//! is valid part by part but wrong together. Every impossible value is refused naming the key.

use super::buffers::check_bdp_buffers;
use super::consistency;
use super::ctx::Ctx;
use super::error::ScenarioError;
use super::flows::FlowBuilder;
use super::limits;
use super::raw::RawScenario;
use super::record::record_ports;
use super::routes::Routes;
use super::spec::{FlowSpec, PortMap, Spec};
use super::topology::topology;
use super::tunnels::tunnels;
use racc_proto::registry::Registry;
use racc_proto::time::NS_PER_MS;
use rustc_hash::FxHashMap as FastMap;

/// Headers of a TCP-like data packet: the smallest packet that still carries a byte.
const MIN_PACKET_SIZE: i64 = 41;

pub(super) fn build(raw: RawScenario, source: &str, registry: &Registry) -> Result<Spec, ScenarioError> {
    let cx = Ctx { source, registry };
    let lim = limits::limits(&cx, &raw.limits)?;
    if !(raw.duration.0.is_finite() && raw.duration.0 > 0.0) {
        return Err(cx.err("duration", format!("must be > 0, got {} s", raw.duration.0)));
    }
    let duration = limits::clock_ns(&cx, "duration", raw.duration.0)?;
    if !(MIN_PACKET_SIZE..=65_535).contains(&raw.packet_size) {
        return Err(cx.err(
            "packet_size",
            format!(
                "must be between {MIN_PACKET_SIZE} and 65535 bytes (it includes 40 B of headers), got {}",
                raw.packet_size
            ),
        ));
    }
    let packet_size = raw.packet_size as u32;
    let min_rto = match raw.min_rto {
        Some(s) if !(s.0.is_finite() && s.0 > 0.0) => {
            return Err(cx.err("min_rto", format!("must be > 0, got {} s", s.0)))
        }
        Some(s) => limits::clock_ns(&cx, "min_rto", s.0)?,
        None => 200 * NS_PER_MS,
    };
    let sample_interval = match raw.record.interval {
        Some(s) if !(s.0.is_finite() && s.0 > 0.0) => {
            return Err(cx.err("record.interval", format!("must be > 0, got {} s", s.0)))
        }
        Some(s) => {
            let ns = limits::clock_ns(&cx, "record.interval", s.0)?;
            if ns > duration {
                return Err(cx.err("record.interval", "must not exceed the run's duration"));
            }
            ns
        }
        // About 1000 samples per run, but never finer than 10 ms, nor longer than the run.
        None => (duration / 1000).max(10 * NS_PER_MS).min(duration),
    };

    // Counts from the file alone: what is certain to be too big is refused before it is made.
    super::estimate::before_build(&cx, &raw, &lim, duration, sample_interval)?;
    let (nodes, links, media) = topology(&cx, &raw.topology, packet_size)?;
    let names: FastMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let ports = PortMap { nodes: &nodes, links: &links, media: &media };
    let ecmp = raw.topology.ecmp.unwrap_or(raw.topology.kind == "fat_tree");
    let mut routes = Routes::new(&nodes, ports, ecmp.then_some(raw.seed));

    let mut fb = FlowBuilder {
        cx: &cx,
        names: &names,
        nodes: &nodes,
        routes: &mut routes,
        handshake: raw.handshake,
        packet_size,
        duration,
        seed: raw.seed,
        limits: lim,
        out: Vec::new(),
        sources: Vec::new(),
        expected_made: 0.0,
    };
    for (gi, g) in raw.flows.iter().enumerate() {
        fb.flow_group(gi, g)?;
    }
    for (ti, t) in raw.traffic.iter().enumerate() {
        fb.traffic_generator(ti, t)?;
    }
    let (mut flows, sources, expected_made) = (fb.out, fb.sources, fb.expected_made);
    let record_ports = record_ports(&cx, raw.record.ports.as_ref(), ports)?;
    let tunnels = tunnels(&cx, &raw.tunnels, &names, ports, &mut routes)?;
    let recording = limits::Recording {
        duration,
        interval: sample_interval,
        interval_given: raw.record.interval.is_some(),
        record_ports: record_ports.len(),
        record_flows: raw.record.flows,
        record_groups: raw.record.groups,
        flows: &flows,
        sources: &sources,
        expected_made,
    };
    limits::check_samples(&cx, &lim, &recording)?;
    let every_flow: Vec<&FlowSpec> = flows.iter().chain(sources.iter().map(|s| &s.flow)).collect();
    consistency::check_path_contracts(&raw, &every_flow, ports, &routes.paths)
        .map_err(|(key, reason)| cx.err(key, reason))?;
    // The engine starts flows in order; ties keep their file order (stable sort).
    flows.sort_by_key(|f: &FlowSpec| f.start);

    let spec = Spec {
        name: raw.name.unwrap_or_else(|| stem(source)),
        seed: raw.seed,
        duration,
        packet_size,
        min_rto,
        sample_interval,
        record_flows: raw.record.flows,
        record_groups: raw.record.groups,
        record_ports,
        nodes,
        links,
        media,
        routes: routes.paths,
        flows,
        sources,
        tunnels,
    };
    check_bdp_buffers(&spec).map_err(|e| cx.err(e.key, e.reason))?;
    super::estimate::check(&cx, &lim, &super::estimate::Estimate::of(&spec))?;
    Ok(spec)
}

fn stem(source: &str) -> String {
    let base = source.rsplit(['/', '\\']).next().unwrap_or(source);
    base.split('.').next().unwrap_or(base).to_string()
}
