//! The event queue: events in (time, insertion sequence) order. The sequence number makes
//! ties deterministic (first scheduled, first served), so one seed gives one history. The
//! queue stays small: ports schedule only their FIFO head, routers one tick each, flows one
//! timer each (DESIGN.md performance model), and an endpoint timer pushed back is left to its
//! earlier event ([`Timer`], lazy cancellation).
//!
//! Two binary min-heaps share one sequence counter: one for packet events (a port's head, a
//! medium's decision), one for everything else (endpoint timers, ticks, flow starts and stops,
//! samples). A pop takes the earlier of the two roots, so the events come out exactly as from
//! one queue; but the packet heap, which every packet-hop pops and pushes, is sized by the busy
//! ports alone instead of also holding one timer per flow (issue 19: at 10,000 flows the
//! timers were most of the heap and every hop's sift crossed their levels).
//!
//! Packet events mostly skip the heap too: each goes to a FIFO lane for its delay (its time
//! less the current time), and the packet heap holds one stand-in per lane, its first event.
//! Nearly every hop schedules its packet's arrival at the far end at one of a handful of
//! delays (an idle link's serialisation plus propagation; a busy link's serialisation), and
//! the current time never decreases, so events pushed with one delay come in time order, and
//! with rising sequence numbers in (time, seq) order: a FIFO is then an exact priority queue,
//! and the heap merges the lanes. A push is an append; the heap (stand-ins and the events no
//! lane took) stays a few dozen entries deep at 10,000 flows instead of holding every busy
//! port (issue 19). A lane is one of 32 slots found by hashing its delay (two choices); an
//! event whose slots both hold other delays goes to the heap itself.
//!
//! Why not `std::collections::BinaryHeap`: nearly every event schedules another one right
//! away (a port's next head, an endpoint's answer), and a heap can do "pop, then push" as a
//! single sift-down of the new entry from the root instead of a pop (sift-down to the bottom
//! and back up) plus a push (sift-up). `pop` therefore only hands out the root and marks it
//! taken; the next `push` to that heap overwrites it, and the next `pop`/`peek_time` removes
//! it first if no push came; a lane's stand-in taken is replaced by the lane's next event in
//! the same single sift. Since (time, seq) is a total order with unique keys, the sequence
//! of popped events is exactly the one of any other correct priority queue: histories are
//! unchanged.
//!
//! An event is 16 bytes (time, then one word packing sequence number, kind and index) and
//! a heap is laid out so that a node's two children share a cache line: at 10,000 flows the
//! timer heap outgrows the first-level cache, and each level of a sift then costs one line,
//! not two.
//! A sentinel after the last node spares the sift a test per level.
//! The sequence number has 28 bits; before it runs out the queue renumbers its entries in
//! their order (`renumber`), which changes no order.

mod entry;
mod heap;
mod lane;

use entry::*;
pub use entry::{Event, What};
use heap::Heap;
use lane::Lane;
use racc_proto::time::{Time, NEVER};

/// Number of lanes (a power of two). A run's packet events come in a handful of delays
/// (serialisation plus propagation on an idle link, serialisation alone behind a busy one, for
/// each link type and packet size); more lanes than those only stand idle.
const LANES: usize = 32;

/// The lane slot of delay `d` (multiplicative hashing); `slot ^ 1` is its second choice.
#[inline(always)]
fn lane_slot(d: Time) -> usize {
    (d.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - LANES.trailing_zeros())) as usize
}

pub struct EventQueue {
    /// Packet events that no lane took, and one stand-in for each lane's first event.
    packets: Heap,
    timers: Heap,
    /// FIFO lanes of packet events pushed with one delay each (see `push_packet`); each that
    /// holds any has its first event's stand-in in `packets`.
    lanes: [Lane; LANES],
    /// The latest time of an event popped: the engine's current time while it handles it.
    now: Time,
    /// The last sequence number given, shared by both heaps: an event's place among
    /// equal-time events is its insertion order, whichever heap holds it.
    seq: u64,
    /// Sequence numbers are renumbered when they reach this (`SEQ_LIMIT`; lower in tests).
    seq_limit: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            packets: Heap::new(),
            timers: Heap::new(),
            lanes: std::array::from_fn(|_| Lane::default()),
            now: 0,
            seq: 0,
            seq_limit: SEQ_LIMIT,
        }
    }
}

impl EventQueue {
    /// Inlined: `what` is a constant at every call site, so the choice of heap folds away and
    /// a packet event's usual push, an append to its lane, costs no call.
    #[inline(always)]
    pub fn push(&mut self, time: Time, what: What, idx: u32) {
        self.seq += 1;
        if self.seq >= self.seq_limit {
            self.renumber();
        }
        let e = Event::new(time, self.seq, what, idx);
        if is_packet_event(what) {
            self.push_packet(e);
        } else {
            self.timers.push(e);
        }
    }

    /// A packet event goes to the lane of its delay (its time less the current time) when one
    /// holds that delay or is free, else to the packet heap. Pushed with one delay at a current
    /// time that never decreases, a lane's events are in time order, and with rising sequence
    /// numbers in (time, seq) order: a FIFO is then an exact priority queue, and the heap
    /// merges the lanes through their first events' stand-ins. Every hop pushes its packet's
    /// next event at such a delay (an idle link's serialisation plus propagation, a busy link's
    /// serialisation), so at 10,000 flows the heap holds a few dozen entries, not the busy
    /// ports' thousands, and a push is an append.
    #[inline(always)]
    fn push_packet(&mut self, e: Event) {
        let d = e.time.wrapping_sub(self.now);
        let h = lane_slot(d);
        if e.time >= self.now && self.lanes[h].holds(d) {
            debug_assert!(self.lanes[h].back().key() < e.key());
            self.lanes[h].push_back(e);
        } else {
            self.push_packet_elsewhere(e, d, h);
        }
    }

    /// `push_packet` when the first-choice lane does not hold the event's delay: the second
    /// choice if it does, else a free lane of the two, else the heap.
    #[inline(never)]
    fn push_packet_elsewhere(&mut self, e: Event, d: Time, h: usize) {
        if e.time < self.now {
            return self.packets.push(e);
        }
        let j = if self.lanes[h ^ 1].holds(d) {
            debug_assert!(self.lanes[h ^ 1].back().key() < e.key());
            return self.lanes[h ^ 1].push_back(e);
        } else if self.lanes[h].len == 0 {
            h
        } else if self.lanes[h ^ 1].len == 0 {
            h ^ 1
        } else {
            return self.packets.push(e);
        };
        // Lane `j` is empty: it takes delay `d`, with `e` first.
        let lane = &mut self.lanes[j];
        lane.delay = d;
        lane.push_back(e);
        self.packets.push(e.stand_in(j));
    }

    /// The earlier of the two roots (a heap's root is `SENTINEL` when it is empty): the
    /// merge of two (time, seq)-ordered queues, so the pop order is the one of a single queue.
    #[inline(always)]
    fn first(&mut self) -> (Event, bool) {
        self.packets.remove_taken_root();
        self.timers.remove_taken_root();
        let (a, b) = (self.packets.root(), self.timers.root());
        if b.key() < a.key() {
            (b, true)
        } else {
            (a, false)
        }
    }

    /// Remove `e`, the root of the timer heap (`from_timers`) or of the packet heap, and
    /// return the event it is (a stand-in is replaced by its lane's first event).
    #[inline(always)]
    fn take(&mut self, e: Event, from_timers: bool) -> Event {
        // Never back: an event pushed for an earlier time (the heap takes it) must not make a
        // lane's later pushes earlier than its last.
        self.now = self.now.max(e.time);
        if from_timers {
            self.timers.root_taken = true;
            e
        } else if e.is_stand_in() {
            self.take_from_lane(e.idx() as usize & (LANES - 1))
        } else {
            self.packets.root_taken = true;
            e
        }
    }

    /// The packet heap's root stands in for lane `j`'s first event: take that event; the
    /// lane's next one (later, so the root's place is a valid start) takes the root's place.
    #[inline(always)]
    fn take_from_lane(&mut self, j: usize) -> Event {
        let lane = &mut self.lanes[j];
        let e = lane.pop_front();
        if lane.len > 0 {
            let next = lane.front().stand_in(j);
            self.packets.replace_root(next);
        } else {
            self.packets.root_taken = true;
        }
        e
    }

    #[inline]
    pub fn peek_time(&mut self) -> Option<Time> {
        let (e, _) = self.first();
        (e != SENTINEL).then_some(e.time)
    }

    /// The earliest event. A heap's root stays in place (marked taken) until the next push to
    /// its heap overwrites it or the next pop/peek removes it.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let (e, from_timers) = self.first();
        if e == SENTINEL {
            return None;
        }
        Some(self.take(e, from_timers))
    }

    /// The earliest event if it is due by `t` (`peek_time` and `pop` in one). `t` is below
    /// `Time::MAX` (a run's end), so the sentinel of an empty queue is never due.
    #[inline]
    pub fn pop_due(&mut self, t: Time) -> Option<Event> {
        debug_assert!(t < Time::MAX);
        let (e, from_timers) = self.first();
        if e.time > t {
            return None;
        }
        Some(self.take(e, from_timers))
    }

    pub fn len(&self) -> usize {
        self.packets.len() - self.busy_lanes() + self.in_lanes() + self.timers.len()
    }

    /// Packet events waiting in lanes.
    fn in_lanes(&self) -> usize {
        self.lanes.iter().map(|l| l.len as usize).sum()
    }

    /// Lanes that hold events (each has one stand-in in the packet heap).
    fn busy_lanes(&self) -> usize {
        self.lanes.iter().filter(|l| l.len > 0).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Give every queued event the sequence numbers 1, 2, ... in their (time, seq) order, so
    /// that numbering can go on in the tag's bits. Order is unchanged: every queued event
    /// keeps its rank, and later pushes get larger numbers than all of them. The lanes are
    /// emptied into the heaps (new pushes fill them again). Runs once per `SEQ_LIMIT` pushes
    /// (2^28): its O(n log n) is nothing per event.
    #[cold]
    #[inline(never)]
    fn renumber(&mut self) {
        self.packets.remove_taken_root();
        self.timers.remove_taken_root();
        let mut all: Vec<Event> = self.packets.events().filter(|e| !e.is_stand_in()).collect();
        for lane in &mut self.lanes {
            all.extend(lane.events());
            lane.clear();
        }
        all.extend(self.timers.events());
        all.sort_unstable_by_key(Event::key);
        self.packets.clear();
        self.timers.clear();
        for (r, e) in all.iter().enumerate() {
            let what = e.what();
            // Pushed in order, each event lands where it is put: no sift moves anything.
            let e = Event::new(e.time, r as u64 + 1, what, e.idx());
            if is_packet_event(what) {
                self.packets.push(e);
            } else {
                self.timers.push(e);
            }
        }
        self.seq = all.len() as u64 + 1;
        assert!(self.seq < self.seq_limit, "event queue larger than its sequence space");
    }

    #[cfg(test)]
    fn with_seq_limit(limit: u64) -> EventQueue {
        EventQueue { seq_limit: limit, ..EventQueue::default() }
    }
}

/// One endpoint's timer as the queue holds it: the time of its event in the queue (`NEVER` if
/// none). Lazy cancellation: arming for a later time than the queued event's pushes nothing,
/// since the endpoint ignores an early expiry (`Endpoint::on_timeout`) and is re-armed after
/// it; arming for an earlier time pushes a new event, and the older one, no longer this
/// timer's, is recognised and ignored when it comes due. An RTO pushed back by every ACK so
/// costs one queued event per RTO, not one per ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timer {
    at: Time,
}

impl Default for Timer {
    fn default() -> Self {
        Timer { at: NEVER }
    }
}

impl Timer {
    /// Want an expiry at `t` (not before the current time): push `what`/`idx` at `t` unless
    /// an event at or before `t` is already queued.
    #[inline]
    pub fn arm(&mut self, q: &mut EventQueue, t: Time, what: What, idx: u32) {
        if t < self.at {
            self.at = t;
            q.push(t, what, idx);
        }
    }

    /// This timer's event came due at `now`: true if it is the live one (the timer then has
    /// no event queued), false if it was superseded by an earlier one.
    #[inline]
    pub fn fire(&mut self, now: Time) -> bool {
        if self.at != now {
            return false;
        }
        self.at = NEVER;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_ties_in_insertion_order() {
        let mut q = EventQueue::default();
        q.push(5, What::Sample, 0);
        q.push(3, What::PortHead, 1);
        q.push(5, What::PortHead, 2);
        q.push(3, What::Tick, 3);
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|e| e.idx()).collect();
        assert_eq!(order, vec![1, 3, 0, 2]);
    }

    #[test]
    fn matches_a_sorted_reference_under_random_interleaving() {
        // Property: pops come out in exact (time, insertion) order while pushes interleave,
        // as they do in a run (pushes are never earlier than the last pop).
        let mut rng = racc_proto::rng::SimRng::for_component(42, "eventq");
        let mut q = EventQueue::default();
        let mut reference: Vec<(u64, u32)> = Vec::new(); // (time, idx), idx = insertion order
        let mut now = 0u64;
        let mut next_idx = 0u32;
        let mut popped = Vec::new();
        for _ in 0..200_000 {
            if rng.below(3) != 0 || q.is_empty() {
                // Mostly near-future events, some far ones and some ties.
                let dt = match rng.below(4) {
                    0 => 0,
                    1 => rng.below(1_000),
                    2 => rng.below(1_000_000),
                    _ => rng.below(1 << 40),
                };
                q.push(now + dt, What::PortHead, next_idx);
                reference.push((now + dt, next_idx));
                next_idx += 1;
            } else {
                let e = q.pop().unwrap();
                assert!(e.time >= now);
                now = e.time;
                popped.push((e.time, e.idx()));
            }
        }
        while let Some(e) = q.pop() {
            popped.push((e.time, e.idx()));
        }
        // The pop sequence must be non-decreasing in (time, idx) wherever both were queued
        // together; globally it must be sorted by time, and ties by insertion order.
        assert_eq!(popped.len(), reference.len());
        for w in popped.windows(2) {
            assert!(w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1), "{w:?}");
        }
    }

    /// The same interleaving as a run, with the sequence space made tiny so that it is
    /// renumbered hundreds of times: pops must come out exactly as from an unbounded one.
    #[test]
    fn renumbering_keeps_the_order() {
        let mut rng = racc_proto::rng::SimRng::for_component(7, "eventq-renumber");
        let mut small = EventQueue::with_seq_limit(1 << 9);
        let mut big = EventQueue::default();
        let mut now = 0u64;
        let kinds = What::ALL;
        let mut renumbered = 0;
        for n in 0..100_000u32 {
            if (rng.below(2) == 0 && small.len() < 150) || small.is_empty() {
                let t = now + [0, 1, rng.below(50), rng.below(10_000)][rng.below(4) as usize];
                let what = kinds[rng.below(9) as usize];
                let idx = if n % 3 == 0 { u32::MAX - n } else { n };
                let before = small.seq;
                small.push(t, what, idx);
                big.push(t, what, idx);
                renumbered += (small.seq <= before) as u32;
            } else {
                let (a, b) = (small.pop().unwrap(), big.pop().unwrap());
                assert_eq!((a.time, a.what(), a.idx()), (b.time, b.what(), b.idx()));
                now = a.time;
            }
            assert!(small.len() < 200, "the test keeps the queue well under the sequence space");
        }
        while let Some(b) = big.pop() {
            let a = small.pop().unwrap();
            assert_eq!((a.time, a.what(), a.idx()), (b.time, b.what(), b.idx()));
        }
        assert!(small.pop().is_none());
        assert!(renumbered > 100, "renumbered {renumbered} times");
    }

    #[test]
    fn an_event_is_16_bytes_and_keeps_kind_and_index() {
        assert_eq!(std::mem::size_of::<Event>(), 16);
        for (k, what) in What::ALL.into_iter().enumerate() {
            let e = Event::new(u64::MAX, SEQ_LIMIT - 1, what, u32::MAX - k as u32);
            assert_eq!((e.time, e.what(), e.idx()), (u64::MAX, what, u32::MAX - k as u32));
        }
    }

    /// Equal times keep insertion order across the two heaps: packet events (port heads, a
    /// medium) and the others (timers, ticks, samples) interleave by their sequence numbers.
    #[test]
    fn equal_times_keep_insertion_order_across_packet_and_timer_events() {
        let mut q = EventQueue::default();
        let pushes = [
            (7, What::SenderTimer),
            (7, What::PortHead),
            (7, What::Sample),
            (7, What::Medium),
            (7, What::ReceiverTimer),
            (7, What::PortHead),
            (4, What::Tick),
            (4, What::PortHead),
            (4, What::FlowStop),
        ];
        for (i, &(t, what)) in pushes.iter().enumerate() {
            q.push(t, what, i as u32);
        }
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|e| e.idx()).collect();
        assert_eq!(order, vec![6, 7, 8, 0, 1, 2, 3, 4, 5]);
        // A pop then a push to either heap at the same time: the new one comes after every
        // event queued before it.
        q.push(9, What::PortHead, 0);
        q.push(9, What::SenderTimer, 1);
        assert_eq!(q.pop().map(|e| e.idx()), Some(0));
        q.push(9, What::PortHead, 2);
        assert_eq!(q.pop().map(|e| e.idx()), Some(1));
        q.push(9, What::SenderTimer, 3);
        let rest: Vec<u32> = std::iter::from_fn(|| q.pop_due(9)).map(|e| e.idx()).collect();
        assert_eq!(rest, vec![2, 3]);
        assert!(q.is_empty() && q.pop_due(1 << 62).is_none() && q.peek_time().is_none());
    }

    /// The run's pattern with every kind of event: pops come out in exact (time, insertion)
    /// order, checked against a sorted reference, with pop_due, peek_time and the fused
    /// pop-then-push of both heaps in play.
    #[test]
    fn mixed_kinds_match_a_sorted_reference() {
        let mut rng = racc_proto::rng::SimRng::for_component(11, "eventq-mixed");
        let mut q = EventQueue::default();
        let mut pending: std::collections::BTreeSet<(u64, u32)> = Default::default();
        let mut now = 0u64;
        for n in 0..200_000u32 {
            if rng.below(2) == 0 || q.is_empty() {
                let t = now + [0, 1, rng.below(100), rng.below(1_000_000)][rng.below(4) as usize];
                q.push(t, What::ALL[rng.below(9) as usize], n);
                pending.insert((t, n));
            } else {
                let expect = *pending.iter().next().unwrap();
                assert_eq!(q.peek_time(), Some(expect.0));
                let e = if rng.below(2) == 0 { q.pop() } else { q.pop_due(expect.0) }.unwrap();
                assert_eq!((e.time, e.idx()), expect);
                if expect.0 > 0 {
                    assert!(q.pop_due(expect.0 - 1).is_none());
                }
                pending.remove(&expect);
                now = e.time;
            }
            assert_eq!(q.len(), pending.len());
        }
        for expect in std::mem::take(&mut pending) {
            let e = q.pop().unwrap();
            assert_eq!((e.time, e.idx()), expect);
        }
        assert!(q.pop().is_none());
    }

    /// A run's load: a few thousand packet events up to 1 ms ahead (as at 10,000 flows) beside
    /// endpoint timers armed lazily, pushed back or brought forward at random, checked against
    /// a sorted reference of every queued event; a timer fires only on its live event.
    #[test]
    fn a_loaded_queue_with_lazy_timers_matches_a_sorted_reference() {
        let mut rng = racc_proto::rng::SimRng::for_component(5, "eventq-loaded");
        let mut q = EventQueue::default();
        let mut pending: std::collections::BTreeSet<(u64, u32)> = Default::default();
        let mut timers = vec![Timer::default(); 300];
        // Each timer's wanted expiry (what its endpoint's poll_timeout would say).
        let mut wanted = vec![NEVER; 300];
        // The timer each queued timer event (by insertion number) belongs to.
        let mut owner = std::collections::HashMap::new();
        let (mut n, mut now, mut fired) = (0u32, 0u64, 0u32);
        for step in 0..300_000u32 {
            if step < 280_000 && (pending.len() < 3000 || rng.below(2) == 0) {
                if rng.below(8) == 0 {
                    let k = rng.below(300) as usize;
                    let t = now + rng.below(3_000_000);
                    wanted[k] = t;
                    let before = q.len();
                    timers[k].arm(&mut q, t, What::SenderTimer, n);
                    if q.len() > before {
                        pending.insert((t, n));
                        owner.insert(n, k);
                    }
                } else {
                    let t = now + rng.below(1_000_000);
                    q.push(t, What::PortHead, n);
                    pending.insert((t, n));
                }
                n += 1;
            } else {
                let Some(e) = q.pop() else { break };
                assert_eq!((e.time, e.idx()), pending.pop_first().unwrap());
                now = e.time;
                if e.what() == What::SenderTimer {
                    let k = owner[&e.idx()];
                    if timers[k].fire(now) {
                        fired += 1;
                        // As the engine: a deadline pushed back meanwhile is armed again.
                        if wanted[k] > now {
                            let before = q.len();
                            timers[k].arm(&mut q, wanted[k], What::SenderTimer, n);
                            assert_eq!(q.len(), before + 1, "a fired timer has no event queued");
                            pending.insert((wanted[k], n));
                            owner.insert(n, k);
                            n += 1;
                        }
                    }
                }
            }
            assert_eq!(q.len(), pending.len());
        }
        while let Some(e) = q.pop() {
            assert_eq!((e.time, e.idx()), pending.pop_first().unwrap());
        }
        assert!(pending.is_empty());
        assert!(fired > 1000, "{fired} timers fired");
    }

    /// Packet events that no lane holds: the heap's entries that are not a lane's stand-in.
    fn in_heap(q: &EventQueue) -> usize {
        q.packets.len() - q.busy_lanes()
    }

    /// A run's pattern of packet events: most pushed at one of a few delays from the current
    /// time (lanes), some at arbitrary delays (lanes while free, else the heap), some ties
    /// (delay 0) and a few earlier than the current time (the heap), beside timer-heap events;
    /// every pop, `pop_due` and `peek_time` checked against a sorted reference.
    #[test]
    fn lanes_and_heaps_match_a_sorted_reference() {
        let mut rng = racc_proto::rng::SimRng::for_component(19, "eventq-lanes");
        let mut q = EventQueue::default();
        let mut pending: std::collections::BTreeSet<(u64, u32)> = Default::default();
        let hot = [0, 80, 800, 2_000, 1_000_032, 1_000_800, 48_002_000];
        let (mut now, mut most_in_lanes, mut most_in_heap) = (0u64, 0usize, 0usize);
        for n in 0..400_000u32 {
            if n < 380_000 && (pending.len() < 4000 || rng.below(2) == 0) {
                let t = match rng.below(10) {
                    0..=6 => now + hot[rng.below(hot.len() as u64) as usize],
                    7 | 8 => now + rng.below(2_000_000),
                    _ => now.saturating_sub(rng.below(100)),
                };
                let what = match rng.below(8) {
                    0 => What::ALL[1 + rng.below(7) as usize],
                    1 => What::Medium,
                    _ => What::PortHead,
                };
                q.push(t, what, n);
                pending.insert((t, n));
            } else {
                let Some(expect) = pending.pop_first() else { break };
                assert_eq!(q.peek_time(), Some(expect.0));
                if expect.0 > 0 {
                    assert!(q.pop_due(expect.0 - 1).is_none());
                }
                let e = if rng.below(2) == 0 { q.pop() } else { q.pop_due(expect.0) }.unwrap();
                assert_eq!((e.time, e.idx()), expect);
                now = now.max(e.time);
            }
            assert_eq!(q.len(), pending.len());
            most_in_lanes = most_in_lanes.max(q.in_lanes());
            most_in_heap = most_in_heap.max(in_heap(&q));
        }
        for expect in std::mem::take(&mut pending) {
            let e = q.pop().unwrap();
            assert_eq!((e.time, e.idx()), expect);
        }
        assert!(q.pop().is_none() && q.is_empty());
        assert!(most_in_lanes > 2000 && most_in_heap > 100, "{most_in_lanes} in lanes, {most_in_heap} in the heap");
    }

    /// Events pushed at one delay as the current time advances share one lane: the packet
    /// heap holds one stand-in for all of them.
    #[test]
    fn one_delay_is_one_lane() {
        let (mut q, mut now) = (EventQueue::default(), 0);
        for k in 0..100u32 {
            q.push(now + 1_000, What::PortHead, k);
            q.push(now + 1_000_000, What::PortHead, 1000 + k);
            q.push(now + 5, What::Sample, 2000 + k); // moves the current time on
            let e = q.pop().unwrap();
            assert_eq!(e.idx(), 2000 + k);
            now = e.time;
        }
        assert_eq!((q.len(), q.in_lanes(), q.busy_lanes(), q.packets.len()), (200, 200, 2, 2));
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|e| e.idx()).collect();
        assert_eq!(order, (0..100).chain(1000..1100).collect::<Vec<_>>());
    }

    /// Equal times keep insertion order whether the events wait in a lane, in the packet heap
    /// or in the timer heap.
    #[test]
    fn equal_times_keep_insertion_order_across_lanes_and_heaps() {
        let mut q = EventQueue::default();
        q.push(5, What::PortHead, 100); // the current time's driver
        q.push(10, What::PortHead, 0); // opens the lane of delay 10

        // Far events at distinct delays take every other lane and then the heap.
        for k in 0..200 {
            q.push(1_000 + 7 * k, What::PortHead, 200 + k as u32);
        }
        assert_eq!(q.busy_lanes(), LANES);
        q.push(10, What::Medium, 1); // delay 10: its lane
        q.push(10, What::SenderTimer, 2);
        assert_eq!(q.lanes.iter().find(|l| l.holds(10)).map(|l| l.len), Some(2));
        assert_eq!(q.pop().map(|e| e.idx()), Some(100));
        // At time 5 the lane freed by the event at 5 is taken by a far delay, so that the next
        // push at time 10 finds no lane of its own.
        let mut k = 0;
        while q.lanes.iter().any(|l| l.len == 0) {
            q.push(5_000 + 3 * k, What::PortHead, 500 + k as u32);
            k += 1;
        }
        let before = in_heap(&q);
        q.push(10, What::PortHead, 3);
        assert_eq!(in_heap(&q), before + 1, "the event at 10 from time 5 waits in the heap");
        q.push(10, What::Sample, 4);
        q.push(10, What::PortHead, 5);
        let at_10: Vec<u32> = std::iter::from_fn(|| q.pop_due(10)).map(|e| e.idx()).collect();
        assert_eq!(at_10, vec![0, 1, 2, 3, 4, 5]);
        let rest: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop()).map(|e| (e.time, e.idx())).collect();
        let mut sorted = rest.clone();
        sorted.sort();
        assert_eq!(rest, sorted);
        assert_eq!(rest.len(), 200 + k as usize);
    }

    /// Lazy cancellation: a later deadline pushes nothing; an earlier one pushes a new event
    /// and the superseded one fires as nothing.
    #[test]
    fn a_timer_pushed_back_waits_and_a_superseded_event_is_ignored() {
        let mut q = EventQueue::default();
        let mut timer = Timer::default();
        timer.arm(&mut q, 100, What::SenderTimer, 3);
        timer.arm(&mut q, 150, What::SenderTimer, 3); // pushed back: no new event
        assert_eq!(q.len(), 1);
        timer.arm(&mut q, 60, What::SenderTimer, 3); // brought forward: a new event
        assert_eq!(q.len(), 2);
        let e = q.pop().unwrap();
        assert_eq!((e.time, e.what(), e.idx()), (60, What::SenderTimer, 3));
        assert!(timer.fire(e.time), "the live event fires");
        // Re-armed at its new deadline after firing (as the engine does after on_timeout).
        timer.arm(&mut q, 100, What::SenderTimer, 3);
        let stale = q.pop().unwrap();
        assert_eq!(stale.time, 100);
        assert!(timer.fire(stale.time), "the first event at 100 is the timer's once re-armed there");
        let again = q.pop().unwrap();
        assert_eq!(again.time, 100);
        assert!(!timer.fire(again.time), "the second, superseded, is ignored");
        assert!(q.pop().is_none());
        // A superseded event whose time differs from the live one is ignored too.
        timer.arm(&mut q, 500, What::ReceiverTimer, 1);
        timer.arm(&mut q, 200, What::ReceiverTimer, 1);
        assert!(timer.fire(q.pop().unwrap().time));
        assert!(!timer.fire(q.pop().unwrap().time));
    }
}
