//! CoDel (RFC 8289) end to end: one long-lived NewReno flow through a CoDel port with a large
//! buffer keeps a standing queue near TARGET, with the link full, and the run is deterministic.

mod common;
use common::{port, sim};
use racc_proto::metrics::{MetricList, MetricValue};
use racc_proto::time::NS_PER_SEC;

/// 100 Mb/s of 1000-byte packets (1040 B on the wire: C = 12 019 pkt/s), 1 ms of propagation
/// RTT (BDP = 12 packets), a 1000-packet buffer that never fills.
const SCENARIO: &str = r#"
duration = 60
seed = 1
packet_size = 1000
handshake = false
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { capacity = "100Mbps", delay = "0.25ms", buffer = 1000, router = "codel" }
access = { capacity = "10Gbps", delay = "0.125ms" }
[[flows]]
protocol = "newreno"
src = "s0"
dst = "d0"
[record]
interval = "100ms"
"#;

/// The bottleneck's CoDel counters: (dequeues, summed sojourn ns, drops).
fn codel_counters(s: &racc_sim::Simulator) -> (u64, u64, u64) {
    let p = s.ports().iter().find(|p| p.name == "r0->r1").expect("bottleneck");
    assert_eq!(p.module_name(), "codel");
    let mut m = MetricList::default();
    p.module().metrics(&mut m);
    let get = |n: &str| match m.0.iter().find(|e| e.0 == n).map(|e| e.2) {
        Some(MetricValue::Count(c)) => c,
        other => panic!("{n}: {other:?}"),
    };
    (get("codel_dequeues"), get("codel_sojourn_ns"), get("codel_drops"))
}

/// The closed form (stated before measuring). Reno adds a packet per RTT, so the queue grows
/// at dQ/dt = C/(BDP + Q). CoDel drops once the sojourn has stayed above TARGET (60 packets)
/// for an INTERVAL: about C·0.1 s/(BDP + 68) ≈ 15 packets later, plus one RTT's packet before
/// the halving takes hold, so the queue peaks near Q_pk = 76; the halving of W = BDP + Q_pk
/// leaves Q_tr = (Q_pk − BDP)/2 = 32 > 0 (the link never idles), and one drop a cycle keeps
/// the re-entry rule's count at 1. The time mean of the sawtooth, ∫Q(BDP+Q)dQ / ∫(BDP+Q)dQ
/// over [Q_tr, Q_pk], is 56 packets: a mean sojourn of 4.7 ms. Window: the mean sojourn over
/// (5, 60] s within [2.5, 7.5] ms (TARGET ± 50 %, wide enough for the model's whole-RTT
/// steps and Reno's recovery), utilisation ≥ 0.95, and over (5, 60] s CoDel's drops the
/// port's only drops. (The first slow start does fill the buffer: it doubles the window every
/// RTT of a few ms, and CoDel waits an INTERVAL before its first drop.)
#[test]
fn one_reno_flow_holds_the_standing_queue_near_target() {
    let (c, bdp, target_pkts) = (100e6 / 8.0 / 1040.0, 12.0f64, 60.0f64);
    let rtt_at_target = (bdp + target_pkts) / c;
    let q_pk = target_pkts + 0.1 / rtt_at_target + 1.0;
    let q_tr = (q_pk - bdp) / 2.0;
    let prim = |q: f64, k: u32| q.powi(k as i32 + 1) / (k as f64 + 1.0);
    let model_q = (bdp * (prim(q_pk, 1) - prim(q_tr, 1)) + prim(q_pk, 2) - prim(q_tr, 2))
        / (bdp * (q_pk - q_tr) + prim(q_pk, 1) - prim(q_tr, 1));
    let mut s = sim(SCENARIO);
    s.run_until(5 * NS_PER_SEC);
    let (n0, ns0, drops0) = codel_counters(&s);
    let before = port(&mut s, "r0->r1").counters;
    s.run();
    let (n1, ns1, drops1) = codel_counters(&s);
    let mean_ms = (ns1 - ns0) as f64 / (n1 - n0) as f64 / 1e6;
    let bn = port(&mut s, "r0->r1");
    let (drops, port_drops) = (drops1 - drops0, bn.counters.drops - before.drops);
    let util = (bn.counters.tx_bytes - before.tx_bytes) as f64 * 8.0 / 55.0 / 100e6;
    eprintln!(
        "codel: mean sojourn {mean_ms:.3} ms over (5, 60] s (model {:.2} ms: queue {q_tr:.0}..{q_pk:.0} pkts), \
         utilisation {util:.4}, codel drops {drops}, port drops {port_drops}",
        model_q / c * 1e3,
    );
    assert!((2.5..=7.5).contains(&mean_ms), "mean sojourn {mean_ms} ms");
    assert!(util >= 0.95, "utilisation {util}");
    assert!(drops > 0 && port_drops == drops, "codel drops {drops}, port drops {port_drops}");
}

/// The same scenario twice: the same drops, sojourns and samples, bit for bit.
#[test]
fn codel_runs_are_deterministic() {
    let run = || {
        let mut s = sim(&SCENARIO.replace("duration = 60", "duration = 8"));
        s.run();
        let q: Vec<u32> = s.port_series.queue_pkts.clone();
        (codel_counters(&s), q, s.conservation())
    };
    let (a, b) = (run(), run());
    assert_eq!(a.0, b.0);
    assert_eq!(a.1, b.1);
    let c = a.2;
    assert!(c.dropped > 0 && c.sent == c.delivered + c.dropped + c.lost + c.in_flight, "{c:?}");
}
