//! CUBIC's arithmetic against values computed by hand from RFC 9438's equations.

use super::*;
use crate::packet::{Kind, Packet, TcpHeader};
use crate::tcp::recovery::drive;
use crate::tcp::{PartialAckTimer, RtoRule};
use crate::time::{secs, NS_PER_SEC};

const S: u32 = 1000;
const SF: f64 = S as f64;

fn ctx(now: Time, srtt: f64) -> SenderCtx {
    SenderCtx { now, mss: S, srtt: Some(secs(srtt)), ..Default::default() }
}

fn new_ack(w: &mut Cubic, acked: u64, c: &SenderCtx) {
    let p = Packet::tcp(0, Kind::Ack, 40, 0, TcpHeader::default());
    w.on_ack(&Ack { packet: &p, acked_bytes: acked, reported_pkts: 1.0 }, c);
}

fn segs(w: &Cubic) -> f64 {
    w.window() / SF
}

#[test]
fn k_and_the_curve_by_hand() {
    // K = ∛(W_max·(1 − β)/C) when the stage starts at β·W_max: W_max = 100 → ∛75.
    assert!((k(100.0, 70.0, C) - 4.217_163_326_508_746).abs() < 1e-12);
    // W_max = 1000 → ∛750.
    assert!((k(1000.0, 700.0, C) - 9.085_602_964_160_698).abs() < 1e-12);
    assert_eq!(k(50.0, 60.0, C), 0.0, "a stage that starts above W_max has K = 0");
    let kk = 75f64.cbrt();
    // W(0) = W_max − C·K³ = 100 − 30 = 70; W(K) = 100; W(K+1) = 100.4; W(K+2) = 103.2.
    for (t, want) in [(0.0, 70.0), (kk, 100.0), (kk + 1.0, 100.4), (kk + 2.0, 103.2), (kk - 1.0, 99.6)] {
        assert!((w_cubic(t, kk, 100.0, C) - want).abs() < 1e-9, "W({t}) = {}", w_cubic(t, kk, 100.0, C));
    }
    // α_cubic = 3·0.3/1.7 = 0.529411...
    assert!((alpha(BETA) - 9.0 / 17.0).abs() < 1e-15);
    assert_eq!(alpha(0.5), 1.0, "Reno's β gives Reno's α");
}

#[test]
fn reduction_and_fast_convergence() {
    let p = CubicParams::default();
    let mut w = Cubic::with(100.0 * SF, 50.0 * SF, S, &p);
    let c = ctx(0, 0.1);
    // First event at 100 segments: W_max = 100, cwnd = ssthresh = 70.
    assert_eq!(w.on_congestion(Signal::Loss, &c), Response::SetWindow(70.0 * SF));
    assert_eq!((w.w_max(), w.ssthresh()), (100.0, 70.0 * SF));
    // Below the last W_max at the next event (80 < 100): fast convergence W_max = 80·1.7/2 = 68.
    w.set_window(80.0 * SF, 70.0 * SF);
    assert_eq!(w.on_congestion(Signal::EcnEcho, &c), Response::SetWindow(56.0 * SF));
    assert!((w.w_max() - 68.0).abs() < 1e-12);
    // Above it (120 > 68): W_max = 120.
    w.set_window(120.0 * SF, 56.0 * SF);
    w.on_congestion(Signal::Loss, &c);
    assert_eq!(w.w_max(), 120.0);
    // Without fast convergence W_max is the window itself.
    let mut w = Cubic::with(80.0 * SF, 0.0, S, &CubicParams { fast_convergence: false, ..p.clone() });
    w.w_max = 100.0;
    w.on_congestion(Signal::Loss, &c);
    assert_eq!(w.w_max(), 80.0);
    // Never below two segments.
    let mut w = Cubic::with(2.0 * SF, 0.0, S, &p);
    assert_eq!(w.on_congestion(Signal::Loss, &c), Response::SetWindow(2.0 * SF));
}

/// The stage after a loss at 20 segments: cwnd 14, K = ∛15. At t = 0 W_cubic = 14 < W_est, so
/// the Reno-friendly region sets cwnd = W_est = 14 + α/14; at t = 1 s W_cubic(1) = 18.74 > W_est
/// and the window moves (W_cubic(1 + RTT) − cwnd)/cwnd per segment.
#[test]
fn reno_friendly_region_then_the_curve() {
    let mut w = Cubic::with(20.0 * SF, 10.0 * SF, S, &CubicParams::default());
    let r = w.on_congestion(Signal::Loss, &ctx(0, 0.1));
    assert_eq!(r, Response::SetWindow(14.0 * SF));
    w.set_window(14.0 * SF, 14.0 * SF);
    let t0 = 5 * NS_PER_SEC;
    new_ack(&mut w, S as u64, &ctx(t0, 0.1));
    let kk = 15f64.cbrt();
    assert!((w.epoch_k().unwrap() - kk).abs() < 1e-12);
    let est = 14.0 + (9.0 / 17.0) / 14.0;
    assert!((segs(&w) - est).abs() < 1e-9, "Reno-friendly: cwnd {} W_est {est}", segs(&w));
    // One second later the curve is far above W_est: concave growth toward W_cubic(1.1).
    let before = segs(&w);
    assert!((w_cubic(1.0, kk, 20.0, C) - 18.7392).abs() < 1e-3);
    new_ack(&mut w, S as u64, &ctx(t0 + NS_PER_SEC, 0.1));
    let target = w_cubic(1.1, kk, 20.0, C); // 18.98, within [cwnd, 1.5 cwnd]
    assert!((segs(&w) - (before + (target - before) / before)).abs() < 1e-9, "{}", segs(&w));
    assert!((w.w_est().unwrap() - (est + (9.0 / 17.0) / before)).abs() < 1e-9);
    // The same at t = 0 without the Reno-friendly region follows the curve: W_cubic(0.1) = 20 − 0.4·2.3662³ = 14.70.
    let mut w = Cubic::with(20.0 * SF, 10.0 * SF, S, &CubicParams { reno_friendly: false, ..Default::default() });
    w.on_congestion(Signal::Loss, &ctx(0, 0.1));
    w.set_window(14.0 * SF, 14.0 * SF);
    new_ack(&mut w, S as u64, &ctx(t0, 0.1));
    let target = w_cubic(0.1, kk, 20.0, C);
    assert!((target - 14.7007).abs() < 1e-3);
    assert!((segs(&w) - (14.0 + (target - 14.0) / 14.0)).abs() < 1e-9);
}

/// Once W_est regains cwnd_prior it grows by Reno's α = 1 per window (RFC 9438 §4.3).
#[test]
fn w_est_switches_to_renos_alpha_at_cwnd_prior() {
    let mut w = Cubic::with(20.0 * SF, 10.0 * SF, S, &CubicParams::default());
    w.on_congestion(Signal::Loss, &ctx(0, 0.1));
    w.set_window(14.0 * SF, 14.0 * SF);
    new_ack(&mut w, S as u64, &ctx(0, 0.1));
    // Put W_est at cwnd_prior (20): the next increment is 1/cwnd, not α/cwnd.
    let e = w.epoch.unwrap();
    w.epoch = Some(Epoch { w_est: 20.0, ..e });
    let cw = segs(&w);
    new_ack(&mut w, S as u64, &ctx(0, 0.1));
    assert!((w.w_est().unwrap() - (20.0 + 1.0 / cw)).abs() < 1e-12);
}

/// The window over a whole stage with one ACK per segment and a fixed RTT: it returns to W_max
/// at K (within one RTT, the target's lead) and the clamp keeps growth under 1.5× per RTT.
#[test]
fn the_window_regains_w_max_at_k() {
    let mut w = Cubic::with(100.0 * SF, 10.0 * SF, S, &CubicParams { reno_friendly: false, ..Default::default() });
    w.on_congestion(Signal::Loss, &ctx(0, 0.1));
    w.set_window(70.0 * SF, 70.0 * SF);
    let rtt = 0.1;
    let mut now = 0u64;
    let mut t_regain = None;
    while now < 8 * NS_PER_SEC {
        // One window of ACKs spread over the RTT.
        let n = segs(&w).floor() as u64;
        for i in 0..n {
            new_ack(&mut w, S as u64, &ctx(now + secs(rtt) * i / n, rtt));
        }
        now += secs(rtt);
        if t_regain.is_none() && segs(&w) >= 100.0 {
            t_regain = Some(to_secs(now));
        }
    }
    let t = t_regain.expect("regains W_max");
    let kk = 75f64.cbrt();
    assert!((t - kk).abs() <= 2.0 * rtt, "regained W_max at {t} s, K = {kk} s");
}

#[test]
fn timeout_forgets_the_curve_and_a_spurious_one_is_undone() {
    let mut w = Cubic::with(100.0 * SF, 10.0 * SF, S, &CubicParams::default());
    let c = ctx(0, 0.1);
    drive::signal(&mut w, Signal::Timeout, &c);
    assert_eq!((w.window(), w.ssthresh(), w.w_max()), (SF, 70.0 * SF, 0.0));
    // A repeated timeout holds ssthresh.
    drive::signal(&mut w, Signal::Timeout, &SenderCtx { consecutive_rtos: 1, ..c });
    assert_eq!((w.window(), w.ssthresh()), (SF, 70.0 * SF));
    w.on_spurious_timeout(&c);
    assert_eq!((w.window(), w.ssthresh(), w.w_max()), (100.0 * SF, 10.0 * SF, 0.0));
    // The stage after a timeout starts at its own window with K = 0 (RFC 9438 §4.8).
    let mut w = Cubic::with(100.0 * SF, 10.0 * SF, S, &CubicParams::default());
    drive::signal(&mut w, Signal::Timeout, &c);
    w.set_window(80.0 * SF, 70.0 * SF);
    new_ack(&mut w, S as u64, &c);
    assert_eq!(w.epoch_k(), Some(0.0));
}

#[test]
fn slow_start_and_params() {
    let mut w = Cubic::with(2.0 * SF, 4.0 * SF, S, &CubicParams::default());
    new_ack(&mut w, 2000, &ctx(0, 0.1));
    assert_eq!(w.window(), 3.0 * SF, "slow start: + min(acked, SMSS)");
    assert!(w.epoch_k().is_none());
    let p: CubicParams = parse(&serde_json::json!({"beta": 0.8, "tcp": {"dupthresh": 4}})).unwrap();
    assert_eq!((p.beta, p.c, p.tcp.dupthresh), (0.8, C, 4));
    assert_eq!(parse_cubic(&serde_json::json!({"beta": 1.0})).unwrap_err().key, "beta");
    assert_eq!(parse_cubic(&serde_json::json!({"c": 0})).unwrap_err().key, "c");
    assert_eq!(parse_cubic(&serde_json::json!({"tcp": {"dupthresh": 0}})).unwrap_err().key, "tcp.dupthresh");
    assert!(parse_cubic(&serde_json::json!({"hystar": true})).unwrap_err().reason.contains("hystar"));
}

/// CUBIC's transport is Linux's where the shared defaults differ (`cubic_tcp_defaults`): keys a
/// `tcp` table leaves out take it; keys it gives win.
#[test]
fn the_transport_defaults_are_linuxs() {
    let d = CubicParams::from_value(&serde_json::Value::Null).unwrap();
    assert_eq!((d.tcp.partial_ack_timer, d.tcp.rto_rule), (PartialAckTimer::Every, RtoRule::Linux));
    assert_eq!(d, CubicParams::default());
    let p = CubicParams::from_value(&serde_json::json!({"tcp": {"dupthresh": 4}})).unwrap();
    assert_eq!((p.tcp.dupthresh, p.tcp.partial_ack_timer, p.tcp.rto_rule), (4, PartialAckTimer::Every, RtoRule::Linux));
    let p = CubicParams::from_value(&serde_json::json!({"tcp": {"partial_ack_timer": "first", "rto_rule": "rfc6298"}}))
        .unwrap();
    assert_eq!((p.tcp.partial_ack_timer, p.tcp.rto_rule), (PartialAckTimer::First, RtoRule::Rfc6298));
    // Everything else is the shared transport's.
    assert_eq!(
        TcpParams { partial_ack_timer: PartialAckTimer::First, rto_rule: RtoRule::Rfc6298, ..d.tcp },
        TcpParams::default()
    );
}

/// A "cubic" flow's sender restarts the retransmission timer on every partial ACK of a NewReno
/// recovery, as Linux re-arms it on every ACK of new data (`tcp_clean_rtx_queue`'s `FLAG_SET_XMIT_TIMER`) (RFC 6582 §4's
/// Slow-but-Steady); with `partial_ack_timer = "first"` only on the first (Impatient). Ten
/// segments out, segment 2 lost, three duplicates, then partial ACKs at 200, 300, 400 ms.
#[test]
fn a_cubic_flow_restarts_its_timer_on_every_partial_ack() {
    use crate::endpoint::{drain_into, FlowConfig};
    use crate::packet::flags;
    use crate::tcp::SeqSpace;
    const MS: Time = NS_PER_SEC / 1000;
    for (params, want) in [
        (serde_json::json!({}), [true, true, true]),
        (serde_json::json!({"tcp": {"partial_ack_timer": "first"}}), [true, false, false]),
    ] {
        let mut cfg = FlowConfig::new(7, 1040); // MSS 1000
        cfg.initial_window = Some(10);
        let sp = SeqSpace::new(cfg.isn);
        let ack = |off: u64| {
            let h = TcpHeader { ack: sp.wire(off), flags: flags::ACK, ..Default::default() };
            Packet::tcp(7, Kind::Ack, 40, 0, h)
        };
        let mut s = parse_cubic(&params).unwrap().sender(&cfg);
        s.start(0);
        assert_eq!(drain_into(s.as_mut(), 0).len(), 10);
        s.on_packet(100 * MS, &ack(1000));
        drain_into(s.as_mut(), 100 * MS);
        for t in [101, 101, 102] {
            s.on_packet(t * MS, &ack(1000));
            drain_into(s.as_mut(), t * MS);
        }
        assert_eq!(s.stats().retransmits, 1, "{params}: the fast retransmit");
        for (i, (t, a)) in [(200, 2000), (300, 3000), (400, 8000)].into_iter().enumerate() {
            let before = s.poll_timeout();
            s.on_packet(t * MS, &ack(a));
            assert_eq!(s.poll_timeout() != before, want[i], "{params}: partial ACK {i}");
            drain_into(s.as_mut(), t * MS);
        }
        assert_eq!(s.stats().retransmits, 4, "{params}: one hole repaired per partial ACK");
    }
}
