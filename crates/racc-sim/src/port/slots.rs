//! The packets in the network and their queue slots: a port's queue is a list through the
//! slots of its packets (module doc of `port.rs`).

use racc_proto::packet::Packet;
use racc_proto::time::{Time, NEVER};
use std::ops::{Deref, DerefMut};

/// No packet: the end of a queue's list.
pub(super) const NIL: u32 = u32::MAX;

/// A packet's place in a port's queue, kept beside the packet under the same index
/// ([`Packets`]): the queues are lists through these slots, not a buffer per port (issue 19: at
/// 10,000 flows each port's ring made the write of its tail slot a cache miss per hop, while the
/// slot of the packet just taken off the previous link is still in the cache; and 40,000 rings
/// held 26 MB at their high-water sizes). A packet is in at most one queue at a time.
/// Aligned to its 32 bytes so that no slot straddles two cache lines (unaligned, half of them
/// did: at 10,000 flows the slot read of a head taken off the wire missed 1.25 times a hop).
#[derive(Clone, Copy, Debug)]
#[repr(align(32))]
pub(super) struct Slot {
    /// The packet queued behind it on the same port, `NIL` if none (yet).
    pub(super) next: u32,
    /// Wire size, kept here so queue accounting needs no trip to the packet.
    pub(super) size: u32,
    /// The caller's routing state for the packet (the simulator: the position of this port in
    /// its flat route table, so that the next hop is found without reading the packet).
    pub(super) hop: u32,
    /// The packet's flow group (scenario `[[flows]]` / `[[traffic]]` entry), for per-aggregate
    /// link shares.
    pub(super) group: u16,
    /// Lost on the wire: still serialised, never delivered.
    pub(super) lost: bool,
    /// When the packet behind it (`next`) starts serialisation and reaches the far end, written
    /// when that packet is queued: moving the port on to the next packet (a departure, a head
    /// taken off the wire) then reads this slot alone, not the next one's too.
    pub(super) next_tx_start: Time,
    pub(super) next_arrive: Time,
}

pub(super) const EMPTY_SLOT: Slot =
    Slot { next: NIL, size: 0, hop: 0, group: 0, lost: false, next_tx_start: NEVER, next_arrive: NEVER };

/// The packets in the network, by index, each with its queue slot: what the ports' queues are
/// made of. Reads as a slice of packets; the slots are the ports' own business.
#[derive(Default)]
pub struct Packets {
    pub(super) pkts: Vec<Packet>,
    pub(super) slots: Vec<Slot>,
    /// Packets a port dropped at dequeue (`RouterModule::on_dequeue`) whose slots the owner has
    /// not taken back yet ([`Self::reclaim`]).
    pub(super) dropped: Vec<u32>,
    /// Packets dropped at dequeue since the start, taken back or not.
    dequeue_drops: u64,
}

impl Packets {
    /// Add a packet at the next index (`len()` before the call).
    pub fn push(&mut self, p: Packet) {
        self.pkts.push(p);
        self.slots.push(EMPTY_SLOT);
    }

    /// The slots of packets dropped at dequeue since the last call, free for reuse. An engine
    /// calls it when its own free list runs dry, so a run without dequeue drops never does.
    pub fn reclaim(&mut self) -> std::vec::Drain<'_, u32> {
        self.dequeue_drops += self.dropped.len() as u64;
        self.dropped.drain(..)
    }

    /// Packets dropped at dequeue so far (for conservation: they left the network), and how
    /// many of their slots are still to be reclaimed.
    pub fn dequeue_drops(&self) -> (u64, usize) {
        (self.dequeue_drops + self.dropped.len() as u64, self.dropped.len())
    }
}

impl From<Vec<Packet>> for Packets {
    fn from(pkts: Vec<Packet>) -> Packets {
        let slots = vec![EMPTY_SLOT; pkts.len()];
        Packets { pkts, slots, ..Packets::default() }
    }
}

impl Deref for Packets {
    type Target = [Packet];
    #[inline(always)]
    fn deref(&self) -> &[Packet] {
        &self.pkts
    }
}

impl DerefMut for Packets {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [Packet] {
        &mut self.pkts
    }
}

/// Ask the cache for slot `i`'s line ahead of its use: a hint, with no effect on results (a
/// prefetch reads nothing and cannot fault).
#[inline(always)]
pub(super) fn prefetch_slot(slots: &[Slot], i: u32) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints the cache; the pointer is never dereferenced.
    unsafe {
        let p = slots.as_ptr().wrapping_add(i as usize);
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slots, i);
}
