//! The transport's state machine against hand-computed sequences (RFC 5681, 6582, 6298, 3042,
//! 3168, 3522, 6675).

use super::*;
use crate::cc::{Ack, Response, Signal};
use crate::packet::{ecn, flags, tcp_checksum};
use crate::time::{NS_PER_MS, NS_PER_SEC};

const MS: Time = NS_PER_MS;
const ISN: u32 = u32::MAX - 2500; // wraps inside the third segment

fn cfg() -> FlowConfig {
    let mut c = FlowConfig::new(7, 1040); // MSS 1000
    c.isn = ISN;
    c
}

/// RFC 5681 / 6582 as written: the recovery arithmetic below is checked without RFC 3042,
/// which has its own test.
fn sender(c: &FlowConfig, r: Recovery) -> TcpSender {
    let mut s = TcpSender::new(c, r, &TcpParams { limited_transmit: false, ..Default::default() });
    s.start(0);
    s
}

/// As an engine drains (`poll_transmit_into`, its hint checked).
fn drain(s: &mut TcpSender, now: Time) -> Vec<Packet> {
    crate::endpoint::drain_into(s, now)
}

/// Offsets of data packets.
fn offs(pkts: &[Packet]) -> Vec<u64> {
    let sp = SeqSpace::new(ISN);
    pkts.iter().map(|p| sp.unwrap(p.tcp_hdr().unwrap().seq, 0)).collect()
}

fn ack(off: u64, ts_ecr: Time, f: u8) -> Packet {
    let h =
        TcpHeader { seq: 0, ack: SeqSpace::new(ISN).wire(off), flags: flags::ACK | f, ts_ecr, ..Default::default() };
    Packet::tcp(7, Kind::Ack, 40, 0, h)
}

fn cwnd(s: &TcpSender) -> f64 {
    s.cwnd()
}

#[test]
fn initial_window_and_slow_start_per_ack() {
    let mut s = sender(&cfg(), Recovery::NewReno);
    let p = drain(&mut s, 0);
    // RFC 5681 IW for SMSS 1000 is 4 segments; wire size = payload + 40.
    assert_eq!(offs(&p), vec![0, 1000, 2000, 3000]);
    assert!(p.iter().all(|p| p.kind == Kind::Data && p.size == 1040 && p.payload == 1000));
    assert!(p.iter().all(|p| p.ecn == ecn::NOT_ECT));
    assert_eq!(p[2].tcp_hdr().unwrap().seq, u32::MAX - 500);
    assert_eq!(p[3].tcp_hdr().unwrap().seq, 499, "wrapped");
    let h = p[0].tcp_hdr().unwrap();
    assert_eq!(h.checksum, tcp_checksum(&TcpHeader { checksum: 0, ..*h }));
    // Each ACK in slow start adds one SMSS and releases two segments.
    s.on_packet(50 * MS, &ack(1000, 0, 0));
    assert_eq!(cwnd(&s), 5000.0);
    assert_eq!(offs(&drain(&mut s, 50 * MS)), vec![4000, 5000]);
    assert_eq!(s.stats().srtt, 50 * MS);
    s.on_packet(51 * MS, &ack(3000, 1, 0)); // stretch ACK: + min(2000, SMSS)
    assert_eq!(cwnd(&s), 6000.0);
    assert_eq!(offs(&drain(&mut s, 51 * MS)), vec![6000, 7000, 8000]);
    assert_eq!(s.stats().bytes, 3000);
}

#[test]
fn congestion_avoidance_through_transport() {
    let mut c = cfg();
    c.initial_window = Some(4);
    c.initial_ssthresh = Some(4000);
    let mut s = sender(&c, Recovery::NewReno);
    drain(&mut s, 0);
    s.on_packet(10 * MS, &ack(1000, 0, 0));
    assert_eq!(cwnd(&s), 4250.0); // 4000 + 1000²/4000
    assert_eq!(drain(&mut s, 10 * MS).len(), 1);
}

/// The engine stops a drain at `Last` (issue 19): a plain window without SACK marks the last
/// segment its window lets go (`drain` checks that no poll after it finds one); with SACK the
/// next poll may skip SACKed data, so the sender leaves it to that poll (`More`, then `Idle`).
#[test]
fn the_last_segment_the_window_allows_is_marked() {
    let mut slot = ack(0, 0, 0);
    let mut s = sender(&cfg(), Recovery::NewReno);
    let marks: Vec<Transmit> = (0..5).map(|_| s.poll_transmit_into(0, &mut slot)).collect();
    use Transmit::{Idle, Last, More};
    assert_eq!(marks, [More, More, More, Last, Idle], "IW 4");
    // Slow start: an ACK of one segment releases two, the second marked last.
    s.on_packet(10 * MS, &ack(1000, 0, 0));
    assert_eq!(s.poll_transmit_into(10 * MS, &mut slot), More);
    assert_eq!(s.poll_transmit_into(10 * MS, &mut slot), Last);
    assert_eq!(offs(&[slot]), vec![5000]);
    let mut c = cfg();
    c.sack = true;
    let mut s = sender(&c, Recovery::NewReno);
    let marks: Vec<Transmit> = (0..5).map(|_| s.poll_transmit_into(0, &mut slot)).collect();
    assert_eq!(marks, [More, More, More, More, Idle], "SACK");
}

/// Send 10 segments, ACK the first (cwnd 11 000 → 2 more), then three duplicates.
fn into_recovery(r: Recovery) -> TcpSender {
    into_recovery_with(r, &TcpParams { limited_transmit: false, ..Default::default() })
}

fn into_recovery_with(r: Recovery, params: &TcpParams) -> TcpSender {
    let mut c = cfg();
    c.initial_window = Some(10);
    let mut s = TcpSender::new(&c, r, params);
    s.start(0);
    assert_eq!(drain(&mut s, 0).len(), 10);
    s.on_packet(100 * MS, &ack(1000, 0, 0));
    assert_eq!(offs(&drain(&mut s, 100 * MS)), vec![10_000, 11_000]);
    for i in 1..=2 {
        s.on_packet(101 * MS, &ack(1000, 0, 0));
        assert!(!s.in_recovery(), "dupack {i}");
        assert!(drain(&mut s, 101 * MS).is_empty());
    }
    s.on_packet(102 * MS, &ack(1000, 0, 0));
    assert!(s.in_recovery());
    s
}

/// An ACK for `off` carrying SACK blocks given as offsets.
fn sack_ack(off: u64, blocks: &[(u64, u64)]) -> Packet {
    sack_ack_ts(off, 0, blocks)
}

fn sack_ack_ts(off: u64, ts_ecr: Time, blocks: &[(u64, u64)]) -> Packet {
    let mut p = ack(off, ts_ecr, 0);
    let sp = SeqSpace::new(ISN);
    let h = p.tcp_hdr_mut().unwrap();
    for &(l, r) in blocks {
        h.sack.push(sp.wire(l), sp.wire(r));
    }
    p
}

fn sack_sender(iw: u32) -> TcpSender {
    sack_sender_with(iw, &TcpParams::default())
}

/// `sack_sender` with the transport's options `params`.
fn sack_sender_with(iw: u32, params: &TcpParams) -> TcpSender {
    let mut c = cfg();
    c.initial_window = Some(iw);
    c.sack = true;
    let mut s = TcpSender::new(&c, Recovery::NewReno, params);
    s.start(0);
    s
}

/// Ten segments out; 0 and 4000 are lost. With SACK the second hole is resent as soon as
/// three segments above it are SACKed (RFC 6675 IsLost), not one RTT later on the partial
/// ACK, and the window is held at ssthresh instead of inflating.
#[test]
fn sack_recovery_repairs_a_second_hole_within_the_same_round_trip() {
    let mut s = sack_sender(10);
    assert_eq!(drain(&mut s, 0).len(), 10);
    let t = 100 * MS;
    s.on_packet(t, &sack_ack(0, &[(1000, 2000)]));
    s.on_packet(t, &sack_ack(0, &[(1000, 3000)]));
    assert_eq!(offs(&drain(&mut s, t)), vec![10_000, 11_000], "Limited Transmit");
    s.on_packet(t, &sack_ack(0, &[(1000, 4000)]));
    assert!(s.in_recovery());
    // ssthresh from the 10 000 bytes in flight before Limited Transmit (RFC 5681 §3.2
    // step 2); no inflation.
    assert_eq!((s.ssthresh(), cwnd(&s)), (5000.0, 5000.0));
    assert_eq!(offs(&drain(&mut s, t)), vec![0], "fast retransmit");
    // Segments 5000.. arrive: after three SACKed segments above it, 4000 is lost.
    s.on_packet(t, &sack_ack(0, &[(5000, 6000), (1000, 4000)]));
    s.on_packet(t, &sack_ack(0, &[(5000, 7000), (1000, 4000)]));
    s.on_packet(t, &sack_ack(0, &[(5000, 8000), (1000, 4000)]));
    assert!(drain(&mut s, t).is_empty(), "pipe 5000 = cwnd");
    s.on_packet(t, &sack_ack(0, &[(5000, 9000), (1000, 4000)]));
    assert_eq!(offs(&drain(&mut s, t)), vec![4000], "NextSeg: the lost second hole, pipe 4000");
    assert_eq!(cwnd(&s), 5000.0);
    // Further SACKs free the pipe for new data.
    s.on_packet(t, &sack_ack(0, &[(5000, 10_000), (1000, 4000)]));
    assert_eq!(offs(&drain(&mut s, t)), vec![12_000]);
    s.on_packet(t, &sack_ack(0, &[(5000, 12_000), (1000, 4000)]));
    assert_eq!(offs(&drain(&mut s, t)), vec![13_000, 14_000]);
    // The retransmission of 0 is acknowledged (a partial ACK; 4000 was already resent),
    // then that of 4000: recovery ends one window of data later, without a timeout.
    s.on_packet(200 * MS, &sack_ack(4000, &[(5000, 12_000)]));
    assert!(s.in_recovery());
    assert_eq!(s.stats().retransmits, 2);
    s.on_packet(201 * MS, &sack_ack(15_000, &[]));
    assert!(!s.in_recovery());
    assert_eq!(s.stats().timeouts, 0);
}

/// `lost_retransmit` (RFC 8985's rule): 0 is lost and fast-retransmitted when 12 000 bytes
/// had been sent; SACKs then report more than (DupThresh − 1)·SMSS of the data sent after it
/// (12 000..16 000) but not 0 itself: its retransmission was lost, and goes again at once,
/// timed from now. RFC 6675 as written (the default) leaves it to the timer.
#[test]
fn a_lost_retransmission_is_found_by_later_sacks_and_sent_again() {
    let run = |lost_retransmit: bool| {
        let mut s = sack_sender_with(10, &TcpParams { lost_retransmit, ..Default::default() });
        assert_eq!(drain(&mut s, 0).len(), 10);
        let t = 100 * MS;
        s.on_packet(t, &sack_ack(0, &[(1000, 2000)]));
        s.on_packet(t, &sack_ack(0, &[(1000, 3000)]));
        assert_eq!(offs(&drain(&mut s, t)), vec![10_000, 11_000], "Limited Transmit");
        s.on_packet(t, &sack_ack(0, &[(1000, 4000)]));
        assert_eq!(offs(&drain(&mut s, t)), vec![0], "fast retransmit, sent with snd_max 12 000");
        s.on_packet(t, &sack_ack(0, &[(1000, 12_000)]));
        assert_eq!(offs(&drain(&mut s, t)), vec![12_000, 13_000, 14_000, 15_000], "pipe 1000, cwnd 5000");
        let t = 300 * MS;
        s.on_packet(t, &sack_ack(0, &[(1000, 15_000)]));
        let again = offs(&drain(&mut s, t));
        (s, again)
    };
    let (s, again) = run(true);
    assert_eq!(again.first(), Some(&0), "3000 bytes sent after it SACKed: lost");
    assert_eq!(s.stats().retransmits, 2);
    assert_eq!(s.rto_deadline(), Some(300 * MS + s.rto()), "timed from now");
    let (s, again) = run(false);
    assert!(!again.contains(&0), "RFC 6675 repairs a hole once");
    assert_eq!(s.stats().retransmits, 1);
}

#[test]
fn go_back_n_after_a_timeout_skips_sacked_data() {
    let mut c = cfg();
    c.initial_window = Some(6);
    c.sack = true;
    let mut s = sender(&c, Recovery::NewReno);
    assert_eq!(drain(&mut s, 0).len(), 6);
    // 0, 2000, 3000 and 4000 lost: two duplicates only, so the timer repairs it.
    s.on_packet(100 * MS, &sack_ack(0, &[(1000, 2000)]));
    s.on_packet(100 * MS, &sack_ack(0, &[(5000, 6000), (1000, 2000)]));
    assert!(!s.in_recovery());
    let deadline = s.rto_deadline().unwrap();
    s.on_timeout(deadline);
    assert_eq!(offs(&drain(&mut s, deadline)), vec![0]);
    // The retransmission fills 0..2000 (its ACK echoes its timestamp: not spurious); slow
    // start from one segment resends the holes.
    let t = deadline + 100 * MS;
    s.on_packet(t, &sack_ack_ts(2000, deadline, &[(5000, 6000)]));
    assert_eq!(offs(&drain(&mut s, t)), vec![2000, 3000]);
    // Go-back-N reaches the SACKed 5000 and steps over it.
    s.on_packet(t + 100 * MS, &sack_ack_ts(4000, t, &[(5000, 6000)]));
    assert_eq!(offs(&drain(&mut s, t + 100 * MS)), vec![4000, 6000]);
    assert_eq!(s.stats().retransmits, 4, "0, 2000, 3000, 4000; never 1000 or 5000");
}

#[test]
fn limited_transmit_sends_one_new_segment_on_each_of_the_first_two_dupacks() {
    let mut c = cfg();
    c.initial_window = Some(4);
    let mut s = TcpSender::new(&c, Recovery::NewReno, &TcpParams::default());
    s.start(0);
    assert_eq!(drain(&mut s, 0).len(), 4);
    // The first segment is lost: three duplicates come back for the others.
    s.on_packet(100 * MS, &ack(0, 0, 0));
    assert_eq!(offs(&drain(&mut s, 100 * MS)), vec![4000], "dupack 1: one new segment");
    s.on_packet(101 * MS, &ack(0, 0, 0));
    assert_eq!(offs(&drain(&mut s, 101 * MS)), vec![5000], "dupack 2: one more");
    assert_eq!(cwnd(&s), 4000.0, "cwnd itself is unchanged");
    s.on_packet(102 * MS, &ack(0, 0, 0));
    assert!(s.in_recovery());
    // RFC 5681 §3.2 step 2: FlightSize 4000 before Limited Transmit, halved.
    assert_eq!(s.ssthresh(), 2000.0);
    assert_eq!(offs(&drain(&mut s, 102 * MS)), vec![0], "fast retransmit");
    // Without it, a window of 4 with two losses would have only one duplicate in reserve.
    let mut s = sender(&c, Recovery::NewReno);
    drain(&mut s, 0);
    s.on_packet(100 * MS, &ack(0, 0, 0));
    assert!(drain(&mut s, 100 * MS).is_empty());
}

#[test]
fn fast_retransmit_on_third_dupack_and_inflation() {
    let mut s = into_recovery(Recovery::NewReno);
    // ssthresh = max(FlightSize/2, 2 SMSS) = 11 000/2; cwnd = ssthresh + 3 SMSS.
    assert_eq!(s.ssthresh(), 5500.0);
    assert_eq!(cwnd(&s), 8500.0);
    let p = drain(&mut s, 102 * MS);
    assert_eq!(offs(&p), vec![1000], "retransmit the segment at snd_una, outside the window");
    assert_eq!(s.stats().retransmits, 1);
    // Each further duplicate inflates by SMSS; new data once flight + SMSS <= cwnd.
    for (i, want) in [(4, 9500.0), (5, 10_500.0), (6, 11_500.0)] {
        s.on_packet(103 * MS, &ack(1000, 0, 0));
        assert_eq!(cwnd(&s), want, "dupack {i}");
        assert!(drain(&mut s, 103 * MS).is_empty());
    }
    s.on_packet(104 * MS, &ack(1000, 0, 0));
    assert_eq!(cwnd(&s), 12_500.0);
    assert_eq!(offs(&drain(&mut s, 104 * MS)), vec![12_000]);
}

#[test]
fn newreno_partial_ack_then_full_ack() {
    let mut s = into_recovery(Recovery::NewReno);
    drain(&mut s, 102 * MS);
    let rto0 = s.rto_deadline().unwrap();
    // Partial ACK (a second hole at 4000): deflate 8500 - 3000 + 1000, retransmit 4000,
    // restart the timer (first partial ACK only).
    s.on_packet(200 * MS, &ack(4000, 0, 0));
    assert!(s.in_recovery());
    assert_eq!(cwnd(&s), 6500.0);
    assert_eq!(offs(&drain(&mut s, 200 * MS)), vec![4000]);
    assert_eq!(s.rto_deadline(), Some(200 * MS + s.rto()));
    assert!(s.rto_deadline().unwrap() > rto0);
    // A second partial ACK does not restart the timer.
    s.on_packet(210 * MS, &ack(5000, 0, 0));
    assert_eq!(offs(&drain(&mut s, 210 * MS)), vec![5000]);
    assert_eq!(s.rto_deadline(), Some(200 * MS + s.rto()));
    // Karn: ACKs covering retransmitted data gave no RTT sample (only the first ACK did).
    assert_eq!(s.stats().srtt, 100 * MS);
    // Full ACK (≥ recover = 12 000) leaving nothing outstanding:
    // cwnd = min(ssthresh 5500, max(0, SMSS) + SMSS) = 2000.
    s.on_packet(300 * MS, &ack(12_000, 0, 0));
    assert!(!s.in_recovery());
    assert_eq!(cwnd(&s), 2000.0);
    assert_eq!(s.rto_deadline(), None, "all data acknowledged");
    assert_eq!(offs(&drain(&mut s, 300 * MS)), vec![12_000, 13_000]);
    assert_eq!(s.stats().retransmits, 3);
}

#[test]
fn newreno_full_ack_with_data_outstanding() {
    let mut s = into_recovery(Recovery::NewReno);
    drain(&mut s, 102 * MS);
    for _ in 0..4 {
        s.on_packet(103 * MS, &ack(1000, 0, 0)); // cwnd 12 500, sends 12 000
    }
    assert_eq!(offs(&drain(&mut s, 103 * MS)), vec![12_000]);
    s.on_packet(200 * MS, &ack(12_000, 0, 0));
    // FlightSize after the ACK is 1000: min(5500, 1000 + 1000).
    assert_eq!(cwnd(&s), 2000.0);
}

#[test]
fn reno_exits_at_first_new_ack_then_times_out() {
    let mut s = into_recovery(Recovery::Reno);
    drain(&mut s, 102 * MS);
    s.on_packet(200 * MS, &ack(4000, 0, 0));
    assert!(!s.in_recovery());
    assert_eq!(cwnd(&s), 5500.0, "cwnd = ssthresh");
    assert!(drain(&mut s, 200 * MS).is_empty(), "no hole retransmission, flight 8000 > cwnd");
    // Three more duplicates below `recover` do not start another fast retransmit.
    for _ in 0..3 {
        s.on_packet(210 * MS, &ack(4000, 0, 0));
    }
    assert!(!s.in_recovery());
    assert!(drain(&mut s, 210 * MS).is_empty());
    // The hole is recovered by the timer.
    let t = s.poll_timeout().unwrap();
    s.on_timeout(t);
    assert_eq!(s.stats().timeouts, 1);
    assert_eq!(offs(&drain(&mut s, t)), vec![4000]);
}

#[test]
fn rto_go_back_n_backoff_and_karn() {
    let mut s = sender(&cfg(), Recovery::NewReno);
    assert_eq!(drain(&mut s, 0).len(), 4);
    // Initial RTO 1 s; an early (lazy) timer fire does nothing.
    assert_eq!(s.poll_timeout(), Some(NS_PER_SEC));
    s.on_timeout(500 * MS);
    assert_eq!(s.stats().timeouts, 0);
    s.on_timeout(NS_PER_SEC);
    assert_eq!(s.stats().timeouts, 1);
    assert_eq!((s.ssthresh(), cwnd(&s)), (2000.0, 1000.0));
    assert_eq!(s.snd_nxt(), 0);
    let p = drain(&mut s, NS_PER_SEC);
    assert_eq!(offs(&p), vec![0], "go-back-N from snd_una, one segment");
    assert_eq!(s.poll_timeout(), Some(3 * NS_PER_SEC), "backed off to 2 s");
    // Second expiry: ssthresh held, RTO 4 s.
    s.on_timeout(3 * NS_PER_SEC);
    assert_eq!((s.ssthresh(), cwnd(&s)), (2000.0, 1000.0));
    assert_eq!(offs(&drain(&mut s, 3 * NS_PER_SEC)), vec![0]);
    assert_eq!(s.poll_timeout(), Some(7 * NS_PER_SEC));
    // The receiver had 0..2000: the ACK jumps; no RTT sample (Karn), RTO stays backed off.
    let t = 3 * NS_PER_SEC + 100 * MS;
    s.on_packet(t, &ack(2000, 3 * NS_PER_SEC, 0));
    assert_eq!(s.stats().srtt, 0);
    assert_eq!(s.rto(), 4 * NS_PER_SEC);
    assert_eq!(s.poll_timeout(), Some(t + 4 * NS_PER_SEC));
    assert_eq!(cwnd(&s), 2000.0);
    // Go-back-N resends 2000 and 3000 (retransmissions), nothing beyond the window.
    assert_eq!(offs(&drain(&mut s, t)), vec![2000, 3000]);
    assert_eq!(s.stats().retransmits, 4);
    s.on_packet(t + 100 * MS, &ack(4000, t, 0));
    assert_eq!(s.stats().srtt, 0, "covers retransmitted bytes");
    // New data, then a clean ACK: a valid sample resets the back-off.
    let p = drain(&mut s, t + 100 * MS);
    assert_eq!(cwnd(&s), 2500.0, "cwnd reached ssthresh: congestion avoidance, 2000 + 1000²/2000");
    assert_eq!(offs(&p), vec![4000, 5000]);
    s.on_packet(t + 200 * MS, &ack(5000, t + 100 * MS, 0));
    assert_eq!(s.stats().srtt, 100 * MS);
    assert_eq!(s.rto(), 300 * MS);
}

/// `rtt_samples = "once-per-rtt"` (ns-2's `rtt_active_`/`rtt_seq_`): only the ACK covering
/// the timed segment gives a sample, timed from its send; the next timed segment is the first
/// new one sent after that; a timeout stops the timing. Hand values (RFC 6298 §2.3): samples
/// 100 then 150 ms give SRTT 100 → 7/8·100 + 150/8 = 106.25 ms, RTTVAR 50 → 3/4·50 + 50/4 =
/// 50 ms, RTO 306.25 ms. Every ACK would instead have sampled 120, 130 and 140 ms in between.
#[test]
fn once_per_rtt_times_one_segment_per_round_trip() {
    let p = TcpParams { rtt_samples: RttSamples::OncePerRtt, ..Default::default() };
    let mut s = TcpSender::new(&cfg(), Recovery::NewReno, &p);
    s.start(0);
    assert_eq!(drain(&mut s, 0).len(), 4, "0..4000 at 0; 0..1000 timed");
    s.on_packet(100 * MS, &ack(1000, 0, 0));
    assert_eq!((s.stats().srtt, s.rto()), (100 * MS, 300 * MS));
    assert_eq!(offs(&drain(&mut s, 100 * MS)), vec![4000, 5000], "4000..5000 timed from 100 ms");
    for (t, a) in [(120, 2000), (130, 3000), (140, 4000)] {
        s.on_packet(t * MS, &ack(a, 0, 0));
        drain(&mut s, t * MS);
        assert_eq!((s.stats().srtt, s.rto()), (100 * MS, 300 * MS), "ACK {a}: not the timed segment");
    }
    s.on_packet(250 * MS, &ack(5000, 100 * MS, 0));
    assert_eq!((s.stats().srtt, s.rto()), (106_250_000, 306_250_000));
    // Every ACK (the default) samples the ACKs in between: 120 ms moves SRTT at once.
    let mut e = sender(&cfg(), Recovery::NewReno);
    drain(&mut e, 0);
    e.on_packet(100 * MS, &ack(1000, 0, 0));
    e.on_packet(120 * MS, &ack(2000, 0, 0));
    assert_eq!(e.stats().srtt, 102_500_000, "7/8·100 + 120/8");
    // A timeout stops the timing: the ACK of the segment timed before it gives no sample, the
    // first new segment after it is timed afresh.
    let mut s = TcpSender::new(&cfg(), Recovery::NewReno, &p);
    s.start(0);
    drain(&mut s, 0);
    s.on_packet(100 * MS, &ack(1000, 0, 0));
    drain(&mut s, 100 * MS); // 4000..5000 timed
    s.on_timeout(400 * MS);
    assert_eq!(offs(&drain(&mut s, 400 * MS)), vec![1000]);
    s.on_packet(450 * MS, &ack(6000, 400 * MS, 0)); // echoes the retransmission: not spurious
    assert_eq!(s.stats().srtt, 100 * MS, "covers the retransmission and the timing was stopped");
    assert_eq!(offs(&drain(&mut s, 450 * MS)), vec![6000, 7000], "6000..7000 timed from 450 ms");
    s.on_packet(530 * MS, &ack(7000, 450 * MS, 0));
    assert_eq!(s.stats().srtt, 100 * MS * 7 / 8 + 80 * MS / 8);
}

/// `sack_rtt` (QFCP's transport): the timed segment's first report gives its sample, a SACK
/// block included. Ten segments at 0, 0..1000 timed (sample 100 ms at 100 ms); 10 000..11 000
/// timed from 100 ms; 1000..2000 is lost and resent in a SACK recovery; a SACK block reports
/// 2000..11 000 at 210 ms: sample 110 ms, SRTT 7/8·100 + 110/8 = 101.25 ms. Without the option
/// the cumulative ACK of 11 000 covers the retransmission (Karn) and SRTT stays 100 ms.
#[test]
fn sack_rtt_samples_the_timed_segment_from_its_sack_block() {
    for on in [true, false] {
        let p = TcpParams { rtt_samples: RttSamples::OncePerRtt, sack_rtt: on, ..Default::default() };
        let mut s = sack_sender_with(10, &p);
        assert_eq!(drain(&mut s, 0).len(), 10);
        s.on_packet(100 * MS, &ack(1000, 0, 0));
        assert_eq!(offs(&drain(&mut s, 100 * MS)), vec![10_000, 11_000], "10 000..11 000 timed");
        for (t, hi) in [(150, 3000), (151, 4000), (152, 5000)] {
            s.on_packet(t * MS, &sack_ack(1000, &[(2000, hi)]));
            drain(&mut s, t * MS);
        }
        assert!(s.in_recovery());
        s.on_packet(210 * MS, &sack_ack(1000, &[(2000, 11_000)]));
        drain(&mut s, 210 * MS);
        s.on_packet(260 * MS, &ack(11_000, 0, 0));
        let want = if on { 100 * MS * 7 / 8 + 110 * MS / 8 } else { 100 * MS };
        assert_eq!(s.stats().srtt, want, "sack_rtt {on}");
    }
}

/// Ten segments at t = 0, the first ACKed at 100 ms (two more go out), then the RTO at
/// 400 ms retransmits offset 1000 stamped 400 ms.
fn after_rto(params: &TcpParams) -> TcpSender {
    let mut c = cfg();
    c.initial_window = Some(10);
    let mut s = TcpSender::new(&c, Recovery::NewReno, params);
    s.start(0);
    assert_eq!(drain(&mut s, 0).len(), 10);
    s.on_packet(100 * MS, &ack(1000, 0, 0));
    assert_eq!(drain(&mut s, 100 * MS).len(), 2);
    assert_eq!(s.poll_timeout(), Some(400 * MS), "SRTT 100 ms + max(G, 4·50 ms)");
    s.on_timeout(400 * MS);
    assert_eq!((cwnd(&s), s.ssthresh()), (1000.0, 5500.0));
    let p = drain(&mut s, 400 * MS);
    assert_eq!(offs(&p), vec![1000]);
    assert_eq!(p[0].tcp_hdr().unwrap().ts_val, 400 * MS);
    s
}

#[test]
fn eifel_undoes_a_spurious_timeout_and_resumes_with_new_data() {
    let mut s = after_rto(&TcpParams::default());
    // The ACK echoes the original transmission (sent at 0, before the retransmission at
    // 400 ms): the segments were only delayed (RFC 3522).
    s.on_packet(450 * MS, &ack(3000, 0, 0));
    assert_eq!((s.stats().timeouts, s.stats().spurious_timeouts), (1, 1));
    // Undo: cwnd 11 000 and ssthresh ∞ again, then slow start's + SMSS for this ACK.
    assert_eq!((cwnd(&s), s.ssthresh()), (12_000.0, f64::INFINITY));
    // No go-back-N: flight 12 000 − 3000 leaves room for three new segments.
    assert_eq!(offs(&drain(&mut s, 450 * MS)), vec![12_000, 13_000, 14_000]);
    assert_eq!(s.stats().retransmits, 1);
    // The echoed timestamp names the original, so the 450 ms sample is taken (and the
    // back-off dropped): SRTT (7·100 + 450)/8.
    assert_eq!(s.stats().srtt, 143_750_000);
    // Later ACKs do not undo again.
    s.on_packet(460 * MS, &ack(4000, 0, 0));
    assert_eq!(s.stats().spurious_timeouts, 1);
}

#[test]
fn after_an_undo_a_real_loss_gets_fast_retransmit_and_ece_is_heard() {
    let mut c = cfg();
    c.initial_window = Some(10);
    c.ecn = true;
    let mut s = sender(&c, Recovery::NewReno);
    drain(&mut s, 0);
    s.on_packet(100 * MS, &ack(1000, 0, 0));
    drain(&mut s, 100 * MS);
    s.on_timeout(400 * MS);
    assert_eq!(offs(&drain(&mut s, 400 * MS)), vec![1000]);
    s.on_packet(450 * MS, &ack(3000, 0, 0));
    assert_eq!(s.stats().spurious_timeouts, 1);
    drain(&mut s, 450 * MS);
    // ECE on the restored window is a congestion signal again.
    s.on_packet(451 * MS, &ack(4000, 0, flags::ECE));
    assert_eq!(s.ecn_reactions(), 1);
    // A loss in the restored window: three duplicates start fast retransmit (the timeout's
    // `recover` was put back).
    for i in 0..3 {
        s.on_packet(452 * MS + i, &ack(4000, 0, 0));
    }
    assert!(s.in_recovery());
    // An ACK that signals congestion itself is never the occasion of an undo.
    let mut s = sender(&c, Recovery::NewReno);
    drain(&mut s, 0);
    s.on_packet(100 * MS, &ack(1000, 0, 0));
    drain(&mut s, 100 * MS);
    s.on_timeout(400 * MS);
    drain(&mut s, 400 * MS);
    s.on_packet(450 * MS, &ack(3000, 0, flags::ECE));
    assert_eq!(s.stats().spurious_timeouts, 0);
}

#[test]
fn a_timeout_inside_fast_recovery_is_never_undone() {
    let mut s = into_recovery(Recovery::NewReno);
    drain(&mut s, 102 * MS);
    // Partial ACK: the hole at 4000 is retransmitted at 200 ms.
    s.on_packet(200 * MS, &ack(4000, 0, 0));
    assert_eq!(offs(&drain(&mut s, 200 * MS)), vec![4000]);
    // The impatient timer fires before that retransmission is acknowledged: go-back-N.
    let t = s.rto_deadline().unwrap();
    s.on_timeout(t);
    assert_eq!(offs(&drain(&mut s, t)), vec![4000]);
    // The ACK for the 200 ms retransmission predates the timeout's, but the timeout is
    // NewReno's exit from one hole per RTT: no undo, go-back-N goes on.
    s.on_packet(t + 10 * MS, &ack(5000, 200 * MS, 0));
    assert_eq!(s.stats().spurious_timeouts, 0);
    assert!(!s.in_recovery());
    assert_eq!(cwnd(&s), 2000.0);
    assert_eq!(offs(&drain(&mut s, t + 10 * MS)), vec![5000, 6000]);
}

/// Issue 22 (a): a timeout during fast recovery. Recovery began with ssthresh 5500 (cwnd 11 000
/// halved; inflated to 8500); a partial ACK to 4000 leaves 8000 bytes in flight when the timer
/// fires. ns-2 halves its window, which during recovery is that ssthresh (2750); Linux keeps it
/// (5500); RFC 5681 read literally halves the inflated flight (4000, racc's rule before, with
/// which the flow slow-started back toward the window that had overflowed the queue).
#[test]
fn a_timeout_inside_fast_recovery_halves_the_recoverys_window() {
    for (rule, want) in
        [(RtoInRecovery::HalveWindow, 2750.0), (RtoInRecovery::Keep, 5500.0), (RtoInRecovery::HalveFlight, 4000.0)]
    {
        let params = TcpParams { limited_transmit: false, rto_in_recovery: rule, ..Default::default() };
        let mut s = into_recovery_with(Recovery::NewReno, &params);
        assert_eq!((s.ssthresh(), cwnd(&s)), (5500.0, 8500.0));
        drain(&mut s, 102 * MS);
        s.on_packet(200 * MS, &ack(4000, 0, 0));
        drain(&mut s, 200 * MS);
        let t = s.rto_deadline().unwrap();
        s.on_timeout(t);
        assert_eq!((s.ssthresh(), cwnd(&s)), (want, 1000.0), "{rule:?}");
        assert!(!s.in_recovery());
    }
    // Outside recovery the rule does not apply: a timeout halves the window (ssthresh_from).
    let mut s = after_rto(&TcpParams { rto_in_recovery: RtoInRecovery::Keep, ..Default::default() });
    assert_eq!(s.ssthresh(), 5500.0, "11 000 / 2");
    s.on_packet(450 * MS, &ack(3000, 400 * MS, 0));
}

/// Issue 22 (c): TCP's halving halves cwnd (ns-2, Linux) or the FlightSize (RFC 5681). They
/// differ when the window is not full: 10 segments sent with cwnd 20 000 (IW 20, 10 000 B of
/// data offered), the first ACKed (cwnd 21 000, flight 9000), three duplicates.
#[test]
fn halving_from_the_window_or_from_the_flight() {
    for (from, want) in [(SsthreshFrom::Cwnd, 10_500.0), (SsthreshFrom::Flight, 4500.0)] {
        let mut c = cfg();
        c.initial_window = Some(20);
        c.size_bytes = Some(10_000);
        let params = TcpParams { limited_transmit: false, ssthresh_from: from, ..Default::default() };
        let mut s = TcpSender::new(&c, Recovery::NewReno, &params);
        s.start(0);
        assert_eq!(drain(&mut s, 0).len(), 10);
        s.on_packet(100 * MS, &ack(1000, 0, 0));
        for _ in 0..3 {
            s.on_packet(101 * MS, &ack(1000, 0, 0));
        }
        assert!(s.in_recovery());
        assert_eq!((s.ssthresh(), cwnd(&s)), (want, want + 3000.0), "{from:?}");
    }
}

/// Issue 22 (b), RFC 6582 §3.2 step 1: after a timeout, `recover` is the highest byte sent
/// (12 000 exclusive here), and only duplicates of an ACK covering *more* than it start fast
/// retransmit; racc's rule before (`at`) also took an ACK reaching it exactly.
#[test]
fn fast_retransmit_needs_an_ack_beyond_recover() {
    for (check, at_recover, beyond) in [(RecoverCheck::Beyond, false, true), (RecoverCheck::At, true, true)] {
        let params = TcpParams { spurious_rto: SpuriousRto::Off, recover_check: check, ..Default::default() };
        let mut s = after_rto(&params);
        // The go-back-N repairs everything the timeout found outstanding: ACK 12 000 = recover.
        s.on_packet(450 * MS, &ack(12_000, 400 * MS, 0));
        assert_eq!(offs(&drain(&mut s, 450 * MS)), vec![12_000, 13_000]);
        for _ in 0..3 {
            s.on_packet(460 * MS, &ack(12_000, 400 * MS, 0));
        }
        assert_eq!(s.in_recovery(), at_recover, "{check:?}: three duplicates of ACK = recover");
        // One byte beyond recover: the next loss is news.
        let mut s = after_rto(&params);
        s.on_packet(450 * MS, &ack(12_000, 400 * MS, 0));
        drain(&mut s, 450 * MS);
        s.on_packet(455 * MS, &ack(12_001, 400 * MS, 0));
        drain(&mut s, 455 * MS);
        for _ in 0..3 {
            s.on_packet(460 * MS, &ack(12_001, 400 * MS, 0));
        }
        assert_eq!(s.in_recovery(), beyond, "{check:?}: three duplicates of ACK = recover + 1");
    }
}

#[test]
fn a_genuine_loss_or_eifel_off_keeps_the_timeout() {
    // The ACK echoes the retransmission: the original was lost.
    let mut s = after_rto(&TcpParams::default());
    s.on_packet(450 * MS, &ack(3000, 400 * MS, 0));
    assert_eq!(s.stats().spurious_timeouts, 0);
    assert_eq!(cwnd(&s), 2000.0, "slow start from one segment");
    assert_eq!(offs(&drain(&mut s, 450 * MS)), vec![3000, 4000], "go-back-N");
    // Detection off (ns-2): the same late original ACK leaves the timeout's reduction.
    let mut s = after_rto(&TcpParams { spurious_rto: SpuriousRto::Off, ..Default::default() });
    s.on_packet(450 * MS, &ack(3000, 0, 0));
    assert_eq!((s.stats().spurious_timeouts, cwnd(&s)), (0, 2000.0));
    assert_eq!(offs(&drain(&mut s, 450 * MS)), vec![3000, 4000]);
    assert_eq!(s.stats().retransmits, 3);
}

#[test]
fn handshake_first_rtt_sample_and_syn_retransmission() {
    let mut c = cfg();
    c.handshake = true;
    let mut s = sender(&c, Recovery::NewReno);
    let p = drain(&mut s, 0);
    assert_eq!(p.len(), 1);
    assert_eq!((p[0].kind, p[0].size), (Kind::Syn, 40));
    assert_eq!(p[0].tcp_hdr().unwrap().seq, ISN - 1);
    // The SYN-ACK after 80 ms gives SRTT 80 ms, RTO max(80 + 160, 200) = 240 ms.
    let sa = TcpHeader { ack: ISN, flags: flags::SYN | flags::ACK, ts_ecr: 0, ..Default::default() };
    s.on_packet(80 * MS, &Packet::tcp(7, Kind::SynAck, 40, 0, sa));
    assert_eq!(s.stats().srtt, 80 * MS);
    assert_eq!(s.rto(), 240 * MS);
    assert_eq!(drain(&mut s, 80 * MS).len(), 4);

    // Lost SYN: retransmitted on the RTO; no sample from the SYN-ACK (Karn); IW = 1 SMSS.
    let mut s = sender(&c, Recovery::NewReno);
    drain(&mut s, 0);
    s.on_timeout(NS_PER_SEC);
    let p = drain(&mut s, NS_PER_SEC);
    assert_eq!((p.len(), p[0].kind), (1, Kind::Syn));
    assert_eq!(s.poll_timeout(), Some(3 * NS_PER_SEC));
    s.on_packet(NS_PER_SEC + 80 * MS, &Packet::tcp(7, Kind::SynAck, 40, 0, sa));
    assert_eq!(s.stats().srtt, 0);
    assert_eq!(s.stats().timeouts, 1);
    assert_eq!(s.poll_timeout(), None);
    assert_eq!(drain(&mut s, NS_PER_SEC + 80 * MS).len(), 1);
    // A duplicate SYN-ACK changes nothing.
    s.on_packet(NS_PER_SEC + 90 * MS, &Packet::tcp(7, Kind::SynAck, 40, 0, sa));
    assert_eq!(s.snd_nxt(), 1000);
}

#[test]
fn ecn_reaction_once_per_window_and_cwr() {
    let mut c = cfg();
    c.ecn = true;
    c.initial_window = Some(10);
    let mut s = sender(&c, Recovery::NewReno);
    let p = drain(&mut s, 0);
    assert!(p.iter().all(|p| p.ecn == ecn::ECT0));
    // ECE: halve like a loss (the window after the ACK, 11 000 → 5500; ns-2 and Linux halve
    // cwnd, RFC 5681's FlightSize 9000 would give 4500), no retransmission.
    s.on_packet(100 * MS, &ack(1000, 0, flags::ECE));
    assert_eq!(s.ecn_reactions(), 1);
    assert_eq!((s.ssthresh(), cwnd(&s)), (5500.0, 5500.0));
    assert!(drain(&mut s, 100 * MS).is_empty());
    assert_eq!(s.stats().retransmits, 0);
    // More ECE within the same window (acks ≤ 10 000): ignored.
    for a in (2000..=6000).step_by(1000) {
        s.on_packet(101 * MS, &ack(a, 0, flags::ECE));
    }
    assert_eq!(s.ecn_reactions(), 1);
    // The first new data packet carries CWR, later ones do not.
    let p = drain(&mut s, 101 * MS);
    assert!(!p.is_empty());
    assert_eq!(offs(&p)[0], 10_000);
    assert!(p[0].tcp_hdr().unwrap().flags & flags::CWR != 0);
    assert!(p[1..].iter().all(|p| p.tcp_hdr().unwrap().flags & flags::CWR == 0));
    // ECE on an ACK beyond the reacted window: a new reaction.
    s.on_packet(200 * MS, &ack(11_000, 0, flags::ECE));
    assert_eq!(s.ecn_reactions(), 2);
}

#[test]
fn ecn_retransmissions_are_not_ect_and_ecn_needs_syn_ack_agreement() {
    let mut c = cfg();
    c.ecn = true;
    let mut s = sender(&c, Recovery::NewReno);
    drain(&mut s, 0);
    s.on_timeout(NS_PER_SEC);
    let p = drain(&mut s, NS_PER_SEC);
    assert_eq!(p[0].ecn, ecn::NOT_ECT);
    // Handshake: SYN asks with ECE|CWR; a SYN-ACK without ECE leaves ECN off.
    c.handshake = true;
    let mut s = sender(&c, Recovery::NewReno);
    let syn = drain(&mut s, 0);
    assert_eq!(syn[0].tcp_hdr().unwrap().flags, flags::SYN | flags::ECE | flags::CWR);
    let sa = TcpHeader { ack: ISN, flags: flags::SYN | flags::ACK, ..Default::default() };
    s.on_packet(MS, &Packet::tcp(7, Kind::SynAck, 40, 0, sa));
    assert!(drain(&mut s, MS).iter().all(|p| p.ecn == ecn::NOT_ECT));
}

#[test]
fn finite_flow_done_and_stop() {
    let mut c = cfg();
    c.size_bytes = Some(2500);
    let mut s = sender(&c, Recovery::NewReno);
    let p = drain(&mut s, 0);
    assert_eq!(p.iter().map(|p| p.payload).collect::<Vec<_>>(), vec![1000, 1000, 500]);
    assert_eq!(p[2].size, 540);
    s.on_packet(MS, &ack(2000, 0, 0));
    assert!(!s.stats().done);
    s.on_packet(MS, &ack(2500, 0, 0));
    assert!(s.stats().done);
    assert_eq!(s.stats().bytes, 2500);
    assert_eq!(s.poll_timeout(), None);
    // Unbounded flow: after stop nothing new, but the outstanding data is still recovered.
    let mut s = sender(&cfg(), Recovery::NewReno);
    drain(&mut s, 0);
    s.stop(MS);
    s.on_packet(10 * MS, &ack(1000, 0, 0));
    assert!(drain(&mut s, 10 * MS).is_empty());
    s.on_timeout(10 * MS + s.rto());
    assert_eq!(offs(&drain(&mut s, 2 * NS_PER_SEC)), vec![1000]);
    assert!(!s.stats().done);
}

/// The `CongestionControl` hooks a test controller hands to the NewReno controller in its
/// field 0 unchanged.
macro_rules! newreno_rules {
    () => {
        fn window(&self) -> f64 {
            self.0.window()
        }
        fn set_window(&mut self, w: f64, s: f64) {
            self.0.set_window(w, s)
        }
        fn on_congestion(&mut self, sig: Signal, c: &SenderCtx) -> Response {
            self.0.on_congestion(sig, c)
        }
    };
}

/// A controller that paces, to check the transport honours `pacing_rate`.
struct Paced(NewRenoWindow);
impl CongestionControl for Paced {
    newreno_rules!();
    fn pacing_rate(&self) -> Option<f64> {
        Some(1_040_000.0) // one 1040-byte packet per ms
    }
    fn header_bytes(&self) -> u32 {
        20
    }
    fn on_send(&mut self, pkt: &mut Packet, ctx: &SenderCtx) {
        if pkt.kind == Kind::Data {
            pkt.cong = crate::packet::CongHeader::Xcp {
                rtt_us: 0,
                cwnd: self.0.window() as u32,
                feedback: f32::INFINITY,
                reverse_feedback: 0.0,
            };
            assert_eq!(ctx.mss, 980);
        }
    }
    fn on_ack(&mut self, a: &Ack<'_>, c: &SenderCtx) {
        self.0.on_ack(a, c)
    }
}

/// NewReno's rules, recording each new ACK's `reported_pkts`.
struct ReportedRecorder(NewRenoWindow, std::sync::Arc<std::sync::Mutex<Vec<f64>>>);
impl CongestionControl for ReportedRecorder {
    newreno_rules!();
    fn on_ack(&mut self, a: &Ack<'_>, c: &SenderCtx) {
        if !a.is_duplicate() {
            self.1.lock().unwrap().push(a.reported_pkts);
        }
        self.0.on_ack(a, c)
    }
}

#[test]
fn new_acks_see_the_duplicates_that_already_reported_their_packets() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut c = cfg();
    c.initial_window = Some(5);
    let w = ReportedRecorder(NewRenoWindow::new(&c, 1000), seen.clone());
    let params = TcpParams { limited_transmit: false, ..Default::default() };
    let mut s = TcpSender::with_controller(&c, Recovery::NewReno, &params, Box::new(w));
    s.start(0);
    drain(&mut s, 0);
    // Segment 0 lost, 1000..4999 arrive: two duplicates, then the timer (a timeout does
    // not forget them), then the ACK of everything once 0 is resent.
    s.on_packet(100 * MS, &ack(0, 0, 0));
    s.on_packet(100 * MS, &ack(0, 0, 0));
    let t = s.rto_deadline().unwrap();
    s.on_timeout(t);
    drain(&mut s, t);
    s.on_packet(t + 100 * MS, &ack(5000, t, 0));
    assert_eq!(*seen.lock().unwrap(), vec![3.0], "five packets covered, two already reported");
    // The count is spent: the next plain ACK reports its packet afresh.
    drain(&mut s, t + 100 * MS);
    s.on_packet(t + 200 * MS, &ack(6000, t, 0));
    assert_eq!(*seen.lock().unwrap(), vec![3.0, 1.0]);
}

#[test]
fn window_below_one_mss_still_sends_one_segment() {
    let c = cfg();
    let w = NewRenoWindow::with(10.0, f64::INFINITY, 1000);
    let mut s = TcpSender::with_controller(&c, Recovery::NewReno, &TcpParams::default(), Box::new(w));
    s.start(0);
    assert_eq!(offs(&drain(&mut s, 0)), vec![0]);
}

#[test]
fn plugged_window_paces_and_adds_header_bytes() {
    let c = cfg();
    let w = Paced(NewRenoWindow::new(&c, mss_for(&c, 20)));
    let mut s = TcpSender::with_controller(&c, Recovery::NewReno, &TcpParams::default(), Box::new(w));
    s.start(0);
    assert_eq!(s.mss(), 980);
    let p = drain(&mut s, 0);
    assert_eq!(p.len(), 1, "paced: one packet now");
    assert_eq!((p[0].payload, p[0].size), (980, 1040), "full packet stays packet_size on the wire");
    assert_eq!(s.poll_timeout(), Some(MS));
    assert!(drain(&mut s, MS - 1).is_empty());
    assert_eq!(drain(&mut s, MS).len(), 1);
    assert_eq!(s.stats().rate_bps, 8_320_000.0, "1.04 MB/s in bits per second");
}

/// ns-2's `overhead_` (issue 12 item 4): with `send_jitter` each window-released segment waits
/// a uniform [0, 2 ms) after the previous one could go, one at a time; the same seed gives the
/// same times, another seed others; off, all four IW segments leave at once.
#[test]
fn send_jitter_delays_each_segment_by_a_seeded_random_wait() {
    let times = |seed: u64, jitter: f64| {
        let mut c = cfg();
        c.seed = seed;
        let mut s = TcpSender::new(&c, Recovery::NewReno, &TcpParams { send_jitter: jitter, ..Default::default() });
        s.start(0);
        let mut out = Vec::new();
        let mut now = 0;
        while out.len() < 4 {
            for p in drain(&mut s, now) {
                out.push((now, offs(&[p])[0]));
            }
            now = s.poll_timeout().expect("a send or the RTO is due");
        }
        out
    };
    assert_eq!(times(1, 0.0), vec![(0, 0), (0, 1000), (0, 2000), (0, 3000)]);
    let a = times(1, 0.002);
    assert_eq!(a.iter().map(|&(_, o)| o).collect::<Vec<_>>(), vec![0, 1000, 2000, 3000], "in order");
    let mut prev = 0;
    for &(t, _) in &a {
        assert!(t >= prev && t - prev < 2 * MS, "{a:?}");
        prev = t;
    }
    assert!(a[3].0 > 0, "{a:?}");
    assert_eq!(a, times(1, 0.002), "deterministic");
    assert_ne!(a, times(2, 0.002), "another seed, other waits");
    let e = TcpParams { send_jitter: -0.1, ..Default::default() }.validate().unwrap_err();
    assert_eq!(e.key, "send_jitter");
}

/// A rate-based controller: an infinite window, a rate it can be told, a REF probe whenever
/// asked, a FIN at the end.
struct RateOnly {
    rate: std::sync::Arc<std::sync::Mutex<f64>>,
    probe: bool,
}
impl CongestionControl for RateOnly {
    fn window(&self) -> f64 {
        f64::INFINITY
    }
    fn set_window(&mut self, _w: f64, _s: f64) {}
    fn on_ack(&mut self, _a: &Ack<'_>, _c: &SenderCtx) {}
    fn on_congestion(&mut self, _s: Signal, _c: &SenderCtx) -> Response {
        Response::Keep
    }
    fn pacing_rate(&self) -> Option<f64> {
        Some(*self.rate.lock().unwrap())
    }
    fn probes(&self) -> bool {
        true
    }
    fn probe_due(&mut self, _c: &SenderCtx) -> bool {
        std::mem::take(&mut self.probe)
    }
    fn announces_end(&self) -> bool {
        true
    }
}

#[test]
fn a_rate_change_moves_the_next_departure_at_once() {
    let mut c = cfg();
    c.size_bytes = Some(3000);
    let rate = std::sync::Arc::new(std::sync::Mutex::new(1_040.0)); // one packet per second
    let w = RateOnly { rate: rate.clone(), probe: true };
    let mut s = TcpSender::with_controller(&c, Recovery::NewReno, &TcpParams::default(), Box::new(w));
    s.start(0);
    let p = drain(&mut s, 0);
    assert_eq!(
        p.iter().map(|p| p.kind).collect::<Vec<_>>(),
        vec![Kind::Ref, Kind::Data],
        "probe, then one paced packet"
    );
    assert_eq!((p[0].payload, p[0].size), (0, 40));
    assert_eq!(s.poll_timeout(), Some(NS_PER_SEC), "next packet 1 s after the first at 1040 B/s");
    // The rate rises to 1 packet per ms before that packet goes: it is due at 1 ms, not 1 s.
    *rate.lock().unwrap() = 1_040_000.0;
    assert_eq!(s.poll_timeout(), Some(MS));
    assert_eq!(offs(&drain(&mut s, MS)), vec![1000]);
    assert_eq!(offs(&drain(&mut s, 2 * MS)), vec![2000]);
    assert_eq!(s.stats().cwnd_bytes, 0.0, "no window to report");
    // A REF answer is not a duplicate ACK, however many arrive.
    for _ in 0..4 {
        let mut r = ack(0, 0, 0);
        r.kind = Kind::Ref;
        s.on_packet(3 * MS, &r);
    }
    assert!(drain(&mut s, 3 * MS).is_empty(), "no fast retransmit");
    // Everything acknowledged: one FIN, once.
    s.on_packet(4 * MS, &ack(3000, 0, 0));
    let fin = drain(&mut s, 4 * MS);
    assert_eq!(fin.iter().map(|p| p.kind).collect::<Vec<_>>(), vec![Kind::Fin]);
    assert!(drain(&mut s, 5 * MS).is_empty());
}

/// RFC 6582 §3.2 step 4's timer restart on partial ACKs: `first` (Impatient) restarts it on the
/// first only, `every` (Slow-but-Steady) on each, `sparse` on the first and on each that
/// covered more than dupthresh segments (an isolated hole). Partial ACKs covering 1, 1 and 5
/// segments.
#[test]
fn partial_ack_timer_restarts() {
    for (rule, want) in [
        (PartialAckTimer::First, [true, false, false]),
        (PartialAckTimer::Every, [true, true, true]),
        (PartialAckTimer::Sparse, [true, false, true]),
    ] {
        let params = TcpParams { limited_transmit: false, partial_ack_timer: rule, ..Default::default() };
        let mut s = into_recovery_with(Recovery::NewReno, &params);
        drain(&mut s, 102 * MS);
        for (i, (t, a)) in [(200, 2000), (300, 3000), (400, 8000)].into_iter().enumerate() {
            let before = s.poll_timeout();
            s.on_packet(t * MS, &ack(a, 0, 0));
            assert!(s.in_recovery());
            assert_eq!(s.poll_timeout() != before, want[i], "{rule:?}, partial ACK {i}");
            drain(&mut s, t * MS);
        }
    }
}
