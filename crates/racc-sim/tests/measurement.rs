//! Sampled metrics that add up (issue 12, items 1 and 2): no sample's utilisation exceeds the
//! capacity, the samples add up to the whole-run figures, and every delivered byte is in a
//! flow's series.

mod common;
use common::{port, sim};
use racc_sim::Simulator;

/// Issue 12's case: 1500-byte packets take 6 ms on a 2 Mb/s link, so a 20 ms sample holds
/// 3⅓ of them and whole packets put 4 (1.2) into a third of the samples.
const SLOW: &str = r#"
duration = "20s"
seed = 3
packet_size = 1500
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { capacity = "2Mbps", delay = "10ms", buffer = 20 }
access = { capacity = "100Mbps", delay = "1ms" }
[[flows]]
protocol = "newreno"
src = "s{i}"
dst = "d{i}"
count = 2
[[flows]]
name = "short"
protocol = "newreno"
src = "s0"
dst = "d0"
size = "100KB"
start = "3s"
[record]
interval = "20ms"
groups = true
"#;

/// The sample interval of row `i` of a series whose rows are at `times`: time since the
/// previous sample (the first sample's is its own time).
fn row_seconds(times: &[f64], interval: f64, i: usize) -> f64 {
    let t = times[i];
    let k = ((t / interval) - 1e-9).ceil() - 1.0;
    t - k.max(0.0) * interval
}

#[test]
fn no_sample_exceeds_capacity_and_the_samples_add_up_to_the_run() {
    let mut s = sim(SLOW);
    s.run();
    let ps = s.port_series.clone();
    let summaries = s.port_summary();
    let end = s.now() as f64 * 1e-9;
    let mut straddled = 0;
    for p in &summaries {
        let rows: Vec<usize> = (0..ps.time_s.len()).filter(|&i| ps.port[i] == p.port as u32).collect();
        assert_eq!(rows.len(), 1000, "port {}", p.name);
        let mut busy = 0.0;
        for &i in &rows {
            let dt = row_seconds(&ps.time_s, 0.02, i);
            assert!(ps.utilisation[i] <= 1.0 + 1e-9, "{} at {}: {}", p.name, ps.time_s[i], ps.utilisation[i]);
            // Counting whole packets where they start would have put more than the capacity here.
            if ps.tx_bytes[i] as f64 * 8.0 / dt > p.capacity_bps * (1.0 + 1e-9) {
                straddled += 1;
            }
            busy += ps.utilisation[i] * dt;
        }
        assert!((busy - p.utilisation * end).abs() < 1e-9 * end, "{}: {busy} vs {}", p.name, p.utilisation * end);
        // Whole packets still reconcile with the port's counters.
        assert_eq!(rows.iter().map(|&i| ps.tx_bytes[i]).sum::<u64>(), p.counters.tx_bytes, "{}", p.name);
        assert_eq!(rows.iter().map(|&i| ps.tx_pkts[i]).sum::<u64>(), p.counters.tx_pkts, "{}", p.name);
    }
    assert!(straddled > 100, "the case must straddle sample boundaries: {straddled}");
    let bn = port(&mut s, "r0->r1");
    assert!(bn.utilisation > 0.95 && bn.utilisation <= 1.0, "{}", bn.utilisation);
}

#[test]
fn group_shares_never_exceed_capacity_and_add_up_to_utilisation() {
    let mut s = sim(SLOW);
    s.run();
    let (ps, gs) = (&s.port_series, &s.group_series);
    for i in 0..ps.time_s.len() {
        let total: f64 = (0..gs.time_s.len())
            .filter(|&j| gs.time_s[j] == ps.time_s[i] && gs.port[j] == ps.port[i])
            .map(|j| {
                assert!(gs.share[j] <= 1.0 + 1e-9, "group {} at {}: {}", gs.group[j], gs.time_s[j], gs.share[j]);
                gs.share[j]
            })
            .sum();
        assert!((total - ps.utilisation[i]).abs() < 1e-9, "t={} port {}", ps.time_s[i], ps.port[i]);
    }
}

/// Payload bytes in flow `f`'s series (every flow if `None`).
fn series_bytes(s: &Simulator, interval: f64, f: Option<u32>) -> f64 {
    let fs = &s.flow_series;
    (0..fs.time_s.len())
        .filter(|&i| f.is_none() || f == Some(fs.flow[i]))
        .map(|i| fs.goodput_bps[i] * row_seconds(&fs.time_s, interval, i) / 8.0)
        .sum()
}

#[test]
fn a_finished_flows_series_holds_every_byte_it_delivered() {
    // Issue 12's 100 kB flow: it ends between samples, and its bytes after its last regular
    // sample used to be lost (44-83 kB were in the series).
    let mut s = sim(SLOW);
    s.run();
    let c = &s.completions;
    assert_eq!((c.flow[0], c.size_bytes[0]), (2, 100_000));
    let end = c.end_s[0];
    assert!((end / 0.02).fract() > 1e-6, "the flow should end between samples: {end}");
    assert!((series_bytes(&s, 0.02, Some(2)) - 100_000.0).abs() < 1e-6);
    // Its last row is at the first sample after it ended.
    let fs = &s.flow_series;
    let last = (0..fs.time_s.len()).rfind(|&i| fs.flow[i] == 2).unwrap();
    assert!(fs.time_s[last] >= end && fs.time_s[last] < end + 0.02, "{} vs {end}", fs.time_s[last]);
    // Time never goes back in the series.
    assert!(fs.time_s.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn the_flow_series_adds_up_to_the_goodput_counter() {
    // Many short flows ending between samples, and a run whose end is not a sample multiple.
    let text = r#"
duration = "10.013s"
seed = 5
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { capacity = "10Mbps", delay = "10ms", buffer = 40 }
access = { capacity = "100Mbps", delay = "1ms" }
[[flows]]
protocol = "newreno"
src = "s0"
dst = "d0"
[[traffic]]
protocol = "newreno"
src = "s1"
dst = "d1"
rate = 20
size = { dist = "pareto", mean = "15pkt", shape = 1.5 }
[record]
interval = "50ms"
"#;
    let mut s = sim(text);
    s.run();
    assert!(s.completions.flow.len() > 100);
    let got = series_bytes(&s, 0.05, None);
    assert!((got - s.goodput_bytes() as f64).abs() < 1e-6 * got, "{got} vs {}", s.goodput_bytes());
    let done: u64 = s.completions.size_bytes.iter().sum();
    assert!(s.goodput_bytes() > done);
}
