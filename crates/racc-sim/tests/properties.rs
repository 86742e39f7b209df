//! Engine properties: packet conservation at every sample, causality, determinism.

mod common;
use common::sim;

/// A busy, lossy mix: RED dropping, Bernoulli wire loss on the bottleneck (both directions),
/// finite and unbounded flows, a Poisson generator, delayed ACKs and SACK.
const MIX: &str = r#"
duration = "20s"
seed = 7
[topology]
kind = "dumbbell"
pairs = 6
bottleneck = { capacity = "8Mbps", delay = "20ms", buffer = 60, router = "red", router_params = { min_th = 10, max_th = 40, max_p = 0.1, w_q = 0.002 }, loss = { model = "bernoulli", p = 0.01 }, loss_direction = "both" }
access = { capacity = "100Mbps", delay = "2ms" }
[[flows]]
protocol = "newreno"
src = "s{i}"
dst = "d{i}"
count = 4
start_spread = "1s"
delayed_ack = true
[[flows]]
protocol = "reno"
src = "s4"
dst = "d4"
size = "300KB"
start = "2s"
[[flows]]
protocol = "newreno"
src = "s4"
dst = "d4"
size = "500KB"
start = "1s"
sack = true
[[traffic]]
protocol = "newreno"
src = "s5"
dst = "d5"
rate = 5
size = { dist = "pareto", mean = "20pkt", shape = 1.5 }
[record]
interval = "50ms"
"#;

#[test]
fn packets_are_conserved_at_every_step() {
    let mut s = sim(MIX);
    let mut t = 0.0;
    let mut checks = 0;
    while !s.finished() {
        t += 0.05;
        s.run_until(racc_proto::time::secs(t));
        let c = s.conservation();
        assert!(c.holds(), "at t={t}: {c:?}");
        checks += 1;
    }
    let c = s.conservation();
    assert!(c.sent > 10_000, "the mix must be busy: {c:?}");
    assert!(c.dropped > 0 && c.lost > 0, "the mix must exercise drops and losses: {c:?}");
    assert!(checks >= 400);
}

/// Every packet a port counts is accounted for by the engine: per port, each arrival was
/// dropped, is waiting, or has started serialisation; each packet sent is lost on the wire, is
/// still on it (or propagating), or has left the port for the next hop or its endpoint. Summed
/// over the ports these give the engine's drops, losses and packets in flight, and the
/// arrivals are the endpoints' packets plus the forwarded ones.
#[test]
fn port_counters_reconcile_with_conservation_at_every_step() {
    let mut s = sim(MIX);
    let mut t = 0.0;
    while !s.finished() {
        t += 0.05;
        s.run_until(racc_proto::time::secs(t));
        let c = s.conservation();
        let (mut drops, mut losses, mut held, mut arrivals, mut passed) = (0, 0, 0, 0, 0);
        for (i, p) in s.ports().iter().enumerate() {
            let pc = p.c;
            let waiting = p.queue().0 as u64;
            let on_wire = s.held(i) as u64 - waiting;
            assert_eq!(pc.arrivals, pc.drops + waiting + pc.tx_pkts, "t={t} {}: {pc:?}", p.name);
            assert!(pc.tx_pkts >= pc.losses + on_wire, "t={t} {}: {pc:?}", p.name);
            assert_eq!(p.queue().1 == 0, waiting == 0, "t={t} {}", p.name);
            drops += pc.drops;
            losses += pc.losses;
            held += s.held(i) as u64;
            arrivals += pc.arrivals;
            passed += pc.tx_pkts - pc.losses - on_wire;
        }
        assert_eq!((drops, losses, held), (c.dropped, c.lost, c.in_flight), "t={t}: {c:?}");
        // What left a port went on to the next hop (an arrival there) or was delivered.
        assert_eq!(arrivals, c.sent + passed - c.delivered, "t={t}: {c:?}");
    }
}

#[test]
fn event_time_never_decreases() {
    let mut s = sim(MIX);
    let mut last = 0;
    while !s.finished() {
        s.run_until(s.now() + 1_000_000);
        assert!(s.now() >= last);
        last = s.now();
    }
    assert!(s.events() > 10_000);
    assert_eq!(s.time_reversals(), 0, "an event ran before the current time");
}

#[test]
fn same_seed_same_output() {
    let run = |text: &str| {
        let mut s = sim(text);
        s.run();
        (s.port_series.clone(), s.flow_series.clone(), s.completions.clone(), s.events())
    };
    let a = run(MIX);
    let b = run(MIX);
    assert_eq!(a, b, "two runs with one seed differ");
    let c = run(&MIX.replace("seed = 7", "seed = 8"));
    assert_ne!(a.0, c.0, "a different seed should change a lossy run");
}

#[test]
fn stepping_does_not_change_results() {
    // Running in many small steps (as the progress bar does) equals one run to the end.
    let mut a = sim(MIX);
    a.run();
    let mut b = sim(MIX);
    let mut t = 0;
    while !b.finished() {
        t += 37_000_000;
        b.run_until(t);
    }
    assert_eq!(a.port_series, b.port_series);
    assert_eq!(a.events(), b.events());
}
