//! Static routes between nodes, computed on demand and numbered in the order first asked for.

use super::spec::{NodeSpec, PortMap};
use crate::routing::{ecmp_key, Graph};
use rustc_hash::FxHashMap as FastMap;

/// Routes between host pairs, computed once per pair and shared by the pair's flows; with ECMP
/// (`topology.ecmp`), one per flow among the pair's equal-cost paths, each distinct path stored
/// once.
pub(super) struct Routes {
    graph: Graph,
    is_host: Vec<bool>,
    cache: FastMap<(usize, usize), usize>,
    /// ECMP: the scenario's seed, and the flows routed so far (the next flow's number).
    ecmp: Option<(u64, u64)>,
    by_path: FastMap<Vec<usize>, usize>,
    pub(super) paths: Vec<Vec<usize>>,
}

impl Routes {
    pub(super) fn new(nodes: &[NodeSpec], ports: PortMap, ecmp_seed: Option<u64>) -> Routes {
        Routes {
            graph: Graph::new(nodes.len(), ports.count(), &ports.edges()),
            is_host: nodes.iter().map(|n| n.host).collect(),
            cache: FastMap::default(),
            ecmp: ecmp_seed.map(|s| (s, 0)),
            by_path: FastMap::default(),
            paths: Vec::new(),
        }
    }

    pub(super) fn is_ecmp(&self) -> bool {
        self.ecmp.is_some()
    }

    /// Index of the route from `a` to `b`, or `None` if `b` cannot be reached: the lowest-port
    /// shortest path (tunnels, and every flow without ECMP).
    pub(super) fn route(&mut self, a: usize, b: usize) -> Option<usize> {
        if let Some(&r) = self.cache.get(&(a, b)) {
            return Some(r);
        }
        let p = self.graph.path(a, b, &self.is_host)?;
        self.paths.push(p);
        self.cache.insert((a, b), self.paths.len() - 1);
        Some(self.paths.len() - 1)
    }

    /// A flow's forward and reverse routes between hosts `s` and `d`. With ECMP each flow is the
    /// next number n (flows numbered in the order the scenario lists them: groups, then traffic
    /// entries, each in order), and its forward route is the equal-cost path chosen by the hash
    /// of (seed, s, d, n), its reverse one by that of (seed, d, s, n): independent choices, as a
    /// switch hashing each direction's header makes them.
    pub(super) fn flow(&mut self, s: usize, d: usize) -> Option<(usize, usize)> {
        let Some((seed, n)) = self.ecmp else {
            return Some((self.route(s, d)?, self.route(d, s)?));
        };
        self.ecmp = Some((seed, n + 1));
        let fwd = self.ecmp_route(s, d, ecmp_key(seed, s, d, n))?;
        let rev = self.ecmp_route(d, s, ecmp_key(seed, d, s, n))?;
        Some((fwd, rev))
    }

    fn ecmp_route(&mut self, a: usize, b: usize, key: u64) -> Option<usize> {
        let p = self.graph.ecmp_path(a, b, &self.is_host, key)?;
        if let Some(&r) = self.by_path.get(&p) {
            return Some(r);
        }
        self.paths.push(p.clone());
        self.by_path.insert(p, self.paths.len() - 1);
        Some(self.paths.len() - 1)
    }
}
