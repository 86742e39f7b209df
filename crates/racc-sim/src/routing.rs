//! Static shortest-path routing, computed once before the run (DESIGN.md: static routes
//! precomputed). Paths minimise hop count, as ns-2's static routing does; ties go to the
//! lower-numbered port, so routes are deterministic. Each flow stores the port list of its
//! forward and reverse path (source routing, as htsim does): a packet carries only its hop
//! index, and no per-node table scales with the number of hosts.

use rustc_hash::FxHashMap as FastMap;

/// Output ports leaving each node, in port order. A port usually reaches one node; a port onto
/// a shared medium (an access point's) reaches several, one edge each.
pub struct Graph {
    out: Vec<Vec<(usize, usize)>>, // node -> [(port, far node)]
    from: Vec<usize>,              // port -> the node it leaves
    search: Option<Search>,
    /// node -> [(port, from node)], in port order: built on the first ECMP path.
    into: Option<Vec<Vec<(usize, usize)>>>,
}

/// What a path search keeps between calls, built on the first: a host never forwards, so a
/// breadth-first search only ever expands the source and routers. Each node's edges to routers
/// are kept apart, and its edges to hosts are looked up by the host, so that a router with
/// 10,000 hosts behind it costs one lookup per path instead of a scan of its 10,000 edges
/// (issue 19: set-up of the 10,000-flow benchmark), and the per-node marks are stamped with
/// the search's number instead of being cleared per path.
struct Search {
    is_host: Vec<bool>,
    /// node -> [(port, far router)], in port order.
    to_routers: Vec<Vec<(usize, usize)>>,
    /// (node, host) -> the node's first port (in port order) reaching that host.
    to_host: FastMap<(usize, usize), usize>,
    /// Per node: the search that reached it last, and the port it was reached by.
    stamp: Vec<u32>,
    via: Vec<usize>,
    round: u32,
    queue: Vec<usize>,
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
        Graph { out, from, search: None, into: None }
    }

    /// Graph of plain ports: port p goes from `port_ends[p].0` to `port_ends[p].1`.
    pub fn from_ports(n_nodes: usize, port_ends: &[(usize, usize)]) -> Graph {
        let edges: Vec<_> = port_ends.iter().enumerate().map(|(p, &(f, t))| (p, f, t)).collect();
        Graph::new(n_nodes, port_ends.len(), &edges)
    }

    /// Ports along a shortest path from `src` to `dst`; `None` if unreachable. Transit is only
    /// through routers: a path never passes through another host. `is_host` must be the same
    /// on every call.
    ///
    /// The path is that of a breadth-first search from `src` that visits each node's ports in
    /// port order and keeps the port that first reached a node (so ties go to the lower-numbered
    /// port). Hosts other than `src` never expand, so the order in which routers are reached
    /// does not depend on edges to hosts: the search runs over routers only, and `dst`, a host,
    /// is reached by the first expanded node that has a port to it, through its first such port.
    pub fn path(&mut self, src: usize, dst: usize, is_host: &[bool]) -> Option<Vec<usize>> {
        let out = &self.out;
        let s = self.search.get_or_insert_with(|| Search::new(out, is_host));
        debug_assert_eq!(s.is_host, is_host);
        s.round = s.round.wrapping_add(1);
        if s.round == 0 {
            s.stamp.iter_mut().for_each(|x| *x = 0);
            s.round = 1;
        }
        let round = s.round;
        s.queue.clear();
        s.stamp[src] = round;
        s.queue.push(src);
        let mut found = src == dst;
        let mut head = 0;
        while !found && head < s.queue.len() {
            let u = s.queue[head];
            head += 1;
            if s.is_host[dst] {
                if let Some(&p) = s.to_host.get(&(u, dst)) {
                    if s.stamp[dst] != round {
                        s.stamp[dst] = round;
                        s.via[dst] = p;
                    }
                    found = true;
                    break;
                }
            }
            for &(p, v) in &s.to_routers[u] {
                if s.stamp[v] != round {
                    s.stamp[v] = round;
                    s.via[v] = p;
                    if v == dst {
                        found = true;
                        break;
                    }
                    s.queue.push(v);
                }
            }
        }
        if !found {
            return None;
        }
        // Sized at once: the hops back to the source, counted first.
        let mut hops = 0;
        let mut v = dst;
        while v != src {
            hops += 1;
            v = self.from[s.via[v]];
        }
        let mut ports = vec![0; hops];
        let mut v = dst;
        for slot in ports.iter_mut().rev() {
            *slot = s.via[v];
            v = self.from[*slot];
        }
        Some(ports)
    }
}

/// A flow's ECMP key: a hash of (seed, src, dst, flow), well mixed (SplitMix64's finaliser,
/// Steele et al., OOPSLA 2014, after each word), so that nearby flow numbers spread evenly.
pub fn ecmp_key(seed: u64, src: usize, dst: usize, flow: u64) -> u64 {
    fn mix(mut z: u64) -> u64 {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    let mut h = mix(seed ^ 0x9e37_79b9_7f4a_7c15);
    for w in [src as u64, dst as u64, flow] {
        h = mix(h.wrapping_add(w).wrapping_add(0x9e37_79b9_7f4a_7c15));
    }
    h
}

impl Graph {
    /// Ports along one of the shortest paths from `src` to `dst` (transit only through routers,
    /// as [`Graph::path`]), chosen by `key`: the shortest paths are numbered (by the ports they
    /// take, last hop first, in port order) and path number `key mod (their count)` is taken, so
    /// a well-mixed key picks each equal-cost path equally often, as htsim's fat-tree runs pick
    /// a random one of `get_bidir_paths` (`main_tcp.cpp`: `rand() % net_paths[src][dest]->size()`).
    /// A path count above 2^128 saturates (a slight bias on graphs no scenario builds).
    pub fn ecmp_path(&mut self, src: usize, dst: usize, is_host: &[bool], key: u64) -> Option<Vec<usize>> {
        let n = self.out.len();
        // Breadth-first from src: each node's distance and count of shortest paths (per port,
        // so parallel links are distinct paths); only src and routers expand.
        let mut dist = vec![u32::MAX; n];
        let mut count = vec![0u128; n];
        let mut queue = vec![src];
        dist[src] = 0;
        count[src] = 1;
        let mut head = 0;
        while head < queue.len() {
            let u = queue[head];
            head += 1;
            if u != src && is_host[u] {
                continue;
            }
            if dist[dst] != u32::MAX && dist[u] >= dist[dst] {
                break;
            }
            for &(_, v) in &self.out[u] {
                if dist[v] == u32::MAX {
                    dist[v] = dist[u] + 1;
                    queue.push(v);
                }
                if dist[v] == dist[u] + 1 {
                    count[v] = count[v].saturating_add(count[u]);
                }
            }
        }
        if dist[dst] == u32::MAX {
            return None;
        }
        if src == dst {
            return Some(Vec::new());
        }
        // Incoming edges, built once: node -> [(port, from)], in port order.
        let into = self.into.get_or_insert_with(|| {
            let mut into = vec![Vec::new(); n];
            for (u, edges) in self.out.iter().enumerate() {
                for &(p, v) in edges {
                    into[v].push((p, u));
                }
            }
            into.iter_mut().for_each(|e: &mut Vec<(usize, usize)>| e.sort_unstable());
            into
        });
        let mut r = (key as u128) % count[dst];
        let mut ports = vec![0; dist[dst] as usize];
        let mut v = dst;
        for slot in ports.iter_mut().rev() {
            let mut chosen = None;
            for &(p, u) in &into[v] {
                let expands = u == src || !is_host[u];
                if !expands || dist[u] == u32::MAX || dist[u] + 1 != dist[v] {
                    continue;
                }
                if r < count[u] {
                    chosen = Some((p, u));
                    break;
                }
                r -= count[u];
            }
            // Counts sum to count[v] (saturation aside): fall back to the last predecessor.
            let (p, u) = chosen.or_else(|| {
                into[v]
                    .iter()
                    .rev()
                    .copied()
                    .find(|&(_, u)| (u == src || !is_host[u]) && dist[u] != u32::MAX && dist[u] + 1 == dist[v])
            })?;
            *slot = p;
            v = u;
        }
        Some(ports)
    }
}

impl Search {
    fn new(out: &[Vec<(usize, usize)>], is_host: &[bool]) -> Search {
        let mut to_routers = vec![Vec::new(); out.len()];
        let mut to_host = FastMap::default();
        for (u, edges) in out.iter().enumerate() {
            for &(p, v) in edges {
                if is_host[v] {
                    to_host.entry((u, v)).or_insert(p);
                } else {
                    to_routers[u].push((p, v));
                }
            }
        }
        Search {
            is_host: is_host.to_vec(),
            to_routers,
            to_host,
            stamp: vec![0; out.len()],
            via: vec![usize::MAX; out.len()],
            round: 0,
            queue: Vec::new(),
        }
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
        let mut g = Graph::from_ports(6, &ends);
        let hosts = vec![true, false, false, true, false, false];
        assert_eq!(g.path(0, 3, &hosts).unwrap(), vec![0, 2]);
        assert_eq!(g.path(3, 0, &hosts).unwrap(), vec![3, 1]);
    }

    #[test]
    fn no_transit_through_hosts() {
        // 0 - 1(host) - 2: no path from 0 to 2.
        let ends = [(0, 1), (1, 0), (1, 2), (2, 1)];
        let mut g = Graph::from_ports(3, &ends);
        assert!(g.path(0, 2, &[true, true, true]).is_none());
    }

    /// The plain breadth-first search the fast one must agree with, path for path (it was the
    /// implementation before issue 19; routes decide results, so they must not move).
    fn reference(g: &Graph, src: usize, dst: usize, is_host: &[bool]) -> Option<Vec<usize>> {
        let n = g.out.len();
        let mut via: Vec<Option<usize>> = vec![None; n];
        let mut seen = vec![false; n];
        let mut q = std::collections::VecDeque::new();
        seen[src] = true;
        q.push_back(src);
        while let Some(u) = q.pop_front() {
            if u == dst {
                break;
            }
            if u != src && is_host[u] {
                continue;
            }
            for &(p, v) in &g.out[u] {
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
            v = g.from[p];
        }
        ports.reverse();
        Some(ports)
    }

    #[test]
    fn same_paths_as_a_plain_breadth_first_search() {
        // Random graphs with parallel links, hosts linked to several routers and to each other,
        // and shared-medium ports reaching several nodes: every pair, every node as a source.
        let mut rng = racc_proto::rng::SimRng::for_component(7, "routing-test");
        for _ in 0..200 {
            let n = 2 + rng.below(12) as usize;
            let is_host: Vec<bool> = (0..n).map(|_| rng.below(2) == 0).collect();
            let mut edges = Vec::new();
            let mut p = 0;
            for _ in 0..rng.below(3 * n as u64) {
                let (a, b) = (rng.below(n as u64) as usize, rng.below(n as u64) as usize);
                if a == b {
                    continue;
                }
                edges.push((p, a, b));
                // Sometimes a port reaching a second node too (a medium's access point).
                if rng.below(5) == 0 {
                    edges.push((p, a, rng.below(n as u64) as usize));
                }
                p += 1;
            }
            let mut g = Graph::new(n, p, &edges);
            for src in 0..n {
                for dst in 0..n {
                    let want = reference(&g, src, dst, &is_host);
                    assert_eq!(g.path(src, dst, &is_host), want, "{edges:?} hosts {is_host:?} {src}->{dst}");
                }
            }
        }
    }
}
