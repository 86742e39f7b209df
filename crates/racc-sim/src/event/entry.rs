//! An event as the queue holds it: 16 bytes, its time and one word packing sequence number,
//! kind and index (module doc of `event.rs`).

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
    /// Every kind, in code order: the decoding table's first nine entries.
    #[cfg(test)]
    pub(super) const ALL: [What; 9] = {
        let mut all = [What::PortHead; 9];
        let mut i = 0;
        while i < all.len() {
            all[i] = What::BY_CODE[i];
            i += 1;
        }
        all
    };
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
pub(super) const IDX_BITS: u32 = 32;
pub(super) const WHAT_BITS: u32 = 4;
pub(super) const SEQ_SHIFT: u32 = IDX_BITS + WHAT_BITS;
/// Sequence numbers run below this; the queue renumbers its entries (keeping their order)
/// before it would be reached.
pub(super) const SEQ_LIMIT: u64 = 1 << (64 - SEQ_SHIFT);

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
    pub(super) fn new(time: Time, seq: u64, what: What, idx: u32) -> Event {
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
    pub(super) fn key(&self) -> u128 {
        (self.time as u128) << 64 | self.tag as u128
    }
}

/// Above every event's key (no event has kind 15): fills the node after the last, so that
/// a sift compares two children without testing whether the second exists.
pub(super) const SENTINEL: Event = Event { time: Time::MAX, tag: u64::MAX };

/// Packet events (`PortHead`, `Medium`) go to one heap, every other kind (endpoint timers,
/// router ticks, flow starts and stops, sources, samples) to another: at 10,000 flows the
/// heap held 10,000 sender timers beside a few thousand busy ports, so every packet event's
/// sift crossed levels and cache lines that only timers filled. A timer is rarely due (an
/// RTO pushed back by every ACK waits for its earlier event, `engine::arm`), so its own heap
/// is touched about once per flow per RTO, while the packet heap, now sized by the busy
/// ports alone, takes every hop.
#[inline(always)]
pub(super) fn is_packet_event(what: What) -> bool {
    matches!(what, What::PortHead | What::Medium)
}

/// The kind code of a lane's stand-in in the packet heap: no `What` has it (nor the
/// sentinel, whose code is 15). Its index is the lane's.
pub(super) const LANE_KIND: u64 = 14;
pub(super) const KIND_MASK: u64 = (1 << WHAT_BITS) - 1;
/// The sequence-number bits of a tag.
pub(super) const SEQ_MASK: u64 = !((1 << SEQ_SHIFT) - 1);

impl Event {
    #[inline(always)]
    pub(super) fn is_stand_in(&self) -> bool {
        (self.tag >> IDX_BITS) & KIND_MASK == LANE_KIND
    }

    /// This event's place-holder in the packet heap for lane `j`: the same time and sequence
    /// number, so the same rank among every other queued event.
    #[inline(always)]
    pub(super) fn stand_in(&self, j: usize) -> Event {
        Event { time: self.time, tag: self.tag & SEQ_MASK | LANE_KIND << IDX_BITS | j as u64 }
    }
}
