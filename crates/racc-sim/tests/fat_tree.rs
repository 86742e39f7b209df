//! `topology.kind = "fat_tree"` with per-flow ECMP: the k-ary tree's counts and wiring, every
//! host pair reachable over shortest paths of 2 / 4 / 6 hops (same edge / same pod / across
//! pods) with 1 / k/2 / (k/2)² equal-cost choices, ECMP's spread over the core within a
//! binomial tolerance, the same routes for the same seed, and a reduced permutation in which
//! every flow completes and the core carries the load.

mod common;

use racc_sim::routing::Graph;
use racc_sim::scenario::spec::Spec;
use racc_sim::scenario::{from_toml, ScenarioError};
use std::collections::{BTreeMap, BTreeSet};

/// A k-ary fat tree at 10 Gb/s with `body` appended.
fn tree(k: usize, seed: u64, body: &str) -> String {
    format!(
        r#"
duration = "1s"
seed = {seed}
packet_size = 1500
[topology]
kind = "fat_tree"
k = {k}
host = {{ capacity = "10Gbps" }}
edge_agg = {{ capacity = "10Gbps" }}
agg_core = {{ capacity = "10Gbps" }}
[record]
interval = "100ms"
flows = false
{body}
"#
    )
}

/// An inline arrival list of flows (src host, dst host), all at `start` 0 with `size` bytes.
fn flows(pairs: &[(usize, usize)], size: u64) -> String {
    let col = |f: &dyn Fn(&(usize, usize)) -> String| pairs.iter().map(f).collect::<Vec<_>>().join(", ");
    format!(
        r#"
[[traffic]]
name = "list"
kind = "trace"
file = "list.csv"
protocol = "newreno"
src = "h0"
dst = "h1"
[traffic.arrivals]
start = [{}]
size = [{}]
src = [{}]
dst = [{}]
"#,
        col(&|_| "0.0".into()),
        col(&|_| format!("{size}.0")),
        col(&|p| format!("\"h{}\"", p.0)),
        col(&|p| format!("\"h{}\"", p.1)),
    )
}

fn spec(toml: &str) -> Spec {
    from_toml(toml, "fat.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn err(toml: &str) -> ScenarioError {
    match from_toml(toml, "fat.toml") {
        Ok(_) => panic!("must be refused"),
        Err(e) => e,
    }
}

#[test]
fn counts_and_wiring_follow_htsim() {
    for k in [2usize, 4, 8, 16] {
        let s = spec(&tree(k, 1, &flows(&[(0, 1.min(k * k * k / 4 - 1))], 1000)));
        let h = k / 2;
        let hosts = k * k * k / 4;
        let name = |i: usize| s.nodes[i].name.as_str();
        assert_eq!(s.nodes.iter().filter(|n| n.host).count(), hosts, "k = {k}");
        let count = |p: &str| s.nodes.iter().filter(|n| n.name.starts_with(p)).count();
        assert_eq!((count("edge"), count("agg"), count("core")), (k * h, k * h, h * h), "k = {k}");
        assert_eq!(s.links.len(), 3 * hosts, "k = {k}: k³/4 links per tier");
        let tier =
            |a: &str, b: &str| s.links.iter().filter(|l| name(l.a).starts_with(a) && name(l.b).starts_with(b)).count();
        assert_eq!((tier("h", "edge"), tier("edge", "agg"), tier("agg", "core")), (hosts, hosts, hosts));
        // htsim's wiring: host i on edge i/(k/2); edge j to its pod's aggs; agg a to cores
        // a mod (k/2) + (k/2) l.
        for l in &s.links {
            let (a, b) = (name(l.a), name(l.b));
            let idx = |n: &str| n.trim_start_matches(char::is_alphabetic).parse::<usize>().unwrap();
            match (a.trim_end_matches(char::is_numeric), b.trim_end_matches(char::is_numeric)) {
                ("h", "edge") => assert_eq!(idx(b), idx(a) / h),
                ("edge", "agg") => assert_eq!(idx(a) / h, idx(b) / h, "{a}-{b} in one pod"),
                ("agg", "core") => assert_eq!(idx(b) % h, idx(a) % h, "{a}-{b}"),
                other => panic!("unexpected link {other:?}"),
            }
        }
        assert!(s.links.iter().all(|l| l.capacity_bps == 10e9 && l.delay == 1_000));
    }
}

#[test]
fn htsim_defaults_and_errors() {
    let s = spec(
        "duration = \"1s\"\n[topology]\nkind = \"fat_tree\"\nk = 4\n[[flows]]\nprotocol = \"newreno\"\nsrc = \"h0\"\ndst = \"h15\"\n",
    );
    // main.h HOST_NIC, the FatTreeTopology constructor's 1 us hops, main_tcp.cpp's 8 packets.
    assert!(s.links.iter().all(|l| l.capacity_bps == 100e9 && l.delay == 1_000));
    assert!(s.links.iter().all(|l| l.buffer == racc_sim::scenario::spec::BufferSpec::Packets(8)));
    for (k, want) in [("3", "even"), ("0", "even"), ("66", "even"), ("-2", "even")] {
        let e = err(&tree(4, 1, "").replace("k = 4", &format!("k = {k}")));
        assert_eq!(e.key, "topology.k", "{e}");
        assert!(e.reason.contains(want), "{e}");
    }
    let e = err(&tree(4, 1, "").replace("k = 4\n", ""));
    assert_eq!(e.key, "topology.k");
    let e = err(&tree(4, 1, "").replace("k = 4", "k = 4\npairs = 3"));
    assert_eq!(e.key, "topology.pairs");
    let e = err(&tree(4, 1, "").replace("host = {", "host = { a = \"h0\", "));
    assert_eq!(e.key, "topology.host.a");
    let e = err(&tree(4, 1, "").replace("agg_core = { capacity = \"10Gbps\"", "agg_core = { capacity = \"0bps\""));
    assert_eq!(e.key, "topology.agg_core.capacity");
}

/// The graph of a built tree, its hosts, and each host's pod and edge switch.
fn graph(s: &Spec) -> (Graph, Vec<bool>) {
    let pm = s.port_map();
    (Graph::new(s.nodes.len(), pm.count(), &pm.edges()), s.nodes.iter().map(|n| n.host).collect())
}

#[test]
fn every_pair_has_shortest_paths_of_2_4_6_hops_with_1_h_hh_choices() {
    let k = 8;
    let h = k / 2;
    let s = spec(&tree(k, 1, &flows(&[(0, 1)], 1000)));
    let (mut g, is_host) = graph(&s);
    let pm = s.port_map();
    let hosts = k * k * k / 4;
    let mut rng = racc_proto::rng::SimRng::for_component(5, "fat-tree-test");
    for a in 0..hosts {
        for b in 0..hosts {
            if a == b {
                continue;
            }
            let (same_edge, same_pod) = (a / h == b / h, a / (h * h) == b / (h * h));
            let (hops, choices) = match (same_edge, same_pod) {
                (true, _) => (2, 1),
                (false, true) => (4, h),
                _ => (6, h * h),
            };
            assert_eq!(g.path(a, b, &is_host).unwrap().len(), hops, "h{a} -> h{b}");
            // Sampled pairs: every equal-cost path turns up, each a chain from a to b.
            let tries = if (a * 31 + b) % 97 == 0 { 400 } else { 1 };
            let mut seen = BTreeSet::new();
            for _ in 0..tries {
                let p = g.ecmp_path(a, b, &is_host, rng.next_u64()).unwrap();
                assert_eq!(p.len(), hops, "h{a} -> h{b}");
                assert_eq!(pm.from(p[0]), a);
                let ends = pm.edges();
                let to = |port: usize| ends.iter().find(|e| e.0 == port).unwrap().2;
                for w in p.windows(2) {
                    assert_eq!(pm.from(w[1]), to(w[0]));
                }
                assert_eq!(to(*p.last().unwrap()), b);
                seen.insert(p);
            }
            if tries > 1 {
                assert_eq!(seen.len(), choices, "h{a} -> h{b}");
            }
        }
    }
}

/// 10,000 flows across pods, (src, dst) cycling over the hosts: each flow's forward route
/// crosses one of the (k/2)² = 16 cores.
fn cross_pod_pairs(n: usize) -> Vec<(usize, usize)> {
    (0..n).map(|i| (i % 128, (i % 128 / 16 + 1 + i % 7) % 8 * 16 + (i + i / 128) % 16)).collect()
}

#[test]
fn ecmp_spreads_flows_evenly_over_the_core() {
    let n = 10_000;
    let pairs = cross_pod_pairs(n);
    assert!(pairs.iter().all(|&(a, b)| a / 16 != b / 16));
    let s = spec(&tree(8, 7, &flows(&pairs, 1000)).replace("[record]", "[limits]\nflows = 20000\n[record]"));
    let pm = s.port_map();
    // Per core switch: Binomial(10,000, 1/16), mean 625, s.d. 24.2; allowed 5 s.d. (121).
    let mut per_core: BTreeMap<usize, usize> = BTreeMap::new();
    // Per aggregation -> core link: flows from that pod over that core, Binomial(1250, 1/16)
    // per pod (mean 78.1, s.d. 8.56); allowed 5 s.d. (43).
    let mut per_uplink: BTreeMap<usize, usize> = BTreeMap::new();
    let mut per_pod = [0usize; 8];
    for f in &s.flows {
        let r = &s.routes[f.fwd_route];
        assert_eq!(r.len(), 6);
        *per_core.entry(pm.from(r[3])).or_default() += 1;
        *per_uplink.entry(r[2]).or_default() += 1;
        per_pod[f.src / 16] += 1;
    }
    assert_eq!(per_core.len(), 16);
    for (&c, &x) in &per_core {
        assert!((x as f64 - 625.0).abs() <= 121.0, "core {} carries {x} of {n} flows", s.nodes[c].name);
    }
    assert_eq!(per_uplink.len(), 8 * 16, "every agg -> core link carries flows");
    for (&p, &x) in &per_uplink {
        assert!((x as f64 - 78.125).abs() <= 43.0, "{} carries {x}", pm.name(p));
    }
    assert!(per_pod.iter().all(|&x| (1248..=1264).contains(&x)), "{per_pod:?}");
}

#[test]
fn same_seed_same_routes_another_seed_others() {
    let pairs = cross_pod_pairs(500);
    let routes = |seed: u64| {
        let s = spec(&tree(8, seed, &flows(&pairs, 1000)));
        s.flows.iter().map(|f| (s.routes[f.fwd_route].clone(), s.routes[f.rev_route].clone())).collect::<Vec<_>>()
    };
    let a = routes(3);
    assert_eq!(a, routes(3));
    let b = routes(4);
    let differ = a.iter().zip(&b).filter(|(x, y)| x != y).count();
    // Cross-pod flows have 16 paths each way: a route pair stays with probability 1/256.
    assert!(differ > 450, "{differ} of 500 flows changed route with the seed");
    // ECMP off: every flow of a pair takes the one lowest-port path.
    let s = spec(&tree(8, 3, &flows(&pairs, 1000)).replace("k = 8", "k = 8\necmp = false"));
    let mut by_pair = BTreeMap::new();
    for f in &s.flows {
        assert_eq!(*by_pair.entry((f.src, f.dst)).or_insert(f.fwd_route), f.fwd_route);
    }
}

#[test]
fn a_reduced_permutation_completes_and_loads_the_core() {
    // k = 4: 16 hosts, host i sends 1 MB to host (i + 8) mod 16 (the other half of the tree).
    let pairs: Vec<_> = (0..16).map(|i| (i, (i + 8) % 16)).collect();
    let mut s = common::sim(&tree(4, 1, &flows(&pairs, 1_000_000)));
    s.run();
    assert_eq!(s.completions.flow.len(), 16, "every flow completes");
    assert!(s.completions.end_s.iter().all(|&t| t < 1.0));
    let summary = s.port_summary();
    let core_pkts: u64 = summary.iter().filter(|p| p.name.contains("->core")).map(|p| p.counters.tx_pkts).sum::<u64>();
    // 16 flows of 1 MB (667 packets of 1460 B payload at least) all cross the core.
    assert!(core_pkts >= 16 * 685, "core uplinks sent {core_pkts} packets");
    let used = summary.iter().filter(|p| p.name.contains("->core") && p.counters.tx_pkts > 0).count();
    assert!(used >= 4, "only {used} of 16 agg -> core links used");
}
