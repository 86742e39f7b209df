//! Two BBR v1 flows (Linux `tcp_bbr.c`) sharing one bottleneck converge to a rough fair share
//! within tens of seconds, started together or 5 s apart.
//!
//! The bound, stated from the BBR literature before measuring: Cardwell et al. (ACM Queue
//! 2016, "Competition among BBR flows") show same-RTT BBR flows, started apart, converging to
//! their fair share within a few PROBE_RTT periods (10 s each): a flow with the larger share
//! loses more of it in the synchronised PROBE_RTT drain and the 1.25 probes of both re-divide
//! the link; Hock, Bless & Zitterbart (ICNP 2017, "Experimental Evaluation of BBR Congestion
//! Control") measure Jain's index near 1 for same-RTT BBR flows once converged, and a
//! persistent imbalance only across different RTTs or with cwnd-limited flows in deep buffers.
//! So: Jain's index of the two flows' goodputs over (20, 60] s at least 0.9 (a share ratio of
//! about 1:2 at worst), on a buffer of one BDP and on one of four, for each of the seeds 1–8
//! (the seed draws each flow's PROBE_BW entry phase, `bbr_reset_probe_bw_mode`). A guard
//! beside it, not a claim: the two together deliver at least 80 % of the link, so that a
//! stalled pair cannot pass as a fair one.

mod common;
use common::{goodput_per_flow, sim};

const CAPACITY_BPS: f64 = 50e6;
const SEEDS: std::ops::RangeInclusive<u64> = 1..=8;

/// 50 Mb/s, 40 ms propagation RTT (BDP 250 packets of 1000 B), two BBR flows with SACK; the
/// second starts at `start2` s; buffer `buffer` packets.
fn scenario(buffer: u32, start2: f64, seed: u64) -> String {
    format!(
        r#"
duration = 60
seed = {seed}
packet_size = 1000
handshake = false
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = {{ capacity = "50Mbps", delay = "18ms", buffer = {buffer} }}
access = {{ capacity = "10Gbps", delay = "1ms" }}
[[flows]]
protocol = "bbr"
src = "s0"
dst = "d0"
sack = true
[[flows]]
protocol = "bbr"
src = "s1"
dst = "d1"
sack = true
start = {start2}
[record]
interval = "100ms"
"#
    )
}

fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let q: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * q)
}

/// Each flow's retransmission timeouts over the run.
fn timeouts(s: &racc_sim::Simulator) -> [u64; 2] {
    let fs = &s.flow_series;
    let mut to = [0; 2];
    for i in 0..fs.time_s.len() {
        let f = fs.flow[i] as usize;
        to[f] = to[f].max(fs.timeouts[i]);
    }
    to
}

/// The failures of one case (empty when it holds), with its numbers printed either way.
fn check(buffer: u32, start2: f64, seed: u64) -> Vec<String> {
    let mut s = sim(&scenario(buffer, start2, seed));
    s.run();
    let windows: Vec<Vec<f64>> =
        (0..12).map(|k| goodput_per_flow(&s, 2, 5.0 * k as f64, 5.0 * (k + 1) as f64)).collect();
    let late = goodput_per_flow(&s, 2, 20.0, 60.0);
    let j = jain(&late);
    let case = format!("buffer {buffer}, second at {start2} s, seed {seed}");
    eprintln!(
        "bbr x2, {case}: (20, 60] s {:.1} / {:.1} Mb/s, Jain {j:.3}, timeouts {:?}; per 5 s: {}",
        late[0] / 1e6,
        late[1] / 1e6,
        timeouts(&s),
        windows.iter().map(|w| format!("{:.1}/{:.1}", w[0] / 1e6, w[1] / 1e6)).collect::<Vec<_>>().join(" ")
    );
    let mut failures = Vec::new();
    if j < 0.9 {
        failures.push(format!("{case}: Jain index {j:.3} over (20, 60] s, goodputs {late:.0?} b/s"));
    }
    let total = late.iter().sum::<f64>();
    if total < 0.8 * CAPACITY_BPS {
        failures.push(format!("{case}: together {:.1} Mb/s, under 80 % of the link", total / 1e6));
    }
    failures
}

fn all_fair(buffer: u32) {
    let failures: Vec<String> =
        [0.0, 5.0].into_iter().flat_map(|start2| SEEDS.flat_map(move |seed| check(buffer, start2, seed))).collect();
    assert!(failures.is_empty(), "{}", failures.join("; "));
}

#[test]
fn two_bbr_flows_share_fairly_in_a_four_bdp_buffer() {
    all_fair(1000);
}

/// Expected to fail (strict: it fails if the bound starts to hold), until the cause below is
/// removed. Measured on this scenario, seeds 1–8: Jain 0.865 (seed 3) and 0.872 (seed 8)
/// started together, 0.862 (seed 6) started apart; the other 13 cases 0.907–1.000, and all
/// 16 four-BDP cases 0.961–1.000.
///
/// Cause, from the flows' traces: the losing flow's BtlBw filter collapses within about a
/// second (seed 3: 25.8 → 0.6 Mb/s at 2–3 s, after two retransmission timeouts; seed 6:
/// 44.7 → 0.7 Mb/s at 7–8 s, after two; seed 8: 32.7 → 8.7 Mb/s at 18–19 s, while the other
/// flow took timeouts), and then regrows by only a few packets per gain cycle. The other
/// flow keeps a standing queue of about one BDP (srtt 70–80 ms against RTprop 40 ms), so the
/// loser's cwnd cap cwnd_gain·BtlBw·RTprop = 2·BtlBw·40 ms is about BtlBw·srtt: it is
/// cwnd-limited at what it already delivers, the 1.25 probe cannot raise its delivery rate,
/// and only `bbr_quantization_budget`'s +3 (+2 in the probe phase) packets let it grow (seed
/// 3: cwnd 10 → 121 packets from 2.5 s to 20 s, BtlBw 11.6 against the other's 39.5 Mb/s at
/// 20 s; PROBE_RTT, synchronised at 20.5 s, does not re-divide it since RTprop stays 40 ms).
/// The timeouts are the transport's: at one BDP every case has 1–17 per flow, at four BDPs
/// none. They wait on lost retransmissions, which RFC 6675 repairs only by the timer: with
/// `tcp.lost_retransmit` on (Linux finds them without the timer) the timeouts drop to 0–1
/// per flow and 15 of the 16 one-BDP cases hold. The remaining one (seed 8, apart, Jain
/// 0.898, no timeout) shows the same collapse inside long SACK recoveries instead (the
/// loser's BtlBw 25.7 → 5.3 Mb/s at 25–27 s and 21.9 → 4.9 Mb/s at 51–52 s, while it
/// retransmits about 1000 packets a second), so timeouts are one trigger, not the only one;
/// whether Linux's BBR collapses in the same recoveries is not checked.
#[test]
#[should_panic(expected = "Jain index")]
fn two_bbr_flows_share_fairly_in_a_one_bdp_buffer() {
    all_fair(250);
}
