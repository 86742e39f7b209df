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
    pub fn peek_time(&self) -> Option<Time> {
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
}
