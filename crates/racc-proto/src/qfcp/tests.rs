//! Unit tests of QFCP's router arithmetic (QFCP eqs. 1, 2, 4, 6 against hand-computed
//! values), the sender's window rules (eqs. 3, 5) and the registry glue; XCP-b's probe.

use super::keys;
use super::*;
use crate::cc::{CongestionControl, Response, SenderCtx, Signal};
use crate::endpoint::FlowConfig;
use crate::packet::{CongHeader, Direction, Kind, Packet, TcpHeader};
use crate::protocol::{ContractValue, Presence};
use crate::router::{PortView, RouterModule};
use crate::tcp::{RecoverCheck, Recovery, TcpParams, TcpSender};
use crate::time::{Time, NS_PER_MS};
use crate::xcc::CapacitySource;
use crate::xcp::{XcpRouter, XcpRouterParams};
use serde_json::json;

const MS: Time = NS_PER_MS;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

fn data(size: u32, rtt_us: u32) -> Packet {
    let mut p = Packet::tcp(1, Kind::Data, size, size - 56, TcpHeader::default());
    p.cong = CongHeader::Qfcp { rtt_us, rate_request: NO_LIMIT, rate_feedback: 0 };
    p
}

fn request(p: &Packet) -> u32 {
    match p.cong {
        CongHeader::Qfcp { rate_request, .. } => rate_request,
        _ => panic!("not QFCP"),
    }
}

/// An 8 Mb/s port (C = 10⁶ B/s) with `pkts` packets of 1000 B waiting.
fn port(pkts: u32) -> PortView {
    PortView {
        capacity_bps: 8e6,
        queue_pkts: pkts,
        queue_bytes: pkts as u64 * 1000,
        limit_pkts: 1000,
        limit_bytes: u64::MAX,
        ..Default::default()
    }
}

fn router(p: &QfcpRouterParams) -> QfcpRouter {
    QfcpRouter::with_phase(p, 8e6, 100 * MS)
}

/// Two intervals computed by hand (C = 10⁶ B/s, β = 0.5, T0 = 100 ms, g_T = 0.25):
/// 1. (0, 100 ms]: the port starts empty (minimum queue 0); 52 arrivals of 1000 B with
///    H_rtt = 200 ms, each finding 3 packets queued; the buffer drops 2 of them.
///    y = 520 000 B/s, N = max(1, y/R) = max(1, 0.52) = 1, q_v = 0 + 2000 = 2000 B (eq. 6),
///    R = (10⁶ − 0.5·2000/0.1)/1 = 990 000 B/s, T = 0.1 + 0.25·(0.2 − 0.1) = 0.125 s.
/// 2. (100, 225 ms]: 300 arrivals of 1000 B with H_rtt = 100 ms, minimum queue 10 packets.
///    y = 300 000/0.125 = 2.4·10⁶ B/s, N = 2.4·10⁶/990 000 = 2.4242 (eq. 1, R(t − T) the R of
///    interval 1), R = (10⁶ − 0.5·10 000/0.125)/N = 960 000·990 000/2.4·10⁶ = 396 000 B/s
///    (eq. 2), T = 0.125 + 0.25·(0.1 − 0.125) = 0.11875 s.
#[test]
fn interval_arithmetic_against_hand_values() {
    let mut r = router(&QfcpRouterParams::default());
    assert_eq!((r.rate(), r.capacity()), (1e6, 1e6), "R starts at C");
    assert_eq!(r.next_tick(), Some(100 * MS));
    for i in 0..52 {
        let mut p = data(1000, 200_000);
        r.on_arrival(MS, &mut p, &port(3));
        assert_eq!(request(&p), 1_000_000, "requests lowered to R on arrival");
        if i < 2 {
            r.on_buffer_drop(MS, &p, &port(3));
        }
    }
    // The queue at the tick (10 packets) is where interval 2's minimum starts.
    r.on_tick(100 * MS, &port(10));
    let c = *r.control();
    assert!(close(c.y, 520_000.0) && c.n == 1.0 && c.q_virtual == 2000.0, "{c:?}");
    assert!(close(c.rate, 990_000.0) && close(c.t, 0.125), "{c:?}");
    assert_eq!(r.next_tick(), Some(225 * MS));

    for i in 0..300 {
        let mut p = data(1000, 100_000);
        r.on_arrival(150 * MS, &mut p, &port(10 + i % 7));
        assert_eq!(request(&p), 990_000);
        let mut d = data(1000, 100_000);
        r.on_departure(150 * MS, &mut d, &port(10 + i % 5));
    }
    r.on_tick(225 * MS, &port(12));
    let c = *r.control();
    assert!(close(c.y, 2.4e6) && close(c.n, 2.4e6 / 990_000.0) && c.q_virtual == 10_000.0, "{c:?}");
    assert!(close(c.rate, 396_000.0) && close(c.t, 0.11875), "{c:?}");
    // A lower request passes unchanged. A return-path packet is input traffic (y, and the
    // virtual queue when the buffer drops it) but neither stamped nor an RTT sample.
    let mut low = data(1000, 0);
    low.cong = CongHeader::Qfcp { rtt_us: 0, rate_request: 5, rate_feedback: 0 };
    r.on_arrival(230 * MS, &mut low, &port(0));
    assert_eq!(request(&low), 5);
    let mut back = data(1000, 100_000);
    back.dir = Direction::Return;
    r.on_arrival(230 * MS, &mut back, &port(0));
    assert_eq!((request(&back), r.interval().in_bytes, r.interval().rtt_n), (NO_LIMIT, 2000.0, 0.0));
    r.on_buffer_drop(230 * MS, &back, &port(0));
    assert_eq!(r.interval().drop_bytes, 1000.0);
}

/// The pure update: N floored at 1, R within [R_min, C], T unchanged without RTTs.
/// Joins (docs/PROTOCOLS.md §9, "Starts"), by hand: C = 10⁶ B/s, a 100-packet buffer, empty,
/// T0 = 100 ms, so the headroom of the first interval is (C − y) + 0.5·free/T = 10⁶ + 0.5·10⁵/0.1
/// = 1.5·10⁶ B/s. Three SYNs on the idle port: the 1st is alone (N = 0 + 1: C), the 2nd makes
/// two (C/2, which spends the headroom), the 3rd three (C/3), granted R_min = 1 packet per T0
/// (10⁴ B/s) as the headroom is spent; R for every other packet is C/3 from the 3rd SYN on. At
/// the tick the three flows not yet in y count into N: R ≈ C/3 for the interval their first
/// windows arrive in. With `count_joins = false`, every SYN gets C (the rule before).
#[test]
fn joins_share_the_interval_and_count_into_the_next() {
    let syn = || {
        let mut p = Packet::tcp(1, Kind::Syn, 56, 0, TcpHeader::default());
        p.cong = CongHeader::Qfcp { rtt_us: 0, rate_request: NO_LIMIT, rate_feedback: 0 };
        p
    };
    let small = PortView { limit_pkts: 100, ..port(0) };
    let mut r = router(&QfcpRouterParams { count_joins: true, ..QfcpRouterParams::default() });
    let grants: Vec<u32> = (0..3)
        .map(|_| {
            let mut p = syn();
            r.on_arrival(MS, &mut p, &small);
            request(&p)
        })
        .collect();
    assert_eq!(grants, vec![1_000_000, 500_000, 10_000]);
    let mut d = data(1000, 0);
    r.on_arrival(2 * MS, &mut d, &small);
    assert_eq!(request(&d), 333_333, "R for the rest of the interval: C/3");
    r.on_tick(100 * MS, &small);
    let c = *r.control();
    // y = (3·56 + 1000) B / 0.1 s = 11 680 B/s, y/R = 0.01168, plus the 3 joins.
    assert!(close(c.n, 3.01168) && close(c.rate, 1e6 / 3.01168), "{c:?}");
    let mut off = router(&QfcpRouterParams { count_joins: false, ..QfcpRouterParams::default() });
    for _ in 0..3 {
        let mut p = syn();
        off.on_arrival(MS, &mut p, &small);
        assert_eq!(request(&p), 1_000_000);
    }
}

#[test]
fn control_floors_and_clamps() {
    let p = QfcpRouterParams::default();
    let idle = Interval::default();
    let c = control(&p, &idle, 0.1, 500.0, 1e6, 0.1, 10_000.0, 0.0);
    assert_eq!((c.n, c.rate, c.t), (1.0, 1e6, 0.1), "idle: N = 1, R = C, T kept");
    let flooded = Interval { in_bytes: 1e6, q_min_bytes: 1_000_000, ..Interval::default() };
    let c = control(&p, &flooded, 0.1, 1e6, 1e6, 0.1, 10_000.0, 0.0);
    assert_eq!(c.rate, 10_000.0, "C − β·q/T < 0: R_min");
}

/// Eq. (4) in the router: a probe from a wrong 1 Mb/s (125 000 B/s) on a 1 MB/s port.
/// 1. (0, 100 ms]: 10 arrivals of 1000 B, the queue never above 0: C = 1.1·125 000 =
///    137 500; y = 100 000 B/s, N = 1, R = C = 137 500 (R = (C − 0)/1).
/// 2. (100, 200 ms]: the same, but the interval ends with 2 packets queued: the queue is
///    building up, C holds at 137 500 [reconstructed, docs/PROTOCOLS.md §9]; N = 1, R = C.
/// 3. (200, 300 ms]: 120 arrivals (y = 1.2·10⁶ B/s) and 100 departures (1 MB/s out), the
///    queue never below 2 packets: C = 10⁶ (the output rate); N = 1.2·10⁶/137 500,
///    R = (10⁶ − 0.5·2000/0.1)·137 500/1.2·10⁶ = 113 437.5 B/s.
/// 4. Busy again at 900 kB/s out: C follows the output down.
#[test]
fn the_probe_rises_below_one_packet_and_settles_at_the_output_rate() {
    let p = QfcpRouterParams {
        capacity: CapacitySource::Probe,
        initial_capacity_bps: Some(1e6),
        ..QfcpRouterParams::default()
    };
    let mut r = router(&p);
    assert_eq!((r.capacity(), r.rate()), (125_000.0, 125_000.0));
    for _ in 0..10 {
        r.on_arrival(MS, &mut data(1000, 0), &port(0));
        r.on_departure(MS, &mut data(1000, 0), &port(0));
    }
    r.on_tick(100 * MS, &port(0));
    assert!(close(r.capacity(), 137_500.0) && close(r.rate(), 137_500.0), "{:?}", r.control());
    for _ in 0..10 {
        r.on_arrival(150 * MS, &mut data(1000, 0), &port(0));
        r.on_departure(150 * MS, &mut data(1000, 0), &port(0));
    }
    // The queue has built to 2 packets by the tick: no rise; interval 3's minimum starts there.
    r.on_tick(200 * MS, &port(2));
    assert!(close(r.capacity(), 137_500.0) && close(r.rate(), 137_500.0), "{:?}", r.control());
    for i in 0..120 {
        r.on_arrival(250 * MS, &mut data(1000, 0), &port(2 + i % 3));
        if i < 100 {
            r.on_departure(250 * MS, &mut data(1000, 0), &port(2 + i % 4));
        }
    }
    r.on_tick(300 * MS, &port(3));
    assert!(close(r.capacity(), 1e6), "{}", r.capacity());
    assert!(close(r.rate(), 990_000.0 * 137_500.0 / 1.2e6), "{:?}", r.control());
    for _ in 0..90 {
        r.on_arrival(350 * MS, &mut data(1000, 0), &port(1));
        r.on_departure(350 * MS, &mut data(1000, 0), &port(1));
    }
    r.on_tick(400 * MS, &port(1));
    assert!(close(r.capacity(), 900_000.0), "{}", r.capacity());
}

/// The XCP router with `capacity = "probe"` runs the same probe; its capacity moves as QFCP's
/// does. The "xcp-b" router module uses XCP-b's own queue-based estimate instead.
#[test]
fn xcp_b_probes_with_the_same_code() {
    let p = XcpRouterParams {
        capacity: CapacitySource::Probe,
        initial_capacity_bps: Some(1e6),
        initial_d: 0.1,
        ..XcpRouterParams::default()
    };
    let mut x = XcpRouter::with_phase(&p, 100 * MS);
    let mut q = PortView { capacity_bps: 8e6, limit_pkts: 1000, limit_bytes: u64::MAX, ..Default::default() };
    x.on_tick(100 * MS, &q);
    assert!(close(x.capacity(), 137_500.0), "{}", x.capacity());
    // An interval that ends with a queue holds the estimate (the queue is building up).
    q.queue_pkts = 2;
    q.queue_bytes = 2000;
    x.on_tick(200 * MS, &q);
    assert!(close(x.capacity(), 137_500.0), "{}", x.capacity());
    let mut pkt = Packet::tcp(1, Kind::Data, 1000, 940, TcpHeader::default());
    for _ in 0..100 {
        x.on_arrival(250 * MS, &mut pkt, &q);
        x.on_departure(250 * MS, &mut pkt, &q);
    }
    x.on_tick(300 * MS, &q);
    assert!(close(x.capacity(), 1e6), "{}", x.capacity());
    // Plain XCP keeps the port's capacity.
    let mut plain = XcpRouter::with_phase(&XcpRouterParams::default(), 50 * MS);
    plain.on_tick(50 * MS, &q);
    assert_eq!(plain.capacity(), 1e6);
    let mut m = crate::metrics::MetricList::default();
    crate::xcp::parse_router_b(&json!({"initial_capacity_bps": 1e6}))
        .unwrap()
        .build(&crate::protocol::ANY_PORT, crate::rng::SimRng::for_component(1, "p"))
        .metrics(&mut m);
    // The registry's xcp-b takes its spare bandwidth from the queue (xcp/blind.rs), not eq. (4).
    assert!(m.get("blind_probes").is_some() && m.get("probe_rises").is_none(), "xcp-b is blind by default");
    assert!(crate::xcp::parse_router_b(&json!({"capacity": "guess"})).is_err());
}

// ---- sender ----

const WIRE: u32 = 1000;
/// 1000 − IPv4 20 − TCP 20 − QFCP 16.
const MSS: u32 = 944;

fn cfg() -> FlowConfig {
    let mut c = FlowConfig::new(1, WIRE);
    c.handshake = false;
    c
}

fn ack(off: u64, ts_ecr: Time, feedback: u32) -> Packet {
    let h = TcpHeader { ack: off as u32, flags: crate::packet::flags::ACK, ts_ecr, ..Default::default() };
    let mut a = Packet::tcp(1, Kind::Ack, 56, 0, h);
    a.cong = CongHeader::Qfcp { rtt_us: 0, rate_request: 0, rate_feedback: feedback };
    a
}

fn drain(s: &mut TcpSender, now: Time) -> Vec<Packet> {
    crate::endpoint::drain_into(s, now)
}

fn ctx(srtt_ms: u64) -> SenderCtx {
    SenderCtx { mss: MSS, srtt: Some(srtt_ms * MS), ..Default::default() }
}

/// Eq. (3) and the controller's answers: cwnd = max(feedback·rtt, MSS); a loss answers
/// SetWindow(feedback·rtt) (no halving), a timeout one MSS, restored by the next ACK.
#[test]
fn controller_window_rules() {
    let mut w = QfcpWindow::new(&cfg(), MSS, &QfcpParams::default());
    assert_eq!((w.cwnd_wire(), w.window()), (1000.0, 944.0), "one packet before any feedback");
    let mut p = Packet::tcp(1, Kind::Syn, 40, 0, TcpHeader::default());
    w.on_send(&mut p, &SenderCtx::default());
    assert_eq!(p.cong, CongHeader::Qfcp { rtt_us: 0, rate_request: NO_LIMIT, rate_feedback: 0 }, "SYN asks");
    // 200 000 B/s × 100 ms = 20 000 wire bytes = 20 packets.
    let mut a = ack(1, 0, 200_000);
    w.on_wire_arrival(&mut a, &ctx(100));
    w.on_ack(&crate::cc::Ack { packet: &a, acked_bytes: 944, reported_pkts: 1.0 }, &ctx(100));
    assert!(close(w.cwnd_wire(), 20_000.0) && close(w.window(), 20.0 * 944.0));
    assert_eq!(w.on_congestion(Signal::Loss, &ctx(100)), Response::SetWindow(20.0 * 944.0));
    assert_eq!(w.recovery_base(&ctx(150)), Some(30.0 * 944.0), "the base follows feedback·srtt");
    assert_eq!(w.on_congestion(Signal::Timeout, &ctx(100)), Response::SetWindow(944.0));
    w.set_window(944.0, f64::INFINITY);
    assert_eq!(w.cwnd_wire(), 1000.0, "RTO: one MSS");
    let mut a = ack(2, 0, 50);
    w.on_wire_arrival(&mut a, &ctx(100));
    w.on_ack(&crate::cc::Ack { packet: &a, acked_bytes: 944, reported_pkts: 1.0 }, &ctx(100));
    assert_eq!(w.cwnd_wire(), 1000.0, "feedback·rtt = 5 B: floored at one packet");
    let mut a = ack(3, 0, 200_000);
    w.on_wire_arrival(&mut a, &ctx(100));
    w.on_ack(&crate::cc::Ack { packet: &a, acked_bytes: 944, reported_pkts: 1.0 }, &ctx(100));
    assert!(close(w.cwnd_wire(), 20_000.0), "the next ACK's feedback restores it");
}

/// The duplicate-ACK rule through the transport: 20 packets in flight, the first lost. TCP
/// Reno's window after the third duplicate is flight/2 + 3 MSS; QFCP's is feedback·rtt + 3 MSS
/// (eq. 5), and a later duplicate with a new feedback moves it to the new feedback·rtt +
/// num_dupACK. After the full ACK, feedback·rtt again.
#[test]
fn duplicate_acks_keep_the_window_where_reno_halves() {
    let params = TcpParams { limited_transmit: false, ..TcpParams::default() };
    let qfcp = QfcpWindow::new(&cfg(), MSS, &QfcpParams::default());
    let mut q = TcpSender::with_controller(&cfg(), Recovery::NewReno, &params, Box::new(qfcp));
    q.start(0);
    assert_eq!(drain(&mut q, 0).len(), 1);
    // First ACK at 100 ms: srtt 100 ms, feedback 200 000 B/s: 20 packets.
    q.on_packet(100 * MS, &ack(944, 0, 200_000));
    assert!(close(q.cwnd(), 20.0 * 944.0), "{}", q.cwnd());
    assert_eq!(drain(&mut q, 100 * MS).len(), 20);
    // The first of them is lost: three duplicates.
    for _ in 0..3 {
        q.on_packet(200 * MS, &ack(944, 100 * MS, 200_000));
    }
    assert!(q.in_recovery());
    assert!(close(q.cwnd(), 23.0 * 944.0), "feedback·rtt + 3 MSS: {}", q.cwnd());
    // Reno on the same events halves.
    let mut c = cfg();
    c.initial_window = Some(20);
    let mut reno20 = TcpSender::new(&c, Recovery::Reno, &params);
    reno20.start(0);
    assert_eq!(drain(&mut reno20, 0).len(), 20);
    for _ in 0..3 {
        reno20.on_packet(100 * MS, &ack(0, 0, 0));
    }
    assert!(reno20.in_recovery());
    let m = reno20.mss() as f64;
    assert!(close(reno20.cwnd(), 13.0 * m), "Reno: 20/2 + 3: {}", reno20.cwnd() / m);
    // A fourth duplicate with feedback 300 000 B/s: 30 + 4 packets.
    q.on_packet(201 * MS, &ack(944, 100 * MS, 300_000));
    assert!(close(q.cwnd(), 34.0 * 944.0), "{}", q.cwnd() / 944.0);
    // The full ACK ends the recovery at feedback·rtt.
    q.on_packet(300 * MS, &ack(21 * 944, 200 * MS, 300_000));
    assert!(!q.in_recovery());
    assert!(close(q.cwnd(), 30.0 * 944.0), "{}", q.cwnd() / 944.0);
}

/// `pace_first_window`: the SYN-ACK's feedback·rtt leaves at cwnd/rtt, one packet per
/// RTT/cwnd as ns-2's Quick-Start sender spaces its approved window, until the first new ACK;
/// without it the whole first window leaves at once.
#[test]
fn the_first_window_is_paced_until_the_first_new_ack() {
    let mut c = cfg();
    c.handshake = true;
    c.isn = 1000;
    let syn_ack = |feedback: u32| {
        let h =
            TcpHeader { ack: 1000, flags: crate::packet::flags::SYN | crate::packet::flags::ACK, ..Default::default() };
        let mut a = Packet::tcp(1, Kind::SynAck, 56, 0, h);
        a.cong = CongHeader::Qfcp { rtt_us: 0, rate_request: 0, rate_feedback: feedback };
        a
    };
    let start = |pace: bool| {
        let p = QfcpParams { pace_first_window: Some(pace), ..QfcpParams::default() };
        let w = QfcpWindow::new(&c, MSS, &p);
        let mut s = TcpSender::with_controller(&c, Recovery::NewReno, &TcpParams::default(), Box::new(w));
        s.start(0);
        assert_eq!(drain(&mut s, 0).len(), 1, "the SYN");
        // SYN-ACK at 100 ms with 200 000 B/s: 20 packets of 1000 wire bytes, one per 5 ms.
        s.on_packet(100 * MS, &syn_ack(200_000));
        s
    };
    let mut burst = start(false);
    assert_eq!(drain(&mut burst, 100 * MS).len(), 20, "off: one burst");
    let mut paced = start(true);
    assert_eq!(drain(&mut paced, 100 * MS).len(), 1);
    assert_eq!(drain(&mut paced, 104 * MS).len(), 0);
    assert_eq!(drain(&mut paced, 105 * MS).len(), 1);
    assert_eq!(drain(&mut paced, 150 * MS).len(), 1, "one at a time: the gap starts at the last departure");
    // The first new ACK ends the pacing: the window's remainder leaves ACK-clocked.
    paced.on_packet(200 * MS, &ack(1000 + MSS as u64, 100 * MS, 200_000));
    assert_eq!(drain(&mut paced, 200 * MS).len(), 18, "{} in flight", paced.snd_nxt());
}

// ---- registry glue (QFCP's own parse functions) ----

#[test]
fn registry_builds_and_checks_qfcp() {
    let f = parse_flow(&json!(null)).unwrap();
    let req = f.path_requirements();
    assert_eq!(req.len(), 1);
    assert_eq!(
        (req[0].key, req[0].value, req[0].presence),
        (keys::XCC_QFCP, ContractValue::Int(1), Presence::Somewhere)
    );
    let rf = parse_router(&json!({"capacity": "probe", "initial_capacity_bps": 1e6})).unwrap();
    assert_eq!(rf.provides(), vec![(keys::XCC_QFCP, ContractValue::Int(1))]);
    assert!(crate::aqm::parse_droptail(&json!(null)).unwrap().provides().is_empty());
    assert_eq!(check_router(&json!({"beta": -1})).unwrap_err().key, "beta");
    assert_eq!(check_router(&json!({"t_gain": 0})).unwrap_err().key, "t_gain");
    assert_eq!(check_router(&json!({"initial_capacity_bps": 0})).unwrap_err().key, "initial_capacity_bps");
    assert_eq!(check_router(&json!({"bogus": 1})).unwrap_err().key, "bogus");
    assert_eq!(check_protocol(&json!({"desired_rate": -1})).unwrap_err().key, "desired_rate");
}

/// QFCP's transport samples the RTT once per round trip (`qfcp_tcp_defaults`, docs/PROTOCOLS.md §9
/// "RTO") and resends lost retransmissions ("Lost retransmissions"), also when the scenario
/// sets other `tcp` keys; an explicit `rtt_samples` or `lost_retransmit` wins, and the rest are
/// TCP's defaults.
#[test]
fn qfcp_s_transport_samples_the_rtt_once_per_round_trip_unless_told_otherwise() {
    use crate::tcp::RttSamples;
    let once = TcpParams {
        rtt_samples: RttSamples::OncePerRtt,
        lost_retransmit: true,
        sack_rtt: true,
        ..TcpParams::default()
    };
    assert_eq!(QfcpParams::default().tcp, once);
    assert_eq!(QfcpParams::from_value(&json!(null)).unwrap().tcp, once);
    assert_eq!(QfcpParams::from_value(&json!({})).unwrap().tcp, once);
    let p = QfcpParams::from_value(&json!({"tcp": {"dupthresh": 4}})).unwrap();
    assert_eq!(p.tcp, TcpParams { dupthresh: 4, ..once });
    let p = QfcpParams::from_value(
        &json!({"tcp": {"rtt_samples": "every-ack", "lost_retransmit": false, "sack_rtt": false}}),
    )
    .unwrap();
    assert_eq!(p.tcp, TcpParams::default());
    let p = QfcpParams::from_value(&json!({"tcp": {"lost_retransmit": false}})).unwrap();
    assert_eq!(p.tcp, TcpParams { lost_retransmit: false, ..once });
    assert_eq!(check_protocol(&json!({"tcp": {"max_rto": 0}})).unwrap_err().key, "tcp.max_rto");
    assert_eq!(check_protocol(&json!({"tcp": {"rtt_samples": "x"}})).unwrap_err().key, "tcp.rtt_samples");
}

/// QFCP §II: "upon reception of 3 duplicate ACKs, the sender should retransmit the packet
/// with the expected sequence number". 20 packets in flight time out; the retransmission's
/// ACK restores the window (eq. 3), then three duplicates report the next packet lost: with
/// `recover_check = "off"` (the paper read literally) or `"heuristic"` (RFC 6582 §4.2: the
/// last ACK advanced one packet) QFCP retransmits at once; TCP's RFC 6582 check (`beyond`,
/// QFCP's default: duplicates of data sent before the timeout) refuses and leaves the loss to
/// the next, backed-off, timeout.
#[test]
fn after_a_timeout_the_third_duplicate_retransmits_unless_the_recover_check_refuses() {
    let with = |c: RecoverCheck| TcpParams { recover_check: c, limited_transmit: false, ..TcpParams::default() };
    assert_eq!(QfcpParams::default().tcp.recover_check, RecoverCheck::Beyond);
    for (check, retransmits) in
        [(RecoverCheck::Off, true), (RecoverCheck::Heuristic, true), (RecoverCheck::Beyond, false)]
    {
        let qfcp = QfcpWindow::new(&cfg(), MSS, &QfcpParams::default());
        let mut q = TcpSender::with_controller(&cfg(), Recovery::NewReno, &with(check), Box::new(qfcp));
        q.start(0);
        assert_eq!(drain(&mut q, 0).len(), 1);
        q.on_packet(100 * MS, &ack(944, 0, 200_000));
        assert_eq!(drain(&mut q, 100 * MS).len(), 20);
        let rto = q.poll_timeout().expect("the RTO is armed");
        q.on_timeout(rto);
        assert_eq!(drain(&mut q, rto).len(), 1, "one MSS after the timeout");
        q.on_packet(rto + 100 * MS, &ack(2 * 944, rto, 200_000));
        assert!(q.cwnd() >= 19.0 * 944.0, "the feedback restores the window: {}", q.cwnd() / 944.0);
        drain(&mut q, rto + 100 * MS);
        for _ in 0..3 {
            q.on_packet(rto + 101 * MS, &ack(2 * 944, rto, 200_000));
        }
        assert_eq!(q.in_recovery(), retransmits, "recover_check {check:?}");
    }
}

/// RFC 6582 §4.2's ACK heuristic: after a timeout, duplicates that follow an ACK which advanced
/// more than 4·SMSS (the receiver already held the data the go-back-N resends, so they answer
/// retransmissions, not a new loss) start no fast retransmit; `off` starts one. 20 packets time
/// out; the retransmission's ACK covers 10 packets (the receiver held 2..10), then three
/// duplicates of it.
#[test]
fn after_a_large_advance_the_heuristic_starts_no_fast_retransmit() {
    let with = |c: RecoverCheck| TcpParams { recover_check: c, limited_transmit: false, ..TcpParams::default() };
    for (check, retransmits) in [(RecoverCheck::Heuristic, false), (RecoverCheck::Off, true)] {
        let qfcp = QfcpWindow::new(&cfg(), MSS, &QfcpParams::default());
        let mut q = TcpSender::with_controller(&cfg(), Recovery::NewReno, &with(check), Box::new(qfcp));
        q.start(0);
        drain(&mut q, 0);
        q.on_packet(100 * MS, &ack(944, 0, 200_000));
        assert_eq!(drain(&mut q, 100 * MS).len(), 20);
        let rto = q.poll_timeout().expect("the RTO is armed");
        q.on_timeout(rto);
        drain(&mut q, rto);
        q.on_packet(rto + 100 * MS, &ack(11 * 944, rto, 200_000));
        drain(&mut q, rto + 100 * MS);
        for _ in 0..3 {
            q.on_packet(rto + 101 * MS, &ack(11 * 944, rto, 200_000));
        }
        assert_eq!(q.in_recovery(), retransmits, "recover_check {check:?}");
    }
    let e = check_protocol(&json!({"tcp": {"recover_check": "sometimes"}})).unwrap_err();
    assert_eq!(e.key, "tcp.recover_check", "{e}");
    assert!(check_protocol(&json!({"tcp": {"recover_check": "heuristic"}})).is_ok());
}

/// The registry's checks, called through QFCP's own parse functions (the table is the top floor).
fn check_router(params: &serde_json::Value) -> Result<(), crate::params::ParamError> {
    parse_router(params).map(|_| ())
}

fn check_protocol(params: &serde_json::Value) -> Result<(), crate::params::ParamError> {
    parse_flow(params).map(|_| ())
}
