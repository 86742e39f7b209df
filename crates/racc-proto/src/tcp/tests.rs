//! Closed-loop tests: a sender and a receiver wired back to back through a tiny in-test
//! network (two FIFO links with a rate, a fixed delay, an optional drop-tail buffer or CE
//! marking threshold, and chosen or random drops). Timers are fired early on every event to
//! check that endpoints ignore expiries that are not due.

use std::collections::VecDeque;

use super::*;
use crate::endpoint::EndpointStats;
use crate::packet::{ecn, Kind, Packet};
use crate::time::{tx_time, Time, NS_PER_MS, NS_PER_SEC};

const MS: Time = NS_PER_MS;

type DropFn = Box<dyn FnMut(&Packet) -> bool>;

struct Link {
    rate_bps: f64,
    delay: Time,
    busy_until: Time,
    /// Drop-tail limit in packets (backlog measured in serialisation time of full packets).
    buffer_pkts: Option<u32>,
    /// Mark CE on ECT packets that find at least this many packets queued.
    mark_above: Option<u32>,
    full_pkt: u32,
    q: VecDeque<(Time, Packet)>,
    drop: DropFn,
    sent: u64,
    delivered: u64,
    dropped: u64,
    marked: u64,
}

impl Link {
    fn new(rate_bps: f64, delay: Time, full_pkt: u32) -> Link {
        Link {
            rate_bps,
            delay,
            busy_until: 0,
            buffer_pkts: None,
            mark_above: None,
            full_pkt,
            q: VecDeque::new(),
            drop: Box::new(|_| false),
            sent: 0,
            delivered: 0,
            dropped: 0,
            marked: 0,
        }
    }

    fn send(&mut self, now: Time, mut p: Packet) {
        self.sent += 1;
        let backlog = (self.busy_until.saturating_sub(now) / tx_time(self.full_pkt, self.rate_bps)) as u32;
        if (self.drop)(&p) || self.buffer_pkts.is_some_and(|b| backlog >= b) {
            self.dropped += 1;
            return;
        }
        if self.mark_above.is_some_and(|k| backlog >= k) && p.is_ect() {
            p.set_visible_ecn(ecn::CE);
            self.marked += 1;
        }
        let done = now.max(self.busy_until) + tx_time(p.size, self.rate_bps);
        self.busy_until = done;
        self.q.push_back((done + self.delay, p));
    }

    fn next(&self) -> Option<Time> {
        self.q.front().map(|e| e.0)
    }

    fn pop_due(&mut self, now: Time) -> Option<Packet> {
        if self.next()? <= now {
            self.delivered += 1;
            self.q.pop_front().map(|e| e.1)
        } else {
            None
        }
    }
}

struct Run {
    s: TcpSender,
    r: TcpReceiver,
    fwd: Link,
    rev: Link,
    now: Time,
    /// Harness's own record of which payload bytes reached the receiver.
    seen: Vec<bool>,
    prefix: usize,
    acks_at_sender: u64,
    syns: u64,
}

impl Run {
    fn new(cfg: &FlowConfig, recovery: Recovery, rate_bps: f64, one_way: Time) -> Run {
        Run {
            s: TcpSender::new(cfg, recovery, &TcpParams::default()),
            r: TcpReceiver::new(cfg),
            fwd: Link::new(rate_bps, one_way, cfg.packet_size),
            rev: Link::new(rate_bps, one_way, cfg.packet_size),
            now: 0,
            seen: vec![false; cfg.size_bytes.unwrap_or(0) as usize],
            prefix: 0,
            acks_at_sender: 0,
            syns: 0,
        }
    }

    fn drain(&mut self) {
        // As an engine drains, the hint that ends it checked.
        for p in crate::endpoint::drain_into(&mut self.s, self.now) {
            assert_eq!(p.dir, crate::packet::Direction::Forward, "a sender emits on the data path");
            self.syns += (p.kind == Kind::Syn) as u64;
            self.fwd.send(self.now, p);
        }
        for p in crate::endpoint::drain_into(&mut self.r, self.now) {
            assert_eq!(p.dir, crate::packet::Direction::Return, "a receiver emits on the return path");
            self.rev.send(self.now, p);
        }
    }

    /// Deliver one forward packet, checking the receiver against the harness's reassembly.
    fn deliver_fwd(&mut self, p: Packet, isn: u32) {
        let before = self.r.stats().bytes;
        if p.kind == Kind::Data {
            // Flows here are < 4 GB: the offset is the wire distance from the ISN.
            let off = p.tcp_hdr().unwrap().seq.wrapping_sub(isn) as usize;
            for b in &mut self.seen[off..off + p.payload as usize] {
                *b = true;
            }
        }
        self.r.on_packet(self.now, &p);
        while self.prefix < self.seen.len() && self.seen[self.prefix] {
            self.prefix += 1;
        }
        assert_eq!(self.r.rcv_nxt(), self.prefix as u64, "receiver's in-order point matches the bytes that arrived");
        assert!(self.r.stats().bytes >= before, "in-order delivery never goes back");
    }

    /// Run until both ends are done and the links are empty, or `until`.
    fn run(&mut self, isn: u32, until: Time, stop_at: Option<Time>) {
        self.s.start(0);
        self.r.start(0);
        self.drain();
        loop {
            let cands = [
                self.fwd.next(),
                self.rev.next(),
                self.s.poll_timeout(),
                self.r.poll_timeout(),
                stop_at.filter(|&t| t > self.now),
            ];
            let Some(t) = cands.iter().flatten().min().copied() else { break };
            if t > until {
                break;
            }
            assert!(t >= self.now, "time goes forward");
            self.now = t;
            if stop_at == Some(t) {
                self.s.stop(t);
            }
            while let Some(p) = self.fwd.pop_due(t) {
                self.deliver_fwd(p, isn);
                self.drain();
            }
            while let Some(p) = self.rev.pop_due(t) {
                self.acks_at_sender += 1;
                self.s.on_packet(t, &p);
                self.drain();
            }
            // Lazy timers: fire both on every event; endpoints ignore what is not due.
            self.s.on_timeout(t);
            self.r.on_timeout(t);
            self.drain();
            if self.s.stats().done && self.r.stats().done && self.fwd.q.is_empty() && self.rev.q.is_empty() {
                break;
            }
        }
    }

    fn stats(&self) -> (EndpointStats, EndpointStats) {
        (self.s.stats(), self.r.stats())
    }
}

fn flow(size: u64, isn: u32) -> FlowConfig {
    let mut c = FlowConfig::new(1, 1040); // MSS 1000
    c.size_bytes = Some(size);
    c.isn = isn;
    c.handshake = true;
    c
}

/// Drop the first transmission of the data segments at these offsets.
fn drop_first_tx(isn: u32, offsets: &[u64]) -> DropFn {
    let mut left: Vec<u64> = offsets.to_vec();
    Box::new(move |p| {
        if p.kind != Kind::Data {
            return false;
        }
        let off = p.tcp_hdr().unwrap().seq.wrapping_sub(isn) as u64;
        match left.iter().position(|&o| o == off) {
            Some(i) => {
                left.swap_remove(i);
                true
            }
            None => false,
        }
    })
}

fn assert_complete(run: &Run, size: u64) {
    let (s, r) = run.stats();
    assert!(s.done && r.done, "sender {s:?} receiver {r:?}");
    assert_eq!((s.bytes, r.bytes), (size, size));
    assert!(run.seen.iter().all(|&b| b));
    // Conservation: every packet sent was delivered or dropped (links drained).
    for l in [&run.fwd, &run.rev] {
        assert!(l.q.is_empty());
        assert_eq!(l.sent, l.delivered + l.dropped);
    }
    assert_eq!(run.fwd.sent, s.data_pkts_sent + run.syns);
    assert_eq!(run.rev.sent, run.r.acks_sent() + run.syns);
}

#[test]
fn clean_transfer_across_the_wrap() {
    let isn = u32::MAX - 100_000;
    let size = 300_000;
    let mut run = Run::new(&flow(size, isn), Recovery::NewReno, 10e6, 10 * MS);
    run.run(isn, 60 * NS_PER_SEC, None);
    assert_complete(&run, size);
    let (s, _) = run.stats();
    assert_eq!((s.retransmits, s.timeouts), (0, 0));
    assert_eq!(s.data_pkts_sent, 300);
    // SRTT at least the propagation round trip plus two serialisations.
    assert!(s.srtt >= 20 * MS && s.srtt < 200 * MS, "{}", s.srtt);
    // 300 KB at 10 Mb/s is 0.25 s of serialisation; slow start adds a few RTTs.
    assert!(run.now < NS_PER_SEC, "{}", run.now);
}

#[test]
fn three_losses_in_one_window_newreno_recovers_without_timeout_reno_times_out() {
    let isn = u32::MAX - 30_000;
    let size = 200_000;
    let losses = [40_000, 43_000, 47_000];
    let mut c = flow(size, isn);
    c.initial_window = Some(30); // a window big enough for three holes and many dup ACKs

    let mut nr = Run::new(&c, Recovery::NewReno, 10e6, 10 * MS);
    nr.fwd.drop = drop_first_tx(isn, &losses);
    nr.run(isn, 60 * NS_PER_SEC, None);
    assert_complete(&nr, size);
    let (s, _) = nr.stats();
    assert_eq!((s.retransmits, s.timeouts), (3, 0), "one fast retransmit + two partial-ACK retransmissions");

    let mut reno = Run::new(&c, Recovery::Reno, 10e6, 10 * MS);
    reno.fwd.drop = drop_first_tx(isn, &losses);
    reno.run(isn, 60 * NS_PER_SEC, None);
    assert_complete(&reno, size);
    let (s, _) = reno.stats();
    assert!(s.timeouts >= 1, "Reno leaves later holes to the timer: {s:?}");
    assert!(reno.now > nr.now, "Reno finishes later ({} vs {})", reno.now, nr.now);
}

#[test]
fn lost_retransmission_lost_acks_and_lost_syn() {
    let isn = u32::MAX - 5;
    let size = 150_000;
    let c = flow(size, isn);
    let mut run = Run::new(&c, Recovery::NewReno, 10e6, 20 * MS);
    // 20 000 is lost twice (the fast retransmission too), 60 000 once; the SYN is lost once.
    let mut data_drop = drop_first_tx(isn, &[20_000, 20_000, 60_000]);
    let mut syn_lost = false;
    run.fwd.drop = Box::new(move |p| {
        if p.kind == Kind::Syn && !syn_lost {
            syn_lost = true;
            return true;
        }
        data_drop(p)
    });
    // Every 7th ACK lost.
    let mut n = 0u32;
    run.rev.drop = Box::new(move |p| {
        n += 1;
        if n == 7 {
            n = 0;
        }
        p.kind == Kind::Ack && n == 0
    });
    run.run(isn, 120 * NS_PER_SEC, None);
    let (s, _) = run.stats();
    assert!(s.done, "{s:?}");
    assert_eq!((s.bytes, run.r.stats().bytes), (size, size));
    assert!(s.timeouts >= 2, "the SYN and the lost retransmission need the timer: {s:?}");
    assert!(s.retransmits >= 3);
    assert_eq!(run.syns, 2);
}

/// A tiny deterministic generator for the random-loss runs.
struct XorShift(u64);
impl XorShift {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[test]
fn random_loss_and_drop_tail_many_seeds() {
    let size = 120_000;
    for seed in 1..=12u64 {
        for recovery in [Recovery::NewReno, Recovery::Reno] {
            for delayed in [false, true] {
                let isn = u32::MAX - (seed as u32 * 7919) % 60_000;
                let mut c = flow(size, isn);
                c.delayed_ack = delayed;
                c.handshake = seed % 2 == 0;
                let mut run = Run::new(&c, recovery, 5e6, 15 * MS);
                let mut g1 = XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                let mut g2 = XorShift(seed.wrapping_mul(0xC2B2_AE3D_27D4_EB4F) | 1);
                run.fwd.drop = Box::new(move |_| g1.unit() < 0.03);
                run.rev.drop = Box::new(move |_| g2.unit() < 0.02);
                run.fwd.buffer_pkts = Some(12);
                run.run(isn, 600 * NS_PER_SEC, None);
                let (s, r) = run.stats();
                let tag = format!("seed {seed} {recovery:?} delayed {delayed}: {s:?}");
                assert!(s.done && r.done, "{tag}");
                assert_eq!((s.bytes, r.bytes), (size, size), "{tag}");
                assert!(run.seen.iter().all(|&b| b), "{tag}");
                assert!(run.fwd.dropped > 0 && s.retransmits > 0, "{tag}");
                assert!(run.fwd.q.is_empty() && run.rev.q.is_empty());
            }
        }
    }
}

#[test]
fn ecn_marking_replaces_loss() {
    let isn = u32::MAX - 1;
    let size = 400_000;
    let mut c = flow(size, isn);
    c.ecn = true;
    let mut run = Run::new(&c, Recovery::NewReno, 5e6, 10 * MS);
    run.fwd.mark_above = Some(8);
    run.fwd.buffer_pkts = Some(1000);
    run.run(isn, 60 * NS_PER_SEC, None);
    assert_complete(&run, size);
    let (s, _) = run.stats();
    assert!(run.fwd.marked > 0);
    assert_eq!(run.fwd.dropped, 0);
    assert_eq!((s.retransmits, s.timeouts), (0, 0));
    // Many packets were marked but each window's marks gave one reaction.
    let reactions = run.s.ecn_reactions();
    assert!(reactions >= 2 && reactions < run.fwd.marked, "{reactions} reactions, {} marks", run.fwd.marked);
    // The marking threshold holds the window near (8 queued + BDP ≈ 14) packets.
    assert!(s.cwnd_bytes < 40_000.0, "{}", s.cwnd_bytes);
}

#[test]
fn delayed_ack_halves_the_ack_count() {
    let isn = 12345;
    let size = 200_000;
    let mut c = flow(size, isn);
    c.delayed_ack = true;
    let mut run = Run::new(&c, Recovery::NewReno, 10e6, 10 * MS);
    run.run(isn, 60 * NS_PER_SEC, None);
    assert_complete(&run, size);
    // 200 data segments: ~100 ACKs (+ the SYN-ACK, + a timer ACK or two while cwnd is odd).
    let acks = run.r.acks_sent();
    assert!((100..=110).contains(&acks), "{acks}");
    // Without delayed ACKs: one per segment.
    c.delayed_ack = false;
    let mut run = Run::new(&c, Recovery::NewReno, 10e6, 10 * MS);
    run.run(isn, 60 * NS_PER_SEC, None);
    assert_eq!(run.r.acks_sent(), 200);
}

#[test]
fn stopped_ftp_flow_recovers_what_it_sent() {
    let isn = u32::MAX - 500;
    let mut c = flow(0, isn);
    c.size_bytes = None;
    let mut run = Run::new(&c, Recovery::NewReno, 5e6, 10 * MS);
    run.seen = vec![false; 10_000_000];
    let mut lost = drop_first_tx(isn, &[100_000, 101_000]);
    run.fwd.drop = Box::new(move |p| lost(p));
    run.run(isn, 3 * NS_PER_SEC, Some(NS_PER_SEC));
    let (s, r) = run.stats();
    assert!(!s.done && !r.done, "unbounded flows never report done");
    assert!(s.bytes > 400_000, "{s:?}");
    assert_eq!(run.s.snd_una(), run.s.snd_max(), "everything sent before the stop is acknowledged");
    assert_eq!(run.r.rcv_nxt(), run.s.snd_max());
    assert_eq!(s.bytes, r.bytes);
    assert!(run.s.snd_max() < 5e6 as u64 / 8 + 100_000, "nothing new after 1 s");
    assert_eq!(run.s.poll_timeout(), None, "idle: no timer armed");
}
