//! A binary min-heap of events whose root can be replaced in one sift (module doc of
//! `event.rs`).

use super::entry::{Event, SENTINEL};

/// One binary min-heap of events on `key()`.
pub(super) struct Heap {
    /// 1-based: node i is `buf[off + i]`, and node[i] <= node[2i], node[2i+1] for i in
    /// 1..=len; node len+1 is `SENTINEL` (so is node 1 of an empty heap). `off` (0 or 1)
    /// puts node 2j at a 32-byte boundary, so that a node's two children share one cache line.
    pub(super) buf: Vec<Event>,
    pub(super) off: usize,
    pub(super) len: usize,
    /// node 1 was returned by `pop` and is logically gone; the next push replaces it.
    pub(super) root_taken: bool,
}

impl Heap {
    pub(super) fn new() -> Heap {
        let mut h = Heap { buf: Vec::new(), off: 0, len: 0, root_taken: false };
        h.grow();
        h
    }

    #[inline(always)]
    pub(super) fn at(&self, i: usize) -> Event {
        self.buf[self.off + i]
    }

    #[inline(always)]
    pub(super) fn set(&mut self, i: usize, e: Event) {
        self.buf[self.off + i] = e;
    }

    /// Node 1: the earliest event, or `SENTINEL` if the heap is empty (call after
    /// `remove_taken_root`).
    #[inline(always)]
    pub(super) fn root(&self) -> Event {
        // SAFETY: the buffer always holds nodes 0..=len+1 (`new` grows it before any use,
        // `push` before it fills), and 1 <= len + 1.
        unsafe { *self.buf.get_unchecked(self.off + 1) }
    }

    pub(super) fn len(&self) -> usize {
        self.len - self.root_taken as usize
    }

    /// The queued events, in heap order (after `remove_taken_root`).
    pub(super) fn events(&self) -> impl Iterator<Item = Event> + '_ {
        (1..=self.len).map(|i| self.at(i))
    }

    pub(super) fn clear(&mut self) {
        for i in 1..=self.len + 1 {
            self.set(i, SENTINEL);
        }
        self.len = 0;
        self.root_taken = false;
    }

    /// Out of line: packet events mostly go to lanes, timers rarely come.
    #[inline(never)]
    pub(super) fn push(&mut self, e: Event) {
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

    /// Replace the root (not taken) by `e`, which is not earlier than it: pop-then-push.
    #[inline(always)]
    pub(super) fn replace_root(&mut self, e: Event) {
        debug_assert!(!self.root_taken && self.len > 0 && self.root().key() < e.key());
        self.sift_down(1, e);
    }

    /// Double the buffer, placing it so that sibling pairs are 32-byte aligned.
    #[cold]
    #[inline(never)]
    pub(super) fn grow(&mut self) {
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

    /// Inlined flag test (a pop tests both heaps); the removal itself stays out of line.
    #[inline(always)]
    pub(super) fn remove_taken_root(&mut self) {
        if self.root_taken {
            self.remove_root();
        }
    }

    #[inline(never)]
    pub(super) fn remove_root(&mut self) {
        self.root_taken = false;
        let last = self.at(self.len);
        self.set(self.len, SENTINEL);
        self.len -= 1;
        if self.len > 0 {
            self.sift_down_from_bottom(last);
        }
    }

    /// Fill the hole at the root with `e`, the former last node. That node is a leaf and so
    /// usually belongs near the bottom: moving the smaller child up all the way down (one
    /// compare per level, not two) and then climbing back to `e`'s place is cheaper than
    /// testing `e` at every level (Floyd's bottom-up heap sift; same heap property, so the
    /// same pop order).
    #[inline]
    pub(super) fn sift_down_from_bottom(&mut self, e: Event) {
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

    /// Place `e` at or below the hole at `i` (1 <= i <= len), moving smaller children up.
    #[inline]
    pub(super) fn sift_down(&mut self, mut i: usize, e: Event) {
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
            // Which child is smaller is a coin toss: a select, not a branch.
            let right = b.key() < a.key();
            let c = if right { b } else { a };
            if c.key() >= k {
                break;
            }
            // SAFETY: i < l <= n (see above).
            unsafe { *h.get_unchecked_mut(i) = c };
            i = l + right as usize;
        }
        h[i] = e;
    }

    /// Place `e` at or above the hole at `i`, moving larger parents down.
    #[inline]
    pub(super) fn sift_up(&mut self, mut i: usize, e: Event) {
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
}
