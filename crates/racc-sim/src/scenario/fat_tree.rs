//! `kind = "fat_tree"`: the k-ary three-tier fat tree (Al-Fares et al., SIGCOMM 2008), laid out
//! as htsim's `FatTreeTopology` lays it out (`sim/datacenter/fat_tree_topology.cpp`,
//! `set_params` and `init_network`), so that a host, switch or connection-matrix index means the
//! same node in both simulators.
//!
//! k pods; each pod has k/2 edge (htsim: ToR, "LS") and k/2 aggregation ("US") switches; (k/2)²
//! core switches ("CS"); k³/4 hosts, k/2 per edge switch. Names and indices, all global:
//! - host `h{i}` (htsim's SRC/DST i) hangs off edge switch `edge{i / (k/2)}`;
//! - edge switch `edge{j}` is in pod j / (k/2) and links to every aggregation switch of its pod,
//!   `agg{p·k/2}` .. `agg{p·k/2 + k/2 - 1}`;
//! - aggregation switch `agg{a}` links to the cores `core{a mod (k/2) + (k/2)·l}`, l = 0..k/2.
//!
//! Nodes are listed hosts, edges, aggregations, cores; links host-edge (host at `a`), then
//! edge-agg (edge at `a`), then agg-core (agg at `a`), each group in htsim's loop order. Link
//! defaults are those of htsim's `main_tcp.cpp` fat-tree run: every link at `HOST_NIC` = 100 Gb/s
//! (`main.h`), 1 µs per link (the `FatTreeTopology` constructor's `_hop_latency`), buffers of 8
//! packets (`memFromPkt(8)`). htsim's RandomQueue also drops at random in the top 3 packets of
//! that buffer: a link's `router = "random-drop"` models it; the default stays DropTail.

use super::ctx::Ctx;
use super::error::ScenarioError;
use super::links::link;
use super::raw::{RawLink, RawTopology};
use super::spec::{LinkSpec, NodeSpec};
use super::units::{Amount, Buffer, Rate, Seconds};
use crate::names::numbered;

/// The largest k: 65,536 hosts and 196,608 links.
pub const MAX_K: i64 = 64;

/// htsim's defaults for a fat tree's links (module comment).
fn htsim_default() -> RawLink {
    RawLink {
        a: None,
        b: None,
        capacity: Some(Rate(100e9)),
        delay: Some(Seconds(1e-6)),
        buffer: Some(Buffer(Amount::Packets(8.0))),
        router: None,
        router_params: None,
        loss: None,
        loss_direction: None,
    }
}

/// A tier's link: the file's keys over htsim's defaults.
fn tier(given: &Option<RawLink>) -> RawLink {
    let d = htsim_default();
    match given {
        None => d,
        Some(l) => RawLink {
            capacity: l.capacity.or(d.capacity),
            delay: l.delay.or(d.delay),
            buffer: l.buffer.or(d.buffer),
            ..l.clone()
        },
    }
}

/// Counts of a k-ary fat tree: (hosts, edge switches = aggregation switches, core switches).
pub fn counts(k: usize) -> (usize, usize, usize) {
    let h = k / 2;
    (k * h * h, k * h, h * h)
}

pub(super) fn fat_tree(
    cx: &Ctx,
    t: &RawTopology,
    packet_size: u32,
) -> Result<(Vec<NodeSpec>, Vec<LinkSpec>), ScenarioError> {
    let k = t.k.ok_or_else(|| cx.err("topology.k", "missing: the switches' port count k (even, e.g. 8)"))?;
    if !(2..=MAX_K).contains(&k) || k % 2 != 0 {
        return Err(cx.err("topology.k", format!("must be an even number from 2 to {MAX_K}, got {k}")));
    }
    let k = k as usize;
    let half = k / 2;
    let (n_hosts, n_pod_switches, n_core) = counts(k);
    for (key, l) in [("host", &t.host), ("edge_agg", &t.edge_agg), ("agg_core", &t.agg_core)] {
        if let Some(l) = l {
            if l.a.is_some() || l.b.is_some() {
                return Err(cx.err(format!("topology.{key}.a"), "end nodes are set by the fat tree"));
            }
        }
    }
    let host_link = link(cx, "topology.host", &tier(&t.host), 0, 0, packet_size)?;
    let edge_agg = link(cx, "topology.edge_agg", &tier(&t.edge_agg), 0, 0, packet_size)?;
    let agg_core = link(cx, "topology.agg_core", &tier(&t.agg_core), 0, 0, packet_size)?;

    let edge0 = n_hosts;
    let agg0 = edge0 + n_pod_switches;
    let core0 = agg0 + n_pod_switches;
    let mut nodes = Vec::with_capacity(core0 + n_core);
    nodes.extend((0..n_hosts).map(|i| NodeSpec { name: numbered("h", i), host: true }));
    nodes.extend((0..n_pod_switches).map(|j| NodeSpec { name: numbered("edge", j), host: false }));
    nodes.extend((0..n_pod_switches).map(|j| NodeSpec { name: numbered("agg", j), host: false }));
    nodes.extend((0..n_core).map(|j| NodeSpec { name: numbered("core", j), host: false }));

    let mut links = Vec::with_capacity(3 * n_hosts);
    for i in 0..n_hosts {
        links.push(LinkSpec { a: i, b: edge0 + i / half, ..host_link.clone() });
    }
    for e in 0..n_pod_switches {
        let pod = e / half;
        for a in pod * half..(pod + 1) * half {
            links.push(LinkSpec { a: edge0 + e, b: agg0 + a, ..edge_agg.clone() });
        }
    }
    for a in 0..n_pod_switches {
        for l in 0..half {
            links.push(LinkSpec { a: agg0 + a, b: core0 + a % half + half * l, ..agg_core.clone() });
        }
    }
    Ok((nodes, links))
}
