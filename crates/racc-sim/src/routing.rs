//! Static shortest-path routing, computed once before the run (DESIGN.md: static routes
//! precomputed). Paths minimise hop count, as ns-2's static routing does; ties go to the
//! lower-numbered port, so routes are deterministic. Each flow stores the port list of its
//! forward and reverse path (source routing, as htsim does): a packet carries only its hop
//! index, and no per-node table scales with the number of hosts.

use std::collections::VecDeque;

/// Output ports leaving each node, in port order. A port usually reaches one node; a port onto
/// a shared medium (an access point's) reaches several, one edge each.
pub struct Graph {
    out: Vec<Vec<(usize, usize)>>, // node -> [(port, far node)]
    from: Vec<usize>,              // port -> the node it leaves
}

impl Graph {
    /// `edges`: (port, from node, to node), in port order; `n_ports` ports in all.
    pub fn new(n_nodes: usize, n_ports: usize, edges: &[(usize, usize, usize)]) -> Graph {
        let mut out = vec![Vec::new(); n_nodes];
        let mut from = vec![usize::MAX; n_ports];
        for &(p, f, to) in edges {
            out[f].push((p, to));
            from[p] = f;
        }
        Graph { out, from }
    }

    /// Graph of plain ports: port p goes from `port_ends[p].0` to `port_ends[p].1`.
    pub fn from_ports(n_nodes: usize, port_ends: &[(usize, usize)]) -> Graph {
        let edges: Vec<_> = port_ends.iter().enumerate().map(|(p, &(f, t))| (p, f, t)).collect();
        Graph::new(n_nodes, port_ends.len(), &edges)
    }

    /// Ports along a shortest path from `src` to `dst`; `None` if unreachable. Transit is only
    /// through routers: a path never passes through another host.
    pub fn path(&self, src: usize, dst: usize, is_host: &[bool]) -> Option<Vec<usize>> {
        let n = self.out.len();
        let mut via: Vec<Option<usize>> = vec![None; n]; // port used to reach a node
        let mut seen = vec![false; n];
        let mut q = VecDeque::new();
        seen[src] = true;
        q.push_back(src);
        while let Some(u) = q.pop_front() {
            if u == dst {
                break;
            }
            if u != src && is_host[u] {
                continue;
            }
            for &(p, v) in &self.out[u] {
                if !seen[v] {
                    seen[v] = true;
                    via[v] = Some(p);
                    q.push_back(v);
                }
            }
        }
        if !seen[dst] {
            return None;
        }
        let mut ports = Vec::new();
        let mut v = dst;
        while v != src {
            let p = via[v]?;
            ports.push(p);
            v = self.from[p];
        }
        ports.reverse();
        Some(ports)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortest_path_prefers_fewer_hops_and_lower_ports() {
        // 0 - 1 - 3 and 0 - 2 - 3 (two equal paths), plus a long way 0 - 4 - 5 - 3.
        let links = [(0, 1), (1, 3), (0, 2), (2, 3), (0, 4), (4, 5), (5, 3)];
        let mut ends = Vec::new();
        for &(a, b) in &links {
            ends.push((a, b));
            ends.push((b, a));
        }
        let g = Graph::from_ports(6, &ends);
        let hosts = vec![true, false, false, true, false, false];
        assert_eq!(g.path(0, 3, &hosts).unwrap(), vec![0, 2]);
        assert_eq!(g.path(3, 0, &hosts).unwrap(), vec![3, 1]);
    }

    #[test]
    fn no_transit_through_hosts() {
        // 0 - 1(host) - 2: no path from 0 to 2.
        let ends = [(0, 1), (1, 0), (1, 2), (2, 1)];
        let g = Graph::from_ports(3, &ends);
        assert!(g.path(0, 2, &[true, true, true]).is_none());
    }
}
