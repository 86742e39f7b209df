//! The port against hand-computed times: serialisation (bytes × 8 / capacity, rounded up to
//! the nanosecond), far-end arrival, the packet and byte buffer limits, the order "router
//! module sees the arrival, then the buffer may drop it", lazy departures, the queue
//! integral and the split of the packet on the wire.

use super::*;
use racc_proto::loss::LossSpec;
use racc_proto::packet::{Kind, TcpHeader};
use racc_proto::rng::SimRng;
use std::sync::{Arc, Mutex};

const MS: Time = 1_000_000;

/// What a router module was called with: the time and the waiting queue it saw.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Call {
    Arrival { t: Time, queue: u32, idle_since: Option<Time> },
    BufferDrop { t: Time, queue: u32 },
    Departure { t: Time, queue: u32 },
}

/// A router module that logs its calls and answers every arrival with `verdict`.
struct Recorder {
    log: Arc<Mutex<Vec<Call>>>,
    verdict: Verdict,
}

impl RouterModule for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }
    fn on_arrival(&mut self, now: Time, _pkt: &mut Packet, v: &PortView) -> Verdict {
        self.log.lock().unwrap().push(Call::Arrival { t: now, queue: v.queue_pkts, idle_since: v.idle_since });
        self.verdict
    }
    fn on_buffer_drop(&mut self, now: Time, _pkt: &Packet, v: &PortView) {
        self.log.lock().unwrap().push(Call::BufferDrop { t: now, queue: v.queue_pkts });
    }
    fn on_departure(&mut self, now: Time, _pkt: &mut Packet, v: &PortView) -> bool {
        self.log.lock().unwrap().push(Call::Departure { t: now, queue: v.queue_pkts });
        false
    }
}

/// A port of `capacity_bps` with a 5 ms link, the given limits and a recorder answering
/// `verdict`; returns the recorder's log too.
fn port(capacity_bps: f64, limit_pkts: u32, limit_bytes: u64, verdict: Verdict) -> (Port, Arc<Mutex<Vec<Call>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let module = Box::new(Recorder { log: log.clone(), verdict });
    let p = Port::new(
        "a->b".into(),
        PortLink { capacity_bps, delay: 5 * MS, limit_pkts, limit_bytes, mean_pkt_size: 1000 },
        module,
        LossProcess::none(),
    );
    (p, log)
}

/// A slab of data packets of these wire sizes.
fn slab(sizes: &[u32]) -> Packets {
    let pkts: Vec<Packet> =
        sizes.iter().map(|&s| Packet::tcp(0, Kind::Data, s, s.saturating_sub(40), TcpHeader::default())).collect();
    Packets::from(pkts)
}

fn queued(a: Accept) -> bool {
    matches!(a, Accept::Queued { .. })
}

#[test]
fn serialisation_time_is_bits_over_capacity_rounded_up_to_the_nanosecond() {
    // 1000 B at 8 Mb/s: 8000 bits / 8e6 b/s = 1 ms exactly; 40 B: 40 µs; 1500 B at 7 Mb/s:
    // 12000 / 7e6 s = 1 714 285.71 ns, rounded up to 1 714 286.
    let (mut p, _) = port(8e6, 100, u64::MAX, Verdict::Forward);
    let mut pkts = slab(&[1000, 40, 1000]);
    for i in 0..3 {
        assert!(queued(p.enqueue(100, i, &mut pkts, 0, 0)));
    }
    // Back to back from t = 100 ns; each arrives at the far end 5 ms after its last bit.
    let ends = [100 + MS, 100 + MS + 40_000, 100 + 2 * MS + 40_000];
    let starts = [100, ends[0], ends[1]];
    for i in 0..3 {
        // Each starts when the one before it ends: all of it is still to go then.
        p.settle(starts[i], &mut pkts);
        assert_eq!(p.unsent(starts[i], &pkts).map(|u| u.1), Some(pkts[i].size as f64));
    }
    for i in 0..3 {
        assert_eq!(p.head_arrival(), Some(ends[i] + 5 * MS));
        let s = p.pop_head(ends[i] + 5 * MS, &mut pkts);
        assert_eq!((s.pkt, s.size), (i as u32, pkts[i].size));
    }
    assert_eq!(p.head_arrival(), None);

    let (mut p, _) = port(7e6, 100, u64::MAX, Verdict::Forward);
    let mut pkts = slab(&[1500]);
    p.enqueue(0, 0, &mut pkts, 0, 0);
    assert_eq!(p.head_arrival(), Some(1_714_286 + 5 * MS));
}

#[test]
fn a_packet_onto_an_idle_link_needs_no_buffer_space() {
    // One packet of buffer: the first goes straight onto the wire, the second waits, the third
    // finds the buffer full.
    let (mut p, _) = port(8e6, 1, u64::MAX, Verdict::Forward);
    let mut pkts = slab(&[1000; 4]);
    assert!(matches!(p.enqueue(0, 0, &mut pkts, 0, 0), Accept::Queued { was_empty: true }));
    assert!(matches!(p.enqueue(0, 1, &mut pkts, 0, 0), Accept::Queued { was_empty: false }));
    assert!(matches!(p.enqueue(0, 2, &mut pkts, 0, 0), Accept::Dropped));
    assert_eq!(p.queue(), (1, 1000));
    // At 1 ms the first is done and the second starts: the buffer has room again.
    assert!(queued(p.enqueue(MS, 3, &mut pkts, 0, 0)));
    assert_eq!(p.queue(), (1, 1000));
    assert_eq!((p.c.arrivals, p.c.drops, p.c.tx_pkts, p.held(&pkts)), (4, 1, 2, 3));
}

#[test]
fn the_byte_limit_counts_waiting_bytes_and_admits_an_exact_fit() {
    let (mut p, _) = port(8e6, u32::MAX, 2500, Verdict::Forward);
    let mut pkts = slab(&[1000, 1000, 1000, 1000, 500, 40]);
    let got: Vec<bool> = (0..6).map(|i| queued(p.enqueue(0, i, &mut pkts, 0, 0))).collect();
    // 1000 on the wire; 1000 + 1000 wait; 1000 more would be 3000 > 2500; 500 fills it to
    // exactly 2500; 40 more would be 2540.
    assert_eq!(got, [true, true, true, false, true, false]);
    assert_eq!(p.queue(), (3, 2500));
    assert_eq!((p.c.max_queue_pkts, p.c.max_queue_bytes, p.c.drops), (3, 2500, 2));
}

#[test]
fn the_router_module_sees_every_arrival_before_the_buffer_may_drop_it() {
    let (mut p, log) = port(8e6, 1, u64::MAX, Verdict::Forward);
    let mut pkts = slab(&[1000; 4]);
    for i in 0..3 {
        p.enqueue(0, i, &mut pkts, 0, 0);
    }
    // A departure due at the time of an arrival runs first.
    p.enqueue(MS, 3, &mut pkts, 0, 0);
    use Call::*;
    assert_eq!(
        *log.lock().unwrap(),
        [
            Arrival { t: 0, queue: 0, idle_since: Some(0) },
            Departure { t: 0, queue: 0 },
            Arrival { t: 0, queue: 0, idle_since: None },
            // The full buffer's victim was seen by the module first (VCP counts it as load).
            Arrival { t: 0, queue: 1, idle_since: None },
            BufferDrop { t: 0, queue: 1 },
            Departure { t: MS, queue: 0 },
            Arrival { t: MS, queue: 0, idle_since: None },
        ]
    );
    assert_eq!((p.c.arrivals, p.c.drops), (4, 1));
}

#[test]
fn a_module_drop_is_counted_once_and_never_reaches_the_buffer() {
    let (mut p, log) = port(8e6, 1, u64::MAX, Verdict::Drop);
    let mut pkts = slab(&[1000]);
    assert!(matches!(p.enqueue(0, 0, &mut pkts, 0, 0), Accept::Dropped));
    assert_eq!(*log.lock().unwrap(), [Call::Arrival { t: 0, queue: 0, idle_since: Some(0) }]);
    assert_eq!((p.c.arrivals, p.c.drops, p.c.tx_pkts, p.held(&pkts)), (1, 1, 0, 0));

    let (mut p, _) = port(8e6, 1, u64::MAX, Verdict::Mark);
    p.enqueue(0, 0, &mut pkts, 0, 0);
    assert_eq!((p.c.marks, p.c.drops, p.held(&pkts)), (1, 0, 1));
}

#[test]
fn idle_since_is_the_end_of_the_last_transmission() {
    let (mut p, log) = port(8e6, 10, u64::MAX, Verdict::Forward);
    let mut pkts = slab(&[1000, 1000]);
    p.enqueue(0, 0, &mut pkts, 0, 0);
    p.enqueue(3 * MS, 1, &mut pkts, 0, 0);
    assert_eq!(log.lock().unwrap()[2], Call::Arrival { t: 3 * MS, queue: 0, idle_since: Some(MS) });
}

#[test]
fn the_queue_integral_follows_hand_computed_departures() {
    // Three 1000 B packets at t = 0 on 8 Mb/s: two wait during [0, 1 ms), one during
    // [1, 2 ms): 3 packet·ms = 3e6 packet·ns and 3e9 byte·ns.
    let (mut p, _) = port(8e6, 10, u64::MAX, Verdict::Forward);
    let mut pkts = slab(&[1000; 3]);
    for i in 0..3 {
        p.enqueue(0, i, &mut pkts, 0, 0);
    }
    p.settle(3 * MS, &mut pkts);
    assert_eq!((p.c.queue_pkt_ns, p.c.queue_byte_ns), (3_000_000, 3_000_000_000));
    assert_eq!((p.c.max_queue_pkts, p.c.max_queue_bytes, p.c.tx_pkts, p.c.tx_bytes), (2, 2000, 3, 3000));
}

#[test]
fn unsent_splits_the_packet_on_the_wire_by_its_serialisation_time() {
    let (mut p, _) = port(8e6, 10, u64::MAX, Verdict::Forward);
    let mut pkts = slab(&[1000, 1000]);
    p.enqueue(0, 0, &mut pkts, 0, 1);
    p.enqueue(0, 1, &mut pkts, 0, 3);
    // A quarter of the first 1 ms packet is out at 0.25 ms, half of the second at 1.5 ms.
    p.settle(MS / 4, &mut pkts);
    assert_eq!((p.unsent(MS / 4, &pkts), p.wire_bytes(MS / 4, &pkts)), (Some((1, 750.0)), 250.0));
    p.settle(3 * MS / 2, &mut pkts);
    assert_eq!((p.unsent(3 * MS / 2, &pkts), p.wire_bytes(3 * MS / 2, &pkts)), (Some((3, 500.0)), 1500.0));
    p.settle(2 * MS, &mut pkts);
    assert_eq!((p.unsent(2 * MS, &pkts), p.wire_bytes(2 * MS, &pkts)), (None, 2000.0));
    // Still none once both have reached the far end and left the port.
    p.pop_head(6 * MS, &mut pkts);
    p.pop_head(7 * MS, &mut pkts);
    assert_eq!(p.unsent(7 * MS, &pkts), None);
}

#[test]
fn a_lost_packet_still_takes_its_time_on_the_wire() {
    let loss = LossProcess::new(&LossSpec::Bernoulli { p: 1.0 }, SimRng::for_component(1, "t")).unwrap();
    let module = Box::new(racc_proto::aqm::droptail::DropTail::new());
    let mut p = Port::new(
        "a->b".into(),
        PortLink { capacity_bps: 8e6, delay: 5 * MS, limit_pkts: 10, limit_bytes: u64::MAX, mean_pkt_size: 1000 },
        module,
        loss,
    );
    let mut pkts = slab(&[1000, 1000]);
    p.enqueue(0, 0, &mut pkts, 0, 0);
    p.enqueue(0, 1, &mut pkts, 0, 0);
    let a = p.pop_head(6 * MS, &mut pkts);
    assert_eq!(p.head_arrival(), Some(7 * MS));
    let b = p.pop_head(7 * MS, &mut pkts);
    assert!(a.lost && b.lost);
    assert_eq!((p.c.tx_pkts, p.c.losses), (2, 2));
}

/// The fields `catch_up`, `enqueue`, `depart`, `pop_head` and `head_arrival` use on every
/// packet (times, FIFO list ends, queue, limits, delay, extras, the arrival and departure
/// counters) lie in the port's first two cache lines, what a packet that waits adds (the queue
/// maxima and integrals) in the third, and the router module after them: a passive module's
/// port costs two lines per packet. A slot is half a line.
#[test]
fn per_packet_fields_lie_in_the_first_lines() {
    use std::mem::{align_of, offset_of, size_of};
    assert_eq!(align_of::<Port>(), 64);
    assert!(offset_of!(Port, passive) < 64);
    assert!(offset_of!(Port, queue_pkts) < 64 && offset_of!(Port, limit_pkts) < 64);
    assert!(offset_of!(Port, extra) + 8 <= 128 && offset_of!(Port, delay) + 8 <= 128);
    let counted = offset_of!(Port, c) + offset_of!(PortCounters, tx_bytes) + size_of::<u64>();
    assert!(counted <= 2 * 64, "the arrival and departure counters end at {counted}");
    let hot_end = offset_of!(Port, c) + size_of::<PortCounters>();
    assert!(hot_end <= 3 * 64, "hot part ends at {hot_end}");
    assert!(offset_of!(Port, module) >= hot_end);
    assert!(size_of::<Port>() <= 6 * 64, "a port is {} bytes", size_of::<Port>());
    assert_eq!(size_of::<Slot>(), 32);
}

/// The picks a module was asked for: the time and the head sizes it was handed.
type Picks = Arc<Mutex<Vec<(Time, Vec<Option<u32>>)>>>;

/// A module with two sub-queues: a packet's flow id names its sub-queue, and sub-queue 1 is
/// served first whenever it has a packet (strict priority), so the order shows the pick.
struct Priority {
    picks: Picks,
}

impl RouterModule for Priority {
    fn name(&self) -> &'static str {
        "priority"
    }
    fn on_arrival(&mut self, _now: Time, _pkt: &mut Packet, _v: &PortView) -> Verdict {
        Verdict::Forward
    }
    fn sub_queues(&self) -> usize {
        2
    }
    fn sub_queue(&self, pkt: &Packet) -> usize {
        pkt.flow as usize
    }
    fn pick(&mut self, now: Time, heads: &[Option<u32>]) -> usize {
        self.picks.lock().unwrap().push((now, heads.to_vec()));
        if heads[1].is_some() {
            1
        } else {
            0
        }
    }
}

#[test]
fn sub_queues_are_served_in_the_modules_order_when_the_link_falls_free() {
    // 8 Mb/s: 1000 B take 1 ms. Packets 0..3 (flow 0) arrive at t = 0, then packet 3 (flow 1,
    // 500 B) at 0.5 ms: packet 0 goes straight onto the idle link, then the module picks at each
    // free link, and the later packet 3 of sub-queue 1 overtakes packets 1 and 2.
    let picks = Arc::new(Mutex::new(Vec::new()));
    let mut p = Port::new(
        "a->b".into(),
        PortLink { capacity_bps: 8e6, delay: 5 * MS, limit_pkts: 10, limit_bytes: u64::MAX, mean_pkt_size: 1000 },
        Box::new(Priority { picks: picks.clone() }),
        LossProcess::none(),
    );
    let mut pkts = slab(&[1000, 1000, 1000, 500]);
    pkts[3].flow = 1;
    assert!(matches!(p.enqueue(0, 0, &mut pkts, 0, 0), Accept::Queued { was_empty: true }));
    for i in 1..3 {
        assert!(matches!(p.enqueue(0, i, &mut pkts, 0, 0), Accept::Queued { was_empty: false }));
    }
    assert!(matches!(p.enqueue(MS / 2, 3, &mut pkts, 0, 0), Accept::Queued { was_empty: false }));
    assert_eq!(p.queue(), (3, 2500));
    let mut got = Vec::new();
    while let Some(t) = p.head_arrival() {
        let h = p.pop_head(t, &mut pkts);
        got.push((h.pkt, t));
    }
    // Departures at 0, 1 ms (packet 3, 0.5 ms), 1.5 ms, 2.5 ms; arrivals 5 ms after each end.
    assert_eq!(got, vec![(0, 6 * MS), (3, 6 * MS + MS / 2), (1, 7 * MS + MS / 2), (2, 8 * MS + MS / 2)]);
    let picks = picks.lock().unwrap();
    assert_eq!(
        *picks,
        vec![
            (MS, vec![Some(1000), Some(500)]),
            (MS + MS / 2, vec![Some(1000), None]),
            (2 * MS + MS / 2, vec![Some(1000), None]),
        ]
    );
    assert_eq!(p.queue(), (0, 0));
    assert_eq!((p.c.arrivals, p.c.tx_pkts, p.c.tx_bytes), (4, 4, 3500));
    // Waiting time: packets 1 and 2 from 0 to 1.5 and 2.5 ms, packet 3 from 0.5 to 1 ms:
    // 1.5 + 2.5 + 0.5 = 4.5 packet-ms.
    p.settle(10 * MS, &mut pkts);
    assert_eq!(p.c.queue_pkt_ns, 9 * MS as u128 / 2);
}

#[test]
fn a_sub_queued_port_keeps_the_buffer_limit_over_all_sub_queues() {
    let picks = Arc::new(Mutex::new(Vec::new()));
    let mut p = Port::new(
        "a->b".into(),
        PortLink { capacity_bps: 8e6, delay: 5 * MS, limit_pkts: 2, limit_bytes: u64::MAX, mean_pkt_size: 1000 },
        Box::new(Priority { picks }),
        LossProcess::none(),
    );
    let mut pkts = slab(&[1000, 1000, 1000, 1000]);
    pkts[2].flow = 1;
    pkts[3].flow = 1;
    let acc: Vec<bool> = (0..4).map(|i| queued(p.enqueue(0, i, &mut pkts, 0, 0))).collect();
    // One on the wire, two waiting (one per sub-queue), the fourth over the limit of 2.
    assert_eq!(acc, vec![true, true, true, false]);
    assert_eq!((p.c.drops, p.held(&pkts)), (1, 3));
}

/// What a dequeue-time module was asked: time, sojourn, packets behind, the packet.
type Dequeues = Arc<Mutex<Vec<(Time, Time, u32, u32)>>>;

/// A module that decides at dequeue (as CoDel does) and drops the packets of flow 9.
struct DropAtDequeue {
    log: Dequeues,
}

impl RouterModule for DropAtDequeue {
    fn name(&self) -> &'static str {
        "drop-at-dequeue"
    }
    fn on_arrival(&mut self, _now: Time, _pkt: &mut Packet, _v: &PortView) -> Verdict {
        Verdict::Forward
    }
    fn acts_at_dequeue(&self) -> bool {
        true
    }
    fn on_dequeue(&mut self, now: Time, pkt: &mut Packet, sojourn: Time, queue: usize, v: &PortView) -> Verdict {
        assert_eq!(queue, 0, "one queue");
        self.log.lock().unwrap().push((now, sojourn, v.queue_pkts, pkt.ip_id as u32));
        if pkt.flow == 9 {
            Verdict::Drop
        } else {
            Verdict::Forward
        }
    }
}

#[test]
fn a_dequeue_drop_frees_the_link_at_once_and_the_slot_for_the_engine() {
    // 8 Mb/s: 1000 B take 1 ms. Packets 0..4 arrive at t = 0; packet 0 goes onto the idle link
    // (asked with sojourn 0), the rest wait. At 1 ms packet 1 (flow 9) is dropped after 1 ms of
    // sojourn, and packet 2 starts at once; packet 3 (flow 9) is dropped at 2 ms, and packet 4
    // starts then, after 2 ms of sojourn. Sent: 0, 2, 4, arriving 5 ms after their ends.
    let log = Dequeues::default();
    let mut p = Port::new(
        "a->b".into(),
        PortLink { capacity_bps: 8e6, delay: 5 * MS, limit_pkts: 10, limit_bytes: u64::MAX, mean_pkt_size: 1000 },
        Box::new(DropAtDequeue { log: log.clone() }),
        LossProcess::none(),
    );
    let mut pkts = slab(&[1000; 5]);
    for i in 0..5 {
        pkts[i].ip_id = i as u16;
    }
    pkts[1].flow = 9;
    pkts[3].flow = 9;
    for i in 0..5 {
        assert!(queued(p.enqueue(0, i, &mut pkts, 0, 0)));
    }
    let mut got = Vec::new();
    while let Some(t) = p.head_arrival() {
        got.push((p.pop_head(t, &mut pkts).pkt, t));
    }
    assert_eq!(got, vec![(0, 6 * MS), (2, 7 * MS), (4, 8 * MS)]);
    assert_eq!(
        *log.lock().unwrap(),
        vec![(0, 0, 0, 0), (MS, MS, 3, 1), (MS, MS, 2, 2), (2 * MS, 2 * MS, 1, 3), (2 * MS, 2 * MS, 0, 4)]
    );
    assert_eq!((p.c.arrivals, p.c.tx_pkts, p.c.drops, p.held(&pkts)), (5, 3, 2, 0));
    assert_eq!(pkts.dequeue_drops(), (2, 2));
    assert_eq!(pkts.reclaim().collect::<Vec<_>>(), vec![1, 3]);
    assert_eq!(pkts.dequeue_drops(), (2, 0));
    // Waiting: packet 1 for 1 ms, 2 for 1 ms, 3 and 4 for 2 ms each: 6 packet-ms.
    p.settle(10 * MS, &mut pkts);
    assert_eq!(p.c.queue_pkt_ns, 6 * MS as u128);
}

#[test]
fn a_dequeue_drop_of_the_last_waiting_packet_leaves_the_link_idle() {
    let log = Dequeues::default();
    let mut p = Port::new(
        "a->b".into(),
        PortLink { capacity_bps: 8e6, delay: 5 * MS, limit_pkts: 10, limit_bytes: u64::MAX, mean_pkt_size: 1000 },
        Box::new(DropAtDequeue { log }),
        LossProcess::none(),
    );
    let mut pkts = slab(&[1000; 3]);
    pkts[1].flow = 9;
    assert!(queued(p.enqueue(0, 0, &mut pkts, 0, 0)));
    assert!(queued(p.enqueue(0, 1, &mut pkts, 0, 0)));
    // Packet 1 is dropped when the link falls free at 1 ms; packet 2, at 1.5 ms, finds it idle.
    assert!(matches!(p.enqueue(MS + MS / 2, 2, &mut pkts, 0, 0), Accept::Queued { was_empty: false }));
    assert_eq!(p.view(MS + MS / 2).queue_pkts, 0);
    let _ = p.pop_head(6 * MS, &mut pkts);
    assert_eq!(p.head_arrival(), Some(MS + MS / 2 + MS + 5 * MS));
    assert_eq!((p.c.drops, p.c.tx_pkts), (1, 2));
}
