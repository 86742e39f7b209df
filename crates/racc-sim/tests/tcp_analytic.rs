//! TCP NewReno against analytic expectations: the Mathis formula under random loss,
//! fairness among equal-RTT flows, and link utilisation with a one-BDP buffer.

mod common;
use common::{goodput_per_flow, port, sim};
use racc_sim::metrics::jain;

/// One NewReno flow through a fast, lossy bottleneck: the window is limited by loss alone.
fn mathis_run(p: f64, duration_s: f64) -> (f64, f64) {
    let (g, m, _) = mathis_run_sack(p, duration_s, false);
    (g, m)
}

/// The same, with or without SACK: (goodput, Mathis, timeouts).
fn mathis_run_sack(p: f64, duration_s: f64, sack: bool) -> (f64, f64, u64) {
    let loss = format!("{{ model = \"bernoulli\", p = {p} }}");
    let (g, t) = lossy_run(&loss, duration_s, sack);
    let mss = 960.0 * 8.0; // bits: 1000-byte packets minus 40 B of headers
    let rtt = 0.1; // propagation + negligible serialisation at 1-10 Gb/s
    (g, mss / rtt * (1.5f64).sqrt() / p.sqrt(), t)
}

/// One NewReno flow through a fast bottleneck with this loss model: (goodput after the first
/// 10 %, timeouts).
fn lossy_run(loss: &str, duration_s: f64, sack: bool) -> (f64, u64) {
    let text = format!(
        r#"
duration = {duration_s}
seed = 3
packet_size = 1000
handshake = false
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = {{ capacity = "1Gbps", delay = "48ms", buffer = 100000, loss = {loss} }}
access = {{ capacity = "10Gbps", delay = "1ms" }}
[[flows]]
protocol = "newreno"
src = "s0"
dst = "d0"
sack = {sack}
[record]
interval = "1s"
"#
    );
    let mut s = sim(&text);
    s.run();
    // Skip the first 10 % (slow start) when measuring.
    let g = goodput_per_flow(&s, 1, duration_s * 0.1, duration_s)[0];
    (g, *s.flow_series.timeouts.last().unwrap_or(&0))
}

#[test]
fn newreno_throughput_follows_mathis_within_20_percent() {
    // Mathis et al. 1997: BW = (MSS/RTT) sqrt(3/2) / sqrt(p) for one ACK per packet,
    // valid for small p where timeouts are rare. Runs long enough for ~1000 loss events.
    for &(p, dur) in &[(0.0005, 600.0), (0.002, 300.0), (0.005, 200.0)] {
        let (g, m) = mathis_run(p, dur);
        let ratio = g / m;
        eprintln!("p={p}: goodput {:.3} Mb/s, Mathis {:.3} Mb/s, ratio {ratio:.3}", g / 1e6, m / 1e6);
        assert!((ratio - 1.0).abs() <= 0.20, "p={p}: goodput/Mathis = {ratio:.3}");
    }
}

/// SACK (RFC 2018, RFC 6675 recovery): Mathis et al. derived and checked their formula with
/// SACK TCP, so it holds at least as well; where losses come several per window (bursts),
/// SACK repairs them in one recovery while NewReno repairs one per RTT and times out.
#[test]
fn sack_follows_mathis_and_beats_newreno_when_losses_cluster() {
    for &(p, dur) in &[(0.002, 300.0), (0.005, 200.0)] {
        let (g, m, _) = mathis_run_sack(p, dur, true);
        let ratio = g / m;
        eprintln!("SACK p={p}: goodput {:.3} Mb/s, Mathis {:.3} Mb/s, ratio {ratio:.3}", g / 1e6, m / 1e6);
        assert!((ratio - 1.0).abs() <= 0.20, "p={p}: goodput/Mathis = {ratio:.3}");
    }
    // Bursts of three losses on average (Gilbert-Elliott, 1 % mean loss).
    let ge = r#"{ model = "gilbert_elliott", loss = 0.01, burst = 3 }"#;
    let (g_nr, rto_nr) = lossy_run(ge, 300.0, false);
    let (g_sack, rto_sack) = lossy_run(ge, 300.0, true);
    eprintln!(
        "GE 1 %, bursts of 3: NewReno {:.3} Mb/s, {rto_nr} timeouts; SACK {:.3} Mb/s, {rto_sack} timeouts",
        g_nr / 1e6,
        g_sack / 1e6
    );
    assert!(g_sack > 1.1 * g_nr, "SACK {g_sack} vs NewReno {g_nr}");
    assert!(rto_sack < rto_nr, "timeouts: SACK {rto_sack}, NewReno {rto_nr}");
}

#[test]
fn equal_rtt_flows_share_fairly() {
    let n = 8;
    let text = format!(
        r#"
duration = "300s"
seed = 5
[topology]
kind = "dumbbell"
pairs = {n}
bottleneck = {{ capacity = "20Mbps", delay = "20ms", buffer = "1bdp" }}
access = {{ capacity = "1Gbps", delay = "2ms" }}
[[flows]]
protocol = "newreno"
src = "s{{i}}"
dst = "d{{i}}"
count = {n}
start_spread = "5s"
[record]
interval = "1s"
"#
    );
    let mut s = sim(&text);
    s.run();
    let g = goodput_per_flow(&s, n, 150.0, 300.0);
    let j = jain(&g);
    eprintln!("per-flow goodput (Mb/s): {:?}, Jain {j:.4}", g.iter().map(|x| x / 1e6).collect::<Vec<_>>());
    assert!(j > 0.95, "Jain's index {j}");
    let total: f64 = g.iter().sum();
    // Payload is 960 of every 1000 bytes on the wire, so 0.96 x 20 Mb/s is the most the flows
    // can receive; bytes held out of order at t = 150 s (at most a window: BDP + buffer, under
    // 2 x 20 Mb/s x 48 ms) may be delivered inside the window on top of that.
    let ceiling = 0.96 * 20e6 + 2.0 * 20e6 * 0.048 / 150.0;
    assert!(total > 0.9 * 20e6 * 0.96 && total <= ceiling, "aggregate goodput {total} (ceiling {ceiling})");
}

#[test]
fn one_flow_fills_the_link_with_a_one_bdp_buffer() {
    // Classic result: a single NewReno flow keeps a link busy when the buffer is >= 1 BDP.
    let text = r#"
duration = "120s"
seed = 1
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { capacity = "10Mbps", delay = "40ms", buffer = "1bdp" }
access = { capacity = "1Gbps", delay = "5ms" }
[[flows]]
protocol = "newreno"
src = "s0"
dst = "d0"
"#;
    let mut s = sim(text);
    s.run();
    let bn = port(&mut s, "r0->r1");
    eprintln!(
        "utilisation {:.4}, drops {}, buffer {} pkts",
        bn.utilisation,
        bn.counters.drops,
        s.ports()[2].limit_pkts
    );
    assert!(bn.utilisation > 0.90 && bn.utilisation <= 1.0 + 1e-9, "utilisation {}", bn.utilisation);
    assert!(bn.counters.drops > 0, "the flow must probe the buffer");
}
