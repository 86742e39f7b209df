//! CCID2 and DCCP/VCP end to end over a small in-test network (one FIFO bottleneck on the data
//! path, fixed delays, losses chosen by each test), checking RFC 4341's rules at every send and
//! every ACK.

use super::*;
use crate::endpoint::{Endpoint, FlowConfig};
use crate::packet::{Kind, Packet};
use crate::rng::SimRng;
use crate::time::{Time, NS_PER_MS, NS_PER_SEC};
use serde_json::json;
use std::collections::{BTreeMap, HashSet, VecDeque};

const MS: Time = NS_PER_MS;

/// One sender, one receiver: data through a bottleneck of `tx` ns per data packet (0: no
/// bottleneck) holding at most `limit` waiting packets, then `delay`; ACKs back after `delay`.
struct Net {
    now: Time,
    delay: Time,
    tx: Time,
    limit: usize,
    link_free: Time,
    waiting: VecDeque<Time>,
    order: u64,
    /// (arrival, order) → (to the receiver?, packet)
    flight: BTreeMap<(Time, u64), (bool, Packet)>,
}

/// What a test does at each event.
trait Hooks {
    /// A packet the sender emits; false drops it.
    fn data(&mut self, _s: &DccpSender, _p: &Packet) -> bool {
        true
    }
    /// An ACK the receiver emits; false drops it.
    fn ack(&mut self, _p: &Packet) -> bool {
        true
    }
    /// After every event, with both ends.
    fn after(&mut self, _now: Time, _s: &DccpSender, _r: &DccpReceiver) {}
}

struct NoHooks;
impl Hooks for NoHooks {}

impl Net {
    fn new(delay: Time, tx: Time, limit: usize) -> Net {
        Net { now: 0, delay, tx, limit, link_free: 0, waiting: VecDeque::new(), order: 0, flight: BTreeMap::new() }
    }

    fn put(&mut self, at: Time, to_receiver: bool, p: Packet) {
        self.order += 1;
        self.flight.insert((at, self.order), (to_receiver, p));
    }

    fn drain(&mut self, s: &mut DccpSender, r: &mut DccpReceiver, h: &mut dyn Hooks) {
        while let Some(p) = s.poll_transmit(self.now) {
            if !h.data(s, &p) {
                continue;
            }
            if p.kind == Kind::Data && self.tx > 0 {
                while self.waiting.front().is_some_and(|&d| d <= self.now) {
                    self.waiting.pop_front();
                }
                if self.waiting.len() >= self.limit {
                    continue; // tail drop
                }
                let depart = self.now.max(self.link_free) + self.tx;
                self.link_free = depart;
                self.waiting.push_back(depart);
                self.put(depart + self.delay, true, p);
            } else {
                self.put(self.now + self.delay, true, p);
            }
        }
        while let Some(p) = r.poll_transmit(self.now) {
            if h.ack(&p) {
                self.put(self.now + self.delay, false, p);
            }
        }
    }

    fn run(&mut self, s: &mut DccpSender, r: &mut DccpReceiver, until: Time, h: &mut dyn Hooks) {
        if self.now == 0 {
            s.start(0);
            r.start(0);
        }
        loop {
            self.drain(s, r, h);
            h.after(self.now, s, r);
            let next = self.flight.first_key_value().map(|(k, _)| k.0);
            let t = [next, s.poll_timeout(), r.poll_timeout()].into_iter().flatten().min();
            let Some(t) = t.filter(|&t| t <= until) else { break };
            self.now = self.now.max(t);
            if next == Some(t) {
                let (_, (to_receiver, p)) = self.flight.pop_first().unwrap();
                if to_receiver {
                    r.on_packet(self.now, &p);
                } else {
                    s.on_packet(self.now, &p);
                }
            } else {
                if s.poll_timeout().is_some_and(|x| x <= self.now) {
                    s.on_timeout(self.now);
                }
                if r.poll_timeout().is_some_and(|x| x <= self.now) {
                    r.on_timeout(self.now);
                }
            }
        }
        self.now = until;
    }
}

fn cfg(size: Option<u64>) -> FlowConfig {
    let mut c = FlowConfig::new(1, 1000); // payload 964 bytes
    c.size_bytes = size;
    c
}

fn ccid2(c: &FlowConfig) -> (DccpSender, DccpReceiver) {
    let p = DccpParams::default();
    (ccid2_sender(c, &p), DccpReceiver::new(c, &p, None))
}

/// Checks RFC 4341's invariants at every send and every event, and losses at random.
struct Invariants {
    rng: SimRng,
    data_loss: f64,
    ack_loss: f64,
    sent: HashSet<u64>,
    sends: u64,
    max_cwnd: f64,
    max_span: u64,
    ratios: HashSet<u16>,
}

impl Invariants {
    fn check_ratio(&mut self, s: &DccpSender) {
        let (r, w) = (s.ack_ratio(), s.cwnd());
        self.ratios.insert(r);
        if w >= 2.0 {
            assert!(2 <= r && r as f64 <= w, "Ack Ratio {r} outside [2, cwnd {w}]");
        } else {
            assert_eq!(r, 1, "cwnd {w} < 2");
        }
    }
}

impl Hooks for Invariants {
    fn data(&mut self, s: &DccpSender, p: &Packet) -> bool {
        if p.kind == Kind::Data {
            let seq = p.dccp_hdr().unwrap().seq;
            assert!(self.sent.insert(seq), "sequence number {seq} sent twice: CCID2 never retransmits");
            assert!(s.pipe() as f64 <= s.cwnd(), "pipe {} > cwnd {} after a send", s.pipe(), s.cwnd());
            assert!(((s.pipe() - 1) as f64) < s.cwnd(), "sent with pipe ≥ cwnd");
            assert_eq!(p.dccp_hdr().unwrap().ack_ratio, s.ack_ratio());
            self.sends += 1;
            self.check_ratio(s);
            return !self.rng.bernoulli(self.data_loss);
        }
        true
    }

    fn ack(&mut self, _p: &Packet) -> bool {
        !self.rng.bernoulli(self.ack_loss)
    }

    fn after(&mut self, _now: Time, s: &DccpSender, r: &DccpReceiver) {
        self.check_ratio(s);
        self.max_cwnd = self.max_cwnd.max(s.cwnd());
        self.max_span = self.max_span.max(r.record_size().0 .0);
    }
}

fn invariants(seed: u64, data_loss: f64, ack_loss: f64) -> Invariants {
    Invariants {
        rng: SimRng::for_component(seed, "dccp-test"),
        data_loss,
        ack_loss,
        sent: HashSet::new(),
        sends: 0,
        max_cwnd: 0.0,
        max_span: 0,
        ratios: HashSet::new(),
    }
}

/// A long-lived CCID2 flow through a 10 Mb/s bottleneck with a 30-packet buffer, 1 % random
/// data loss and 5 % ACK loss, 60 s: no sequence number leaves twice, pipe never passes cwnd,
/// the Ack Ratio stays within [2, cwnd] while lost ACKs push it up, and the acknowledgements of
/// ACKs keep the receiver's record within a few windows.
#[test]
fn ccid2_never_retransmits_and_keeps_pipe_and_ack_ratio_in_bounds() {
    let c = cfg(None);
    let (mut s, mut r) = ccid2(&c);
    let mut net = Net::new(20 * MS, 800_000, 30); // 1000 B at 10 Mb/s
    let mut h = invariants(7, 0.01, 0.05);
    net.run(&mut s, &mut r, 60 * NS_PER_SEC, &mut h);
    let (lost, forgotten) = s.losses();
    let st = s.stats();
    eprintln!(
        "sent {} lost {lost} forgotten {forgotten} halvings {} timeouts {} max cwnd {:.1} ratios {:?} receiver span max {}",
        h.sends,
        s.window().halvings(),
        st.timeouts,
        h.max_cwnd,
        h.ratios,
        h.max_span
    );
    assert_eq!(st.retransmits, 0);
    assert_eq!(st.data_pkts_sent, h.sends);
    assert!(h.sends > 5_000, "{} packets", h.sends);
    assert!(lost > 100 && s.window().halvings() > 20, "losses must be exercised");
    assert!(h.ratios.iter().any(|&r| r > 2), "lost ACKs should raise the Ack Ratio: {:?}", h.ratios);
    assert!(h.max_span as f64 <= 4.0 * h.max_cwnd + 10.0, "receiver record {} vs max cwnd {}", h.max_span, h.max_cwnd);
    assert!(r.unacknowledged_acks() < 200);
}

/// The same checks on DCCP/VCP. No router here, so every ACK echoes code 01 (MI); losses
/// still halve, once per window.
#[test]
fn dccp_vcp_keeps_the_same_invariants() {
    let c = cfg(None);
    let v = crate::vcp::VcpParams::default();
    let p = DccpParams::default();
    let mut s = vcp_sender(&c, &v, &p);
    let mut r = DccpReceiver::new(&c, &p, Some(Box::new(crate::vcp::VcpEcho::new())));
    let mut net = Net::new(20 * MS, 800_000, 30);
    // No ACK loss: with R = cwnd = 2 (the seed's bounds) one lost ACK leaves nothing to clock
    // the next, and the RTO restarts VCP's MI (×1.0625 per t_p) from one packet.
    let mut h = invariants(9, 0.005, 0.0);
    net.run(&mut s, &mut r, 30 * NS_PER_SEC, &mut h);
    eprintln!(
        "vcp: sent {} cwnd {:.2} losses {:?} halvings {} timeouts {}",
        h.sends,
        s.cwnd(),
        s.losses(),
        s.window().halvings(),
        s.stats().timeouts
    );
    assert!(h.sends > 2_000);
    assert_eq!(s.stats().retransmits, 0);
    assert!(s.window().halvings() > 0);
    assert_eq!(s.window().vcp_mds(), Some(0), "no overload code without a router");
}

/// RFC 4341 §5: a burst of losses in one window halves cwnd once.
#[test]
fn a_burst_of_losses_halves_once_per_window() {
    /// Drops data packets `from..from + n`.
    struct Burst {
        from: u64,
        n: u64,
    }
    impl Hooks for Burst {
        fn data(&mut self, _s: &DccpSender, p: &Packet) -> bool {
            let seq = p.dccp_hdr().unwrap().seq;
            p.kind != Kind::Data || !(self.from..self.from + self.n).contains(&seq)
        }
    }
    let c = cfg(None);
    let (mut s, mut r) = ccid2(&c);
    // No bottleneck: slow start runs to cwnd 64+ within a few RTTs of 100 ms.
    let mut net = Net::new(50 * MS, 0, usize::MAX);
    net.run(&mut s, &mut r, 450 * MS, &mut NoHooks);
    let before = s.cwnd();
    let from = s.stats().data_pkts_sent + 5;
    assert!(before >= 32.0, "{before}");
    // Eight losses spread over the next window (every other packet from `from`).
    struct Spread(u64);
    impl Hooks for Spread {
        fn data(&mut self, _s: &DccpSender, p: &Packet) -> bool {
            let seq = p.dccp_hdr().unwrap().seq;
            p.kind != Kind::Data || !(seq >= self.0 && seq < self.0 + 16 && (seq - self.0).is_multiple_of(2))
        }
    }
    /// The window just before each event, and the halvings seen.
    struct Watch<H>(H, f64, Vec<(f64, f64, f64)>);
    impl<H: Hooks> Hooks for Watch<H> {
        fn data(&mut self, s: &DccpSender, p: &Packet) -> bool {
            self.0.data(s, p)
        }
        fn after(&mut self, _now: Time, s: &DccpSender, _r: &DccpReceiver) {
            if s.window().halvings() as usize > self.2.len() {
                self.2.push((self.1, s.cwnd(), s.window().ssthresh()));
            }
            self.1 = s.cwnd();
        }
    }
    let mut h = Watch(Spread(from), s.cwnd(), vec![]);
    net.run(&mut s, &mut r, 700 * MS, &mut h);
    assert_eq!(s.losses().0, 8, "eight packets lost");
    assert_eq!(s.window().halvings(), 1, "one response for the window");
    assert_eq!(s.stats().timeouts, 0);
    let (w, after, ssthresh) = h.2[0];
    assert!(w > before, "the losses are found a round later, at cwnd {w}");
    assert_eq!((after, ssthresh), ((w / 2.0).floor(), (w / 2.0).floor()), "cwnd and ssthresh = ⌊cwnd/2⌋");
    // A loss in a later window is a new congestion event.
    let later = s.stats().data_pkts_sent + 3;
    net.run(&mut s, &mut r, 1100 * MS, &mut Burst { from: later, n: 1 });
    assert_eq!(s.window().halvings(), 2);
}

/// VCP-DCCP Fig. 2: in slow start cwnd grows by one per acknowledged packet, so it doubles
/// every RTT (Ack Ratio 2, at most R per ACK: each ACK of 2 packets adds 2).
#[test]
fn slow_start_doubles_per_rtt() {
    let c = cfg(None);
    let (mut s, mut r) = ccid2(&c);
    assert_eq!(s.cwnd(), 4.0, "RFC 4341 IW: min(4, max(2, ⌊4380/964⌋))");
    let mut net = Net::new(50 * MS, 0, usize::MAX);
    let mut w = vec![];
    for k in 0..6 {
        // Every ACK of round k arrives at k·100 ms + 100 ms; sample half-way through a round.
        net.run(&mut s, &mut r, k * 100 * MS + 50 * MS, &mut NoHooks);
        w.push(s.cwnd());
    }
    assert_eq!(w, vec![4.0, 8.0, 16.0, 32.0, 64.0, 128.0]);
    assert!(s.window().in_slow_start());
}

/// A timeout gives up what is outstanding (pipe 0, cwnd 1), never resends it, and the flow
/// goes on with new sequence numbers.
#[test]
fn a_timeout_forgets_the_window_and_resends_nothing() {
    struct Blackout(HashSet<u64>);
    impl Hooks for Blackout {
        fn data(&mut self, s: &DccpSender, p: &Packet) -> bool {
            if p.kind == Kind::Data {
                assert!(self.0.insert(p.dccp_hdr().unwrap().seq), "resent");
                assert!(s.pipe() as f64 <= s.cwnd());
            }
            true
        }
        fn ack(&mut self, _p: &Packet) -> bool {
            false
        }
    }
    let c = cfg(None);
    let (mut s, mut r) = ccid2(&c);
    let mut net = Net::new(50 * MS, 0, usize::MAX);
    net.run(&mut s, &mut r, 350 * MS, &mut NoHooks);
    let w = s.cwnd();
    // Every ACK lost for 2 s.
    let mut h = Blackout(HashSet::new());
    net.run(&mut s, &mut r, 2350 * MS, &mut h);
    assert!(s.stats().timeouts >= 1);
    assert_eq!(s.losses().0, 0);
    assert!(s.losses().1 >= w as u64, "the window outstanding at the timeout is given up");
    net.run(&mut s, &mut r, 4 * NS_PER_SEC, &mut NoHooks);
    assert!(s.cwnd() > 1.0, "the flow resumes");
    assert_eq!(s.stats().retransmits, 0);
}

/// A finite transfer ends when every packet is acknowledged; the receiver has every byte; a
/// tail shorter than the Ack Ratio is acknowledged by the receiver's ack timeout.
#[test]
fn a_finite_transfer_completes() {
    let size = 100 * 964 + 17; // 101 packets: an odd tail
    let c = cfg(Some(size));
    let (mut s, mut r) = ccid2(&c);
    let mut net = Net::new(20 * MS, 80_000, 1000);
    net.run(&mut s, &mut r, 5 * NS_PER_SEC, &mut NoHooks);
    let st = s.stats();
    assert!(st.done, "{st:?}");
    assert_eq!(st.bytes, size);
    assert_eq!(st.data_pkts_sent, 101);
    assert_eq!(r.stats().bytes, size);
    assert!(r.stats().done);
}

#[test]
fn handshake_opens_before_data() {
    let mut c = cfg(Some(10 * 964));
    c.handshake = true;
    let (mut s, mut r) = ccid2(&c);
    s.start(0);
    let syn = s.poll_transmit(0).unwrap();
    assert_eq!(syn.kind, Kind::Syn);
    assert!(s.poll_transmit(0).is_none(), "no data before the Response");
    let mut net = Net::new(20 * MS, 0, usize::MAX);
    net.put(20 * MS, true, syn);
    net.run(&mut s, &mut r, 2 * NS_PER_SEC, &mut NoHooks);
    assert!(s.stats().done);
    assert!(s.stats().srtt >= 39 * MS, "the Request's echo gives an RTT sample of 40 ms");
}

#[test]
fn parses_and_checks_dccp() {
    assert_eq!(parse_flow(&serde_json::Value::Null).map(drop), Ok(()));
    assert_eq!(parse_flow(&json!({"ack_ratio": 0})).map(drop).unwrap_err().key, "ack_ratio");
    assert_eq!(parse_flow(&json!({"ack_ratio_bounds": "x"})).map(drop).unwrap_err().key, "ack_ratio_bounds");
    assert!(parse_flow(&json!({"nope": 1})).map(drop).unwrap_err().reason.contains("nope"));
    assert_eq!(parse_vcp_flow(&serde_json::Value::Null).map(drop), Ok(()));
    assert_eq!(parse_vcp_flow(&json!({"beta": 2.0})).map(drop).unwrap_err().key, "beta");
    assert_eq!(parse_vcp_flow(&json!({"dccp": {"numdupack": 0}})).map(drop).unwrap_err().key, "dccp.numdupack");
    assert_eq!(parse_vcp_flow(&json!({"dccp": {"x": 0}})).map(drop).unwrap_err().key, "dccp.x");
    assert_eq!(parse_vcp_flow(&json!({"tcp": {}})).map(drop).unwrap_err().key, "tcp");
    let c = cfg(None);
    let mut s = parse_vcp_flow(&json!({"iw": 3})).map(|p| p.sender(&c)).unwrap();
    s.start(0);
    let out: Vec<_> = std::iter::from_fn(|| s.poll_transmit(0)).collect();
    assert_eq!(out.len(), 3);
    assert!(out.iter().all(|p| p.ecn == crate::packet::ecn::ECT1 && p.size == 1000 && p.payload == 964));
    let mut d = parse_flow(&serde_json::Value::Null).map(|p| p.sender(&c)).unwrap();
    d.start(0);
    let p = d.poll_transmit(0).unwrap();
    assert_eq!((p.ecn, p.dir), (crate::packet::ecn::ECT0, crate::packet::Direction::Forward));
}
