//! Topology expansion: the `dumbbell`, `parking_lot` and `fat_tree` (`fat_tree.rs`) shortcuts and `explicit` node and link
//! lists become the nodes and links of the [`Spec`](super::Spec), with each link resolved by
//! `links.rs`.

use super::ctx::Ctx;
use super::error::ScenarioError;
use super::links::{delay, link};
use super::media::media;
use super::raw::{RawLink, RawTopology};
use super::spec::{LinkSpec, MediumSpec, NodeSpec};
use crate::names::numbered;
use std::collections::HashMap;

/// The nodes, the links and the shared media of a scenario.
pub(super) type Topology = (Vec<NodeSpec>, Vec<LinkSpec>, Vec<MediumSpec>);

pub(super) fn topology(cx: &Ctx, t: &RawTopology, packet_size: u32) -> Result<Topology, ScenarioError> {
    let allowed: &[&str] = match t.kind.as_str() {
        "dumbbell" => &["pairs", "bottleneck", "access", "access_delays"],
        "parking_lot" => &["links", "access"],
        "explicit" => &["nodes", "links", "media"],
        "fat_tree" => &["k", "host", "edge_agg", "agg_core"],
        k => {
            return Err(cx.err(
                "topology.kind",
                format!("unknown topology kind '{k}' (known: dumbbell, parking_lot, fat_tree, explicit)"),
            ))
        }
    };
    let present = [
        ("pairs", t.pairs.is_some()),
        ("bottleneck", t.bottleneck.is_some()),
        ("access", t.access.is_some()),
        ("access_delays", t.access_delays.is_some()),
        ("links", t.links.is_some()),
        ("nodes", t.nodes.is_some()),
        ("media", t.media.is_some()),
        ("k", t.k.is_some()),
        ("host", t.host.is_some()),
        ("edge_agg", t.edge_agg.is_some()),
        ("agg_core", t.agg_core.is_some()),
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
            // "subnet", as in VCP-DCCP's 10 subnets x 20 senders).
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
            // Sized at once: at 10,000 pairs, doubling left a third of each list unused.
            nodes.reserve_exact(2 * n + 2);
            links.reserve_exact(2 * n + 1);
            nodes.extend((0..n).map(|i| host(numbered("s", i))));
            nodes.push(router("r0".into()));
            nodes.push(router("r1".into()));
            nodes.extend((0..n).map(|i| host(numbered("d", i))));
            let (r0, r1) = (n, n + 1);
            // Every access link is one link between other nodes: checked once, its parts shared.
            let access = link(cx, "topology.access", acc, 0, 0, packet_size)?;
            for i in 0..n {
                let mut l = LinkSpec { a: i, b: r0, ..access.clone() };
                if let Some(d) = &t.access_delays {
                    l.delay = delay(cx, &format!("topology.access_delays[{}]", i / block), d[i / block].0)?;
                }
                links.push(l);
            }
            links.push(link(cx, "topology.bottleneck", bn, r0, r1, packet_size)?);
            for i in 0..n {
                links.push(LinkSpec { a: r1, b: n + 2 + i, ..access.clone() });
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
            // enter at ri and leave at ri+1. Their access links share one checked link.
            let access = link(cx, "topology.access", acc, 0, 0, packet_size)?;
            let mut add_host = |name: String, at: usize, outbound: bool| {
                let h = nodes.len();
                nodes.push(host(name));
                let (a, b) = if outbound { (h, at) } else { (at, h) };
                links.push(LinkSpec { a, b, ..access.clone() });
            };
            add_host("long_src".into(), 0, true);
            add_host("long_dst".into(), k, false);
            for i in 0..k {
                add_host(format!("src{i}"), i, true);
                add_host(format!("dst{i}"), i + 1, false);
            }
        }
        "fat_tree" => (nodes, links) = super::fat_tree::fat_tree(cx, t, packet_size)?,
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
    if t.kind != "explicit" && t.kind != "fat_tree" {
        for (key, l) in [("topology.bottleneck", &t.bottleneck), ("topology.access", &t.access)] {
            if let Some(l) = l {
                if l.a.is_some() || l.b.is_some() {
                    return Err(cx.err(format!("{key}.a"), "end nodes are set by the topology shortcut"));
                }
            }
        }
    }
    let media = media(cx, t.media.as_deref().unwrap_or_default(), &nodes, packet_size)?;
    Ok((nodes, links, media))
}
