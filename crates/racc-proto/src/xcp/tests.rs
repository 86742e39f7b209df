//! Unit tests of XCP's router arithmetic (against hand-computed values), its per-packet cost,
//! the sender's window and the factory glue.

use super::*;
use crate::cc::{Ack, CongestionControl, Response, SenderCtx, Signal};
use crate::endpoint::FlowConfig;
use crate::metrics::{MetricList, MetricValue};
use crate::packet::{CongHeader, Direction, Kind, Packet, TcpHeader};
use crate::protocol::{ContractValue, Presence, ANY_PORT};
use crate::router::{PortView, RouterModule};
use crate::tcp::recovery::drive;
use crate::time::{Time, NS_PER_MS};
use crate::xcc::ops::op_metrics;
use crate::xcc::ops::{self, Counted, OpCounts};

/// u = rtt·s and b = rtt²·s/cwnd of a packet (H_rtt µs).
fn ub(rtt_us: f64, s: f64, cwnd: f64) -> (f64, f64) {
    let (u, _, b) = carry_terms(rtt_us, s, cwnd);
    (u, b)
}
use serde_json::json;

const MS: Time = NS_PER_MS;

pub(super) fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-300)
}

pub(super) fn data(size: u32, rtt_us: u32, cwnd: u32, feedback: f32) -> Packet {
    let mut p = Packet::tcp(1, Kind::Data, size, size - 60, TcpHeader::default());
    p.cong = CongHeader::Xcp { rtt_us, cwnd, feedback, reverse_feedback: 0.0 };
    p
}

fn feedback_of(p: &Packet) -> f32 {
    match p.cong {
        CongHeader::Xcp { feedback, .. } => feedback,
        _ => panic!("not XCP"),
    }
}

/// An 8 Mb/s port (C = 10⁶ B/s) holding `queue` bytes.
pub(super) fn port(queue: u64) -> PortView {
    PortView { capacity_bps: 8e6, queue_bytes: queue, limit_pkts: 1000, limit_bytes: u64::MAX, ..Default::default() }
}

/// The interval of the hand computation, fed through a router whose first tick is at 100 ms:
/// - flow A: 40 packets of s = 1000 B, H_rtt = 100 ms, H_cwnd = 10 000 B: a = rtt·s/cwnd =
///   0.01 s, a·rtt = 0.001 s² each;
/// - flow B: 20 packets of 1000 B, H_rtt = 200 ms, H_cwnd = 20 000 B: a = 0.01 s, a·rtt = 0.002 s²;
/// - 10 non-XCP packets (ACK-like, no XCP header) of 1000 B;
/// - every arrival finds 5 000 B queued, so Q = 5 000 B.
///
/// Σa = 60·0.01 = 0.6 s, Σb = 40·0.001 + 20·0.002 = 0.08 s², in_bytes = 70 000, XCP bytes 60 000.
fn hand_interval(r: &mut XcpRouter) {
    let q = port(5_000);
    for _ in 0..40 {
        r.on_arrival(MS, &mut data(1000, 100_000, 10_000, f32::INFINITY), &q);
    }
    for _ in 0..20 {
        r.on_arrival(MS, &mut data(1000, 200_000, 20_000, f32::INFINITY), &q);
    }
    for _ in 0..10 {
        let mut p = Packet::tcp(2, Kind::Data, 1000, 960, TcpHeader::default());
        r.on_arrival(MS, &mut p, &q);
    }
}

#[test]
fn interval_computation_against_hand_values() {
    let p = XcpRouterParams::default();
    let mut r = XcpRouter::with_phase(&p, 100 * MS);
    assert_eq!(r.control().d, 0.05, "d = 50 ms before the first sample");
    hand_interval(&mut r);
    let s = *r.sums();
    assert!(close(s.sum_a, 0.6e6, 1e-12), "Σa in µs: {}", s.sum_a);
    assert!(close(s.sum_b, 0.08e12, 1e-12), "Σb in µs²: {}", s.sum_b);
    assert_eq!((s.in_bytes, s.other_bytes), (70_000.0, 10_000.0));
    assert_eq!(r.next_tick(), Some(100 * MS));
    r.on_tick(100 * MS, &port(5_000));
    let c = *r.control();
    // d = Σb/Σa = 0.08/0.6 = 2/15 s; T = 0.1 s, so y = 70 000/0.1 = 700 000 B/s;
    // φ = 0.4·(2/15)·(10⁶ − 7·10⁵) − 0.226·5000 = 16 000 − 1 130 = 14 870 B;
    // h = max(0, 0.1·7·10⁵·(2/15) − |14 870|) = max(0, 9 333.3 − 14 870) = 0;
    // ξ_p = (h + φ)/(d·Σa) = 14 870/((2/15)·0.6) = 14 870/0.08 = 185 875 B/s²; ξ_n = h/(d·60 000) = 0.
    assert!(close(c.d, 2.0 / 15.0, 1e-12), "d {}", c.d);
    assert!(close(c.y, 700_000.0, 1e-12), "y {}", c.y);
    assert!(close(c.phi, 14_870.0, 1e-9), "φ {}", c.phi);
    assert_eq!(c.h, 0.0);
    assert!(close(c.xi_p, 185_875.0, 1e-9), "ξ_p {}", c.xi_p);
    assert_eq!(c.xi_n, 0.0);
    assert_eq!(r.persistent_queue(), 5_000);
    // The next interval starts at +d with the sums reset; the next queue window ends after
    // d − queue/C = 2/15 − 5 000/10⁶ s.
    assert_eq!(r.next_control(), 100 * MS + crate::time::secs(2.0 / 15.0));
    assert_eq!(r.next_tick(), Some(100 * MS + crate::time::secs(2.0 / 15.0 - 0.005)));
    assert_eq!(*r.sums(), Sums::default());
    let mut m = MetricList::default();
    r.metrics(&mut m);
    assert_eq!(m.get("xi_p"), Some(MetricValue::Gauge(c.xi_p)));
    assert_eq!(m.get("control_interval_s"), Some(MetricValue::Gauge(c.d)));
    assert_eq!(m.get("persistent_queue_bytes"), Some(MetricValue::Gauge(5_000.0)));
}

#[test]
fn interval_with_shuffling_and_negative_feedback() {
    // The same sums over T = 0.07 s: y = 70 000/0.07 = 10⁶ B/s = C, so
    // φ = 0.4·d·0 − 0.226·5000 = −1 130 B; h = max(0, 0.1·10⁶·(2/15) − 1 130) = 13 333.3 − 1 130
    // = 12 203.3 B; positive budget h = 12 203.3, negative h + 1 130 = 13 333.3;
    // ξ_p = 12 203.3/0.08 = 152 541.7 B/s²; ξ_n = 13 333.3/((2/15)·60 000) = 13 333.3/8 000 = 1.6667 /s.
    let sums = Sums { in_bytes: 70_000.0, other_bytes: 10_000.0, sum_a: 0.6e6, sum_b: 0.08e12 };
    let c = control(&XcpRouterParams::default(), &sums, 0.07, 1e6, 5_000.0, 0.05);
    let h = 0.1 * 1e6 * (2.0 / 15.0) - 1_130.0;
    assert!(close(c.phi, -1_130.0, 1e-9), "φ {}", c.phi);
    assert!(close(c.h, h, 1e-12), "h {}", c.h);
    assert!(close(c.pos, h, 1e-12) && close(c.neg, h + 1_130.0, 1e-12));
    assert!(close(c.xi_p, h / 0.08, 1e-12), "ξ_p {}", c.xi_p);
    assert!(close(c.xi_n, 5.0 / 3.0, 1e-12), "ξ_n {}", c.xi_n);
    // No XCP packet with an RTT: d stays, ξ = 0 (no division by an empty sum); y still counts.
    let none = Sums { in_bytes: 50_000.0, other_bytes: 50_000.0, sum_a: 0.0, sum_b: 0.0 };
    let c = control(&XcpRouterParams::default(), &none, 0.1, 1e6, 0.0, 0.3);
    assert_eq!((c.d, c.y, c.xi_p, c.xi_n), (0.3, 500_000.0, 0.0, 0.0));
    // d is clamped to [1 ms, 1 s].
    let long = Sums { in_bytes: 1000.0, other_bytes: 0.0, sum_a: 2e6, sum_b: 2e6 * 3e6 };
    assert_eq!(control(&XcpRouterParams::default(), &long, 0.1, 1e6, 0.0, 0.05).d, 1.0);
    let short = Sums { in_bytes: 1000.0, other_bytes: 0.0, sum_a: 10.0, sum_b: 10.0 * 100.0 };
    assert_eq!(control(&XcpRouterParams::default(), &short, 0.1, 1e6, 0.0, 0.05).d, 1e-3);
}

/// XCP-b (`spare = "queue"`, docs/PROTOCOLS.md §5): the spare bandwidth is the queue's speed, the
/// queue term pulls Q to 2 packets, and the probe 0.1·y comes after two intervals ending empty.
/// The port's capacity (8 Mb/s here) is never read.
#[test]
fn xcp_b_takes_the_spare_bandwidth_from_the_queue() {
    let p = XcpRouterParams { spare: XcpSpare::Queue, ..XcpRouterParams::default() };
    let q = |bytes: u64| PortView { mean_pkt_size: 1000, ..port(bytes) };
    let mut r = XcpRouter::with_phase(&p, 100 * MS);
    hand_interval(&mut r);
    r.on_tick(100 * MS, &q(5_000));
    // First interval: no earlier queue, S = 0; Q = 5 000 B, Q_target = 2 000 B:
    // φ = 0.4·d·0 − 0.226·3 000 = −678 B; h = max(0, 0.1·7·10⁵·(2/15) − 678) = 9 333.3 − 678.
    let c = *r.control();
    assert!(close(c.phi, -678.0, 1e-9), "φ {}", c.phi);
    assert!(close(c.h, 0.1 * 700_000.0 * (2.0 / 15.0) - 678.0, 1e-12), "h {}", c.h);
    // The next interval (2/15 s) ends with the queue drained to 0 and Q = 0: S = 5 000/(2/15)
    // = 37 500 B/s (the first empty interval: no probe yet), φ = 0.4·(2/15)·37 500 + 0.226·2 000
    // = 2 000 + 452 = 2 452 B.
    let t1 = r.next_control();
    hand_interval(&mut r);
    r.on_tick(t1, &q(0));
    let c = *r.control();
    assert!(close(c.phi, 2_452.0, 1e-6), "φ {}", c.phi);
    // A second interval ending empty: the probe, S = 0.1·y.
    let t2 = r.next_control();
    hand_interval(&mut r);
    r.on_tick(t2, &q(0));
    let c = *r.control();
    assert!(close(c.phi, 0.4 * c.d * 0.1 * c.y + 0.226 * 2_000.0, 1e-9), "φ {} y {}", c.phi, c.y);
    let mut m = MetricList::default();
    r.metrics(&mut m);
    assert_eq!(m.get("blind_probes"), Some(MetricValue::Count(1)));
    assert_eq!(m.get("spare_estimate_bps"), Some(MetricValue::Gauge(0.1 * c.y * 8.0)));
    assert_eq!(m.get("capacity_estimate_bps"), None, "no capacity estimate");
    // The "xcp-b" router module (`parse_router_b`) is this one.
    let mut m = MetricList::default();
    parse_router_b(&json!({}))
        .map(|f| f.build(&ANY_PORT, crate::rng::SimRng::for_component(1, "xcp-b")))
        .unwrap()
        .metrics(&mut m);
    assert!(m.get("blind_probes").is_some() && m.get("capacity_estimate_bps").is_none());
}

/// The budget of the shuffling interval above, in header units.
fn shuffle_budget() -> Budget<f64> {
    let xi_p = (0.1 * 1e6 * (2.0 / 15.0) - 1_130.0) / 0.08;
    Budget { k_p: xi_p / 1e12, k_n: (5.0 / 3.0) / 1e6, res_pos: 12_203.0, res_neg: 13_333.0 }
}

#[test]
fn per_packet_feedback_formula_and_budgets() {
    // Flow A's packet (rtt 100 ms, cwnd 10 000 B, s = 1000 B) in the shuffling interval:
    // pos = ξ_p·rtt²·s/cwnd = 152 541.67·0.01·0.1 = 152.5417 B; neg = ξ_n·rtt·s = (5/3)·0.1·1000
    // = 166.6667 B; fb = −14.125 B.
    let xi_p = (0.1 * 1e6 * (2.0 / 15.0) - 1_130.0) / 0.08;
    let (pos, neg) = (xi_p * 0.01 * 0.1, 5.0 / 3.0 * 100.0);
    assert!(close(pos - neg, -14.125, 1e-9));
    // u = rtt·s = 10⁸ µs·B, b = rtt²·s/cwnd = 10¹⁰·1000/10⁴ = 10⁹ µs².
    let (u, rb) = ub(100_000.0, 1000.0, 10_000.0);
    assert_eq!((u, rb), (1e8, 1e9));
    for rule in [XcpBudget::Granted, XcpBudget::Ns235] {
        // A header asking for +inf (or more than fb) is lowered to fb; both parts are billed.
        for h in [f64::INFINITY, 100.0] {
            let mut b = shuffle_budget();
            let fb = departure(&mut b, u, rb, h, rule);
            assert!(close(fb, pos - neg, 1e-9), "fb {fb}");
            assert!(close(b.res_pos, 12_203.0 - pos, 1e-12) && close(b.res_neg, 13_333.0 - neg, 1e-12));
        }
    }
    // An upstream router already wrote H = −50 < fb: the header keeps it. "granted" bills −H = 50
    // to the negative budget; "ns235" bills neg + (fb − H) = 166.667 + 35.875 = 202.542 to the
    // negative budget and H + that = 152.542 to the positive one.
    let mut b = shuffle_budget();
    assert_eq!(departure(&mut b, u, rb, -50.0, XcpBudget::Granted), -50.0);
    assert!(b.res_pos == 12_203.0 && close(b.res_neg, 13_283.0, 1e-12));
    let mut b = shuffle_budget();
    assert_eq!(departure(&mut b, u, rb, -50.0, XcpBudget::Ns235), -50.0);
    assert!(close(b.res_neg, 13_333.0 - (neg + 35.875), 1e-9), "{}", b.res_neg);
    assert!(close(b.res_pos, 12_203.0 - (neg + 35.875 - 50.0), 1e-9), "{}", b.res_pos);
    // H = +20 ≥ 0 already lower: "granted" bills 20 to the positive budget.
    let mut b = shuffle_budget();
    let mut bb = b;
    bb.k_n = 0.0; // fb = +152.5 > 20
    assert_eq!(departure(&mut bb, u, rb, 20.0, XcpBudget::Granted), 20.0);
    assert!(bb.res_pos == 12_183.0 && bb.res_neg == 13_333.0);
    // A spent budget: pos is cut to what is left, then ξ_p is zeroed for the rest of the interval.
    b.res_pos = 100.0;
    let fb = departure(&mut b, u, rb, f64::INFINITY, XcpBudget::Granted);
    assert!(close(fb, 100.0 - neg, 1e-12));
    assert_eq!((b.res_pos, b.k_p), (0.0, 0.0));
    let fb = departure(&mut b, u, rb, f64::INFINITY, XcpBudget::Granted);
    assert!(close(fb, -neg, 1e-12), "only negative feedback once the positive budget is spent");
}

#[test]
fn router_writes_feedback_only_lower_and_only_on_forward_xcp_data() {
    let p = XcpRouterParams::default();
    let mut r = XcpRouter::with_phase(&p, 100 * MS);
    hand_interval(&mut r);
    r.on_tick(100 * MS, &port(5_000));
    let q = port(0);
    // ξ_p = 185 875, ξ_n = 0: flow A's packet gets 185 875·0.01·0.1 = 185.875 B.
    let mut a = data(1000, 100_000, 10_000, f32::INFINITY);
    r.on_departure(101 * MS, &mut a, &q);
    assert!(close(feedback_of(&a) as f64, 185.875, 1e-6), "{}", feedback_of(&a));
    let mut lower = data(1000, 100_000, 10_000, -3.0);
    r.on_departure(101 * MS, &mut lower, &q);
    assert_eq!(feedback_of(&lower), -3.0, "never raised");
    let mut no_rtt = data(1000, 0, 1000, f32::INFINITY);
    r.on_departure(101 * MS, &mut no_rtt, &q);
    assert_eq!(feedback_of(&no_rtt), 0.0, "no RTT yet: 0");
    let mut ack = data(1000, 100_000, 10_000, f32::INFINITY);
    ack.kind = Kind::Ack;
    ack.dir = Direction::Return;
    r.on_departure(101 * MS, &mut ack, &q);
    assert_eq!(feedback_of(&ack), f32::INFINITY, "ACKs are not touched");
}

/// Over an interval every flow gains the same throughput ξ_p·d and loses ξ_n·d·x_i, in
/// proportion to its rate x_i = cwnd_i/rtt_i (docs/PROTOCOLS.md §5). Each flow sends d·x_i/s
/// packets in d = 0.1 s:
/// - A: rtt 50 ms, cwnd 5 000 B, s 1000: x = 100 kB/s, 10 packets;
/// - B: rtt 200 ms, cwnd 40 000 B, s 1000: x = 200 kB/s, 20 packets;
/// - C: rtt 100 ms, cwnd 3 000 B, s 500: x = 30 kB/s, 6 packets.
///
/// Its window changes by Σ feedback; its throughput by that over its rtt.
#[test]
fn every_flow_gains_the_same_and_loses_in_proportion_to_its_rate() {
    let (d, xi_p, xi_n) = (0.1, 250_000.0, 0.8);
    let flows = [(0.05, 5_000.0, 1000.0, 10), (0.2, 40_000.0, 1000.0, 20), (0.1, 3_000.0, 500.0, 6)];
    for (rtt, cwnd, s, n) in flows {
        let x = cwnd / rtt;
        assert!(close(n as f64, d * x / s, 1e-12));
        let (mut gain, mut loss) = (0.0, 0.0);
        for _ in 0..n {
            let mut only_pos = Budget { k_p: xi_p / 1e12, k_n: 0.0, res_pos: 1e12, res_neg: 1e12 };
            let (u, b) = ub(rtt * 1e6, s, cwnd);
            gain += departure(&mut only_pos, u, b, f64::INFINITY, XcpBudget::Granted);
            let mut only_neg = Budget { k_p: 0.0, k_n: xi_n / 1e6, res_pos: 1e12, res_neg: 1e12 };
            loss -= departure(&mut only_neg, u, b, f64::INFINITY, XcpBudget::Granted);
        }
        assert!(close(gain / rtt, xi_p * d, 1e-9), "rtt {rtt}: throughput gain {} vs ξ_p·d {}", gain / rtt, xi_p * d);
        assert!(close(loss / rtt, xi_n * d * x, 1e-9), "rtt {rtt}: loss {} vs ξ_n·d·x {}", loss / rtt, xi_n * d * x);
    }
}

/// XCC-Linux: XCP does "6 additions and 3 multiplications" per packet. Counted on the code that
/// runs (`count_ops`), one XCP data packet through the port (arrival + departure) does
/// 6 additions, 4 multiplications and 1 division by H_cwnd:
///
/// - arrival: u = rtt·s (1 mul), a = u/cwnd (1 div), b = a·rtt (1 mul); input bytes + s,
///   Σa + a, Σb + b (3 adds); u and b are carried to the departure beside the buffer;
/// - departure: pos = ξ_p·b and neg = ξ_n·u (2 muls, the per-interval ξ already in header
///   units), fb = pos − neg and the two budgets less what was granted (3 adds).
///
/// The additions match the seed; the products are one more. In this (window) form four is the
/// least for these quantities: Σa and Σb need rtt·s/cwnd and rtt²·s/cwnd (one product each besides the
/// division), and the feedback needs ξ_p and ξ_n each times its own per-packet monomial; a
/// fixed packet size would fold s into ξ_n but still leave four. The throughput form
/// (`form = "throughput"`, tests_throughput.rs) does 6 + 3: dividing the feedback by rtt
/// leaves one product each, ξ_p·X and ξ_n·s.
#[test]
fn ops_per_packet() {
    let (n_arr, arr) = ops::count(|| {
        arrival_xcp(Counted(0.0), Counted(0.0), Counted(0.0), Counted(1e5), Counted(1000.0), Counted(1e4))
    });
    assert_eq!(arr, OpCounts { adds: 3, muls: 2, divs: 1 });
    // a = 10⁵ µs·1000/10⁴ = 10⁴ µs, b = a·rtt = 10⁹ µs², u = 10⁸.
    let ((i, a, b), (u, rb)) = n_arr;
    assert_eq!((i.0, a.0, b.0, u.0, rb.0), (1000.0, 1e4, 1e9, 1e8, 1e9));
    let (_, dep) = ops::count(|| {
        let mut b: Budget<Counted> =
            Budget { k_p: Counted(1e-7), k_n: Counted(1e-6), res_pos: Counted(1e6), res_neg: Counted(1e6) };
        departure(&mut b, Counted(1e8), Counted(1e9), Counted(f64::INFINITY), XcpBudget::Granted)
    });
    assert_eq!(dep, OpCounts { adds: 3, muls: 2, divs: 0 });
    // The same through the module's counters.
    let p = XcpRouterParams { count_ops: true, ..Default::default() };
    let mut r = XcpRouter::with_phase(&p, 100 * MS);
    hand_interval(&mut r);
    r.on_tick(100 * MS, &port(0));
    assert_eq!(r.ops(), (OpCounts { adds: 60 * 3, muls: 60 * 2, divs: 60 }, 0), "60 XCP arrivals");
    let mut r = XcpRouter::with_phase(&p, 100 * MS);
    for _ in 0..5 {
        let mut pkt = data(1000, 100_000, 10_000, f32::INFINITY);
        r.on_arrival(101 * MS, &mut pkt, &port(0));
        r.on_departure(101 * MS, &mut pkt, &port(0));
    }
    assert_eq!(r.ops(), (OpCounts { adds: 5 * 6, muls: 5 * 4, divs: 5 }, 5));
    assert_eq!(r.carry_misses(), 0);
    assert_eq!(op_metrics(&r), (30, 20, 5, 5));
    // A departure whose carried entry is missing recomputes u and b: 2 muls and the division more.
    let mut orphan = data(1000, 100_000, 10_000, f32::INFINITY);
    r.on_departure(102 * MS, &mut orphan, &port(0));
    assert_eq!(r.ops(), (OpCounts { adds: 5 * 6 + 3, muls: 5 * 4 + 4, divs: 6 }, 6));
    assert_eq!(r.carry_misses(), 1);
    // Off by default: nothing counted.
    let mut r = XcpRouter::with_phase(&XcpRouterParams::default(), 100 * MS);
    hand_interval(&mut r);
    assert_eq!(r.ops(), (OpCounts::default(), 0));
}

/// The carried values follow the packets through the buffer: a tail-dropped arrival's entry
/// goes, the others are met in order by their departures, and the feedback equals the one
/// computed from the header.
#[test]
fn carried_values_follow_the_buffer() {
    let p = XcpRouterParams::default();
    let mut r = XcpRouter::with_phase(&p, 100 * MS);
    hand_interval(&mut r);
    r.on_tick(100 * MS, &port(5_000));
    let q = port(0);
    let mut pkts: Vec<Packet> =
        (0..4).map(|i| data(1000, 100_000 + 10_000 * i, 10_000 + 1000 * i, f32::INFINITY)).collect();
    for p in pkts.iter_mut() {
        r.on_arrival(101 * MS, p, &q);
    }
    r.on_buffer_drop(101 * MS, &pkts[3], &q); // the last one did not fit
    let xi_p = r.control().xi_p;
    for p in pkts[..3].iter_mut() {
        r.on_departure(102 * MS, p, &q);
        let (rtt, cwnd) = match p.cong {
            CongHeader::Xcp { rtt_us, cwnd, .. } => (rtt_us as f64 / 1e6, cwnd as f64),
            _ => unreachable!(),
        };
        let want = xi_p * rtt * rtt * 1000.0 / cwnd; // ξ_n = 0 in this interval
        assert!(close(feedback_of(p) as f64, want, 1e-6), "{} vs {want}", feedback_of(p));
    }
    assert_eq!(r.carry_misses(), 0);
}

#[test]
fn persistent_queue_is_the_minimum_arrivals_saw_over_a_window() {
    let p = XcpRouterParams::default();
    let mut r = XcpRouter::with_phase(&p, 10 * MS);
    for q in [8_000, 3_000, 6_000] {
        r.on_arrival(MS, &mut data(1000, 50_000, 10_000, f32::INFINITY), &port(q));
    }
    r.on_tick(10 * MS, &port(6_000));
    assert_eq!(r.persistent_queue(), 3_000);
    // The window is d − queue/C = 50 ms − 6 000/10⁶ s = 44 ms (d from the sample: 50 ms).
    assert_eq!(r.next_tick(), Some(10 * MS + 44 * MS));
    // No arrival in the next window: the queue at its end.
    r.on_tick(54 * MS, &port(2_000));
    assert_eq!(r.persistent_queue(), 2_000);
}

#[test]
fn first_tick_at_a_random_phase_from_the_port_stream() {
    let p = XcpRouterParams::default();
    let t = |label: &str| XcpRouter::new(&p, crate::rng::SimRng::for_component(7, label)).unwrap().next_tick().unwrap();
    assert!(t("a") < 50 * MS && t("b") < 50 * MS);
    assert_ne!(t("a"), t("b"));
    assert_eq!(t("a"), t("a"));
}

// ---- sender ----

const MSS: u32 = 940; // 1000-byte packets less IP, TCP and the XCP header (20 B each)

fn window(p: &XcpParams) -> XcpWindow {
    XcpWindow::new(&FlowConfig::new(0, 1000), MSS, p)
}

fn ctx(srtt_ms: Option<u64>) -> SenderCtx {
    SenderCtx { mss: MSS, srtt: srtt_ms.map(|m| m * MS), cwnd: 0.0, ..Default::default() }
}

fn ack_with(fb: f32) -> Packet {
    let mut a = Packet::tcp(0, Kind::Ack, 60, 0, TcpHeader::default());
    a.cong = CongHeader::Xcp { rtt_us: 0, cwnd: 0, feedback: 0.0, reverse_feedback: fb };
    a
}

fn on_ack(w: &mut XcpWindow, fb: f32, acked: u64) {
    let a = ack_with(fb);
    w.on_ack(&Ack { packet: &a, acked_bytes: acked, reported_pkts: 1.0 }, &ctx(Some(100)));
}

#[test]
fn sender_header_and_window() {
    let mut w = window(&XcpParams::default());
    assert_eq!(w.header_bytes(), 20);
    // One packet, no slow start: 1000 wire bytes = 940 payload bytes.
    assert_eq!((w.cwnd_wire(), w.window()), (1000.0, 940.0));
    let mut p = Packet::tcp(0, Kind::Data, 0, MSS, TcpHeader::default());
    w.on_send(&mut p, &ctx(None));
    assert_eq!(p.cong, CongHeader::Xcp { rtt_us: 0, cwnd: 1000, feedback: f32::INFINITY, reverse_feedback: 0.0 });
    w.on_send(&mut p, &ctx(Some(42)));
    assert!(matches!(p.cong, CongHeader::Xcp { rtt_us: 42_000, .. }));
    let mut syn = Packet::tcp(0, Kind::Syn, 40, 0, TcpHeader::default());
    w.on_send(&mut syn, &ctx(None));
    assert_eq!(syn.cong, CongHeader::None, "only data carries the header");
    // cwnd = max(cwnd + reverse_feedback, s), on new and duplicate ACKs alike.
    on_ack(&mut w, 2_500.0, 940);
    assert_eq!(w.cwnd_wire(), 3_500.0);
    assert!(close(w.window(), 3_500.0 * 0.94, 1e-12));
    on_ack(&mut w, -500.0, 0);
    assert_eq!(w.cwnd_wire(), 3_000.0);
    on_ack(&mut w, -1e6, 940);
    assert_eq!(w.cwnd_wire(), 1000.0, "never below one packet");
    // +inf: no XCP router on the path, leave cwnd.
    on_ack(&mut w, f32::INFINITY, 940);
    assert_eq!(w.cwnd_wire(), 1000.0);
    // An ACK without the header (a SYN-ACK) changes nothing.
    let plain = Packet::tcp(0, Kind::Ack, 40, 0, TcpHeader::default());
    w.on_ack(&Ack { packet: &plain, acked_bytes: 1, reported_pkts: 1.0 }, &ctx(None));
    assert_eq!(w.cwnd_wire(), 1000.0);
}

#[test]
fn sender_desired_rate() {
    // r = 10⁶ B/s, rtt 100 ms: wants 100 000 B; with cwnd 1000 B (1 packet of s = 1000):
    // H_feedback = (100 000 − 1000)/(1000/1000) = 99 000 per packet.
    let mut w = window(&XcpParams { desired_rate: Some(1e6), ..Default::default() });
    let mut p = Packet::tcp(0, Kind::Data, 0, MSS, TcpHeader::default());
    w.on_send(&mut p, &ctx(Some(100)));
    assert!(matches!(p.cong, CongHeader::Xcp { feedback, .. } if feedback == 99_000.0));
    on_ack(&mut w, 9_000.0, 940); // cwnd 10 000: (100 000 − 10 000)/10 = 9 000
    w.on_send(&mut p, &ctx(Some(100)));
    assert!(matches!(p.cong, CongHeader::Xcp { feedback, .. } if feedback == 9_000.0));
    w.on_send(&mut p, &ctx(None));
    assert!(matches!(p.cong, CongHeader::Xcp { feedback, .. } if feedback == f32::INFINITY));
}

#[test]
fn sender_loss_halves_and_timeout_restarts_at_one_packet() {
    let mut w = window(&XcpParams::default());
    on_ack(&mut w, 19_000.0, 940);
    let c = SenderCtx { flight: 18_800, ..ctx(Some(100)) };
    assert_eq!(w.on_congestion(Signal::Loss, &c), Response::Halve);
    assert_eq!(w.on_congestion(Signal::EcnEcho, &c), Response::Keep);
    drive::signal(&mut w, Signal::Timeout, &c);
    assert_eq!((w.cwnd_wire(), w.window()), (1000.0, 940.0), "RTO: one packet");
    w.on_spurious_timeout(&c);
    assert_eq!(w.cwnd_wire(), 20_000.0, "a spurious timeout is undone");
    // NewReno's exit window (payload bytes) comes back in wire bytes.
    w.set_window(9_400.0, 9_400.0);
    assert_eq!(w.cwnd_wire(), 10_000.0);
}

// ---- parameters and path contracts ----

#[test]
fn parses_and_checks_xcp() {
    assert_eq!(parse_flow(&serde_json::Value::Null).map(drop), Ok(()));
    assert_eq!(parse_flow(&json!({"desired_rate": 0})).map(drop).unwrap_err().key, "desired_rate");
    assert_eq!(parse_flow(&json!({"tcp": {"max_rto": 0}})).map(drop).unwrap_err().key, "tcp.max_rto");
    assert!(parse_flow(&json!({"alpha": 1})).map(drop).unwrap_err().reason.contains("alpha"));
    assert_eq!(parse_router(&serde_json::Value::Null).map(drop), Ok(()));
    for (bad, key) in [
        (json!({"alpha": 0.0}), "alpha"),
        (json!({"alpha": -0.4}), "alpha"),
        (json!({"gamma": 0.0}), "gamma"),
        (json!({"gamma": 1.5}), "gamma"),
        (json!({"beta": -1.0}), "beta"),
        (json!({"initial_d": 2.0}), "initial_d"),
        (json!({"xcp_budget": "ns2"}), "xcp_budget"),
    ] {
        let e = parse_router(&bad).map(drop).unwrap_err();
        assert_eq!(e.key, key, "{bad}: {e}");
    }
    assert!(parse_router(&json!({"gama": 0.1})).map(drop).unwrap_err().reason.contains("gama"));
    assert_eq!(parse_router(&json!({"gamma": 1.0, "xcp_budget": "ns235", "count_ops": true})).map(drop), Ok(()));
    let r = parse_router(&json!(null))
        .map(|f| f.build(&ANY_PORT, crate::rng::SimRng::for_component(1, "router/port0")))
        .unwrap();
    assert_eq!(r.name(), "xcp");
    // The path contract: XCP flows need an XCP router somewhere; the router provides it.
    let reqs = parse_flow(&json!(null)).unwrap().path_requirements();
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        (reqs[0].key, reqs[0].value, reqs[0].presence),
        (keys::XCC_XCP, ContractValue::Int(1), Presence::Somewhere)
    );
    // ... and one of its own form (window, 0) wherever a router states one.
    assert_eq!(
        (reqs[1].key, reqs[1].value, reqs[1].presence),
        (keys::XCP_FORM, ContractValue::Int(0), Presence::IfProvided)
    );
    assert_eq!(
        parse_router(&json!(null)).unwrap().provides(),
        vec![(keys::XCC_XCP, ContractValue::Int(1)), (keys::XCP_FORM, ContractValue::Int(0))]
    );
}

/// Sender and receiver from the flow factory, back to back through one XCP router port.
#[test]
fn sender_router_receiver_back_to_back() {
    let mut cfg = FlowConfig::new(3, 1000);
    cfg.handshake = false;
    let mut s = parse_flow(&serde_json::Value::Null).map(|p| p.sender(&cfg)).unwrap();
    let mut rcv = parse_flow(&serde_json::Value::Null).map(|p| p.receiver(&cfg)).unwrap();
    s.start(0);
    rcv.start(0);
    let out: Vec<_> = std::iter::from_fn(|| s.poll_transmit(0)).collect();
    assert_eq!(out.len(), 1, "one packet");
    assert_eq!(out[0].size, 1000);
    let mut p = out[0];
    // A router that grants +4000 B.
    if let CongHeader::Xcp { feedback, .. } = &mut p.cong {
        *feedback = 4_000.0;
    }
    rcv.on_packet(50 * MS, &p);
    let ack = rcv.poll_transmit(50 * MS).unwrap();
    assert_eq!(ack.size, 60);
    s.on_packet(100 * MS, &ack);
    assert!(close(s.stats().cwnd_bytes, 5_000.0 * 0.94, 1e-12), "{}", s.stats().cwnd_bytes);
    let out: Vec<_> = std::iter::from_fn(|| s.poll_transmit(100 * MS)).collect();
    assert_eq!(out.len(), 5);
    assert!(out.iter().all(|p| matches!(p.cong, CongHeader::Xcp { rtt_us: 100_000, cwnd: 5_000, .. })));
}
