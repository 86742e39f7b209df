//! A paced sender in a SACK recovery whose pipe is full: four BBR v1 flows (RTTs 20-80 ms, a
//! 42-packet buffer at 10 Mb/s, the cross-check case `bbr-10M-20-80ms-4f`) overfill the buffer
//! and recover by RFC 6675. The transport used to ask for a pacing wake-up whenever the
//! flight-based window allowed, while `sack_transmit` sends by the pipe, which counts
//! retransmissions again: a wake-up due now at which nothing went, asked again at once, and on
//! seed 1 simulated time stopped at 3.8894 s while the process spun. The run must reach its end
//! (the engine's spin guard turns a relapse into a panic naming the flow, not a hang).

mod common;
use common::sim;

const SCENARIO: &str = r#"
duration = "6s"
seed = 1
packet_size = 1500
min_rto = "200ms"
[topology]
kind = "dumbbell"
pairs = 4
bottleneck = { capacity = "10Mbps", delay = "0ms", buffer = 42, router = "droptail" }
access = { capacity = "100Mbps", delay = "0ms" }
access_delays = ["10ms", "20ms", "30ms", "40ms"]
[[flows]]
protocol = "bbr"
src = "s0"
dst = "d0"
start = "0.053899s"
initial_window = 10
sack = true
[[flows]]
protocol = "bbr"
src = "s1"
dst = "d1"
start = "0.866834s"
initial_window = 10
sack = true
[[flows]]
protocol = "bbr"
src = "s2"
dst = "d2"
start = "0.843855s"
initial_window = 10
sack = true
[[flows]]
protocol = "bbr"
src = "s3"
dst = "d3"
start = "0.447628s"
initial_window = 10
sack = true
[record]
interval = "50ms"
"#;

#[test]
fn paced_sack_recovery_with_a_full_pipe_lets_time_run_on() {
    let mut s = sim(SCENARIO);
    s.run();
    let end_s = s.now() as f64 * 1e-9;
    assert!(end_s >= 6.0 - 1e-9, "simulated time stopped at {end_s} s");
    // The case's point is the recovery: the buffer overflowed and the flows retransmitted.
    let c = s.conservation();
    assert!(c.dropped > 0, "no drop: the case no longer reaches a SACK recovery");
    assert!(c.holds(), "{c:?}");
    // And the link stayed in use through it: at least half of 10 Mb/s over the 6 s.
    let goodput_bps = s.goodput_bytes() as f64 * 8.0 / 6.0;
    assert!(goodput_bps > 5e6, "goodput {goodput_bps} b/s");
}
