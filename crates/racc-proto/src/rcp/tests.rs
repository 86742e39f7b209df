//! RCP's router arithmetic against hand-computed values, d0's two gains, the op counts, the
//! sender's pacing and REF probes, and the parameter checks (PIQI-RCP's interval and newcomer
//! arithmetic too: they share the per-packet core).

use super::*;
use crate::endpoint::FlowConfig;
use crate::metrics::{MetricList, MetricValue};
use crate::packet::{CongHeader, Direction, Kind, Packet, TcpHeader};
use crate::piqi_rcp::{PiqiRouter, PiqiRouterParams};
use crate::router::{PortView, RouterModule};
use crate::time::{NS_PER_MS, NS_PER_SEC};
use crate::xcc::ops::op_metrics;
use serde_json::json;

const MS: u64 = NS_PER_MS;

/// 8 Mb/s = 1e6 B/s, 1000-byte packets.
fn port(q: u64) -> PortView {
    PortView { capacity_bps: 8e6, queue_bytes: q, mean_pkt_size: 1000, ..Default::default() }
}

fn data(rtt_us: u32) -> Packet {
    let mut p = Packet::tcp(1, Kind::Data, 1000, 948, TcpHeader::default());
    p.cong = CongHeader::Rcp { rate: NO_LIMIT, rtt_us };
    p
}

fn rate_of(p: &Packet) -> u32 {
    match p.cong {
        CongHeader::Rcp { rate, .. } => rate,
        _ => panic!("no RCP header"),
    }
}

/// Ten 1000-byte packets with rtt 100 ms in the first 10 ms, then a tick at 10 ms with `q` bytes queued.
fn one_interval(r: &mut dyn RouterModule, q: u64) {
    for _ in 0..10 {
        r.on_arrival(MS, &mut data(100_000), &port(q));
    }
    r.on_tick(10 * MS, &port(q));
}

#[test]
fn rcp_interval_by_hand() {
    let p = RcpRouterParams::default();
    let mut r = RcpRouter::with_phase(&p, 8e6, 10 * MS);
    assert_eq!(r.rate(), 50_000.0, "R0 = 0.05·C");
    one_interval(&mut r, 5000);
    // T = 0.01 s, y = 10 000 B / 0.01 s = 1e6 B/s = C, q = 5000 B, d0 = 0.2 s:
    // R = 50 000·(1 + (0.01/0.2)·(0.1·(1e6 − 1e6) − 1.0·5000/0.2)/1e6) = 50 000·(1 − 0.00125) = 49 937.5
    assert!((r.rate() - 49_937.5).abs() < 1e-9, "{}", r.rate());
    // d0 (symmetric) = 0.2 + min(1, 0.01/0.2)·(0.1 − 0.2) = 0.195; next tick at 10 ms + min(10 ms, d0).
    assert!((r.d0() - 0.195).abs() < 1e-12, "{}", r.d0());
    assert_eq!(r.next_tick(), Some(20 * MS));
    // An empty interval with no queue: R·(1 + (0.01/0.195)·0.1·C/C).
    let before = r.rate();
    r.on_tick(20 * MS, &port(0));
    assert!((r.rate() - before * (1.0 + 0.01 / 0.195 * 0.1)).abs() < 1e-9);
    // The clamps: a huge queue drives R to R_min = 0.01 pkt per d0 = 0.01·1000/0.195 B/s.
    r.on_tick(30 * MS, &port(10_000_000));
    assert!((r.rate() - 0.01 * 1000.0 / 0.195).abs() < 1e-9, "{}", r.rate());
    let mut m = MetricList::default();
    r.metrics(&mut m);
    assert_eq!(m.get("fair_rate_bps"), Some(MetricValue::Gauge(r.rate() * 8.0)));
    assert_eq!(m.get("d0_s"), Some(MetricValue::Gauge(0.195)));
}

#[test]
fn d0_follows_the_mean_rtt_with_either_gain() {
    // Falling (mean 0.1 s < d0 0.2 s): symmetric 0.195 (above); ns-2's gain is
    // (R/C)·(mean/d0)·(T/d0) = (49 937.5/1e6)·0.5·0.05 = 0.0012484375 → d0 = 0.2 − 0.0012484375·0.1.
    let p = RcpRouterParams { rcp_d0_gain: D0Gain::Ns2, ..Default::default() };
    let mut r = RcpRouter::with_phase(&p, 8e6, 10 * MS);
    one_interval(&mut r, 5000);
    assert!((r.d0() - (0.2 - 0.0012484375 * 0.1)).abs() < 1e-12, "{}", r.d0());
    // Rising (mean 0.3 s): both gains are T/d0 = 0.05 → d0 = 0.2 + 0.05·0.1 = 0.205.
    for gain in [D0Gain::Symmetric, D0Gain::Ns2] {
        let p = RcpRouterParams { rcp_d0_gain: gain, ..Default::default() };
        let mut r = RcpRouter::with_phase(&p, 8e6, 10 * MS);
        r.on_arrival(MS, &mut data(300_000), &port(0));
        r.on_tick(10 * MS, &port(0));
        assert!((r.d0() - 0.205).abs() < 1e-12, "{gain:?}: {}", r.d0());
    }
    // Packets without an RTT (SYNs, other traffic) count in y, not in d0.
    let mut r = RcpRouter::with_phase(&RcpRouterParams::default(), 8e6, 10 * MS);
    r.on_arrival(MS, &mut data(0), &port(0));
    r.on_tick(10 * MS, &port(0));
    assert_eq!(r.d0(), 0.2);
}

#[test]
fn rates_are_written_at_dequeue_into_syn_ref_and_data_only_and_only_lowered() {
    let mut r = RcpRouter::with_phase(&RcpRouterParams::default(), 8e6, 10 * MS);
    for kind in [Kind::Data, Kind::Syn, Kind::Ref] {
        let mut p = data(5);
        p.kind = kind;
        r.on_departure(MS, &mut p, &port(0));
        assert_eq!(rate_of(&p), 50_000, "{kind:?}");
    }
    let mut low = data(5);
    low.cong = CongHeader::Rcp { rate: 100, rtt_us: 5 };
    r.on_departure(MS, &mut low, &port(0));
    assert_eq!(rate_of(&low), 100, "the path carries the min");
    for (kind, dir) in
        [(Kind::Ack, Direction::Return), (Kind::Fin, Direction::Forward), (Kind::Data, Direction::Return)]
    {
        let mut p = data(5);
        (p.kind, p.dir) = (kind, dir);
        r.on_departure(MS, &mut p, &port(0));
        assert_eq!(rate_of(&p), NO_LIMIT, "{kind:?} {dir:?}");
    }
    // Arrival counting ignores the return path: an empty interval.
    let mut ack = data(5);
    ack.dir = Direction::Return;
    r.on_arrival(MS, &mut ack, &port(0));
    assert_eq!(r.core().in_bytes(), 0.0);
}

/// `stamp = "arrival"` (XCC-Linux's hook, before the queue): R is written as the packet
/// arrives, and the departure leaves it alone even if R has changed since.
#[test]
fn stamping_at_arrival_writes_the_rate_in_force_at_arrival() {
    let p = RcpRouterParams { stamp: Stamp::Arrival, ..Default::default() };
    let mut r = RcpRouter::with_phase(&p, 8e6, 10 * MS);
    let mut pkt = data(100_000);
    r.on_arrival(MS, &mut pkt, &port(0));
    assert_eq!(rate_of(&pkt), 50_000, "R0 = 0.05·C at arrival");
    // An interval with a queue lowers R; the queued packet keeps the R it arrived with (at
    // dequeue it would be lowered).
    one_interval(&mut r, 100_000);
    assert!(r.rate() < 50_000.0, "{}", r.rate());
    r.on_departure(11 * MS, &mut pkt, &port(0));
    assert_eq!(rate_of(&pkt), 50_000);
    assert_eq!(parse_router(&json!({"stamp": "arrival"})).map(drop), Ok(()));
    assert_eq!(parse_router(&json!({"stamp": "enqueue"})).map(drop).unwrap_err().key, "stamp");
}

#[test]
fn per_packet_ops_are_counted_on_the_code_that_runs() {
    // XCC-Linux: RCP 2 additions + 2 multiplications per packet. Packets with an RTT cost exactly
    // that (the second multiplication is the header's µs → s); one without costs 2 additions.
    let p = RcpRouterParams { count_ops: true, ..Default::default() };
    let mut r = RcpRouter::with_phase(&p, 8e6, 10 * MS);
    one_interval(&mut r, 5000);
    assert_eq!(op_metrics(&r), (20, 20, 0, 10));
    // Counting changes nothing: the same R as the uncounted run.
    assert!((r.rate() - 49_937.5).abs() < 1e-9);
    r.on_arrival(11 * MS, &mut data(0), &port(0));
    let mut m = MetricList::default();
    r.metrics(&mut m);
    assert_eq!((m.get("ops_adds"), m.get("ops_muls")), (Some(MetricValue::Count(22)), Some(MetricValue::Count(20))));
    // PIQI-RCP's data packets cost the same (P7); a newcomer's SYN (rtt 0) costs its 2 additions
    // plus its start share k·F(k) − (k−1)·F(k−1), F = γC·R/(y + k·R) (4 additions,
    // 6 multiplications, 2 divisions), k = pending + 1 and pending shares + its own (2 additions),
    // and with the due cut its due time, SYN + (d0 − lead) (1 addition; the first cohort needs no
    // merge bound). Admission at the request: R·N̂/(N̂+1) and two counts, 4 additions,
    // 1 multiplication, 1 division.
    for (on_traffic, cut, adds, muls, divs) in [(true, true, 9, 6, 2), (true, false, 8, 6, 2), (false, false, 4, 1, 1)]
    {
        let p = PiqiRouterParams { count_ops: true, admit_on_traffic: on_traffic, due_cut: cut, ..Default::default() };
        let mut q = PiqiRouter::with_phase(&p, 8e6, 10 * MS);
        one_interval(&mut q, 0);
        let mut syn = data(0);
        syn.kind = Kind::Syn;
        q.on_arrival(11 * MS, &mut syn, &port(0));
        let mut m = MetricList::default();
        q.metrics(&mut m);
        assert_eq!(m.get("ops_adds"), Some(MetricValue::Count(20 + adds)));
        assert_eq!(m.get("ops_muls"), Some(MetricValue::Count(20 + muls)));
        assert_eq!(m.get("ops_divs"), Some(MetricValue::Count(divs)));
        assert_eq!(m.get("ops_packets"), Some(MetricValue::Count(11)));
    }
}

#[test]
fn piqi_interval_and_newcomer_by_hand() {
    let on = PiqiRouterParams { admit_on_traffic: true, ..Default::default() };
    let mut r = PiqiRouter::with_phase(&on, 8e6, 10 * MS);
    one_interval(&mut r, 5000);
    // g = min(1, 0.01/0.2) = 0.05; N̂ = max(1, y/R̄ + J) = 1e6/50 000 = 20;
    // e = (0.95·1e6 − 1e6)/20 = −2500 (the queue plays no part); R = 50 000 + 0.5·0.05·(−2500) = 49 937.5
    assert!((r.rate() - 49_937.5).abs() < 1e-9, "{}", r.rate());
    assert_eq!(r.n_hat(), 20.0);
    // A newcomer's SYN (admission on traffic): R stays; the SYN leaves with its start share
    // F(1) = γC·R/(y + R) = 950 000·49 937.5/1 049 937.5 = 45 184.24, one newcomer pending.
    let mut syn = data(0);
    syn.kind = Kind::Syn;
    r.on_arrival(11 * MS, &mut syn, &port(0));
    assert_eq!((r.rate(), r.pending(), r.newcomers()), (49_937.5, 1.0, 1));
    r.on_departure(11 * MS, &mut syn, &port(0));
    assert_eq!(rate_of(&syn), 45_184);
    // A second one before the first shows: 2·F(2) − F(1) = 2·950 000·49 937.5/1 099 875 − 45 184.24
    // = 41 081.25 (a burst of k newcomers gets k·F(k) < γC in all).
    let mut syn = data(0);
    syn.kind = Kind::Syn;
    r.on_arrival(11 * MS, &mut syn, &port(0));
    assert_eq!(rate_of(&syn), 41_081);
    // Data that already carries an RTT is no newcomer.
    r.on_arrival(11 * MS, &mut data(100_000), &port(0));
    assert_eq!(r.newcomers(), 2);
    // Admission at the request (the previous design): R = 49 937.5·20/21, N̂ = 21, and the SYN
    // leaves with that rate.
    let p = PiqiRouterParams { admit_on_traffic: false, ..Default::default() };
    let mut r = PiqiRouter::with_phase(&p, 8e6, 10 * MS);
    one_interval(&mut r, 5000);
    let mut syn = data(0);
    syn.kind = Kind::Syn;
    r.on_arrival(11 * MS, &mut syn, &port(0));
    assert!((r.rate() - 49_937.5 * 20.0 / 21.0).abs() < 1e-9);
    assert_eq!((r.n_hat(), r.newcomers()), (21.0, 1));
    r.on_departure(11 * MS, &mut syn, &port(0));
    assert_eq!(rate_of(&syn), (49_937.5f64 * 20.0 / 21.0) as u32);
    // The clamp: never above γC.
    let mut r = PiqiRouter::with_phase(&PiqiRouterParams { initial_rate: 1.0, ..Default::default() }, 8e6, 10 * MS);
    r.on_tick(10 * MS, &port(0));
    assert_eq!(r.rate(), 950_000.0);
}

fn flow_pair(handshake: bool) -> (Box<dyn crate::Endpoint>, Box<dyn crate::Endpoint>) {
    let mut cfg = FlowConfig::new(1, 1040); // wire 1040 B, MSS 1040 − 40 − 12 = 988
    cfg.handshake = handshake;
    (
        parse_flow(&json!(null)).map(|p| p.sender(&cfg)).unwrap(),
        parse_flow(&json!(null)).map(|p| p.receiver(&cfg)).unwrap(),
    )
}

fn drain(e: &mut dyn crate::Endpoint, now: u64) -> Vec<Packet> {
    crate::endpoint::drain_into(e, now)
}

/// A router on the path: lower every forward packet's rate to `r`.
fn stamp(mut p: Packet, r: u32) -> Packet {
    if let CongHeader::Rcp { rate, .. } = &mut p.cong {
        *rate = (*rate).min(r);
    }
    p
}

#[test]
fn sender_starts_at_the_returned_rate_paces_without_bursts_and_follows_each_ack() {
    let (mut s, mut r) = flow_pair(true);
    s.start(0);
    let syn = drain(s.as_mut(), 0);
    assert_eq!(syn.len(), 1);
    assert_eq!((syn[0].kind, syn[0].cong, syn[0].size), (Kind::Syn, CongHeader::Rcp { rate: NO_LIMIT, rtt_us: 0 }, 52));
    // 1 040 000 B/s: one 1040-byte packet per ms.
    r.on_packet(5 * MS, &stamp(syn[0], 1_040_000));
    let synack = drain(r.as_mut(), 5 * MS);
    s.on_packet(10 * MS, &synack[0]);
    assert_eq!(s.stats().rate_bps, 8_320_000.0);
    let mut sent = Vec::new();
    let mut now = 10 * MS;
    while now < 15 * MS {
        let out = drain(s.as_mut(), now);
        assert!(out.len() <= 1, "no bursts: {} packets at {now}", out.len());
        sent.extend(out.iter().map(|p| (now, p.size, p.cong)));
        now = s.poll_timeout().unwrap();
        s.on_timeout(now);
    }
    let times: Vec<u64> = sent.iter().map(|x| x.0).collect();
    assert_eq!(times, vec![10 * MS, 11 * MS, 12 * MS, 13 * MS, 14 * MS]);
    assert!(sent.iter().all(|x| x.1 == 1040 && matches!(x.2, CongHeader::Rcp { rate: NO_LIMIT, rtt_us: 10_000 })));
    // An ACK at 14.2 ms with twice the rate: the packet due at 15 ms leaves at 14.5 ms instead.
    let mut ack = Packet::tcp(1, Kind::Ack, 52, 0, TcpHeader { ack: 1, ..Default::default() });
    ack.cong = CongHeader::Rcp { rate: 2_080_000, rtt_us: 0 };
    s.on_packet(14 * MS + 200_000, &ack);
    assert_eq!(s.poll_timeout(), Some(14 * MS + 500_000));
    assert_eq!(drain(s.as_mut(), 14 * MS + 500_000).len(), 1);
}

#[test]
fn after_a_resent_syn_data_still_carries_an_rtt() {
    let (mut s, mut r) = flow_pair(true);
    s.start(0);
    let _lost = drain(s.as_mut(), 0);
    s.on_timeout(NS_PER_SEC); // initial RTO 1 s: the SYN goes again
    let syn = drain(s.as_mut(), NS_PER_SEC);
    assert_eq!(syn[0].kind, Kind::Syn);
    r.on_packet(NS_PER_SEC + 20 * MS, &stamp(syn[0], 1_040_000));
    let synack = drain(r.as_mut(), NS_PER_SEC + 20 * MS);
    s.on_packet(NS_PER_SEC + 40 * MS, &synack[0]);
    let d = drain(s.as_mut(), NS_PER_SEC + 40 * MS);
    // Karn: no sample for the transport; the header carries the SYN-ACK's 40 ms.
    assert_eq!(d[0].cong, CongHeader::Rcp { rate: NO_LIMIT, rtt_us: 40_000 });
}

#[test]
fn without_handshake_one_packet_carries_the_request() {
    let (mut s, _) = flow_pair(false);
    s.start(0);
    let out = drain(s.as_mut(), 0);
    assert_eq!(out.len(), 1, "window of one packet until a rate is known");
    assert_eq!(out[0].cong, CongHeader::Rcp { rate: NO_LIMIT, rtt_us: 0 });
    assert!(drain(s.as_mut(), 50 * MS).is_empty());
}

#[test]
fn ref_probes_once_per_rtt_while_the_gap_exceeds_it() {
    let (mut s, mut r) = flow_pair(true);
    s.start(0);
    let syn = drain(s.as_mut(), 0);
    // 1040 B/s: a gap of 1 s against an RTT of 100 ms.
    r.on_packet(50 * MS, &stamp(syn[0], 1040));
    let synack = drain(r.as_mut(), 50 * MS);
    s.on_packet(100 * MS, &synack[0]);
    let mut kinds = Vec::new();
    let mut now = 100 * MS;
    while now < 100 * MS + NS_PER_SEC / 2 {
        for p in drain(s.as_mut(), now) {
            kinds.push((now, p.kind));
        }
        // As an engine does: fire whatever timer is due (a probe, the pacing gap, the RTO).
        now = s.poll_timeout().unwrap();
        s.on_timeout(now);
    }
    let refs: Vec<u64> = kinds.iter().filter(|k| k.1 == Kind::Ref).map(|k| k.0).collect();
    assert_eq!(refs, vec![100 * MS, 200 * MS, 300 * MS, 400 * MS, 500 * MS], "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| k.1 == Kind::Data).count(), 1, "one data packet per second");
    // The answer to a probe sets the rate at once: now a gap of 1 ms < RTT, no more probes.
    let mut answer = Packet::tcp(1, Kind::Ref, 52, 0, TcpHeader::default());
    answer.cong = CongHeader::Rcp { rate: 1_040_000, rtt_us: 0 };
    s.on_packet(550 * MS, &answer);
    let out = drain(s.as_mut(), 650 * MS);
    assert!(out.iter().all(|p| p.kind == Kind::Data) && out.len() == 1, "{out:?}");
    assert_eq!(s.poll_timeout(), Some(651 * MS));
}

#[test]
fn params_are_refused_with_their_key() {
    assert_eq!(parse_router(&json!(null)).map(drop), Ok(()));
    assert_eq!(crate::piqi_rcp::parse_router(&json!(null)).map(drop), Ok(()));
    assert_eq!(parse_flow(&json!(null)).map(drop), Ok(()));
    for (module, bad, key) in [
        ("rcp", json!({"t_slot": 0.0}), "t_slot"),
        ("rcp", json!({"alpha": -1.0}), "alpha"),
        ("rcp", json!({"beta": -0.5}), "beta"),
        ("rcp", json!({"initial_rate": 1.5}), "initial_rate"),
        ("rcp", json!({"d0": 0.0}), "d0"),
        ("rcp", json!({"r_min_pkts": 0.0}), "r_min_pkts"),
        ("piqi-rcp", json!({"k_i": 2.0}), "k_i"),
        ("piqi-rcp", json!({"k_p": 1.0}), "k_p"),
        ("piqi-rcp", json!({"gamma": 0.0}), "gamma"),
        ("piqi-rcp", json!({"delta": -1.0}), "delta"),
    ] {
        let parse = if module == "rcp" { parse_router } else { crate::piqi_rcp::parse_router };
        assert_eq!(parse(&bad).unwrap_err().key, key, "{module} {bad}");
    }
    assert!(parse_router(&json!({"rcp_d0_gain": "fast"})).map(drop).unwrap_err().to_string().contains("rcp_d0_gain"));
    assert!(parse_router(&json!({"alpah": 0.1})).map(drop).unwrap_err().reason.contains("alpah"));
    assert_eq!(parse_flow(&json!({"tcp": {"max_rto": 0}})).map(drop).unwrap_err().key, "tcp.max_rto");
    let req = parse_flow(&json!(null)).unwrap().path_requirements();
    assert_eq!(req[0].key, keys::XCC_RATE);
}
