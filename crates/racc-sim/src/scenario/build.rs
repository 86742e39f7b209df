//! From the raw file to a checked [`Spec`]: expand topology shortcuts, resolve names, convert
//! units, generate every flow, and refuse impossible values naming the key.

use super::raw::{RawFlows, RawHostOptions, RawLink, RawScenario, RawTopology, RawTraffic};
use super::spec::{BufferSpec, FlowSpec, LinkSpec, NodeSpec, Spec, TunnelSpec};
use super::units::Amount;
use super::{consistency, ScenarioError};
use crate::routing::Graph;
use crate::traffic;
use racc_proto::loss::LossSpec;
use racc_proto::registry;
use racc_proto::time::{secs, NS_PER_MS};
use std::collections::HashMap;

/// Headers of a TCP-like data packet: the smallest packet that still carries a byte.
const MIN_PACKET_SIZE: i64 = 41;

struct Ctx<'a> {
    source: &'a str,
}

impl Ctx<'_> {
    fn err(&self, key: impl Into<String>, reason: impl Into<String>) -> ScenarioError {
        ScenarioError { source: self.source.into(), key: key.into(), reason: reason.into() }
    }
}

pub(super) fn build(raw: RawScenario, source: &str) -> Result<Spec, ScenarioError> {
    let cx = Ctx { source };
    if !(raw.duration.0.is_finite() && raw.duration.0 > 0.0) {
        return Err(cx.err("duration", format!("must be > 0, got {} s", raw.duration.0)));
    }
    let duration = secs(raw.duration.0);
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
        Some(s) => s.ns(),
        None => 200 * NS_PER_MS,
    };
    let sample_interval = match raw.record.interval {
        Some(s) if !(s.0.is_finite() && s.0 > 0.0) => {
            return Err(cx.err("record.interval", format!("must be > 0, got {} s", s.0)))
        }
        Some(s) if secs(s.0) > duration => return Err(cx.err("record.interval", "must not exceed the run's duration")),
        Some(s) => s.ns().max(1),
        // About 1000 samples per run, but never finer than 10 ms.
        None => (duration / 1000).max(10 * NS_PER_MS),
    };

    let (nodes, links) = topology(&cx, &raw.topology, packet_size)?;
    let names: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let mut routes = Routes::new(&nodes, &links);

    let mut fb = FlowBuilder {
        cx: &cx,
        names: &names,
        nodes: &nodes,
        routes: &mut routes,
        handshake: raw.handshake,
        packet_size,
        duration,
        seed: raw.seed,
        out: Vec::new(),
    };
    for (gi, g) in raw.flows.iter().enumerate() {
        fb.flow_group(gi, g)?;
    }
    for (ti, t) in raw.traffic.iter().enumerate() {
        fb.traffic_generator(ti, t)?;
    }
    let mut flows = fb.out;
    let record_ports = record_ports(&cx, raw.record.ports.as_ref(), &nodes, &links)?;
    let tunnels = tunnels(&cx, &raw.tunnels, &names, &nodes, &links, &mut routes)?;
    consistency::check_load_factor_interval(&raw, &flows, &links, &nodes, &routes.paths)
        .map_err(|(key, reason)| cx.err(key, reason))?;
    // The engine starts flows in order; ties keep their file order (stable sort).
    flows.sort_by_key(|f: &FlowSpec| f.start);

    Ok(Spec {
        name: raw.name.unwrap_or_else(|| stem(source)),
        seed: raw.seed,
        duration,
        packet_size,
        min_rto,
        sample_interval,
        record_flows: raw.record.flows,
        record_ports,
        nodes,
        links,
        routes: routes.paths,
        flows,
        tunnels,
    })
}

/// Resolve `record.ports` into port numbers (port 2i is link i's a -> b direction).
fn record_ports(
    cx: &Ctx,
    sel: Option<&super::raw::RawPortSelection>,
    nodes: &[NodeSpec],
    links: &[LinkSpec],
) -> Result<Vec<usize>, ScenarioError> {
    use super::raw::RawPortSelection as Sel;
    let ends = |p: usize| {
        let l = &links[p / 2];
        if p.is_multiple_of(2) {
            (l.a, l.b)
        } else {
            (l.b, l.a)
        }
    };
    let all = 0..links.len() * 2;
    Ok(match sel {
        None => all.collect(),
        Some(Sel::Keyword(k)) if k == "all" => all.collect(),
        Some(Sel::Keyword(k)) if k == "routers" => all.filter(|&p| !nodes[ends(p).0].host).collect(),
        Some(Sel::Keyword(k)) => {
            return Err(
                cx.err("record.ports", format!("must be \"all\", \"routers\" or a list of port names, got \"{k}\""))
            )
        }
        Some(Sel::Names(names)) => {
            let mut ports = Vec::new();
            for (i, n) in names.iter().enumerate() {
                let p = all
                    .clone()
                    .find(|&p| {
                        let (a, b) = ends(p);
                        format!("{}->{}", nodes[a].name, nodes[b].name) == *n
                    })
                    .ok_or_else(|| {
                        cx.err(
                            format!("record.ports[{i}]"),
                            format!("no port named '{n}' (ports are named like \"r0->r1\")"),
                        )
                    })?;
                ports.push(p);
            }
            ports.sort_unstable();
            ports.dedup();
            ports
        }
    })
}

/// Resolve `[[tunnels]]`: at each gateway, the first port of the path to the other gateway
/// encapsulates; every other port of the gateway decapsulates that tunnel's packets.
fn tunnels(
    cx: &Ctx,
    raw: &[super::raw::RawTunnel],
    names: &HashMap<&str, usize>,
    nodes: &[NodeSpec],
    links: &[LinkSpec],
    routes: &mut Routes,
) -> Result<Vec<TunnelSpec>, ScenarioError> {
    let mut out: Vec<TunnelSpec> = Vec::new();
    let mut gateway_of = HashMap::new();
    for (i, t) in raw.iter().enumerate() {
        let key = format!("tunnels[{i}]");
        if !(1..=65_535).contains(&t.id) {
            return Err(cx.err(format!("{key}.id"), format!("must be 1..65535, got {}", t.id)));
        }
        if out.iter().any(|o| o.id == t.id as u16) {
            return Err(cx.err(format!("{key}.id"), format!("tunnel id {} is used twice", t.id)));
        }
        if t.between.len() != 2 {
            return Err(cx.err(format!("{key}.between"), "must name exactly two gateway routers"));
        }
        let mut gw = [0usize; 2];
        for (j, name) in t.between.iter().enumerate() {
            let n = *names
                .get(name.as_str())
                .ok_or_else(|| cx.err(format!("{key}.between[{j}]"), format!("no node named '{name}'")))?;
            if nodes[n].host {
                return Err(
                    cx.err(format!("{key}.between[{j}]"), format!("'{name}' is a host; tunnel gateways are routers"))
                );
            }
            if let Some(other) = gateway_of.insert(n, t.id) {
                return Err(
                    cx.err(format!("{key}.between[{j}]"), format!("'{name}' is already a gateway of tunnel {other}"))
                );
            }
            gw[j] = n;
        }
        if gw[0] == gw[1] {
            return Err(cx.err(format!("{key}.between"), "a tunnel needs two different gateways"));
        }
        let mut spec = TunnelSpec { id: t.id as u16, encap_ports: Vec::new(), decap_ports: Vec::new() };
        for (g, other) in [(gw[0], gw[1]), (gw[1], gw[0])] {
            let r = routes
                .route(g, other)
                .ok_or_else(|| cx.err(format!("{key}.between"), "the gateways are not connected"))?;
            let toward = routes.paths[r][0];
            spec.encap_ports.push(toward);
            for (li, l) in links.iter().enumerate() {
                for (p, from) in [(2 * li, l.a), (2 * li + 1, l.b)] {
                    if from == g && p != toward {
                        spec.decap_ports.push(p);
                    }
                }
            }
        }
        out.push(spec);
    }
    Ok(out)
}

fn stem(source: &str) -> String {
    let base = source.rsplit(['/', '\\']).next().unwrap_or(source);
    base.split('.').next().unwrap_or(base).to_string()
}

// ---------------------------------------------------------------------------------------
// Topology

fn topology(cx: &Ctx, t: &RawTopology, packet_size: u32) -> Result<(Vec<NodeSpec>, Vec<LinkSpec>), ScenarioError> {
    let allowed: &[&str] = match t.kind.as_str() {
        "dumbbell" => &["pairs", "bottleneck", "access", "access_delays"],
        "parking_lot" => &["links", "access"],
        "explicit" => &["nodes", "links"],
        k => {
            return Err(cx
                .err("topology.kind", format!("unknown topology kind '{k}' (known: dumbbell, parking_lot, explicit)")))
        }
    };
    let present = [
        ("pairs", t.pairs.is_some()),
        ("bottleneck", t.bottleneck.is_some()),
        ("access", t.access.is_some()),
        ("access_delays", t.access_delays.is_some()),
        ("links", t.links.is_some()),
        ("nodes", t.nodes.is_some()),
    ];
    for (k, p) in present {
        if p && !allowed.contains(&k) {
            return Err(cx.err(format!("topology.{k}"), format!("not a setting of a '{}' topology", t.kind)));
        }
    }
    let mut nodes = Vec::new();
    let mut links = Vec::new();
    let host = |name: String| NodeSpec { name, host: true };
    let router = |name: String| NodeSpec { name, host: false };
    let access_default = RawLink {
        a: None,
        b: None,
        capacity: Some(super::units::Rate(1e9)),
        delay: Some(super::units::Seconds(1e-3)),
        buffer: None,
        router: None,
        router_params: None,
        loss: None,
        loss_direction: None,
    };
    match t.kind.as_str() {
        "dumbbell" => {
            let pairs = t.pairs.ok_or_else(|| cx.err("topology.pairs", "missing: number of sender/receiver pairs"))?;
            if !(1..=1_000_000).contains(&pairs) {
                return Err(cx.err("topology.pairs", format!("must be between 1 and 1000000, got {pairs}")));
            }
            let n = pairs as usize;
            let bn =
                t.bottleneck.as_ref().ok_or_else(|| cx.err("topology.bottleneck", "missing: the r0 -> r1 link"))?;
            let acc = t.access.as_ref().unwrap_or(&access_default);
            // access_delays: one per pair, or one per block of consecutive pairs (a
            // "subnet", as in seed 001's 10 subnets x 20 senders).
            let block = match &t.access_delays {
                Some(d) if d.is_empty() || !n.is_multiple_of(d.len()) => {
                    return Err(cx.err(
                        "topology.access_delays",
                        format!("has {} entries, which must divide the {n} pairs", d.len()),
                    ))
                }
                Some(d) => n / d.len(),
                None => 1,
            };
            nodes.extend((0..n).map(|i| host(format!("s{i}"))));
            nodes.push(router("r0".into()));
            nodes.push(router("r1".into()));
            nodes.extend((0..n).map(|i| host(format!("d{i}"))));
            let (r0, r1) = (n, n + 1);
            for i in 0..n {
                let mut l = link(cx, "topology.access", acc, i, r0, packet_size)?;
                if let Some(d) = &t.access_delays {
                    l.delay = delay(cx, &format!("topology.access_delays[{}]", i / block), d[i / block].0)?;
                }
                links.push(l);
            }
            links.push(link(cx, "topology.bottleneck", bn, r0, r1, packet_size)?);
            for i in 0..n {
                links.push(link(cx, "topology.access", acc, r1, n + 2 + i, packet_size)?);
            }
        }
        "parking_lot" => {
            let chain =
                t.links.as_ref().ok_or_else(|| cx.err("topology.links", "missing: the chain of links L0..Lk-1"))?;
            if chain.is_empty() {
                return Err(cx.err("topology.links", "needs at least one link"));
            }
            let acc = t.access.as_ref().unwrap_or(&access_default);
            let k = chain.len();
            nodes.extend((0..=k).map(|i| router(format!("r{i}"))));
            for (i, l) in chain.iter().enumerate() {
                links.push(link(cx, &format!("topology.links[{i}]"), l, i, i + 1, packet_size)?);
            }
            // Hosts: the long aggregate enters at r0 and leaves at rk; the locals of Li
            // enter at ri and leave at ri+1.
            let mut add_host = |name: String, at: usize, outbound: bool| -> Result<(), ScenarioError> {
                let h = nodes.len();
                nodes.push(host(name));
                let l = if outbound {
                    link(cx, "topology.access", acc, h, at, packet_size)?
                } else {
                    link(cx, "topology.access", acc, at, h, packet_size)?
                };
                links.push(l);
                Ok(())
            };
            add_host("long_src".into(), 0, true)?;
            add_host("long_dst".into(), k, false)?;
            for i in 0..k {
                add_host(format!("src{i}"), i, true)?;
                add_host(format!("dst{i}"), i + 1, false)?;
            }
        }
        _ => {
            let raw_nodes = t.nodes.as_ref().ok_or_else(|| cx.err("topology.nodes", "missing: the list of nodes"))?;
            let mut seen = HashMap::new();
            for (i, n) in raw_nodes.iter().enumerate() {
                let is_host = match n.kind.as_str() {
                    "host" => true,
                    "router" => false,
                    k => {
                        return Err(cx.err(
                            format!("topology.nodes[{i}].kind"),
                            format!("must be 'host' or 'router', got '{k}'"),
                        ))
                    }
                };
                if n.name.is_empty() {
                    return Err(cx.err(format!("topology.nodes[{i}].name"), "must not be empty"));
                }
                if seen.insert(n.name.clone(), i).is_some() {
                    return Err(
                        cx.err(format!("topology.nodes[{i}].name"), format!("duplicate node name '{}'", n.name))
                    );
                }
                nodes.push(NodeSpec { name: n.name.clone(), host: is_host });
            }
            let raw_links = t.links.as_ref().ok_or_else(|| cx.err("topology.links", "missing: the list of links"))?;
            for (i, l) in raw_links.iter().enumerate() {
                let key = format!("topology.links[{i}]");
                let end = |f: &Option<String>, which: &str| -> Result<usize, ScenarioError> {
                    let name =
                        f.as_ref().ok_or_else(|| cx.err(format!("{key}.{which}"), "missing: the node at this end"))?;
                    seen.get(name)
                        .copied()
                        .ok_or_else(|| cx.err(format!("{key}.{which}"), format!("no node named '{name}'")))
                };
                let (a, b) = (end(&l.a, "a")?, end(&l.b, "b")?);
                if a == b {
                    return Err(cx.err(format!("{key}.b"), "a link must join two different nodes"));
                }
                links.push(link(cx, &key, l, a, b, packet_size)?);
            }
        }
    }
    if t.kind != "explicit" {
        for (key, l) in [("topology.bottleneck", &t.bottleneck), ("topology.access", &t.access)] {
            if let Some(l) = l {
                if l.a.is_some() || l.b.is_some() {
                    return Err(cx.err(format!("{key}.a"), "end nodes are set by the topology shortcut"));
                }
            }
        }
    }
    Ok((nodes, links))
}

fn delay(cx: &Ctx, key: &str, s: f64) -> Result<u64, ScenarioError> {
    if !(s.is_finite() && s >= 0.0) {
        return Err(cx.err(key, format!("must be a delay >= 0, got {s} s")));
    }
    Ok(secs(s))
}

fn link(cx: &Ctx, key: &str, l: &RawLink, a: usize, b: usize, packet_size: u32) -> Result<LinkSpec, ScenarioError> {
    let cap =
        l.capacity.ok_or_else(|| cx.err(format!("{key}.capacity"), "missing: the link capacity, e.g. \"100Mbps\""))?;
    if !(cap.0.is_finite() && cap.0 > 0.0) {
        return Err(cx.err(format!("{key}.capacity"), format!("must be > 0, got {} b/s", cap.0)));
    }
    // Serialising one packet must take at least 1 ns, else integer time cannot order events.
    if cap.0 > packet_size as f64 * 8.0 * 1e9 {
        return Err(cx.err(format!("{key}.capacity"), format!("{} b/s is too fast for 1 ns time resolution", cap.0)));
    }
    let d = l
        .delay
        .ok_or_else(|| cx.err(format!("{key}.delay"), "missing: the one-way propagation delay, e.g. \"10ms\""))?;
    let delay = delay(cx, &format!("{key}.delay"), d.0)?;
    let buffer = match l.buffer {
        None => BufferSpec::Bdp(1.0),
        Some(b) => {
            let v = b.0.value();
            if !(v.is_finite() && v > 0.0) {
                return Err(cx.err(format!("{key}.buffer"), format!("must be > 0, got {v}")));
            }
            match b.0 {
                Amount::Packets(p) => BufferSpec::Packets(p.round().max(1.0) as u32),
                Amount::Bytes(by) => {
                    if by < packet_size as f64 {
                        return Err(cx.err(
                            format!("{key}.buffer"),
                            format!("{by} B cannot hold one {packet_size}-byte packet"),
                        ));
                    }
                    BufferSpec::Bytes(by.round() as u64)
                }
                Amount::Bdp(x) => BufferSpec::Bdp(x),
            }
        }
    };
    let router = l.router.clone().unwrap_or_else(|| "droptail".into());
    let router_params = l.router_params.clone().unwrap_or(serde_json::Value::Null);
    registry::check_router(&router, &router_params).map_err(|e| {
        if e.key.is_empty() {
            cx.err(format!("{key}.router"), e.reason)
        } else {
            cx.err(format!("{key}.router_params.{}", e.key), e.reason)
        }
    })?;
    let loss = l.loss.clone().unwrap_or(LossSpec::None);
    loss.validate().map_err(|e| {
        let k = if e.key.is_empty() { format!("{key}.loss") } else { format!("{key}.loss.{}", e.key) };
        cx.err(k, e.reason)
    })?;
    let (fwd, rev) = match l.loss_direction.as_deref().unwrap_or("forward") {
        "forward" => (loss, LossSpec::None),
        "reverse" => (LossSpec::None, loss),
        "both" => (loss.clone(), loss),
        d => {
            return Err(
                cx.err(format!("{key}.loss_direction"), format!("must be 'forward', 'reverse' or 'both', got '{d}'"))
            )
        }
    };
    Ok(LinkSpec {
        a,
        b,
        capacity_bps: cap.0,
        delay,
        buffer,
        router,
        router_params,
        loss_forward: fwd,
        loss_reverse: rev,
    })
}

// ---------------------------------------------------------------------------------------
// Flows

/// Routes between host pairs, computed once per pair and shared by the pair's flows.
struct Routes {
    graph: Graph,
    is_host: Vec<bool>,
    cache: HashMap<(usize, usize), usize>,
    paths: Vec<Vec<usize>>,
}

impl Routes {
    fn new(nodes: &[NodeSpec], links: &[LinkSpec]) -> Routes {
        let ends: Vec<(usize, usize)> = links.iter().flat_map(|l| [(l.a, l.b), (l.b, l.a)]).collect();
        Routes {
            graph: Graph::new(nodes.len(), &ends),
            is_host: nodes.iter().map(|n| n.host).collect(),
            cache: HashMap::new(),
            paths: Vec::new(),
        }
    }

    /// Index of the route from `a` to `b`, or `None` if `b` cannot be reached.
    fn route(&mut self, a: usize, b: usize) -> Option<usize> {
        if let Some(&r) = self.cache.get(&(a, b)) {
            return Some(r);
        }
        let p = self.graph.path(a, b, &self.is_host)?;
        self.paths.push(p);
        self.cache.insert((a, b), self.paths.len() - 1);
        Some(self.paths.len() - 1)
    }
}

#[allow(clippy::too_many_arguments)]
fn endpoints(
    cx: &Ctx,
    key: &str,
    src: &str,
    dst: &str,
    names: &HashMap<&str, usize>,
    nodes: &[NodeSpec],
    routes: &mut Routes,
) -> Result<(usize, usize, usize, usize), ScenarioError> {
    let find = |which: &str, name: &str| -> Result<usize, ScenarioError> {
        let i = *names.get(name).ok_or_else(|| {
            let hosts: Vec<&str> = nodes.iter().filter(|n| n.host).map(|n| n.name.as_str()).take(6).collect();
            cx.err(format!("{key}.{which}"), format!("no node named '{name}' (hosts include: {})", hosts.join(", ")))
        })?;
        if !nodes[i].host {
            return Err(cx.err(format!("{key}.{which}"), format!("'{name}' is a router; flows run between hosts")));
        }
        Ok(i)
    };
    let (s, d) = (find("src", src)?, find("dst", dst)?);
    if s == d {
        return Err(cx.err(format!("{key}.dst"), "a flow needs two different hosts"));
    }
    let no_path =
        || cx.err(format!("{key}.dst"), format!("no path from '{src}' to '{dst}': the nodes are not connected"));
    let fwd = routes.route(s, d).ok_or_else(no_path)?;
    let rev = routes.route(d, s).ok_or_else(no_path)?;
    Ok((s, d, fwd, rev))
}

/// Shared checks of the per-flow transport options.
struct HostOpts {
    protocol: String,
    params: serde_json::Value,
    ecn: bool,
    delayed_ack: bool,
    sack: bool,
    initial_window: Option<u32>,
    initial_ssthresh: Option<u64>,
    handshake: bool,
}

impl HostOpts {
    /// One flow of a group or generator: `ends` = (src, dst, forward route, reverse route).
    fn flow(
        &self,
        group: &str,
        ends: (usize, usize, usize, usize),
        start: u64,
        stop: Option<u64>,
        size: Option<u64>,
    ) -> FlowSpec {
        let (src, dst, fwd_route, rev_route) = ends;
        FlowSpec {
            group: group.to_string(),
            protocol: self.protocol.clone(),
            src,
            dst,
            fwd_route,
            rev_route,
            start,
            stop,
            size_bytes: size,
            params: self.params.clone(),
            ecn: self.ecn,
            delayed_ack: self.delayed_ack,
            sack: self.sack,
            initial_window: self.initial_window,
            initial_ssthresh: self.initial_ssthresh,
            handshake: self.handshake,
        }
    }
}

fn host_opts(
    cx: &Ctx,
    key: &str,
    protocol: &str,
    o: &RawHostOptions,
    handshake: bool,
    packet_size: u32,
) -> Result<HostOpts, ScenarioError> {
    let canonical = registry::canonical_protocol(protocol).ok_or_else(|| {
        let known: Vec<&str> = registry::PROTOCOLS.iter().map(|p| p.name).collect();
        cx.err(format!("{key}.protocol"), format!("unknown protocol '{protocol}' (known: {})", known.join(", ")))
    })?;
    let params = o.params.clone().unwrap_or(serde_json::Value::Null);
    registry::check_protocol(canonical, &params).map_err(|e| {
        let k = if e.key.is_empty() { format!("{key}.params") } else { format!("{key}.params.{}", e.key) };
        cx.err(k, e.reason)
    })?;
    let initial_window = match o.initial_window {
        None => None,
        Some(w) if (1..=1_000_000).contains(&w) => Some(w as u32),
        Some(w) => return Err(cx.err(format!("{key}.initial_window"), format!("must be 1..1000000 packets, got {w}"))),
    };
    let initial_ssthresh = match o.initial_ssthresh {
        None => None,
        Some(s) => Some(bytes(cx, &format!("{key}.initial_ssthresh"), s.0, packet_size)?),
    };
    Ok(HostOpts {
        protocol: canonical.to_string(),
        params,
        ecn: o.ecn.unwrap_or(false),
        delayed_ack: o.delayed_ack.unwrap_or(false),
        sack: o.sack.unwrap_or(false),
        initial_window,
        initial_ssthresh,
        handshake: o.handshake.unwrap_or(handshake),
    })
}

fn bytes(cx: &Ctx, key: &str, a: Amount, packet_size: u32) -> Result<u64, ScenarioError> {
    let b = match a {
        Amount::Bytes(b) => b,
        Amount::Packets(p) => p * (packet_size - 40) as f64,
        Amount::Bdp(_) => return Err(cx.err(key, "'bdp' is only meaningful for buffers")),
    };
    if !(b.is_finite() && b >= 1.0) {
        return Err(cx.err(key, format!("must be at least 1 byte, got {b}")));
    }
    Ok(b.round() as u64)
}

fn time_opt(cx: &Ctx, key: &str, s: Option<super::units::Seconds>) -> Result<Option<u64>, ScenarioError> {
    match s {
        None => Ok(None),
        Some(s) if s.0.is_finite() && s.0 >= 0.0 => Ok(Some(s.ns())),
        Some(s) => Err(cx.err(key, format!("must be a time >= 0, got {} s", s.0))),
    }
}

/// What every `[[flows]]` group and `[[traffic]]` generator is resolved against, and the flows
/// they expand to, in file order.
struct FlowBuilder<'a> {
    cx: &'a Ctx<'a>,
    names: &'a HashMap<&'a str, usize>,
    nodes: &'a [NodeSpec],
    routes: &'a mut Routes,
    handshake: bool,
    packet_size: u32,
    duration: u64,
    seed: u64,
    out: Vec<FlowSpec>,
}

impl FlowBuilder<'_> {
    fn flow_group(&mut self, gi: usize, g: &RawFlows) -> Result<(), ScenarioError> {
        let (cx, packet_size, duration) = (self.cx, self.packet_size, self.duration);
        let key = format!("flows[{gi}]");
        let opts = host_opts(cx, &key, &g.protocol, &g.host_options(), self.handshake, packet_size)?;
        if !(1..=10_000_000).contains(&g.count) {
            return Err(cx.err(format!("{key}.count"), format!("must be 1..10000000, got {}", g.count)));
        }
        if g.index_offset < 0 {
            return Err(cx.err(format!("{key}.index_offset"), "must be >= 0"));
        }
        let start = time_opt(cx, &format!("{key}.start"), g.start)?.unwrap_or(0);
        let spread = time_opt(cx, &format!("{key}.start_spread"), g.start_spread)?.unwrap_or(0);
        let stop = time_opt(cx, &format!("{key}.stop"), g.stop)?;
        if start >= duration {
            return Err(cx.err(format!("{key}.start"), "starts at or after the end of the run"));
        }
        if let Some(s) = stop {
            if s <= start {
                return Err(cx.err(format!("{key}.stop"), "must be later than start"));
            }
        }
        let size = match g.size {
            None => None,
            Some(s) => Some(bytes(cx, &format!("{key}.size"), s.0, packet_size)?),
        };
        let name = g.name.clone().unwrap_or_else(|| format!("flows{gi}"));
        let starts = traffic::spread_starts(self.seed, &name, g.count as usize, start, spread);
        for (i, st) in starts.into_iter().enumerate() {
            let idx = (i as i64 + g.index_offset).to_string();
            let (src, dst) = (g.src.replace("{i}", &idx), g.dst.replace("{i}", &idx));
            let ends = endpoints(cx, &key, &src, &dst, self.names, self.nodes, self.routes)?;
            self.out.push(opts.flow(&name, ends, st, stop, size));
        }
        Ok(())
    }

    fn traffic_generator(&mut self, ti: usize, t: &RawTraffic) -> Result<(), ScenarioError> {
        let (cx, packet_size, duration) = (self.cx, self.packet_size, self.duration);
        let key = format!("traffic[{ti}]");
        if t.kind != "poisson" {
            return Err(cx.err(format!("{key}.kind"), format!("unknown traffic kind '{}' (known: poisson)", t.kind)));
        }
        let opts = host_opts(cx, &key, &t.protocol, &t.host_options(), self.handshake, packet_size)?;
        let ends = endpoints(cx, &key, &t.src, &t.dst, self.names, self.nodes, self.routes)?;
        if !(t.rate.is_finite() && t.rate > 0.0) {
            return Err(cx.err(format!("{key}.rate"), format!("must be > 0 arrivals per second, got {}", t.rate)));
        }
        let start = time_opt(cx, &format!("{key}.start"), t.start)?.unwrap_or(0);
        let stop = time_opt(cx, &format!("{key}.stop"), t.stop)?.unwrap_or(duration).min(duration);
        if start >= stop {
            return Err(cx.err(format!("{key}.start"), "no time left for arrivals before stop / the end of the run"));
        }
        let max_flows = match t.max_flows {
            None => u64::MAX,
            Some(m) if m >= 1 => m as u64,
            Some(m) => return Err(cx.err(format!("{key}.max_flows"), format!("must be >= 1, got {m}"))),
        };
        let dist = size_dist(cx, &format!("{key}.size"), &t.size, packet_size)?;
        let name = t.name.clone().unwrap_or_else(|| format!("traffic{ti}"));
        let arrivals =
            traffic::poisson_arrivals(self.seed, &name, t.rate, start, stop, max_flows, &dist, packet_size - 40);
        for a in arrivals {
            self.out.push(opts.flow(&name, ends, a.time, None, Some(a.bytes)));
        }
        Ok(())
    }
}

fn size_dist(
    cx: &Ctx,
    key: &str,
    s: &super::raw::RawSizeDist,
    packet_size: u32,
) -> Result<traffic::SizeDist, ScenarioError> {
    let mss = (packet_size - 40) as f64;
    // Sizes are drawn in packets (PROTOCOLS.md §13: packets = max(1, ceil(X))).
    let in_pkts = |k: &str, v: Option<super::units::Size>| -> Result<f64, ScenarioError> {
        let v = v.ok_or_else(|| cx.err(format!("{key}.{k}"), "missing"))?;
        let p = match v.0 {
            Amount::Packets(p) => p,
            Amount::Bytes(b) => b / mss,
            Amount::Bdp(_) => return Err(cx.err(format!("{key}.{k}"), "'bdp' is only meaningful for buffers")),
        };
        if !(p.is_finite() && p > 0.0) {
            return Err(cx.err(format!("{key}.{k}"), format!("must be > 0, got {p} packets")));
        }
        Ok(p)
    };
    let unexpected = |k: &str, present: bool| -> Result<(), ScenarioError> {
        if present {
            Err(cx.err(format!("{key}.{k}"), format!("not a parameter of the '{}' distribution", s.dist)))
        } else {
            Ok(())
        }
    };
    let d = match s.dist.as_str() {
        "pareto" => {
            unexpected("size", s.size.is_some())?;
            let mean = in_pkts("mean", s.mean)?;
            let shape = s.shape.ok_or_else(|| cx.err(format!("{key}.shape"), "missing: the Pareto shape a > 1"))?;
            if !(shape.is_finite() && shape > 1.0) {
                return Err(cx.err(format!("{key}.shape"), format!("must be > 1 for a finite mean, got {shape}")));
            }
            traffic::SizeDist::Pareto { mean_pkts: mean, shape }
        }
        "exponential" => {
            unexpected("size", s.size.is_some())?;
            unexpected("shape", s.shape.is_some())?;
            traffic::SizeDist::Exponential { mean_pkts: in_pkts("mean", s.mean)? }
        }
        "fixed" => {
            unexpected("mean", s.mean.is_some())?;
            unexpected("shape", s.shape.is_some())?;
            traffic::SizeDist::Fixed { pkts: in_pkts("size", s.size)? }
        }
        other => {
            return Err(cx.err(
                format!("{key}.dist"),
                format!("unknown size distribution '{other}' (known: pareto, exponential, fixed)"),
            ))
        }
    };
    Ok(d)
}
