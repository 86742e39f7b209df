//! `record.ports`: which ports the engine samples.

use super::ctx::Ctx;
use super::error::ScenarioError;
use super::spec::PortMap;

/// Resolve `record.ports` into port numbers (numbered as [`PortMap`] says).
pub(super) fn record_ports(
    cx: &Ctx,
    sel: Option<&super::raw::RawPortSelection>,
    ports: PortMap,
) -> Result<Vec<usize>, ScenarioError> {
    use super::raw::RawPortSelection as Sel;
    let all = 0..ports.count();
    Ok(match sel {
        None => all.collect(),
        Some(Sel::Keyword(k)) if k == "all" => all.collect(),
        Some(Sel::Keyword(k)) if k == "routers" => all.filter(|&p| !ports.nodes[ports.from(p)].host).collect(),
        Some(Sel::Keyword(k)) => {
            return Err(
                cx.err("record.ports", format!("must be \"all\", \"routers\" or a list of port names, got \"{k}\""))
            )
        }
        Some(Sel::Names(names)) => {
            let mut chosen = Vec::new();
            for (i, n) in names.iter().enumerate() {
                let p = all.clone().find(|&p| ports.name_is(p, n)).ok_or_else(|| {
                    cx.err(
                        format!("record.ports[{i}]"),
                        format!("no port named '{n}' (ports are named like \"r0->r1\", or \"ap->wlan\" onto a medium)"),
                    )
                })?;
                chosen.push(p);
            }
            chosen.sort_unstable();
            chosen.dedup();
            chosen
        }
    })
}
