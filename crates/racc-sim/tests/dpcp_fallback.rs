//! DPCP's exception handling end to end (MPCP §3.4; docs/PROTOCOLS.md §3 "Exceptions"), on the
//! mpcp-loss-sweep dumbbell (10 Mb/s, 500 ms RTT) with one long transfer and loss on the ACK
//! path: cumulative ACKs hide that loss from TCP, so what is left is broken MSP/LSP echo pairs.
//!
//! - No random loss: chains decode, and exceptions start only with the first buffer drop (a
//!   single flow's MI overshoots the one-BDP buffer now and then), at most one per drop.
//! - 30 % ACK loss for 60 s: the sender falls back to VCP mode, retries chains after
//!   `resume_after` = 8 RTTs, fails each retry, and after `max_resumes` = 3 failed retries
//!   stays in VCP mode for good (the persistently lossy path). Measured on this build (seed 1):
//!   4 fallbacks, 3 resumes, VCP mode for good from 17 s on, 24 exceptions.

mod common;
use common::sim;
use racc_sim::Simulator;

const LOSS_SWEEP: &str = include_str!("../../../scenarios/mpcp-loss-sweep.toml");

/// DPCP on the loss-sweep dumbbell: a 100 MB transfer (longer than the run), `ack_loss` on the
/// ACK path, 60 s.
fn run(ack_loss: f64) -> Simulator {
    let t = LOSS_SWEEP
        .replace("router = \"vcp\"", "router = \"dpcp\"")
        .replace("protocol = \"vcp\"", "protocol = \"dpcp\"")
        .replace("duration = \"600s\"", "duration = \"60s\"")
        .replace("size = \"1MB\"", "size = \"100MB\"")
        .replace("p = 0.1 }", &format!("p = {ack_loss} }}, loss_direction = \"reverse\""));
    assert!(t.contains("loss_direction = \"reverse\"") && t.contains("100MB"), "template changed:\n{t}");
    let mut s = sim(&t);
    s.run();
    s
}

/// Flow 0's samples: (time s, exceptions, fallbacks, resumes, in VCP mode).
fn chain_series(s: &Simulator) -> Vec<(f64, u64, u64, u64, bool)> {
    let fs = &s.flow_series;
    // The chain senders' own metrics, by the names DPCP reports them under.
    let count = |name: &str| fs.named.counts(name).unwrap_or_else(|| panic!("no count column {name}"));
    let (exc, fb, res) = (count("chain_exceptions"), count("vcp_fallbacks"), count("chain_resumes"));
    let mode = fs.named.flags("vcp_mode").expect("vcp_mode is a flag column");
    (0..fs.time_s.len()).filter(|&i| fs.flow[i] == 0).map(|i| (fs.time_s[i], exc[i], fb[i], res[i], mode[i])).collect()
}

#[test]
fn without_loss_exceptions_come_only_from_buffer_drops() {
    let mut s = run(0.0);
    let series = chain_series(&s);
    assert!(series.len() > 50, "one sample per second for 60 s");
    // One flow's MI overshoots the one-BDP buffer now and then (ξ = 1 below ρ = 0.2): the only
    // losses, and the only way to break a chain here.
    let ps = &s.port_series;
    let bottleneck = s.ports().iter().position(|p| p.name == "r0->r1").unwrap() as u32;
    let first_drop = (0..ps.time_s.len())
        .find(|&i| ps.port[i] == bottleneck && ps.drops[i] > 0)
        .map_or(f64::INFINITY, |i| ps.time_s[i]);
    let drops = common::port(&mut s, "r0->r1").counters.drops;
    let &(_, exceptions, fallbacks, _, _) = series.last().unwrap();
    eprintln!("no loss: first drop at {first_drop} s, {drops} drops, {exceptions} exceptions, {fallbacks} fallbacks");
    assert!(first_drop > 2.0, "chains decode through start-up");
    for &(t, e, f, r, vcp) in &series {
        if t < first_drop {
            assert!(e == 0 && f == 0 && r == 0 && !vcp, "an exception before any drop at {t} s: {series:?}");
        }
    }
    assert!(exceptions <= drops, "{exceptions} exceptions from {drops} dropped packets");
}

#[test]
fn persistent_ack_loss_falls_back_retries_and_stays_in_vcp_mode() {
    let s = run(0.3);
    let series = chain_series(&s);
    let &(_, exceptions, fallbacks, resumes, vcp) = series.last().unwrap();
    let forever_from = series.iter().find(|x| x.2 == fallbacks).map(|x| x.0).unwrap();
    eprintln!(
        "30 % ACK loss: {exceptions} exceptions, {fallbacks} fallbacks, {resumes} resumes, \
         VCP mode for good from {forever_from} s"
    );
    // max_resumes = 3 retries, each failed: one fallback more than resumes, then no retry.
    assert_eq!((fallbacks, resumes), (4, 3));
    assert!(vcp, "in VCP mode at the end");
    assert!(
        series.iter().filter(|x| x.0 >= forever_from).all(|x| x.4),
        "VCP mode throughout after the last fallback: {series:?}"
    );
    // The last retry happened at least resume_after = 8 RTTs (~4 s) after the fallback before it.
    let first_fallback = series.iter().find(|x| x.2 >= 1).unwrap().0;
    assert!(forever_from >= first_fallback + 3.0 * 4.0, "three retries take 3 x 8 RTTs at least");
    assert!(forever_from < 40.0, "the sender gives up on chains well before the end");
    // The transfer goes on in VCP mode: data keeps being acknowledged after the fallback.
    let fs = &s.flow_series;
    let acked_at = |t: f64| {
        (0..fs.time_s.len()).filter(|&i| fs.flow[i] == 0 && fs.time_s[i] <= t).map(|i| fs.acked_bytes[i]).max().unwrap()
    };
    assert!(acked_at(60.0) > acked_at(forever_from) + 1_000_000, "VCP mode still moves data");
}
