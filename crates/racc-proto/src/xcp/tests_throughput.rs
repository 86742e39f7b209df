//! Unit tests of XCP's throughput form (`form = "throughput"`, docs/PROTOCOLS.md §5 "Throughput
//! form"): the same interval as the window form's hand computation, its per-packet feedback
//! (the window form's over the packet's rtt), its per-packet cost (XCC-Linux's 6 additions +
//! 3 multiplications), the sender, and the path contract that keeps the two forms apart.

use super::tests::{close, data, port};
use super::*;
use crate::cc::{Ack, CongestionControl, SenderCtx};
use crate::endpoint::FlowConfig;
use crate::packet::{CongHeader, Kind, Packet, TcpHeader};
use crate::protocol::{ContractValue, Presence};
use crate::router::RouterModule;
use crate::time::{Time, NS_PER_MS};
use crate::xcc::ops::op_metrics;
use crate::xcc::ops::{self, Counted, OpCounts};
use serde_json::json;

const MS: Time = NS_PER_MS;

fn throughput() -> XcpRouterParams {
    XcpRouterParams { form: XcpForm::Throughput, ..Default::default() }
}

fn feedback_of(p: &Packet) -> f64 {
    match p.cong {
        CongHeader::Xcp { feedback, .. } => feedback as f64,
        _ => panic!("not XCP"),
    }
}

/// The window form's hand interval (tests.rs): flow A 40 packets of 1000 B, rtt 100 ms, cwnd
/// 10 000 B; flow B 20 packets, rtt 200 ms, cwnd 20 000 B; 10 non-XCP packets; 5 000 B queued.
/// In the throughput form both flows carry X = rtt·s/cwnd = 0.01 s = 10⁷ ns.
fn hand_interval(r: &mut XcpRouter, form: XcpForm) {
    let q = port(5_000);
    let (a, b) = match form {
        XcpForm::Window => (10_000, 20_000),
        XcpForm::Throughput => (10_000_000, 10_000_000),
    };
    for _ in 0..40 {
        r.on_arrival(MS, &mut data(1000, 100_000, a, f32::INFINITY), &q);
    }
    for _ in 0..20 {
        r.on_arrival(MS, &mut data(1000, 200_000, b, f32::INFINITY), &q);
    }
    for _ in 0..10 {
        r.on_arrival(MS, &mut Packet::tcp(2, Kind::Data, 1000, 960, TcpHeader::default()), &q);
    }
}

/// Same sums in the form's units, so the same decision: d = 2/15 s, y = 700 000 B/s,
/// φ = 14 870 B, h = 0, ξ_p = 185 875 B/s², ξ_n = 0 (hand computation in tests.rs). The budgets
/// are in B/s: 14 870/(2/15) = 111 525 B/s positive, 0 negative.
#[test]
fn interval_is_the_window_forms_and_budgets_are_per_second() {
    let mut w = XcpRouter::with_phase(&XcpRouterParams::default(), 100 * MS);
    hand_interval(&mut w, XcpForm::Window);
    w.on_tick(100 * MS, &port(5_000));
    let mut t = XcpRouter::with_phase(&throughput(), 100 * MS);
    hand_interval(&mut t, XcpForm::Throughput);
    let s = *t.sums();
    assert!(close(s.sum_a, 0.6e9, 1e-12), "ΣX in ns: {}", s.sum_a);
    assert!(close(s.sum_b, 0.08e15, 1e-12), "ΣX·rtt in ns·µs: {}", s.sum_b);
    t.on_tick(100 * MS, &port(5_000));
    let (cw, ct) = (*w.control(), *t.control());
    for (name, a, b) in
        [("d", cw.d, ct.d), ("y", cw.y, ct.y), ("φ", cw.phi, ct.phi), ("ξ_p", cw.xi_p, ct.xi_p), ("h", cw.h, ct.h)]
    {
        assert!(close(b, a, 1e-12), "{name}: window {a}, throughput {b}");
    }
    assert!(close(ct.xi_p, 185_875.0, 1e-9) && ct.xi_n == 0.0);
    let b = *t.budget();
    assert!(close(b.res_pos, 111_525.0, 1e-9) && b.res_neg == 0.0, "{b:?}");
    assert!(close(b.k_p, 185_875.0 / 1e9, 1e-12) && b.k_n == 0.0);
}

/// Flow A's packet: window form 185 875·0.01·0.1 = 185.875 B; throughput form ξ_p·X =
/// 185 875·0.01 = 1 858.75 B/s, the window form's over rtt = 0.1 s. Flow B's (rtt 200 ms):
/// 371.75 B and 1 858.75 B/s (every flow gains the same throughput).
#[test]
fn per_packet_feedback_is_the_window_forms_over_rtt() {
    let mut w = XcpRouter::with_phase(&XcpRouterParams::default(), 100 * MS);
    hand_interval(&mut w, XcpForm::Window);
    w.on_tick(100 * MS, &port(5_000));
    let mut t = XcpRouter::with_phase(&throughput(), 100 * MS);
    hand_interval(&mut t, XcpForm::Throughput);
    t.on_tick(100 * MS, &port(5_000));
    for (rtt_us, cwnd, fb_w) in [(100_000, 10_000, 185.875), (200_000, 20_000, 371.75)] {
        let mut pw = data(1000, rtt_us, cwnd, f32::INFINITY);
        w.on_arrival(101 * MS, &mut pw, &port(0));
        w.on_departure(101 * MS, &mut pw, &port(0));
        let mut pt = data(1000, rtt_us, 10_000_000, f32::INFINITY);
        t.on_departure(101 * MS, &mut pt, &port(0));
        assert!(close(feedback_of(&pw), fb_w, 1e-6), "window {}", feedback_of(&pw));
        assert!(close(feedback_of(&pt), 1_858.75, 1e-6), "throughput {}", feedback_of(&pt));
        assert!(close(feedback_of(&pt) * rtt_us as f64 / 1e6, feedback_of(&pw), 1e-6));
    }
    // Negative feedback: ξ_n·s per packet, B/s (the window form's ξ_n·rtt·s over rtt).
    let mut b = Budget { k_p: 0.0, k_n: 5.0 / 3.0, res_pos: 1e9, res_neg: 1e9 };
    let fb = departure(&mut b, 1000.0, 1e7, f64::INFINITY, XcpBudget::Granted);
    assert!(close(fb, -1000.0 * 5.0 / 3.0, 1e-12), "{fb}");
    // The budget runs out as in the window form, in B/s.
    let mut b = Budget { k_p: 185_875.0 / 1e9, k_n: 0.0, res_pos: 1_000.0, res_neg: 0.0 };
    assert!(close(departure(&mut b, 1000.0, 1e7, f64::INFINITY, XcpBudget::Granted), 1_000.0, 1e-12));
    assert_eq!((b.res_pos, b.k_p), (0.0, 0.0));
}

/// XCC-Linux: XCP does "6 additions and 3 multiplications" per packet. In the throughput form,
/// counted on the code that runs: arrival input bytes + s, ΣX + X, ΣX·rtt + X·rtt (3 additions,
/// 1 multiplication); departure ξ_p·X and ξ_n·s (2 multiplications), fb = pos − neg and the two
/// budgets (3 additions). No division and nothing carried across the buffer.
#[test]
fn ops_per_packet_are_six_additions_and_three_multiplications() {
    let (r, arr) =
        ops::count(|| arrival_x(Counted(0.0), Counted(0.0), Counted(0.0), Counted(1e5), Counted(1000.0), Counted(1e7)));
    assert_eq!(arr, OpCounts { adds: 3, muls: 1, divs: 0 });
    assert_eq!((r.0 .0, r.1 .0, r.2 .0), (1000.0, 1e7, 1e12));
    let (_, dep) = ops::count(|| {
        let mut b: Budget<Counted> =
            Budget { k_p: Counted(1e-4), k_n: Counted(1.0), res_pos: Counted(1e9), res_neg: Counted(1e9) };
        departure(&mut b, Counted(1000.0), Counted(1e7), Counted(f64::INFINITY), XcpBudget::Granted)
    });
    assert_eq!(dep, OpCounts { adds: 3, muls: 2, divs: 0 });
    let p = XcpRouterParams { count_ops: true, ..throughput() };
    let mut r = XcpRouter::with_phase(&p, 100 * MS);
    for _ in 0..5 {
        let mut pkt = data(1000, 100_000, 10_000_000, f32::INFINITY);
        r.on_arrival(101 * MS, &mut pkt, &port(0));
        r.on_departure(101 * MS, &mut pkt, &port(0));
    }
    assert_eq!(r.ops(), (OpCounts { adds: 5 * 6, muls: 5 * 3, divs: 0 }, 5));
    assert_eq!(op_metrics(&r), (30, 15, 0, 5));
}

const MSS: u32 = 940;

fn ctx(srtt_ms: Option<u64>) -> SenderCtx {
    SenderCtx { mss: MSS, srtt: srtt_ms.map(|m| m * MS), cwnd: 0.0, ..Default::default() }
}

fn on_ack(w: &mut XcpWindow, fb: f32, srtt_ms: Option<u64>) {
    let mut a = Packet::tcp(0, Kind::Ack, 60, 0, TcpHeader::default());
    a.cong = CongHeader::Xcp { rtt_us: 0, cwnd: 0, feedback: 0.0, reverse_feedback: fb };
    w.on_ack(&Ack { packet: &a, acked_bytes: 940, reported_pkts: 1.0 }, &ctx(srtt_ms));
}

#[test]
fn sender_writes_x_and_scales_feedback_by_its_rtt() {
    let p = XcpParams { form: XcpForm::Throughput, ..Default::default() };
    let mut w = XcpWindow::new(&FlowConfig::new(0, 1000), MSS, &p);
    let mut pkt = Packet::tcp(0, Kind::Data, 0, MSS, TcpHeader::default());
    w.on_send(&mut pkt, &ctx(None));
    assert_eq!(pkt.cong, CongHeader::Xcp { rtt_us: 0, cwnd: 0, feedback: f32::INFINITY, reverse_feedback: 0.0 });
    // X = srtt·s/cwnd = 42 ms·1000/1000 = 42 ms = 4.2·10⁷ ns.
    w.on_send(&mut pkt, &ctx(Some(42)));
    assert!(matches!(pkt.cong, CongHeader::Xcp { rtt_us: 42_000, cwnd: 42_000_000, .. }), "{:?}", pkt.cong);
    // 25 000 B/s over srtt 100 ms: cwnd += 2 500 B.
    on_ack(&mut w, 25_000.0, Some(100));
    assert_eq!(w.cwnd_wire(), 3_500.0);
    // X follows cwnd: 100 ms·1000/3500.
    w.on_send(&mut pkt, &ctx(Some(100)));
    assert!(matches!(pkt.cong, CongHeader::Xcp { cwnd: 28_571_429, .. }), "{:?}", pkt.cong);
    on_ack(&mut w, -1e9, Some(100));
    assert_eq!(w.cwnd_wire(), 1000.0, "never below one packet");
    on_ack(&mut w, f32::INFINITY, Some(100));
    assert_eq!(w.cwnd_wire(), 1000.0, "+inf: no XCP router, cwnd kept");
    // A desired rate of 10⁶ B/s at rtt 100 ms with cwnd 1000 B: (10⁶ − 10⁴)/1 B/s per packet.
    let p = XcpParams { form: XcpForm::Throughput, desired_rate: Some(1e6), ..Default::default() };
    let mut w = XcpWindow::new(&FlowConfig::new(0, 1000), MSS, &p);
    w.on_send(&mut pkt, &ctx(Some(100)));
    assert!(matches!(pkt.cong, CongHeader::Xcp { feedback, .. } if feedback == 990_000.0));
}

#[test]
fn form_is_a_parameter_and_a_path_contract() {
    for (v, want) in [(json!(null), 0), (json!({"form": "window"}), 0), (json!({"form": "throughput"}), 1)] {
        let reqs = parse_flow(&v).unwrap().path_requirements();
        assert_eq!(
            (reqs[1].key, reqs[1].value, reqs[1].presence),
            (keys::XCP_FORM, ContractValue::Int(want), Presence::IfProvided),
            "{v}"
        );
        assert!(parse_router(&v).unwrap().provides().contains(&(keys::XCP_FORM, ContractValue::Int(want))));
    }
    assert_eq!(parse_router(&json!({"form": "rate"})).map(drop).unwrap_err().key, "form");
    assert_eq!(parse_router_b(&json!({"form": "throughput"})).map(drop), Ok(()));
}
