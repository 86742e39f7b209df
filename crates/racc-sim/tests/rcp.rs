//! RCP (docs/PROTOCOLS.md §6) and PIQI-RCP [reconstructed] (§8) on the engine: rate routers on the
//! bottleneck of a dumbbell, paced RCP senders, the HeaderEcho receiver.
//!
//! Scale: the bottleneck is 100 Mb/s, not XCC-Linux's 1 Gb/s, to keep each run within seconds.
//! Both rate laws are written relative to C (RCP: α(C − y)/C and βq/(d0·C) per T/d0; PIQI-RCP:
//! the error per flow over N̂ = y/R̄), so their dynamics in time do not change with C; queues in
//! packets scale with C and are compared between the two protocols, never against the seed's
//! packet counts. Packets are 1500 bytes on the wire.

mod common;
use common::sim;
use racc_sim::Simulator;

const C: f64 = 100e6;

/// A dumbbell: one pair per entry of `delays` (the sender's access delay, ms), access links
/// 1 ms at 1 Gb/s, bottleneck 5 ms at 100 Mb/s: RTT = 2·(d + 5 + 1) ms.
fn scenario(proto: &str, delays: &[f64], flows: &str, duration: f64, buffer: &str) -> String {
    let d: Vec<String> = delays.iter().map(|d| format!("\"{d}ms\"")).collect();
    format!(
        r#"
name = "rcp-test"
duration = "{duration}s"
seed = 1
packet_size = 1500
min_rto = "200ms"
[topology]
kind = "dumbbell"
pairs = {pairs}
access = {{ capacity = "1Gbps", delay = "1ms" }}
access_delays = [{d}]
[topology.bottleneck]
capacity = "100Mbps"
delay = "5ms"
buffer = "{buffer}"
router = "{proto}"
{flows}
[record]
interval = "50ms"
"#,
        pairs = delays.len(),
        d = d.join(", "),
    )
}

fn flows(proto: &str, count: usize, start: f64, spread: f64, index_offset: usize) -> String {
    format!(
        "[[flows]]\nprotocol = \"{proto}\"\nsrc = \"s{{i}}\"\ndst = \"d{{i}}\"\ncount = {count}\nindex_offset = {index_offset}\n\
         start = \"{start}s\"\nstart_spread = \"{spread}s\"\n"
    )
}

fn bottleneck(s: &Simulator) -> u32 {
    s.ports().iter().position(|p| p.name == "r0->r1").unwrap() as u32
}

/// Per sample of the bottleneck: (time, throughput/C, queue pkts, drops).
fn port_rows(s: &Simulator) -> Vec<(f64, f64, u32, u64)> {
    let idx = bottleneck(s);
    let ps = &s.port_series;
    (0..ps.time_s.len())
        .filter(|&i| ps.port[i] == idx)
        .map(|i| (ps.time_s[i], ps.throughput_bps[i] / C, ps.queue_pkts[i], ps.drops[i]))
        .collect()
}

/// Mean sending rate (bits/s of wire) per flow over samples in (from, to].
fn rates(s: &Simulator, n: usize, from: f64, to: f64) -> Vec<f64> {
    let fs = &s.flow_series;
    let (mut sum, mut cnt) = (vec![0.0; n], vec![0usize; n]);
    for i in 0..fs.time_s.len() {
        if fs.time_s[i] > from && fs.time_s[i] <= to {
            sum[fs.flow[i] as usize] += fs.rate_bps[i];
            cnt[fs.flow[i] as usize] += 1;
        }
    }
    sum.iter().zip(&cnt).map(|(s, &c)| s / c.max(1) as f64).collect()
}

/// Sum of the flows' sending rates / C per sample time.
fn offered(s: &Simulator) -> Vec<(f64, f64)> {
    let fs = &s.flow_series;
    let mut out: Vec<(f64, f64)> = Vec::new();
    for i in 0..fs.time_s.len() {
        match out.last_mut() {
            Some((t, y)) if *t == fs.time_s[i] => *y += fs.rate_bps[i] / C,
            _ => out.push((fs.time_s[i], fs.rate_bps[i] / C)),
        }
    }
    out
}

/// (a) Three flows (RTT 50 ms) over a one-BDP buffer: no drops once started, each at C/3 × the
/// target utilisation (RCP 1, PIQI-RCP γ = 0.95) within 10 %.
#[test]
fn three_flows_share_the_link_without_drops() {
    for (proto, target) in [("rcp", 1.0), ("piqi-rcp", 0.95)] {
        let mut s = sim(&scenario(proto, &[19.0; 3], &flows(proto, 3, 0.0, 1.0, 0), 20.0, "1bdp"));
        s.run();
        let rows = port_rows(&s);
        let drops: u64 = rows.iter().filter(|r| r.0 > 10.0).map(|r| r.3).sum();
        let all: u64 = rows.iter().map(|r| r.3).sum();
        let r = rates(&s, 3, 10.0, 20.0);
        let share = target * C / 3.0;
        eprintln!(
            "{proto}: drops after 10 s {drops} (whole run {all}); rates {:?} Mb/s vs {:.2}",
            r.iter().map(|x| (x / 1e4).round() / 100.0).collect::<Vec<_>>(),
            share / 1e6
        );
        assert_eq!(drops, 0, "{proto}");
        for x in &r {
            assert!((x / share - 1.0).abs() < 0.10, "{proto}: {x} vs {share}");
        }
    }
}

/// (b) A lone 200 ms flow: RCP needs several seconds to reach 95 % of C (XCC-Linux ≈10 s,
/// docs/PROTOCOLS.md §6 ≈11 s; asserted 3-20 s), PIQI-RCP reaches 90 % in under 1 s (§8: 0.3-0.6 s at
/// 50 ms). Times from the flow's start, by the bottleneck's 50 ms throughput samples.
#[test]
fn lone_long_flow_fills_slowly_under_rcp_fast_under_piqi() {
    let reach = |proto: &str, frac: f64, duration: f64| {
        let mut s = sim(&scenario(proto, &[94.0], &flows(proto, 1, 0.0, 0.0, 0), duration, "1bdp"));
        s.run();
        port_rows(&s).iter().find(|r| r.1 >= frac).map(|r| r.0)
    };
    let (rcp, piqi) = (reach("rcp", 0.95, 25.0), reach("piqi-rcp", 0.90, 5.0));
    eprintln!("lone 200 ms flow: RCP 95 % at {rcp:?} s, PIQI-RCP 90 % at {piqi:?} s");
    assert!(rcp.is_some_and(|t| (3.0..20.0).contains(&t)), "RCP {rcp:?}");
    assert!(piqi.is_some_and(|t| t < 1.0), "PIQI-RCP {piqi:?}");
}

/// (c) xcc-abrupt reduced: one flow from 0 s, ten join at 6 s with start times drawn uniformly
/// over 0.5 s (the join spread; RTT 50 ms; buffer 20 000 packets so that the queue shows). RCP's
/// peak offered load (sum of sending rates / C) and peak queue exceed PIQI-RCP's.
#[test]
fn ten_joins_overshoot_more_under_rcp() {
    let run = |proto: &str| {
        let f = flows(proto, 1, 0.0, 0.0, 0) + &flows(proto, 10, 6.0, 0.5, 1);
        let mut s = sim(&scenario(proto, &[19.0; 11], &f, 10.0, "20000pkt"));
        s.run();
        let peak_y = offered(&s).iter().filter(|r| r.0 > 6.0).map(|r| r.1).fold(0.0, f64::max);
        let rows = port_rows(&s);
        let peak_q = rows.iter().filter(|r| r.0 > 6.0).map(|r| r.2).max().unwrap();
        let drops: u64 = rows.iter().map(|r| r.3).sum();
        eprintln!("{proto}: peak offered load {peak_y:.2} C, peak queue {peak_q} pkts, drops {drops}");
        (peak_y, peak_q)
    };
    let (rcp, piqi) = (run("rcp"), run("piqi-rcp"));
    assert!(rcp.0 > piqi.0, "peak load: RCP {} PIQI {}", rcp.0, piqi.0);
    assert!(rcp.1 > piqi.1, "peak queue: RCP {} PIQI {}", rcp.1, piqi.1);
}

/// (d) RTT fairness: a 30 ms and a 200 ms flow get rates within 10 % of each other in steady state.
#[test]
fn thirty_and_two_hundred_ms_flows_get_equal_rates() {
    for proto in ["rcp", "piqi-rcp"] {
        let mut s = sim(&scenario(proto, &[9.0, 94.0], &flows(proto, 2, 0.0, 0.0, 0), 30.0, "1bdp"));
        s.run();
        let r = rates(&s, 2, 20.0, 30.0);
        eprintln!("{proto}: 30 ms flow {:.2} Mb/s, 200 ms flow {:.2} Mb/s", r[0] / 1e6, r[1] / 1e6);
        assert!((r[0] / r[1] - 1.0).abs() < 0.10, "{proto}: {r:?}");
    }
}

/// RCP flows need a rate router on their path: through DropTail alone the scenario is refused
/// before the run, naming the requirement.
#[test]
fn rcp_flows_without_a_rate_router_are_refused() {
    let text = scenario("droptail", &[19.0], &flows("rcp", 1, 0.0, 0.0, 0), 1.0, "1bdp");
    let e = racc_sim::scenario::from_toml(&text, "test.toml").unwrap_err().to_string();
    eprintln!("{e}");
    assert!(e.contains("xcc.rate"), "{e}");
    // A PIQI-RCP flow through RCP routers (and the reverse) is accepted: one sender for both.
    let text = scenario("rcp", &[19.0], &flows("piqi-rcp", 1, 0.0, 0.0, 0), 1.0, "1bdp");
    assert!(racc_sim::scenario::from_toml(&text, "test.toml").is_ok());
}

/// (e) XCC-Linux, xcc-single: "RCP experiences significant queue buildup (up to 9415 packets)
/// whenever a new flow joins" (1 Gb/s, 50 ms, three flows joining at 0, 20 and 40 s). The
/// slides' router modules run in netfilter's NF_IP_POST_ROUTING hook, which Linux passes before
/// the egress queue, so they write R into a packet as it arrives (`stamp = "arrival"`); ns-2's
/// RCP, racc's default, writes it at dequeue. Here the scenario itself (scenarios/xcc-single.toml)
/// at a tenth of the capacity (RCP's law is relative to C, so its queue in packets scales with
/// C: 941.5 packets), for 45 s (the joins at 20 and 40 s). Bound from the "about" rule, ±25 %,
/// written before this test: the peak queue within [706, 1177] packets with no drop under the
/// slides' stamping, and the default (dequeue) stamping keeps a smaller peak (fresher feedback).
#[test]
fn join_queue_with_the_slides_stamping_is_the_slides() {
    let base = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/xcc-single.toml"))
        .expect("scenarios/xcc-single.toml");
    let peak = |stamp: &str| {
        let text = base
            .replace("protocol = \"xcp\"", "protocol = \"rcp\"")
            .replace("router = \"xcp\"", &format!("router = \"rcp\", router_params = {{ stamp = \"{stamp}\" }}"))
            .replace("capacity = \"1Gbps\"", "capacity = \"100Mbps\"")
            .replace("duration = \"60s\"", "duration = \"45s\"");
        let mut s = sim(&text);
        s.run();
        let bn = common::port(&mut s, "r0->r1");
        eprintln!("stamp at {stamp}: peak queue {} pkts, {} drops", bn.max_queue_pkts, bn.counters.drops);
        (bn.max_queue_pkts as f64, bn.counters.drops)
    };
    let (slides, drops) = peak("arrival");
    let (ns2, _) = peak("departure");
    let want = 9415.0 * 0.1;
    assert!((0.75 * want..=1.25 * want).contains(&slides), "peak queue {slides} pkts vs about {want}");
    assert_eq!(drops, 0);
    assert!(ns2 < slides, "dequeue stamping {ns2} vs arrival {slides}");
}
