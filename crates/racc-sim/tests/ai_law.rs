//! `ai_law` on a reduced parking lot (issue 13): under the VCP reference sender's AI law
//! ("ns2", with the reference code's router γ = 0.95), DPCP's long flows come closer to their
//! per-flow max-min share of L0 than under the law VCP-DCCP prints ("seed001").
//!
//! Reduced from MPCP Fig. 1a (as `tests/dpcp.rs`'s lot): 3 long flows and 1 local flow per link
//! instead of 30 and 10, links 4/4/2/4 Mb/s at the paper's 250 ms one way, one-BDP buffers,
//! 200 s instead of 3000 s, shares over (100, 200] s. Per-flow max-min: L2's 2 Mb/s gives the
//! 3 long flows 0.5 Mb/s each, 1.5 of L0's 4 Mb/s = 0.375.
//!
//! Measured on this build (seeds 1–3): long share of L0 seed001 0.023 / 0.024 / 0.030, ns2
//! 0.223 / 0.225 / 0.221 (mean distance to max-min 0.349 vs 0.152). Not asserted: with 100 ms
//! per link (100 s) the ns2 law overshoots max-min instead, 0.435 / 0.455 / 0.474 against
//! seed001's 0.338 / 0.318 / 0.346 (distance 0.079 vs 0.041): its AI per RTT grows as
//! (rtt/100 ms)², linearly beyond 500 ms, so it favours the long RTTs, which helps where the
//! seed001 law starves them and overshoots where it does not.

mod common;
use common::{goodput_per_flow, sim};

const MAXMIN_LONG_SHARE: f64 = 0.375;
const DUR: u32 = 200;

fn parking_lot(law: &str, gamma: f64, seed: u64) -> String {
    let link = format!(
        "{{ capacity = \"{{c}}\", delay = \"250ms\", buffer = \"1bdp\", router = \"dpcp\", router_params = {{ gamma = {gamma} }} }}"
    );
    let links: Vec<String> = ["4Mbps", "4Mbps", "2Mbps", "4Mbps"].iter().map(|c| link.replace("{c}", c)).collect();
    format!(
        r#"
duration = "{DUR}s"
seed = {seed}
packet_size = 1000
[topology]
kind = "parking_lot"
access = {{ capacity = "100Mbps", delay = "1ms" }}
links = [ {} ]
[[flows]]
name = "long"
protocol = "dpcp"
src = "long_src"
dst = "long_dst"
count = 3
start_spread = "1s"
params = {{ ai_law = "{law}" }}
[[flows]]
name = "local"
protocol = "dpcp"
src = "src{{i}}"
dst = "dst{{i}}"
count = 4
start_spread = "1s"
params = {{ ai_law = "{law}" }}
[record]
interval = "500ms"
"#,
        links.join(", ")
    )
}

/// The long flows' share of L0's goodput over the second half.
fn long_share(law: &str, gamma: f64, seed: u64) -> f64 {
    let mut s = sim(&parking_lot(law, gamma, seed));
    s.run();
    let fl = &s.spec.flows;
    let n = fl.len();
    let g = goodput_per_flow(&s, n, DUR as f64 / 2.0, DUR as f64);
    let on_l0: Vec<bool> = (0..n).map(|i| s.spec.routes[fl[i].fwd_route].contains(&0)).collect();
    let long: f64 = (0..n).filter(|&i| fl[i].group == "long").map(|i| g[i]).sum();
    let all: f64 = (0..n).filter(|&i| on_l0[i]).map(|i| g[i]).sum();
    long / all
}

#[test]
fn ns2_law_brings_dpcp_long_share_closer_to_max_min() {
    let dist = |x: f64| (x - MAXMIN_LONG_SHARE).abs();
    let (mut d_seed, mut d_ns2) = (0.0, 0.0);
    for seed in 1..=3 {
        let a = long_share("seed001", 0.98, seed);
        let b = long_share("ns2", 0.95, seed);
        eprintln!("seed {seed}: DPCP long share of L0 seed001 {a:.3}, ns2 {b:.3} (max-min {MAXMIN_LONG_SHARE})");
        d_seed += dist(a) / 3.0;
        d_ns2 += dist(b) / 3.0;
    }
    eprintln!("mean distance to max-min: seed001 {d_seed:.3}, ns2 {d_ns2:.3}");
    assert!(d_ns2 < d_seed, "ns2 {d_ns2:.3} not closer than seed001 {d_seed:.3}");
}
