//! Max-min fairness of the rate-feedback protocols on random multi-bottleneck topologies
//! (issue 14; XCC-Linux: RCP, JetMax and PIQI-RCP are max-min fair). Each of 20 seeded
//! topologies is a chain of 2-4 routers' links with random capacities, and a few flows on each of
//! several random routes (contiguous stretches of the chain) with mixed round-trip times. The
//! steady-state rate of every flow must be within 10 % (the tolerance, written before
//! measuring) of its max-min fair share, computed here by water-filling, independently of
//! racc's Python oracle. JetMax and PIQI-RCP aim at γ = 0.95 of capacity, RCP at all of it;
//! the 10 % covers the 5 % that γ leaves unused. Rates are compared on the wire, as capacity is:
//! a flow's goodput counts payload only, so it is scaled by packet size / payload (40 bytes of
//! IPv4 + TCP and the congestion header, docs/PROTOCOLS.md §1, per 1500-byte packet).

mod common;

use racc_proto::rng::SimRng;
use std::fmt::Write;

/// One random topology: link capacities (b/s) and routes (first link, last link, flows,
/// access delay in ms).
struct Topology {
    capacity: Vec<f64>,
    delay_ms: Vec<u32>,
    routes: Vec<(usize, usize, u32, u32)>,
}

fn random_topology(seed: u64) -> Topology {
    let mut rng = SimRng::for_component(seed, "xcc-maxmin/topology");
    let links = 2 + rng.below(3) as usize;
    let capacity = (0..links).map(|_| (10 + 10 * rng.below(10)) as f64 * 1e6).collect();
    let delay_ms = (0..links).map(|_| 2 + rng.below(10) as u32).collect();
    let n_routes = 2 + rng.below(3) as usize;
    let mut routes = Vec::new();
    // Every link carries at least one route, so every link is a potential bottleneck.
    for l in 0..links {
        routes.push((l, l, 1 + rng.below(3) as u32, 1 + rng.below(40) as u32));
    }
    for _ in 0..n_routes {
        let a = rng.below(links as u64) as usize;
        let b = a + rng.below((links - a) as u64) as usize;
        routes.push((a, b, 1 + rng.below(3) as u32, 1 + rng.below(40) as u32));
    }
    Topology { capacity, delay_ms, routes }
}

/// Water-filling (docs/PROTOCOLS.md §15): the rate of each flow, in route order (the flows of route
/// g are group "g{g}" of the scenario).
fn water_filling(t: &Topology) -> Vec<f64> {
    let flows: Vec<(usize, usize)> = t.routes.iter().flat_map(|&(a, b, n, _)| (0..n).map(move |_| (a, b))).collect();
    let mut rate = vec![f64::NAN; flows.len()];
    let mut left = t.capacity.clone();
    while rate.iter().any(|r| r.is_nan()) {
        let users = |l: usize| flows.iter().zip(&rate).filter(|((a, b), r)| r.is_nan() && *a <= l && l <= *b).count();
        let (l, share) = (0..left.len())
            .filter(|&l| users(l) > 0)
            .map(|l| (l, left[l] / users(l) as f64))
            .min_by(|x, y| x.1.total_cmp(&y.1))
            .expect("an unfrozen flow crosses some link");
        for (i, &(a, b)) in flows.iter().enumerate() {
            if rate[i].is_nan() && a <= l && l <= b {
                rate[i] = share;
                for c in &mut left[a..=b] {
                    *c -= share;
                }
            }
        }
    }
    rate
}

fn scenario(t: &Topology, protocol: &str, seed: u64) -> String {
    let links = t.capacity.len();
    let mut s =
        format!("duration = \"40s\"\nseed = {seed}\npacket_size = 1500\n[topology]\nkind = \"explicit\"\nnodes = [\n");
    for r in 0..=links {
        writeln!(s, "  {{ name = \"r{r}\" }},").unwrap();
    }
    for g in 0..t.routes.len() {
        writeln!(s, "  {{ name = \"a{g}\", kind = \"host\" }}, {{ name = \"b{g}\", kind = \"host\" }},").unwrap();
    }
    s.push_str("]\nlinks = [\n");
    for l in 0..links {
        writeln!(
            s,
            "  {{ a = \"r{l}\", b = \"r{}\", capacity = \"{}bps\", delay = \"{}ms\", buffer = \"20000pkt\", router = \"{protocol}\" }},",
            l + 1,
            t.capacity[l],
            t.delay_ms[l]
        )
        .unwrap();
    }
    for (g, &(a, b, _, access)) in t.routes.iter().enumerate() {
        writeln!(s, "  {{ a = \"a{g}\", b = \"r{a}\", capacity = \"10Gbps\", delay = \"{access}ms\" }},").unwrap();
        writeln!(s, "  {{ a = \"r{}\", b = \"b{g}\", capacity = \"10Gbps\", delay = \"1ms\" }},", b + 1).unwrap();
    }
    s.push_str("]\n");
    for (g, &(_, _, n, _)) in t.routes.iter().enumerate() {
        writeln!(
            s,
            "[[flows]]\nname = \"g{g}\"\nprotocol = \"{protocol}\"\nsrc = \"a{g}\"\ndst = \"b{g}\"\ncount = {n}\nstart_spread = \"1s\""
        )
        .unwrap();
    }
    s.push_str("[record]\ninterval = \"500ms\"\n");
    s
}

/// Worst relative deviation from max-min over `seeds`, with the case that gave it.
fn worst_deviation(protocol: &str, seeds: std::ops::Range<u64>) -> Vec<(u64, f64, String)> {
    let mut out = Vec::new();
    for seed in seeds {
        let t = random_topology(seed);
        let by_route = water_filling(&t);
        let mut sim = common::sim(&scenario(&t, protocol, seed));
        sim.run();
        // The engine numbers flows in its own order: match each to its route by its group.
        let first: Vec<usize> = t
            .routes
            .iter()
            .scan(0, |k, r| {
                let at = *k;
                *k += r.2 as usize;
                Some(at)
            })
            .collect();
        let want: Vec<f64> = sim
            .spec
            .flows
            .iter()
            .map(|f| by_route[first[f.group.trim_start_matches('g').parse::<usize>().expect("group g<k>")]])
            .collect();
        let header = match protocol {
            "rcp" | "piqi-rcp" => 12.0,
            "jetmax" | "xcp" => 20.0,
            other => panic!("congestion header of {other}?"),
        };
        let wire_per_payload = 1500.0 / (1500.0 - 40.0 - header);
        let got: Vec<f64> =
            common::goodput_per_flow(&sim, want.len(), 25.0, 40.0).iter().map(|g| g * wire_per_payload).collect();
        let (i, dev) = got
            .iter()
            .zip(&want)
            .map(|(g, w)| (g / w - 1.0).abs())
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap();
        let detail = format!(
            "seed {seed}: links {:?} Mb/s, routes {:?}; flow {i} got {:.2} want {:.2} Mb/s",
            t.capacity.iter().map(|c| c / 1e6).collect::<Vec<_>>(),
            t.routes,
            got[i] / 1e6,
            want[i] / 1e6
        );
        out.push((seed, dev, detail));
    }
    out
}

/// Topologies on which a protocol is known to miss the 10 % bound, with the deviation measured
/// when the entry was written: the test asserts they still miss it, so it fails (and the entry
/// must go) the day the protocol meets the bound there. The bound itself never moves.
const KNOWN_SHORT: &[(&str, u64, &str)] = &[];

fn assert_max_min(protocol: &str) {
    let runs = worst_deviation(protocol, 1..21);
    let worst = runs.iter().map(|r| r.1).fold(0.0, f64::max);
    eprintln!("{protocol}: worst deviation from max-min over 20 topologies {:.1} %", worst * 100.0);
    let known = |seed: u64| KNOWN_SHORT.iter().any(|&(p, s, _)| p == protocol && s == seed);
    let bad: Vec<_> = runs.iter().filter(|(seed, d, _)| *d > 0.10 && !known(*seed)).collect();
    assert!(
        bad.is_empty(),
        "{protocol}: {} of 20 topologies off max-min by more than 10 %:\n{}",
        bad.len(),
        bad.iter().map(|(_, d, s)| format!("  {:.1} %: {s}", d * 100.0)).collect::<Vec<_>>().join("\n")
    );
    let fixed: Vec<_> = runs.iter().filter(|(seed, d, _)| *d <= 0.10 && known(*seed)).collect();
    assert!(
        fixed.is_empty(),
        "{protocol}: now within 10 % on a known shortfall, remove it from KNOWN_SHORT: {fixed:?}"
    );
}

#[test]
fn water_filling_of_a_hand_computed_chain() {
    // Links 10 and 30 Mb/s; a flow across both, two on link 1 only: link 0's flow gets
    // 10 (alone on it), the other two split 30 - 10 = 20.
    let t = Topology { capacity: vec![10e6, 30e6], delay_ms: vec![1, 1], routes: vec![(0, 1, 1, 1), (1, 1, 2, 1)] };
    assert_eq!(water_filling(&t), vec![10e6, 10e6, 10e6]);
    let t = Topology { capacity: vec![10e6, 30e6], delay_ms: vec![1, 1], routes: vec![(0, 1, 2, 1), (1, 1, 1, 1)] };
    assert_eq!(water_filling(&t), vec![5e6, 5e6, 20e6]);
}

#[test]
fn rcp_is_max_min_fair_on_random_topologies() {
    assert_max_min("rcp");
}

#[test]
fn jetmax_is_max_min_fair_on_random_topologies() {
    assert_max_min("jetmax");
}

#[test]
fn piqi_rcp_is_max_min_fair_on_random_topologies() {
    assert_max_min("piqi-rcp");
}
