//! BBR v1 (Linux `tcp_bbr.c`) end to end: one flow alone on a DropTail dumbbell fills the
//! bottleneck with almost no standing queue, and its model's cycles show in the flows table:
//! the pacing rate's PROBE_BW gain cycle and PROBE_RTT every ~10 s.

mod common;
use common::sim;
use racc_sim::metrics::ColumnValues;

/// Flow 0's values of a named metric, one per sample.
fn named(s: &racc_sim::Simulator, name: &str) -> Vec<f64> {
    let c = s.flow_series.named.columns.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no {name}"));
    match &c.values {
        ColumnValues::Gauge(v) => v.clone(),
        ColumnValues::Count(v) => v.iter().map(|&n| n as f64).collect(),
        ColumnValues::Flag(v) => v.iter().map(|&b| b as u8 as f64).collect(),
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// 50 Mb/s, 40 ms of propagation RTT (2 × (1 + 18 + 1) ms): BDP = 50e6 · 0.04 / 8 = 250 kB,
/// 250 packets of 1000 B. The buffer (1000 packets, 4 BDP) holds STARTUP's queue (at most
/// (2/ln 2 − 1) BDP ≈ 1.9 BDP), so nothing is lost.
const SCENARIO: &str = r#"
duration = 42
seed = 1
packet_size = 1000
handshake = false
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { capacity = "50Mbps", delay = "18ms", buffer = 1000 }
access = { capacity = "10Gbps", delay = "1ms" }
[[flows]]
protocol = "bbr"
src = "s0"
dst = "d0"
sack = true
[record]
interval = "10ms"
"#;

const BDP_PKTS: f64 = 250.0;

/// After STARTUP and DRAIN (the first 3 s), BBR keeps the link busy and the queue short:
/// - utilisation ≥ 90 %: PROBE_BW paces at BtlBw on average over its cycle (1.25 and 0.75 for
///   one RTprop each, 1 for six) less Linux's 1 % margin, and PROBE_RTT's 4 packets for
///   200 ms + one round every 10 s cost about 2.4 % (BBR paper §"PROBE_RTT": ~2 %);
/// - mean queue ≤ 0.25 BDP: the 1.25 phase adds at most 0.25 BDP for one RTprop and the 0.75
///   phase that follows drains it, so the cycle's mean is about 0.25·BDP/8 plus the 1 %
///   margin's nothing; 0.25 BDP is the design's bound (BBR draft §4.3.3: "inflight ≈ BDP");
/// - largest queue ≤ 1 BDP + 8 packets: cwnd is capped at cwnd_gain·BDP = 2 BDP (plus
///   `bbr_quantization_budget`'s few packets), of which one BDP is the pipe.
#[test]
fn one_bbr_flow_fills_the_pipe_with_a_small_queue() {
    let mut s = sim(SCENARIO);
    s.run();
    let idx = s.ports().iter().position(|p| p.name == "r0->r1").expect("bottleneck") as u32;
    let ps = &s.port_series;
    let (mut util, mut queue) = (Vec::new(), Vec::new());
    for i in 0..ps.time_s.len() {
        if ps.port[i] == idx && ps.time_s[i] > 3.0 {
            util.push(ps.utilisation[i]);
            queue.push(ps.queue_pkts[i] as f64);
        }
    }
    let max_q = queue.iter().cloned().fold(0.0, f64::max);
    let drops: u64 = ps.drops.iter().zip(&ps.port).filter(|(_, &p)| p == idx).map(|(d, _)| *d).max().unwrap_or(0);
    eprintln!(
        "bbr: utilisation {:.4}, queue mean {:.1} max {max_q} pkts (BDP {BDP_PKTS}), drops {drops}",
        mean(&util),
        mean(&queue)
    );
    assert!(mean(&util) >= 0.90, "utilisation {}", mean(&util));
    assert!(mean(&queue) <= 0.25 * BDP_PKTS, "mean queue {} pkts vs 0.25 BDP", mean(&queue));
    assert!(max_q <= BDP_PKTS + 8.0, "largest queue {max_q} pkts vs 1 BDP + 8");
}

/// The model's cycles in the flows table: RTprop (bbr_min_rtt) is the propagation RTT plus one
/// packet's serialisation; PROBE_RTT (bbr_mode 3) comes every 10 s + its own ~0.24 s
/// (`bbr_min_rtt_win_sec`: the min RTT is not lowered in steady state, so it expires), i.e.
/// 4 times in 42 s from STARTUP's sample at ~0.04 s; and the pacing rate runs the gain cycle:
/// its samples in PROBE_BW reach 1.25 and 0.75 of BtlBw (less the 1 % margin) within 2 %.
#[test]
fn bbr_shows_its_pacing_and_min_rtt_cycles() {
    let mut s = sim(SCENARIO);
    s.run();
    let fs = &s.flow_series;
    let mode = named(&s, "bbr_mode");
    let min_rtt = named(&s, "bbr_min_rtt");
    let gain = named(&s, "bbr_pacing_gain");
    let btl = named(&s, "bbr_btl_bw");
    // PROBE_RTT entries: samples where the mode turns 3.
    let mut entries = Vec::new();
    for i in 1..mode.len() {
        if mode[i] == 3.0 && mode[i - 1] != 3.0 {
            entries.push(fs.time_s[i]);
        }
    }
    let gaps: Vec<f64> = entries.windows(2).map(|w| w[1] - w[0]).collect();
    eprintln!("bbr: PROBE_RTT at {entries:?}, gaps {gaps:?}, RTprop {:.4} s", min_rtt[min_rtt.len() - 1]);
    assert_eq!(entries.len(), 4, "PROBE_RTT entries {entries:?}");
    for g in &gaps {
        assert!((10.0..=10.6).contains(g), "PROBE_RTT period {g} s");
    }
    let rtprop = 0.040 + 1040.0 * 8.0 / 50e6;
    let last = min_rtt[min_rtt.len() - 1];
    assert!((last - rtprop).abs() < 0.001, "RTprop {last} vs {rtprop}");
    // Pacing rate over BtlBw in PROBE_BW samples: the gains of the cycle.
    let mut seen = [false; 3];
    for i in 0..mode.len() {
        if mode[i] != 2.0 || btl[i] <= 0.0 {
            continue;
        }
        // rate_bps is wire bits/s, BtlBw payload: 1040 wire bytes per 1000 payload bytes.
        let ratio = fs.rate_bps[i] / (btl[i] * 1040.0 / 1000.0) / 0.99;
        assert!((ratio - gain[i]).abs() < 0.02, "t {} ratio {ratio} gain {}", fs.time_s[i], gain[i]);
        for (k, g) in [1.25, 0.75, 1.0].iter().enumerate() {
            seen[k] |= (gain[i] - g).abs() < 1e-9;
        }
    }
    assert_eq!(seen, [true; 3], "PROBE_BW gains seen (1.25, 0.75, 1)");
}
