//! The event queue: a binary min-heap ordered by (time, insertion sequence). The sequence
//! number makes ties deterministic (first scheduled, first served), so one seed gives one
//! history. The heap stays small: ports schedule only their FIFO head, routers one tick each,
//! flows one timer each (DESIGN.md performance model).
//!
//! Why not `std::collections::BinaryHeap`: nearly every event schedules another one right
//! away (a port's next head, an endpoint's answer), and a heap can do "pop, then push" as a
//! single sift-down of the new entry from the root instead of a pop (sift-down to the bottom
//! and back up) plus a push (sift-up). `pop` therefore only hands out the root and marks it
//! taken; the next `push` overwrites it, and the next `pop`/`peek_time` removes it first if
//! no push came. Since (time, seq) is a total order with unique keys, the sequence of popped
//! events is exactly the one of any other correct priority queue: histories are unchanged.
//!
//! An event is 16 bytes (time, then one word packing sequence number, kind and index) and
//! the heap is laid out so that a node's two children share a cache line: at 10,000 flows the
//! heap outgrows the first-level cache, and each level of a sift then costs one line, not two.
//! A sentinel after the last node spares the sift a test per level.
//! The sequence number has 28 bits; before it runs out the queue renumbers its entries in
//! their order (`renumber`), which changes no order.

use racc_proto::time::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum What {
    /// The head of port `i`'s FIFO reaches the far end.
    PortHead,
    /// Flow `i`'s sender timer.
    SenderTimer,
    /// Flow `i`'s receiver timer.
    ReceiverTimer,
    /// Router-module control tick on port `i`.
    Tick,
    /// Flow `i` starts.
    FlowStart,
    /// Flow `i` stops offering new data.
    FlowStop,
    /// Closed-loop source `i` makes its next flow.
    SourceFlow,
    /// Metric sample.
    Sample,
    /// Medium `i` decides who holds its channel next.
    Medium,
}

impl What {
    #[cfg(test)]
    const ALL: [What; 9] = [
        What::PortHead,
        What::SenderTimer,
        What::ReceiverTimer,
        What::Tick,
        What::FlowStart,
        What::FlowStop,
        What::SourceFlow,
        What::Sample,
        What::Medium,
    ];
    /// Decoding table for the 4-bit kind field: 16 entries so that no bounds check is
    /// needed (codes 9..15 never occur).
    const BY_CODE: [What; 16] = [
        What::PortHead,
        What::SenderTimer,
        What::ReceiverTimer,
        What::Tick,
        What::FlowStart,
        What::FlowStop,
        What::SourceFlow,
        What::Sample,
        What::Medium,
        What::Medium,
        What::Medium,
        What::Medium,
        What::Medium,
        What::Medium,
        What::Medium,
        What::Medium,
    ];
}

/// Bits of an event's tag: sequence number above, kind, then index.
const IDX_BITS: u32 = 32;
const WHAT_BITS: u32 = 4;
const SEQ_SHIFT: u32 = IDX_BITS + WHAT_BITS;
/// Sequence numbers run below this; the queue renumbers its entries (keeping their order)
/// before it would be reached.
const SEQ_LIMIT: u64 = 1 << (64 - SEQ_SHIFT);

/// One event in 16 bytes, so that a cache line holds four and a node's two children share
/// one line. `tag` packs the insertion sequence number (high bits), the kind and the index:
/// comparing (time, tag) compares (time, seq), as the sequence number is unique among the
/// queued events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Event {
    pub time: Time,
    tag: u64,
}

impl Event {
    #[inline(always)]
    fn new(time: Time, seq: u64, what: What, idx: u32) -> Event {
        Event { time, tag: seq << SEQ_SHIFT | (what as u64) << IDX_BITS | idx as u64 }
    }

    #[inline(always)]
    pub fn what(&self) -> What {
        What::BY_CODE[(self.tag >> IDX_BITS) as usize & ((1 << WHAT_BITS) - 1)]
    }

    #[inline(always)]
    pub fn idx(&self) -> u32 {
        self.tag as u32
    }

    /// The ordering key, as one integer: a single wide compare instead of two branches.
    #[inline(always)]
    fn key(&self) -> u128 {
        (self.time as u128) << 64 | self.tag as u128
    }
}

/// Above every event's key (no event has kind 15): fills the node after the last, so that
/// a sift compares two children without testing whether the second exists.
const SENTINEL: Event = Event { time: Time::MAX, tag: u64::MAX };

pub struct EventQueue {
    /// Min-heap on `key()`, 1-based: node i is `buf[off + i]`, and node[i] <= node[2i],
    /// node[2i+1] for i in 1..=len; node len+1 is `SENTINEL`. `off` (0 or 1) puts node 2j at
    /// a 32-byte boundary, so that a node's two children share one cache line.
    buf: Vec<Event>,
    off: usize,
    len: usize,
    seq: u64,
    /// Sequence numbers are renumbered when they reach this (`SEQ_LIMIT`; lower in tests).
    seq_limit: u64,
    /// node 1 was returned by `pop` and is logically gone; the next push replaces it.
    root_taken: bool,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue { buf: Vec::new(), off: 0, len: 0, seq: 0, seq_limit: SEQ_LIMIT, root_taken: false }
    }
}

impl EventQueue {
    #[inline(always)]
    fn at(&self, i: usize) -> Event {
        self.buf[self.off + i]
    }

    #[inline(always)]
    fn set(&mut self, i: usize, e: Event) {
        self.buf[self.off + i] = e;
    }

    #[inline]
    pub fn push(&mut self, time: Time, what: What, idx: u32) {
        self.seq += 1;
        if self.seq >= self.seq_limit {
            self.renumber();
        }
        let e = Event::new(time, self.seq, what, idx);
        if self.root_taken {
            self.root_taken = false;
            self.sift_down(1, e);
        } else {
            if self.off + self.len + 2 >= self.buf.len() {
                self.grow();
            }
            self.len += 1;
            self.set(self.len + 1, SENTINEL);
            self.sift_up(self.len, e);
        }
    }

    /// Double the buffer, placing it so that sibling pairs are 32-byte aligned.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let cap = (2 * self.buf.len()).max(64);
        let mut buf = vec![SENTINEL; cap];
        // Node 2 at a 32-byte boundary (the allocator gives 16-byte alignment or more).
        let off = (buf.as_ptr() as usize / std::mem::size_of::<Event>()) & 1;
        for i in 1..=self.len {
            buf[off + i] = self.at(i);
        }
        self.buf = buf;
        self.off = off;
    }

    #[inline]
    pub fn peek_time(&mut self) -> Option<Time> {
        self.remove_taken_root();
        (self.len > 0).then(|| self.at(1).time)
    }

    /// The earliest event. It stays in place (marked taken) until the next push overwrites
    /// it or the next pop/peek removes it.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        self.remove_taken_root();
        if self.len == 0 {
            return None;
        }
        self.root_taken = true;
        Some(self.at(1))
    }

    /// The earliest event if it is due by `t` (`peek_time` and `pop` in one).
    #[inline]
    pub fn pop_due(&mut self, t: Time) -> Option<Event> {
        self.remove_taken_root();
        if self.len == 0 {
            return None;
        }
        let e = self.at(1);
        if e.time > t {
            return None;
        }
        self.root_taken = true;
        Some(e)
    }

    pub fn len(&self) -> usize {
        self.len - self.root_taken as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    fn remove_taken_root(&mut self) {
        if self.root_taken {
            self.root_taken = false;
            let last = self.at(self.len);
            self.set(self.len, SENTINEL);
            self.len -= 1;
            if self.len > 0 {
                self.sift_down_from_bottom(last);
            }
        }
    }

    /// Fill the hole at the root with `e`, the former last node. That node is a leaf and so
    /// usually belongs near the bottom: moving the smaller child up all the way down (one
    /// compare per level, not two) and then climbing back to `e`'s place is cheaper than
    /// testing `e` at every level (Floyd's bottom-up heap sift; same heap property, so the
    /// same pop order).
    #[inline]
    fn sift_down_from_bottom(&mut self, e: Event) {
        let n = self.len;
        let h = &mut self.buf[self.off..self.off + n + 2];
        let mut i = 1;
        loop {
            let l = 2 * i;
            if l > n {
                break;
            }
            // SAFETY: as in `sift_down`: l <= n, so l + 1 < h.len() = n + 2, and i < l.
            let (a, b) = unsafe { (*h.get_unchecked(l), *h.get_unchecked(l + 1)) };
            let right = b.key() < a.key();
            unsafe { *h.get_unchecked_mut(i) = if right { b } else { a } };
            i = l + right as usize;
        }
        self.sift_up(i, e);
    }

    /// Give the queued events the sequence numbers 1, 2, ... in their (time, seq) order, so
    /// that numbering can go on in the tag's bits. Order is unchanged: every queued event
    /// keeps its rank, and later pushes get larger numbers than all of them. Runs once per
    /// `SEQ_LIMIT` pushes (2^28): its O(n log n) is nothing per event.
    #[cold]
    #[inline(never)]
    fn renumber(&mut self) {
        self.remove_taken_root();
        let mut all: Vec<Event> = (1..=self.len).map(|i| self.at(i)).collect();
        all.sort_unstable_by_key(Event::key);
        for (r, e) in all.iter().enumerate() {
            // A sorted array is a heap.
            let what = e.what();
            self.set(r + 1, Event::new(e.time, r as u64 + 1, what, e.idx()));
        }
        self.seq = self.len as u64 + 1;
        assert!(self.seq < self.seq_limit, "event queue larger than its sequence space");
    }

    /// Place `e` at or below the hole at `i` (1 <= i <= len), moving smaller children up.
    #[inline]
    fn sift_down(&mut self, mut i: usize, e: Event) {
        let n = self.len;
        // Nodes 0..=n+1, n+1 being the sentinel.
        let h = &mut self.buf[self.off..self.off + n + 2];
        let k = e.key();
        loop {
            let l = 2 * i;
            if l > n {
                break;
            }
            // SAFETY: l <= n, so l and l+1 are below h.len() = n+2 (node l+1 exists or is the
            // sentinel, which is never the smaller); i < l. This loop is a fifth of a run's
            // instructions, and the three bounds checks a sixth of it.
            let (a, b) = unsafe { (*h.get_unchecked(l), *h.get_unchecked(l + 1)) };
            let (c, ci) = if b.key() < a.key() { (b, l + 1) } else { (a, l) };
            if c.key() >= k {
                break;
            }
            // SAFETY: i < l <= n (see above).
            unsafe { *h.get_unchecked_mut(i) = c };
            i = ci;
        }
        h[i] = e;
    }

    /// Place `e` at or above the hole at `i`, moving larger parents down.
    #[inline]
    fn sift_up(&mut self, mut i: usize, e: Event) {
        let h = &mut self.buf[self.off..self.off + i + 1];
        let k = e.key();
        while i > 1 {
            let p = i / 2;
            if h[p].key() <= k {
                break;
            }
            h[i] = h[p];
            i = p;
        }
        h[i] = e;
    }

    #[cfg(test)]
    fn with_seq_limit(limit: u64) -> EventQueue {
        EventQueue { seq_limit: limit, ..EventQueue::default() }
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
}
