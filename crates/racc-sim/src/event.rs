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

use racc_proto::time::Time;

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
    /// Closed-loop source `i` makes its next flow.
    SourceFlow,
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

impl Event {
    /// The ordering key, as one integer: a single wide compare instead of two branches.
    #[inline(always)]
    fn key(&self) -> u128 {
        (self.time as u128) << 64 | self.seq as u128
    }
}

#[derive(Default)]
pub struct EventQueue {
    /// Min-heap on `key()`: heap[i] <= heap[2i+1], heap[2i+2].
    heap: Vec<Event>,
    seq: u64,
    /// heap[0] was returned by `pop` and is logically gone; the next push replaces it.
    root_taken: bool,
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, time: Time, what: What, idx: u32) {
        self.seq += 1;
        let e = Event { time, seq: self.seq, what, idx };
        if self.root_taken {
            self.root_taken = false;
            self.sift_down(0, e);
        } else {
            self.heap.push(e);
            self.sift_up(self.heap.len() - 1, e);
        }
    }

    #[inline]
    pub fn peek_time(&mut self) -> Option<Time> {
        self.remove_taken_root();
        self.heap.first().map(|e| e.time)
    }

    /// The earliest event. It stays in place (marked taken) until the next push overwrites
    /// it or the next pop/peek removes it.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        self.remove_taken_root();
        let e = *self.heap.first()?;
        self.root_taken = true;
        Some(e)
    }

    pub fn len(&self) -> usize {
        self.heap.len() - self.root_taken as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    fn remove_taken_root(&mut self) {
        if self.root_taken {
            self.root_taken = false;
            let last = self.heap.pop().expect("a taken root is in the heap");
            if !self.heap.is_empty() {
                self.sift_down(0, last);
            }
        }
    }

    /// Place `e` at or below the hole at `i`, moving smaller children up.
    #[inline]
    fn sift_down(&mut self, mut i: usize, e: Event) {
        let h = &mut self.heap;
        let n = h.len();
        let k = e.key();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && h[r].key() < h[l].key() { r } else { l };
            if h[c].key() >= k {
                break;
            }
            h[i] = h[c];
            i = c;
        }
        h[i] = e;
    }

    /// Place `e` at or above the hole at `i`, moving larger parents down.
    #[inline]
    fn sift_up(&mut self, mut i: usize, e: Event) {
        let h = &mut self.heap;
        let k = e.key();
        while i > 0 {
            let p = (i - 1) / 2;
            if h[p].key() <= k {
                break;
            }
            h[i] = h[p];
            i = p;
        }
        h[i] = e;
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
