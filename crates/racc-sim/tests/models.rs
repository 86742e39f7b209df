//! Loss models, RED marking, traffic generation and topology shortcuts, seen through the
//! whole engine rather than in isolation.

mod common;
use common::{goodput_per_flow, port, sim};
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
    eprintln!(
        "ECN: marks {} drops {} util {:.3}; no ECN: marks {} drops {} util {:.3}",
        m.counters.marks, m.counters.drops, m.utilisation, d.counters.marks, d.counters.drops, d.utilisation
    );
    assert!(m.counters.marks > 50, "RED should mark ECN-capable packets");
    // What RED still drops under ECN are Not-ECT packets (retransmissions and SYNs, RFC 3168
    // §6.1.5) and buffer overflow.
    assert!(m.counters.marks > 5 * m.counters.drops, "marking should replace most drops");
    assert!(m.counters.drops * 3 < d.counters.drops, "ECN should cut drops");
    assert_eq!(d.counters.marks, 0, "Not-ECT packets are never marked");
    // The senders react to the marks: the average queue stays in RED's band.
    assert!(m.mean_queue_pkts < 120.0, "mean queue {}", m.mean_queue_pkts);
    assert!(m.utilisation > 0.9 && m.utilisation <= 1.0 + 1e-9, "utilisation {}", m.utilisation);
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
bottleneck = {{ capacity = "10Mbps", delay = "10ms", buffer = 2500 }}
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
        // A buffer larger than the transfer: no loss, so no immediate ACKs for out-of-order
        // or duplicate segments (RFC 5681 §4.2) and no retransmissions blur the count.
        assert_eq!(port(&mut s, "r0->r1").counters.drops, 0);
        port(&mut s, "r1->r0").counters.tx_pkts as f64
    };
    let (plain, delayed) = (acks(false), acks(true));
    // One ACK per two segments, plus the timer's ACKs when a flight ends on an odd segment
    // (frequent in slow start).
    let ratio = delayed / plain;
    assert!((0.45..0.65).contains(&ratio), "ACKs with delayed ACK / without = {ratio}");
}

#[test]
fn group_shares_add_up_to_the_port_utilisation() {
    let text = r#"
duration = "20s"
[topology]
kind = "parking_lot"
links = [ { capacity = "4Mbps", delay = "20ms" }, { capacity = "2Mbps", delay = "20ms" } ]
[[flows]]
name = "long"
protocol = "newreno"
src = "long_src"
dst = "long_dst"
count = 2
[[flows]]
name = "local"
protocol = "newreno"
src = "src0"
dst = "dst0"
count = 2
[record]
interval = "500ms"
ports = ["r0->r1", "r1->r2"]
groups = true
"#;
    // Per-group shares cost a row per group, port and sample: recorded only when asked for.
    let mut unasked = sim(&text.replace("groups = true\n", ""));
    unasked.run();
    assert!(unasked.group_series.time_s.is_empty());
    let mut s = sim(text);
    s.run();
    assert_eq!(s.port_series, unasked.port_series, "recording shares changes nothing else");
    assert_eq!(s.groups, vec!["long".to_string(), "local".to_string()]);
    let (ps, gs) = (&s.port_series, &s.group_series);
    let mut checked = 0;
    for i in 0..ps.time_s.len() {
        let total: f64 = (0..gs.time_s.len())
            .filter(|&j| gs.time_s[j] == ps.time_s[i] && gs.port[j] == ps.port[i])
            .map(|j| gs.share[j])
            .sum();
        assert!((total - ps.utilisation[i]).abs() < 1e-9, "t={} port {}", ps.time_s[i], ps.port[i]);
        checked += 1;
    }
    assert_eq!(checked, 80);
    // Only the long aggregate crosses L1 (r1->r2): its share there is the whole utilisation.
    let l1_local: f64 =
        (0..gs.time_s.len()).filter(|&j| gs.port[j] == 2 && gs.group[j] == 1).map(|j| gs.share[j]).sum();
    assert_eq!(l1_local, 0.0);
    let l1_long: f64 = (0..gs.time_s.len()).filter(|&j| gs.port[j] == 2 && gs.group[j] == 0).map(|j| gs.share[j]).sum();
    assert!(l1_long > 0.0);
}

#[test]
fn an_ipsec_tunnel_hides_inner_ecn_from_inside_routers_but_carries_marks_out() {
    // s0 - g1 - r - g2 - d0; RED on r -> g2 marks inside the tunnel. The mark lands on the
    // outer header and is copied into the inner one at g2, so the ECN sender still reacts.
    let text = |tunnel: bool| {
        format!(
            r#"
duration = "30s"
[topology]
kind = "explicit"
nodes = [ {{ name = "s0", kind = "host" }}, {{ name = "g1" }}, {{ name = "r" }}, {{ name = "g2" }}, {{ name = "d0", kind = "host" }} ]
links = [
  {{ a = "s0", b = "g1", capacity = "100Mbps", delay = "1ms" }},
  {{ a = "g1", b = "r", capacity = "100Mbps", delay = "5ms" }},
  {{ a = "r", b = "g2", capacity = "5Mbps", delay = "20ms", buffer = 200, router = "red", router_params = {{ min_th = 10, max_th = 40, action = "mark" }} }},
  {{ a = "g2", b = "d0", capacity = "100Mbps", delay = "1ms" }},
]
{tunnels}
[[flows]]
protocol = "newreno"
src = "s0"
dst = "d0"
ecn = true
"#,
            tunnels = if tunnel { "[[tunnels]]\nid = 7\nbetween = [\"g1\", \"g2\"]" } else { "" }
        )
    };
    let run = |t: bool| {
        let mut s = sim(&text(t));
        s.run();
        let inside = port(&mut s, "r->g2");
        let after = port(&mut s, "g2->d0");
        // After the start-up: the slow-start overshoot's few drops and timeouts land
        // differently in the two runs and would move a whole-run figure by 10 %.
        (inside, after, goodput_per_flow(&s, 1, 10.0, 30.0)[0])
    };
    let (in_plain, out_plain, g_plain) = run(false);
    let (in_tun, out_tun, g_tun) = run(true);
    // Inside the tunnel every data packet carries 44 B of ESP tunnel overhead; outside it does not.
    let per_pkt = |p: &racc_sim::engine::PortSummary| p.counters.tx_bytes as f64 / p.counters.tx_pkts as f64;
    assert!(
        (per_pkt(&in_tun) - per_pkt(&in_plain) - 44.0).abs() < 1.0,
        "{} vs {}",
        per_pkt(&in_tun),
        per_pkt(&in_plain)
    );
    assert!((per_pkt(&out_tun) - per_pkt(&out_plain)).abs() < 0.5, "{} vs {}", per_pkt(&out_tun), per_pkt(&out_plain));
    // RED marks inside the tunnel and the sender reacts: few drops, queue in RED's band.
    assert!(in_tun.counters.marks > 20, "marks {}", in_tun.counters.marks);
    assert!(in_tun.counters.drops * 5 < in_tun.counters.marks);
    assert!(in_tun.mean_queue_pkts < 60.0, "queue {}", in_tun.mean_queue_pkts);
    // The congestion loop works as well through the tunnel as without it (RED's small band,
    // not the 4.4 % overhead, limits this flow).
    assert!((g_tun / g_plain - 1.0).abs() < 0.1, "goodput (10, 30] s: plain {g_plain} b/s, tunnel {g_tun} b/s");
    assert!(in_plain.counters.marks > 20);
}

#[test]
fn dequeue_marks_are_counted() {
    // VCP marks at dequeue (on_departure); those marks must reach the port's counters.
    let text = r#"
duration = "30s"
[topology]
kind = "dumbbell"
pairs = 4
bottleneck = { capacity = "10Mbps", delay = "40ms", router = "vcp" }
[[flows]]
protocol = "vcp"
src = "s{i}"
dst = "d{i}"
count = 4
"#;
    let mut s = sim(text);
    s.run();
    let bn = port(&mut s, "r0->r1");
    assert!(bn.counters.marks > 100, "marks {}", bn.counters.marks);
    assert!(bn.counters.marks <= bn.counters.tx_pkts);
    let marks_in_series: u64 = (0..s.port_series.time_s.len())
        .filter(|&i| s.port_series.port[i] == bn.port as u32)
        .map(|i| s.port_series.marks[i])
        .sum();
    assert_eq!(marks_in_series, bn.counters.marks);
}
