//! A lane of the event queue: packet events pushed with one delay, in time order (module doc
//! of `event.rs`).

use super::entry::{Event, SENTINEL};
use racc_proto::time::Time;

/// A FIFO of packet events pushed with one delay: a ring buffer of power-of-two capacity.
/// Not `std::collections::VecDeque`: its wrap-around and capacity arithmetic cost 7-8
/// instructions a packet-hop more than the mask here (cachegrind, racc-bench: 460.1 against
/// 452.2 at 1 flow, 490.8 against 483.2 at 100, 613.4 against 607.9 at 10,000).
#[derive(Default)]
pub(super) struct Lane {
    /// The delay of its events (meaningful while it holds any).
    pub(super) delay: Time,
    pub(super) buf: Box<[Event]>,
    pub(super) head: u32,
    pub(super) len: u32,
}

impl Lane {
    #[inline(always)]
    pub(super) fn holds(&self, d: Time) -> bool {
        self.len > 0 && self.delay == d
    }

    #[inline(always)]
    pub(super) fn mask(&self) -> usize {
        self.buf.len() - 1
    }

    #[inline(always)]
    pub(super) fn push_back(&mut self, e: Event) {
        if self.len as usize == self.buf.len() {
            self.grow();
        }
        let i = (self.head + self.len) as usize & self.mask();
        // SAFETY: the capacity is a power of two (`grow`), so the masked index is below it.
        unsafe { *self.buf.get_unchecked_mut(i) = e };
        self.len += 1;
    }

    /// The first event (the lane is not empty).
    #[inline(always)]
    pub(super) fn front(&self) -> Event {
        // SAFETY: `head` is a masked index (`pop_front`, `grow`), below the capacity.
        unsafe { *self.buf.get_unchecked(self.head as usize) }
    }

    /// The last event (the lane is not empty).
    pub(super) fn back(&self) -> Event {
        self.buf[(self.head + self.len - 1) as usize & self.mask()]
    }

    #[inline(always)]
    pub(super) fn pop_front(&mut self) -> Event {
        let e = self.front();
        self.head = (self.head + 1) & self.mask() as u32;
        self.len -= 1;
        e
    }

    pub(super) fn events(&self) -> impl Iterator<Item = Event> + '_ {
        (0..self.len).map(|k| self.buf[(self.head + k) as usize & self.mask()])
    }

    pub(super) fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }

    /// Double the capacity, the events in order from slot 0.
    #[cold]
    #[inline(never)]
    pub(super) fn grow(&mut self) {
        let cap = (2 * self.buf.len()).max(16);
        let mut buf = vec![SENTINEL; cap].into_boxed_slice();
        for (k, e) in self.events().enumerate() {
            buf[k] = e;
        }
        self.buf = buf;
        self.head = 0;
    }
}
