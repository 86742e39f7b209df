//! Static routes between nodes, computed on demand and numbered in the order first asked for.

use super::spec::{NodeSpec, PortMap};
use crate::routing::Graph;
use rustc_hash::FxHashMap as FastMap;

/// Routes between host pairs, computed once per pair and shared by the pair's flows.
pub(super) struct Routes {
    graph: Graph,
    is_host: Vec<bool>,
    cache: FastMap<(usize, usize), usize>,
    pub(super) paths: Vec<Vec<usize>>,
}

impl Routes {
    pub(super) fn new(nodes: &[NodeSpec], ports: PortMap) -> Routes {
        Routes {
            graph: Graph::new(nodes.len(), ports.count(), &ports.edges()),
            is_host: nodes.iter().map(|n| n.host).collect(),
            cache: FastMap::default(),
            paths: Vec::new(),
        }
    }

    /// Index of the route from `a` to `b`, or `None` if `b` cannot be reached.
    pub(super) fn route(&mut self, a: usize, b: usize) -> Option<usize> {
        if let Some(&r) = self.cache.get(&(a, b)) {
            return Some(r);
        }
        let p = self.graph.path(a, b, &self.is_host)?;
        self.paths.push(p);
        self.cache.insert((a, b), self.paths.len() - 1);
        Some(self.paths.len() - 1)
    }
}
