//! Checks across parts of a scenario that are each valid alone but wrong together: the path
//! contracts. A flow's protocol states what it requires of the router modules on its data path
//! (`FlowProtocol::path_requirements`), each router module what it provides
//! (`RouterFactory::provides`); a flow whose requirement a module on its forward path
//! contradicts, or whose `Presence::Somewhere` requirement no module meets, is refused before
//! the run. This file knows no protocol: the VCP family's t_p (VCP-DCCP A3/A4 scale by the
//! routers' own interval) and DPCP/TPCP's chain length (a chain of 3 decoded by chains of 2
//! reads every third digit as an MSP) are contracts their modules declare.

use super::raw::RawScenario;
use super::spec::{FlowSpec, PortMap};
use racc_proto::registry::{ContractValue, Presence};
use std::collections::{HashMap, HashSet};

/// `(key, reason)` for the first flow whose requirement the routers on its path break.
pub(super) fn check_path_contracts(
    raw: &RawScenario,
    flows: &[&FlowSpec],
    ports: PortMap,
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
    // What each port's module provides, computed once.
    let provided: Vec<Vec<(&'static str, ContractValue)>> =
        (0..ports.count()).map(|p| ports.router(p).1.provides()).collect();
    let mut checked: HashSet<(&str, usize)> = HashSet::new();
    for f in flows {
        let requirements = f.factory.path_requirements();
        // Flows of one group share protocol, params and (usually) route: check each pair once.
        if requirements.is_empty() || !checked.insert((f.group.as_str(), f.fwd_route)) {
            continue;
        }
        let key = keys.get(&f.group).cloned().unwrap_or_else(|| f.group.clone());
        for req in &requirements {
            let mut met = false;
            for &port in &routes[f.fwd_route] {
                let Some(&(_, value)) = provided[port].iter().find(|(k, _)| *k == req.key) else { continue };
                if !value.matches(req.value) {
                    return Err((
                        format!("{key}.params.{}", req.param),
                        format!(
                            "the sender's {p} = {}{u} differs from {p} = {value}{u} of the '{}' router module on {}; {}",
                            req.value,
                            ports.router(port).0,
                            ports.name(port),
                            req.why,
                            p = req.param,
                            u = req.unit,
                        ),
                    ));
                }
                met = true;
            }
            if req.presence == Presence::Somewhere && !met {
                return Err((
                    format!("{key}.protocol"),
                    format!(
                        "'{}' needs a router module providing {} on its data path, and none of the modules there does; {}",
                        f.protocol, req.key, req.why
                    ),
                ));
            }
        }
    }
    Ok(())
}
