//! Checks across parts of a scenario that are each valid alone but wrong together.
//!
//! Load-factor interval: a VCP-family sender scales MI by (1+ξ)^(rtt/t_p) and AI by
//! (rtt/t_p)² (seed 001 A3/A4) *assuming* the routers measure ρ over that same t_p; a sender
//! told a different t_p than the routers on its path grows at the wrong rate without any
//! visible failure. So a flow whose `params.t_p` differs from the `t_p` of a router module on
//! its forward path is refused before the run.

use super::raw::RawScenario;
use super::spec::{FlowSpec, LinkSpec, NodeSpec};
use racc_proto::registry;
use std::collections::{HashMap, HashSet};

/// Relative tolerance on t_p equality (both come from decimal text; this absorbs nothing else).
const T_P_REL_TOL: f64 = 1e-9;

/// `(key, reason)` for the first flow whose sender's t_p differs from a router's on its path.
pub(super) fn check_load_factor_interval(
    raw: &RawScenario,
    flows: &[FlowSpec],
    links: &[LinkSpec],
    nodes: &[NodeSpec],
    routes: &[Vec<usize>],
) -> Result<(), (String, String)> {
    // The scenario key of each flow group / traffic generator, by the group name flows carry.
    let mut keys: HashMap<String, String> = HashMap::new();
    for (gi, g) in raw.flows.iter().enumerate() {
        keys.entry(g.name.clone().unwrap_or_else(|| format!("flows{gi}"))).or_insert(format!("flows[{gi}]"));
    }
    for (ti, t) in raw.traffic.iter().enumerate() {
        keys.entry(t.name.clone().unwrap_or_else(|| format!("traffic{ti}"))).or_insert(format!("traffic[{ti}]"));
    }
    // Router t_p per link, computed once (None: the module has no load factor).
    let router_t_p: Vec<Option<f64>> =
        links.iter().map(|l| registry::router_t_p(&l.router, &l.router_params)).collect();
    let mut checked: HashSet<(&str, usize)> = HashSet::new();
    for f in flows {
        let Some(sender) = registry::sender_t_p(&f.protocol, &f.params) else { continue };
        // Flows of one group share protocol, params and (usually) route: check each pair once.
        if !checked.insert((f.group.as_str(), f.fwd_route)) {
            continue;
        }
        for &port in &routes[f.fwd_route] {
            let link = &links[port / 2];
            let Some(router) = router_t_p[port / 2] else { continue };
            if (sender - router).abs() > T_P_REL_TOL * router.abs().max(sender.abs()) {
                let (a, b) = if port % 2 == 0 { (link.a, link.b) } else { (link.b, link.a) };
                let key = keys.get(&f.group).cloned().unwrap_or_else(|| f.group.clone());
                return Err((
                    format!("{key}.params.t_p"),
                    format!(
                        "the sender's t_p = {sender} s differs from t_p = {router} s of the '{}' router module on {}->{}; \
                         VCP-family senders scale MI and AI by rtt/t_p of the routers' own interval (seed 001 A3/A4), \
                         so set the same t_p on both",
                        link.router, nodes[a].name, nodes[b].name
                    ),
                ));
            }
        }
    }
    Ok(())
}
