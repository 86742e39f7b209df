//! BBR's arithmetic and state machine against hand-computed values (Linux `tcp_bbr.c`, the
//! BBR draft), driven through the controller's own hooks by a fluid bottleneck: one link of
//! fixed rate and propagation RTT, no loss, an ACK per segment.

use super::*;
use crate::packet::TcpHeader;
use crate::time::{NEVER, NS_PER_MS, NS_PER_US};
use std::collections::VecDeque;

const MSS: u32 = 1000;

fn bbr(seed: u64) -> Bbr {
    Bbr::with(10.0, MSS, 0, SimRng::for_component(seed, "test"))
}

fn ctx(now: Time) -> SenderCtx {
    SenderCtx { now, mss: MSS, ..Default::default() }
}

fn data(off: u64) -> Packet {
    let h = TcpHeader { seq: off as u32, ..Default::default() };
    Packet::tcp(0, Kind::Data, MSS + 40, MSS, h)
}

fn ack(upto: u64) -> Packet {
    let h = TcpHeader { ack: upto as u32, ..Default::default() };
    Packet::tcp(0, Kind::Ack, 40, 0, h)
}

/// A bottleneck of `rate` payload bytes/s and `rtt` of propagation: a segment sent at t leaves
/// the link at max(t, link free) + MSS/rate and is acknowledged `rtt` later. The sender sends
/// when cwnd and pacing allow.
struct Pipe {
    cc: Bbr,
    rate: f64,
    rtt: Time,
    now: Time,
    free: Time,
    next_off: u64,
    acked: u64,
    next_send: Time,
    acks: VecDeque<(Time, u64)>,
    /// (time, mode, pacing gain, cwnd packets) after every ACK.
    log: Vec<(Time, Mode, f64, f64)>,
}

impl Pipe {
    fn new(cc: Bbr, rate: f64, rtt: Time) -> Pipe {
        Pipe {
            cc,
            rate,
            rtt,
            now: 0,
            free: 0,
            next_off: 0,
            acked: 0,
            next_send: 0,
            acks: VecDeque::new(),
            log: Vec::new(),
        }
    }

    fn serialisation(&self) -> Time {
        (MSS as f64 / self.rate * 1e9) as Time
    }

    /// Run until `until` (ns), sending and acknowledging.
    fn run(&mut self, until: Time) {
        while self.now < until {
            let can_send = (self.next_off - self.acked + MSS as u64) as f64 <= self.cc.window();
            let send_at = if can_send { self.next_send.max(self.now) } else { NEVER };
            let ack_at = self.acks.front().map_or(NEVER, |a| a.0);
            if send_at == NEVER && ack_at == NEVER {
                return;
            }
            if send_at <= ack_at {
                self.now = send_at;
                let mut p = data(self.next_off);
                self.cc.on_send(&mut p, &ctx(self.now));
                let leave = self.now.max(self.free) + self.serialisation();
                self.free = leave;
                self.next_off += MSS as u64;
                self.acks.push_back((leave + self.rtt, self.next_off));
                let wire = self.cc.pacing_rate().expect("BBR paces");
                self.next_send = self.now + ((MSS + 40) as f64 / wire * 1e9) as Time;
            } else {
                self.now = ack_at;
                let (_, upto) = self.acks.pop_front().expect("ack");
                self.acked = upto;
                let mut p = ack(upto);
                let c = SenderCtx { srtt: Some(self.rtt), ..ctx(self.now) };
                self.cc.on_wire_arrival(&mut p, &c);
                self.log.push((self.now, self.cc.mode(), self.cc.pacing_gain(), self.cc.cwnd_packets()));
            }
        }
    }

    /// The first time the mode became `m`, s.
    fn entered(&self, m: Mode) -> Option<f64> {
        self.log.iter().find(|e| e.1 == m).map(|e| e.0 as f64 / 1e9)
    }
}

/// 10 Mb/s of payload (1.25e6 B/s) and 40 ms: BDP = 50 000 B = 50 segments.
const RATE: f64 = 1.25e6;
const RTT: Time = 40 * NS_PER_MS;

#[test]
fn gains_and_constants_are_linux_s() {
    // 2/ln 2 = 2.88539; Linux's fixed point 739/256 = 2.88672 (`bbr_high_gain`).
    assert!((HIGH_GAIN - 2.885_39).abs() < 1e-5);
    assert!((HIGH_GAIN - 739.0 / 256.0).abs() < 0.002);
    assert!((DRAIN_GAIN * HIGH_GAIN - 1.0).abs() < 1e-12);
    assert_eq!(PACING_GAIN, [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
    assert_eq!((BW_WINDOW_ROUNDS, MIN_RTT_WINDOW, PROBE_RTT_TIME), (10, 10 * NS_PER_SEC, 200 * NS_PER_MS));
    assert_eq!((MIN_CWND, FULL_BW_COUNT, FULL_BW_GROWTH, CWND_GAIN), (4.0, 3, 1.25, 2.0));
}

/// bdp = ⌈bw·RTprop·gain/MSS⌉; the budget adds 3 segments, rounds up to even and adds 2 in the
/// 1.25 phase (Linux `bbr_bdp`, `bbr_quantization_budget`); pacing = bw·gain·0.99.
#[test]
fn bdp_budget_and_pacing_by_hand() {
    let mut b = bbr(1);
    // No RTprop yet: the initial window.
    assert_eq!(b.bdp(RATE, 2.0), 10.0);
    b.min_rtt = Some(RTT);
    assert_eq!(b.bdp(RATE, 1.0), 50.0);
    assert_eq!(b.bdp(RATE, 2.0), 100.0);
    // 50·1.25 = 62.5 → 63.
    assert_eq!(b.bdp(RATE, 1.25), 63.0);
    // 100 + 3 = 103 → 104; 63 + 3 = 66.
    assert_eq!(b.inflight_target(RATE, 2.0), 104.0);
    assert_eq!(b.inflight_target(RATE, 1.25), 66.0);
    b.mode = Mode::ProbeBw;
    b.cycle_idx = 0;
    assert_eq!(b.inflight_target(RATE, 2.0), 106.0, "+2 in the probing phase");
    b.cycle_idx = 3;
    assert_eq!(b.inflight_target(RATE, 2.0), 104.0);
    assert!((Bbr::pacing_for(RATE, 1.25) - 1_546_875.0).abs() < 1e-6);
    // The wire rate the transport paces at: 1040 wire bytes per 1000 payload bytes.
    b.pacing_rate = 1e6;
    assert!((b.pacing_rate().unwrap() - 1.04e6).abs() < 1e-6);
}

/// Before any sample the pacing rate is high_gain·IW/1 ms (Linux
/// `bbr_init_pacing_rate_from_rtt`); the first smoothed RTT resets it to high_gain·IW/SRTT.
#[test]
fn the_initial_pacing_rate_by_hand() {
    let mut b = bbr(1);
    let want = 10.0 * 1000.0 / 1e-3 * HIGH_GAIN * 0.99;
    assert!((b.pacing_rate_payload() / want - 1.0).abs() < 1e-12);
    let rs = RateSample::default();
    b.on_ack_sample(0, &rs, Some(RTT));
    let want = 10.0 * 1000.0 / 0.04 * HIGH_GAIN * 0.99;
    assert!((b.pacing_rate_payload() / want - 1.0).abs() < 1e-12, "{}", b.pacing_rate_payload());
}

/// STARTUP doubles the delivery rate each round from IW = 10 until it passes the BDP (50
/// segments) in round 4 (10, 20, 40, 80 segments per round); three more rounds of < 25 %
/// growth and it drains. A round's rate sample reports the round before it, so the plateau
/// is seen a round late: four rounds of an RTprop each, then four queued ones of at most 2.9
/// RTprop each (the flight is at most high_gain·BDP, so the queue at most 1.9 BDP): DRAIN
/// within 4 + 4·2.9 ≈ 15.6 RTprop. DRAIN empties that queue at (1 − ln 2/2) of the rate,
/// 1.9/0.65 ≈ 2.9 RTprop: PROBE_BW within 4 RTprop of DRAIN, at a phase other than 0.75.
/// The model: BtlBw = the link's rate within 1 %, RTprop = RTT + one serialisation.
#[test]
fn startup_drain_probe_bw_on_a_fluid_pipe() {
    let mut p = Pipe::new(bbr(3), RATE, RTT);
    p.run(3 * NS_PER_SEC);
    let drain = p.entered(Mode::Drain).expect("DRAIN");
    let probe = p.entered(Mode::ProbeBw).expect("PROBE_BW");
    assert!(drain <= 15.6 * 0.0408, "DRAIN at {drain} s");
    assert!(probe > drain && probe <= drain + 4.0 * 0.0408, "PROBE_BW at {probe} s (DRAIN {drain})");
    assert!(p.cc.full_bw_reached());
    assert!((p.cc.btl_bw() / RATE - 1.0).abs() < 0.01, "BtlBw {}", p.cc.btl_bw());
    assert_eq!(p.cc.min_rtt(), Some(RTT + 800 * NS_PER_US));
    // Gains of each mode as logged: STARTUP 2/ln 2, DRAIN ln 2/2, PROBE_BW from the cycle.
    for &(_, m, g, _) in &p.log {
        match m {
            Mode::Startup => assert_eq!(g, HIGH_GAIN),
            Mode::Drain => assert_eq!(g, DRAIN_GAIN),
            Mode::ProbeBw => assert!(PACING_GAIN.contains(&g)),
            Mode::ProbeRtt => assert_eq!(g, 1.0),
        }
    }
    let first = p.log.iter().find(|e| e.1 == Mode::ProbeBw).unwrap();
    assert_ne!(first.2, 0.75, "PROBE_BW never starts in the draining phase");
    // In PROBE_BW cwnd is at most the budget of cwnd_gain·BtlBw·RTprop: BtlBw·RTprop =
    // 1.25e6 B/s · 40.8 ms = 51 segments, 2·51 + 3 → 106, 108 in the probing phase.
    let cap = p.cc.inflight_target(p.cc.btl_bw(), CWND_GAIN);
    let late: Vec<f64> = p.log.iter().filter(|e| e.0 > 2 * NS_PER_SEC).map(|e| e.3).collect();
    let max = late.iter().cloned().fold(0.0, f64::max);
    assert!(max <= cap.max(106.0) + 2.0, "cwnd {max} above 2 BDP's budget {cap}");
}

/// The gain cycle: phases follow 1.25 → 0.75 → 1 ×6 → 1.25 in order, each lasting at least
/// an RTprop (Linux `bbr_is_next_cycle_phase`); a full cycle is ~8 RTprop.
#[test]
fn the_gain_cycle_runs_in_order_one_rtprop_per_phase() {
    let mut p = Pipe::new(bbr(5), RATE, RTT);
    p.run(5 * NS_PER_SEC);
    let mut phases: Vec<(Time, f64)> = Vec::new();
    for &(t, _, g, _) in p.log.iter().filter(|e| e.1 == Mode::ProbeBw) {
        if phases.last().is_none_or(|l| l.1 != g) {
            phases.push((t, g));
        }
    }
    // Consecutive distinct gains: after 1.25 always 0.75, after 0.75 always 1, after 1 either.
    for w in phases.windows(2) {
        match w[0].1 {
            1.25 => assert_eq!(w[1].1, 0.75),
            0.75 => assert_eq!(w[1].1, 1.0),
            _ => assert_eq!(w[1].1, 1.25),
        }
    }
    let rtprop = RTT + 800 * NS_PER_US;
    // From one 1.25 phase to the next: 8 phases of at least an RTprop, about 8 RTprops.
    let probes: Vec<Time> = phases.iter().filter(|x| x.1 == 1.25).map(|x| x.0).collect();
    assert!(probes.len() >= 10, "{} cycles", probes.len());
    for w in probes.windows(2) {
        let d = (w[1] - w[0]) as f64 / rtprop as f64;
        assert!((8.0..=9.5).contains(&d), "cycle of {d} RTprops");
    }
}

/// The random first phase: over many seeds every phase but the draining one (index 1) is
/// entered first, and index 1 never (Linux `bbr_reset_probe_bw_mode`).
#[test]
fn probe_bw_starts_anywhere_but_the_draining_phase() {
    let mut seen = [0u32; CYCLE_LEN];
    for seed in 0..200 {
        let mut b = bbr(seed);
        b.reset_probe_bw_mode();
        seen[b.cycle_idx()] += 1;
    }
    assert_eq!(seen[1], 0, "{seen:?}");
    assert!(seen.iter().enumerate().all(|(i, &n)| i == 1 || n > 0), "{seen:?}");
}

/// Full-bandwidth detection by hand: rounds whose BtlBw grows ≥ 25 % reset the count; three
/// rounds in a row below that end STARTUP (Linux `bbr_check_full_bw_reached`).
#[test]
fn full_bandwidth_after_three_rounds_below_a_quarter_growth() {
    let mut b = bbr(1);
    let round = |b: &mut Bbr, bw: f64| {
        b.bw.reset(b.rounds, bw);
        b.round_start = true;
        b.check_full_bw_reached(&RateSample::default());
    };
    round(&mut b, 100.0);
    round(&mut b, 125.0); // exactly +25 %: growth
    assert_eq!((b.full_bw, b.full_bw_count), (125.0, 0));
    round(&mut b, 150.0); // +20 %
    round(&mut b, 155.0);
    assert!(!b.full_bw_reached());
    round(&mut b, 156.25); // +25 % of 125: growth again
    assert_eq!((b.full_bw, b.full_bw_count), (156.25, 0));
    round(&mut b, 160.0);
    round(&mut b, 170.0);
    assert!(!b.full_bw_reached());
    round(&mut b, 190.0); // 190 < 195.3
    assert!(b.full_bw_reached());
    // DRAIN, left at once: nothing is in flight, so the flight is below one BDP.
    b.check_drain();
    assert_eq!(b.mode(), Mode::ProbeBw);
}

/// PROBE_RTT: with the RTT constant RTprop is not lowered, so it expires 10 s after it was
/// set; the window drops to 4 packets for 200 ms plus a round once the flight is down, then
/// the window before PROBE_RTT comes back (Linux `bbr_update_min_rtt`,
/// `bbr_check_probe_rtt_done`).
#[test]
fn probe_rtt_every_ten_seconds_for_200_ms() {
    let mut p = Pipe::new(bbr(7), RATE, RTT);
    p.run(25 * NS_PER_SEC);
    let mut spans: Vec<(f64, f64)> = Vec::new();
    let mut start = None;
    for &(t, m, _, c) in &p.log {
        let t = t as f64 / 1e9;
        match (m == Mode::ProbeRtt, start) {
            (true, None) => start = Some(t),
            (false, Some(s)) => {
                spans.push((s, t));
                start = None;
            }
            _ => {}
        }
        if m == Mode::ProbeRtt {
            assert!(c <= MIN_CWND, "cwnd {c} in PROBE_RTT");
        }
    }
    assert_eq!(spans.len(), 2, "{spans:?}");
    // The first RTprop sample is the first ACK's (~0.04 s); the next PROBE_RTT starts 10 s
    // after the previous one ended.
    assert!((spans[0].0 - 10.04).abs() < 0.05, "{spans:?}");
    assert!((spans[1].0 - spans[0].1 - 10.0).abs() < 0.05, "{spans:?}");
    for (s, e) in &spans {
        // 200 ms after the flight reached 4 packets (≤ one RTT later) and a round.
        assert!(e - s >= 0.2 && e - s <= 0.2 + 3.0 * 0.0408, "PROBE_RTT lasted {}", e - s);
    }
    assert!(p.cc.cwnd_packets() > 50.0, "window restored: {}", p.cc.cwnd_packets());
}

/// Loss recovery: packet conservation, cwnd = flight + delivered (Linux
/// `bbr_set_cwnd_to_recover_or_restore`); a timeout: one packet, the plateau forgotten.
#[test]
fn losses_and_timeouts() {
    let mut p = Pipe::new(bbr(9), RATE, RTT);
    p.run(2 * NS_PER_SEC);
    let before = p.cc.cwnd_packets();
    let flight = p.cc.sampler().in_flight() as f64 / MSS as f64;
    let r = p.cc.on_congestion(Signal::Loss, &ctx(p.now));
    // The segment at snd_una is marked lost; the window is the rest of the flight plus the
    // last ACK's one segment.
    assert_eq!(r, Response::SetWindow((flight - 1.0 + 1.0) * MSS as f64));
    assert_eq!(p.cc.recovery_base(&ctx(p.now)), Some(p.cc.window()));
    assert!(p.cc.prior_cwnd == before);
    let r = p.cc.on_congestion(Signal::Timeout, &ctx(p.now));
    assert_eq!(r, Response::SetWindow(MSS as f64));
    assert_eq!((p.cc.full_bw, p.cc.sampler().in_flight()), (0.0, 0));
    assert_eq!(p.cc.on_congestion(Signal::EcnEcho, &ctx(p.now)), Response::Keep, "BBR v1 ignores ECN");
}

/// Delivery-rate samples by hand (draft-cheng-iccrg-delivery-rate-estimation §3.3): ten
/// segments sent at t = 0, ACKed one per ms from 40 ms; a segment sent at the first ACK and
/// ACKed at 80 ms.
#[test]
fn delivery_rate_samples_by_hand() {
    let ms = NS_PER_MS;
    let mut r = DeliveryRate::new(0, MSS);
    for i in 0..10 {
        r.on_send(0, &data(i * 1000));
    }
    assert_eq!(r.in_flight(), 10_000);
    let s = r.on_ack(40 * ms, &ack(1000), None);
    // 1000 B over max(send 0, ack 40 ms) = 25 000 B/s.
    assert_eq!((s.delivered, s.interval, s.rtt, s.prior_delivered), (Some(1000), Some(40 * ms), Some(40 * ms), 0));
    assert_eq!(s.bw(), Some(25_000.0));
    r.on_send(40 * ms, &data(10_000));
    for k in 2..=10 {
        let s = r.on_ack((39 + k) * ms, &ack(k * 1000), None);
        assert_eq!(s.delivered, Some(k * 1000));
        assert_eq!(s.interval, Some((39 + k) * ms));
    }
    // The 11th segment left when 1000 B were delivered, at 40 ms; its ACK at 80 ms delivers
    // 11 000 − 1000 B over max(send 40 − 0, ack 80 − 40) ms.
    let s = r.on_ack(80 * ms, &ack(11_000), Some(30 * ms));
    assert_eq!((s.delivered, s.interval, s.rtt), (Some(10_000), Some(40 * ms), Some(40 * ms)));
    assert_eq!(r.in_flight(), 0);
    // An interval shorter than the min RTT is no sample (ACK compression, `tcp_rate_gen`).
    r.on_send(100 * ms, &data(11_000));
    let s = r.on_ack(110 * ms, &ack(12_000), Some(30 * ms));
    assert_eq!((s.delivered, s.interval), (Some(1000), None));
}

/// SACKed segments are delivered once: the hole's later cumulative ACK counts only itself.
#[test]
fn sacked_segments_count_once() {
    let mut r = DeliveryRate::new(0, MSS);
    for i in 0..4 {
        r.on_send(0, &data(i * 1000));
    }
    let mut a = ack(1000);
    if let Some(h) = a.tcp_hdr_mut() {
        h.sack.push(2000, 4000);
    }
    let s = r.on_ack(10 * NS_PER_MS, &a, None);
    assert_eq!(s.acked_sacked, 3000);
    assert_eq!(r.in_flight(), 1000);
    // The hole is resent, then cumulatively acknowledged with everything above it.
    r.on_send(11 * NS_PER_MS, &data(1000));
    let s = r.on_ack(21 * NS_PER_MS, &ack(4000), None);
    assert_eq!((s.acked_sacked, s.rtt), (1000, None), "a retransmission gives no RTT (Karn)");
    assert_eq!((r.delivered(), r.in_flight()), (4000, 0));
}

#[test]
fn params_parse_and_refuse_unknown_keys() {
    assert!(parse_bbr(&serde_json::Value::Null).is_ok());
    let e = parse_bbr(&serde_json::json!({"gain": 2})).unwrap_err();
    assert!(e.reason.contains("gain"), "{e}");
    let e = parse_bbr(&serde_json::json!({"tcp": {"dupthresh": 0}})).unwrap_err();
    assert_eq!(e.key, "tcp.dupthresh");
}
