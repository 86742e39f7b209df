//! `[[tunnels]]`: gateways, and which of their ports encapsulate or decapsulate.

use super::ctx::Ctx;
use super::error::ScenarioError;
use super::routes::Routes;
use super::spec::{PortKind, PortMap, TunnelSpec};
use rustc_hash::FxHashMap as FastMap;
use std::collections::HashMap;

/// Resolve `[[tunnels]]`: at each gateway, the first port of the path to the other gateway
/// encapsulates; every other port of the gateway decapsulates that tunnel's packets.
pub(super) fn tunnels(
    cx: &Ctx,
    raw: &[super::raw::RawTunnel],
    names: &FastMap<&str, usize>,
    ports: PortMap,
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
            if ports.nodes[n].host {
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
            for p in 0..ports.count() {
                if ports.from(p) != g {
                    continue;
                }
                if let PortKind::Medium { medium, .. } = ports.kind(p) {
                    // A medium port's role is its contention (port.rs `PortRole`).
                    return Err(cx.err(
                        format!("{key}.between"),
                        format!(
                            "'{}' is a member of medium '{}'; a tunnel gateway cannot be",
                            ports.nodes[g].name, ports.media[medium].name
                        ),
                    ));
                }
                if p != toward {
                    spec.decap_ports.push(p);
                }
            }
        }
        out.push(spec);
    }
    Ok(out)
}
