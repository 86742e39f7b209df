//! DCTCP (RFC 8257) end to end: N flows through a step-marking port (the registry's "step")
//! hold its queue near K and keep the link full.

mod common;
use common::{port, sim};

/// The DCTCP paper's analysis (Alizadeh et al. 2010, §3.3), N synchronised flows, C·RTT in
/// packets: each window peaks at W* = (C·RTT + K)/N; the queue peaks at Q_max = K + N (one
/// more packet per flow in the RTT the marks take to return) and falls by the amplitude
/// A = N·(W* + 1)·α/2 with α ≈ √(2/W*), A ≈ ½·√(2N·(C·RTT + K)); the link stays full while
/// Q_max − A > 0. Here C = 1 Gb/s of 1000-byte packets (125 000 pkt/s), RTT 0.8 ms (C·RTT =
/// 100 packets), K = 20, N = 2: Q_max = 22, A ≈ 11, the queue between about 11 and 22.
/// Tolerance: the time-mean queue within [Q_max − A − 3, Q_max + 3] (the flows are not
/// exactly synchronised and the model counts whole RTTs); utilisation ≥ 0.95.
#[test]
fn dctcp_flows_hold_a_step_marked_queue_near_k() {
    let (n, k, bdp) = (2.0f64, 20.0f64, 100.0f64);
    let text = r#"
duration = 5
seed = 1
packet_size = 1000
handshake = false
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { capacity = "1Gbps", delay = "0.35ms", buffer = 400, router = "step", router_params = { k_pkts = 20 } }
access = { capacity = "10Gbps", delay = "0.025ms" }
[[flows]]
protocol = "dctcp"
src = "s{i}"
dst = "d{i}"
count = 2
[record]
interval = "1ms"
"#;
    let mut s = sim(text);
    s.run();
    let idx = s.ports().iter().position(|p| p.name == "r0->r1").expect("bottleneck") as u32;
    let ps = &s.port_series;
    let q: Vec<f64> = ps
        .time_s
        .iter()
        .zip(&ps.port)
        .zip(&ps.queue_pkts)
        .filter(|((&t, &p), _)| t > 1.0 && p == idx)
        .map(|(_, &q)| q as f64)
        .collect();
    let mean = q.iter().sum::<f64>() / q.len() as f64;
    let max = q.iter().cloned().fold(0.0, f64::max);
    let q_max = k + n;
    let a = 0.5 * (2.0 * n * (bdp + k)).sqrt();
    let bn = port(&mut s, "r0->r1");
    eprintln!(
        "dctcp: queue mean {mean:.1} max {max} pkts (model {:.1}..{q_max}), utilisation {:.4}, marks {}, drops {}",
        q_max - a,
        bn.utilisation,
        bn.counters.marks,
        bn.counters.drops
    );
    assert!(bn.counters.marks > 0 && bn.counters.drops == 0, "marks {} drops {}", bn.counters.marks, bn.counters.drops);
    assert!(mean >= q_max - a - 3.0 && mean <= q_max + 3.0, "mean queue {mean} vs [{}, {}]", q_max - a, q_max);
    assert!(bn.utilisation >= 0.95, "utilisation {}", bn.utilisation);
}
