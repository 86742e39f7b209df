//! `record.ports`: which ports the engine samples.

use super::build::Ctx;
use super::spec::{LinkSpec, NodeSpec};
use super::ScenarioError;

/// Resolve `record.ports` into port numbers (port 2i is link i's a -> b direction).
pub(super) fn record_ports(
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
