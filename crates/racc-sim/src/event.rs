//! The event queue: a binary heap ordered by (time, insertion sequence). The sequence number
//! makes ties deterministic (first scheduled, first served), so one seed gives one history.
//! The heap stays small: ports schedule only their FIFO head, routers one tick each, flows
//! one timer each (DESIGN.md performance model).

use racc_proto::time::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    /// Metric sample.
    Sample,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    pub time: Time,
    seq: u64,
    pub what: What,
    pub idx: u32,
}

impl Ord for Event {
    fn cmp(&self, o: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse so the earliest (time, seq) pops first.
        o.time.cmp(&self.time).then(o.seq.cmp(&self.seq))
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Event>,
    seq: u64,
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, time: Time, what: What, idx: u32) {
        self.seq += 1;
        self.heap.push(Event { time, seq: self.seq, what, idx });
    }

    #[inline]
    pub fn peek_time(&mut self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        self.heap.pop()
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|e| e.idx).collect();
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
                popped.push((e.time, e.idx));
            }
        }
        while let Some(e) = q.pop() {
            popped.push((e.time, e.idx));
        }
        // The pop sequence must be non-decreasing in (time, idx) wherever both were queued
        // together; globally it must be sorted by time, and ties by insertion order.
        assert_eq!(popped.len(), reference.len());
        for w in popped.windows(2) {
            assert!(w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1), "{w:?}");
        }
    }
}
