//! The per-packet path of a port: serialisation time, lazy departures, the enqueue with its
//! router module and buffer check, and the head taken off the wire. Everything here runs on
//! every packet-hop and is inlined as measured (docs/SIMULATOR.md, the per-hop path).

use super::*;

impl Port {
    #[inline]
    pub(super) fn tx_time(&mut self, bytes: u32) -> Time {
        if self.memo_bytes != bytes {
            self.memo_tx = self.compute_tx_time(bytes);
            self.memo_bytes = bytes;
        }
        self.memo_tx
    }

    pub(super) fn compute_tx_time(&self, bytes: u32) -> Time {
        // ceil() without a libm call (baseline x86-64 has no SSE4.1 round instruction).
        let x = bytes as f64 * self.ns_per_byte;
        let t = x as Time;
        if (t as f64) < x {
            t + 1
        } else {
            t
        }
    }

    /// The port as a router module sees it at `now` (after `catch_up(now)`).
    #[inline]
    pub fn view(&self, now: Time) -> PortView {
        PortView {
            queue_pkts: self.queue_pkts,
            queue_bytes: self.queue_bytes,
            idle_since: self.idle_since(now),
            ..self.view
        }
    }

    #[inline]
    pub(super) fn idle_since(&self, now: Time) -> Option<Time> {
        if self.queue_pkts == 0 && now >= self.busy_until {
            Some(self.busy_until)
        } else {
            None
        }
    }

    /// Bring the stored view to `now`, for a module call.
    #[inline]
    pub(super) fn refresh_view(&mut self, now: Time) {
        self.view.queue_pkts = self.queue_pkts;
        self.view.queue_bytes = self.queue_bytes;
        self.view.idle_since = self.idle_since(now);
    }

    #[inline]
    pub(super) fn account_queue(&mut self, t: Time) {
        // A caller's clock must not go back (a wrapped `t - last_change` once made a live
        // mean queue 3·2^64 ns / 10 s); in a release build a late call adds nothing. One branch:
        // a call at the same time skips the arithmetic too (docs/PERFORMANCE.md).
        debug_assert!(t >= self.last_change, "port time went back: {t} < {}", self.last_change);
        if t > self.last_change {
            let dt = (t - self.last_change) as u128;
            self.c.queue_pkt_ns += self.queue_pkts as u128 * dt;
            self.c.queue_byte_ns += self.queue_bytes as u128 * dt;
            self.last_change = t;
        }
    }

    /// Carry out every departure due by `now`, in order, at its own time.
    #[inline(always)]
    pub fn catch_up(&mut self, now: Time, pkts: &mut Packets) {
        // Most calls find nothing due: keep that case to one inlined compare.
        if self.next_departure <= now {
            self.catch_up_due(now, pkts);
        }
    }

    #[inline(never)]
    pub(super) fn catch_up_due(&mut self, now: Time, pkts: &mut Packets) {
        while self.next_departure <= now {
            let t = self.next_departure;
            if self.sub_queued && self.waiting == NIL {
                self.start_sub(t, pkts);
                continue;
            }
            self.account_queue(t);
            let size = pkts.slots[self.waiting as usize].size;
            self.queue_pkts -= 1;
            self.queue_bytes -= size as u64;
            self.depart(t, pkts);
        }
    }

    /// The packet at `waiting` starts serialisation at `t`. Inlined into its callers: with a
    /// passive module and no extras it is a few counter updates, and as a call its register
    /// saves cost more than that.
    #[inline(always)]
    pub(super) fn depart(&mut self, t: Time, pkts: &mut Packets) {
        let k = self.waiting;
        if !self.passive || self.extra.is_some() {
            self.departure_hooks(t, k, pkts);
        }
        let s = &pkts.slots[k as usize];
        self.c.tx_pkts += 1;
        self.c.tx_bytes += s.size as u64;
        self.sending = k;
        self.waiting = s.next;
        if s.next == NIL {
            self.next_departure = NEVER;
        } else {
            self.next_departure = s.next_tx_start;
            // A queue: the next departure reads the next slot, a packet queued long ago.
            prefetch_slot(&pkts.slots, s.next);
        }
    }

    /// What a departure does beyond the port's counters: the router module's `on_departure`
    /// (unless it is passive), then a capture's or the per-group counters' record.
    #[inline(never)]
    pub(super) fn departure_hooks(&mut self, t: Time, k: u32, pkts: &mut Packets) {
        if !self.passive {
            self.refresh_view(t);
            if self.module.on_departure(t, &mut pkts.pkts[k as usize], &self.view) {
                self.c.marks += 1;
            }
        }
        if let Some(x) = &mut self.extra {
            x.departed(t, k, pkts);
        }
    }

    /// Packet `idx` arrives at the port at `now`: router module, buffer check, then the FIFO.
    #[inline]
    pub fn enqueue(&mut self, now: Time, idx: u32, pkts: &mut Packets, hop: u32, group: u16) -> Accept {
        let size = pkts[idx as usize].size;
        self.enqueue_sized(now, idx, pkts, hop, group, size)
    }

    /// [`Self::enqueue`] of a packet whose wire size `size` the caller knows (the previous
    /// port's slot has it): a hop through a module that does not look at the packet then never
    /// reads it (issue 19: at 10,000 flows that read was a cache miss per hop).
    #[inline(always)]
    pub fn enqueue_sized(
        &mut self,
        now: Time,
        idx: u32,
        pkts: &mut Packets,
        hop: u32,
        group: u16,
        size: u32,
    ) -> Accept {
        self.catch_up(now, pkts);
        self.c.arrivals += 1;
        debug_assert_eq!(size, pkts[idx as usize].size);
        let mut size = size;
        if let Some(Extra { role: Some(r), .. }) = self.extra.as_deref_mut() {
            if let PortRole::Medium { .. } = r {
                self.refresh_view(now);
                return self.contend(now, idx, pkts, hop, group);
            }
            let pkt = &mut pkts.pkts[idx as usize];
            r.apply(now, pkt, self.module.as_mut());
            // A tunnel boundary adds or takes off the outer header.
            size = pkt.size;
        }
        if !self.passive {
            self.refresh_view(now);
            if !self.module_admits(now, &mut pkts.pkts[idx as usize]) {
                return Accept::Dropped;
            }
        }
        let link_idle = now >= self.busy_until;
        // A packet that goes straight onto an idle link never waits, so it needs no space.
        if !link_idle && (self.queue_pkts + 1 > self.limit_pkts || self.queue_bytes + size as u64 > self.limit_bytes) {
            if !self.passive {
                self.module.on_buffer_drop(now, &pkts.pkts[idx as usize], &self.view);
            }
            self.c.drops += 1;
            return Accept::Dropped;
        }
        if self.sub_queued {
            if !link_idle {
                self.wait_sub(now, idx, pkts, hop, group, size);
                return Accept::Queued { was_empty: false };
            }
            if self.dequeue_hook && !self.dequeue_idle(now, idx, pkts) {
                return Accept::Dropped;
            }
        }
        let tx_start = if link_idle { now } else { self.busy_until };
        self.busy_until = tx_start + self.tx_time(size);
        let arrive = self.busy_until + self.delay;
        let lost = self.lose();
        let was_empty = self.head == NIL;
        self.push(
            pkts,
            Slot { next: NIL, size, hop, group, lost, next_tx_start: NEVER, next_arrive: NEVER },
            idx,
            tx_start,
            arrive,
        );
        if link_idle {
            self.depart(now, pkts);
        } else {
            self.queue_grows(now, size);
        }
        Accept::Queued { was_empty }
    }

    /// Put packet `idx` with slot `s` at the FIFO's tail; it starts serialisation at `tx_start`
    /// and reaches the far end at `arrive`.
    #[inline(always)]
    pub(super) fn push(&mut self, pkts: &mut Packets, s: Slot, idx: u32, tx_start: Time, arrive: Time) {
        pkts.slots[idx as usize] = s;
        if self.head == NIL {
            self.head = idx;
            self.head_arrive = arrive;
        } else {
            let t = &mut pkts.slots[self.tail as usize];
            t.next = idx;
            t.next_tx_start = tx_start;
            t.next_arrive = arrive;
        }
        self.tail = idx;
        if self.waiting == NIL {
            // It is the only packet not yet on the wire.
            self.waiting = idx;
            self.next_departure = tx_start;
        }
    }

    /// The router module's verdict on an arriving packet: false if it drops it (counted), a
    /// mark counted. One rule for a link's port and a medium's.
    #[inline(always)]
    pub(super) fn module_admits(&mut self, now: Time, pkt: &mut Packet) -> bool {
        match self.module.on_arrival(now, pkt, &self.view) {
            Verdict::Drop => {
                self.c.drops += 1;
                false
            }
            Verdict::Mark => {
                self.c.marks += 1;
                true
            }
            Verdict::Forward => true,
        }
    }

    /// A packet of `size` bytes joins the queue at `now` (the FIFO behind a busy link, or a
    /// medium's wait list): the queue integrals first, then the counts and their maxima.
    #[inline(always)]
    pub(super) fn queue_grows(&mut self, now: Time, size: u32) {
        self.account_queue(now);
        self.queue_pkts += 1;
        self.queue_bytes += size as u64;
        self.c.max_queue_pkts = self.c.max_queue_pkts.max(self.queue_pkts);
        self.c.max_queue_bytes = self.c.max_queue_bytes.max(self.queue_bytes);
    }

    /// The port's loss process, drawn once per packet accepted onto a link and once per frame
    /// a medium port sends.
    #[inline]
    pub fn lose(&mut self) -> bool {
        match &mut self.extra {
            Some(x) => x.loss.as_mut().is_some_and(|l| l.lose()),
            None => false,
        }
    }

    /// Arrival time of the FIFO's head at the far end.
    #[inline]
    pub fn head_arrival(&self) -> Option<Time> {
        (self.head != NIL).then_some(self.head_arrive)
    }

    /// Take the head off the wire at its arrival time `now` (the engine's one event).
    #[inline]
    pub fn pop_head(&mut self, now: Time, pkts: &mut Packets) -> Head {
        self.catch_up(now, pkts);
        let h = self.head;
        assert!(h != NIL, "pop_head on an empty port");
        debug_assert!(h != self.waiting, "the head has not started");
        let s = pkts.slots[h as usize];
        self.head = s.next;
        if s.next == NIL {
            self.tail = NIL;
            self.head_arrive = NEVER;
        } else {
            self.head_arrive = s.next_arrive;
            // A busy link: its next head comes soon and was queued long ago.
            prefetch_slot(&pkts.slots, s.next);
        }
        if self.sending == h {
            self.sending = NIL;
        }
        if s.lost {
            self.c.losses += 1;
        }
        Head { pkt: h, size: s.size, hop: s.hop, group: s.group, lost: s.lost }
    }
}
