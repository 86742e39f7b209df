//! Loss models, RED marking, traffic generation and topology shortcuts, seen through the
//! whole engine rather than in isolation.

mod common;
use common::{port, sim};
use racc_sim::scenario::from_toml;

#[test]
fn gilbert_elliott_link_realises_its_average_loss() {
    // L = 5 %, B = 2 on the bottleneck; 50 flows push ~10^6 packets across it. The loss
    // fraction must be within 5 % (relative) of the target (sampling s.d. ≈ 0.8 %).
    let text = r#"
duration = "100s"
seed = 11
handshake = false
[topology]
kind = "dumbbell"
pairs = 50
bottleneck = { capacity = "100Mbps", delay = "5ms", buffer = 1000, loss = { model = "gilbert_elliott", loss = 0.05, burst = 2 } }
access = { capacity = "1Gbps", delay = "1ms" }
[[flows]]
protocol = "newreno"
src = "s{i}"
dst = "d{i}"
count = 50
"#;
    let mut s = sim(text);
    s.run();
    let bn = port(&mut s, "r0->r1");
    let frac = bn.counters.losses as f64 / bn.counters.tx_pkts as f64;
    eprintln!("GE: {} losses in {} transmissions = {frac:.4}", bn.counters.losses, bn.counters.tx_pkts);
    assert!(bn.counters.tx_pkts > 500_000, "{} transmissions", bn.counters.tx_pkts);
    assert!((frac - 0.05).abs() / 0.05 < 0.05, "loss fraction {frac}");
    // The reverse direction has no loss unless asked for.
    assert_eq!(port(&mut s, "r1->r0").counters.losses, 0);
}

#[test]
fn red_marks_ecn_capable_tcp_instead_of_dropping() {
    let text = |ecn: bool| {
        format!(
            r#"
duration = "60s"
seed = 2
[topology]
kind = "dumbbell"
pairs = 4
bottleneck = {{ capacity = "10Mbps", delay = "20ms", buffer = 400, router = "red", router_params = {{ min_th = 20, max_th = 80, max_p = 0.1, w_q = 0.002, action = "mark" }} }}
access = {{ capacity = "1Gbps", delay = "1ms" }}
[[flows]]
protocol = "newreno"
src = "s{{i}}"
dst = "d{{i}}"
count = 4
ecn = {ecn}
"#
        )
    };
    let mut marked = sim(&text(true));
    marked.run();
    let m = port(&mut marked, "r0->r1");
    let mut dropped = sim(&text(false));
    dropped.run();
    let d = port(&mut dropped, "r0->r1");
    eprintln!("ECN: marks {} drops {} util {:.3}; no ECN: marks {} drops {} util {:.3}", m.counters.marks, m.counters.drops, m.utilisation, d.counters.marks, d.counters.drops, d.utilisation);
    assert!(m.counters.marks > 50, "RED should mark ECN-capable packets");
    // What RED still drops under ECN are Not-ECT packets (retransmissions and SYNs, RFC 3168
    // §6.1.5) and buffer overflow.
    assert!(m.counters.marks > 5 * m.counters.drops, "marking should replace most drops");
    assert!(m.counters.drops * 3 < d.counters.drops, "ECN should cut drops");
    assert_eq!(d.counters.marks, 0, "Not-ECT packets are never marked");
    // The senders react to the marks: the average queue stays in RED's band.
    assert!(m.mean_queue_pkts < 120.0, "mean queue {}", m.mean_queue_pkts);
    assert!(m.utilisation > 0.9);
}

#[test]
fn every_protocol_sees_the_identical_arrival_list() {
    let text = |proto: &str| {
        format!(
            r#"
duration = "30s"
seed = 4
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = {{ capacity = "10Mbps", delay = "20ms" }}
[[traffic]]
name = "web"
protocol = "{proto}"
src = "s0"
dst = "d0"
rate = 20
size = {{ dist = "pareto", mean = "30pkt", shape = 1.2 }}
"#
        )
    };
    let a = from_toml(&text("newreno"), "a").unwrap();
    let b = from_toml(&text("reno"), "b").unwrap();
    assert!(a.flows.len() > 400);
    let key = |s: &racc_sim::Spec| s.flows.iter().map(|f| (f.start, f.size_bytes)).collect::<Vec<_>>();
    assert_eq!(key(&a), key(&b));
    // Finite flows complete and are recorded with a positive completion time.
    let mut s = sim(&text("reno"));
    s.run();
    let c = &s.completions;
    assert!(c.flow.len() > 300, "{} completions", c.flow.len());
    assert!(c.fct_s.iter().all(|&f| f > 0.04), "an FCT below one RTT");
}

#[test]
fn parking_lot_shortcut_builds_the_chain_and_routes() {
    let text = r#"
duration = 1
[topology]
kind = "parking_lot"
links = [ { capacity = "4Mbps", delay = "250ms" }, { capacity = "4Mbps", delay = "250ms" },
          { capacity = "2Mbps", delay = "250ms" } ]
[[flows]]
protocol = "newreno"
src = "long_src"
dst = "long_dst"
[[flows]]
protocol = "newreno"
src = "src{i}"
dst = "dst{i}"
count = 3
"#;
    let s = from_toml(text, "pl").unwrap();
    // 4 routers, 2 long hosts, 2 hosts per link.
    assert_eq!(s.nodes.len(), 4 + 2 + 6);
    assert_eq!(s.links.len(), 3 + 2 + 6);
    let long = &s.flows[0];
    // access + L0 + L1 + L2 + access
    assert_eq!(s.routes[long.fwd_route].len(), 5);
    for (i, f) in s.flows[1..].iter().enumerate() {
        let path = &s.routes[f.fwd_route];
        assert_eq!(path.len(), 3, "local flow {i} crosses exactly its own link");
        assert_eq!(path[1], 2 * i, "local flow {i} uses L{i} forward");
    }
}

#[test]
fn delayed_ack_halves_the_ack_count() {
    let text = |d: bool| {
        format!(
            r#"
duration = "20s"
handshake = false
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = {{ capacity = "10Mbps", delay = "10ms", buffer = 200 }}
[[flows]]
protocol = "newreno"
src = "s0"
dst = "d0"
size = "2MB"
delayed_ack = {d}
"#
        )
    };
    let acks = |d: bool| {
        let mut s = sim(&text(d));
        s.run();
        assert_eq!(s.completions.flow.len(), 1, "the transfer must finish");
        port(&mut s, "r1->r0").counters.tx_pkts as f64
    };
    let (plain, delayed) = (acks(false), acks(true));
    // One ACK per two segments, plus the timer's ACKs when a flight ends on an odd segment
    // (frequent in slow start) and immediate ACKs around losses.
    let ratio = delayed / plain;
    assert!((0.45..0.65).contains(&ratio), "ACKs with delayed ACK / without = {ratio}");
}
