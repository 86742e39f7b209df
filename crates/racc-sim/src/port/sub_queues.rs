//! A port whose router module serves sub-queues (VCP-DCCP §4.4): waiting packets sit in their
//! sub-queue's list until the module picks them when the link falls free (module doc of
//! `port.rs`).

use super::*;

impl Port {
    /// Packet `idx` (admitted, with room in the buffer) finds the link busy: it waits at the
    /// tail of the sub-queue the module names, and a departure is due when the link falls free.
    #[cold]
    #[inline(never)]
    pub(super) fn wait_sub(&mut self, now: Time, idx: u32, pkts: &mut Packets, hop: u32, group: u16, size: u32) {
        let q = self.module.sub_queue(&pkts.pkts[idx as usize]);
        let name = self.module.name();
        // Nothing is behind it on the wire yet, so `next_arrive` is free to hold when it was
        // enqueued, for its sojourn time (`start_sub`).
        pkts.slots[idx as usize] = Slot { next: NIL, size, hop, group, next_arrive: now, ..EMPTY_SLOT };
        let x = self.extra.as_deref_mut().expect("a sub-queued port has its lists");
        let sub = x.subs.get_mut(q).unwrap_or_else(|| panic!("router module {name} named sub-queue {q}"));
        if sub.0 == NIL {
            sub.0 = idx;
        } else {
            pkts.slots[sub.1 as usize].next = idx;
        }
        sub.1 = idx;
        self.next_departure = self.busy_until;
        self.queue_grows(now, size);
    }

    /// The link fell free at `t` and packets wait: the module picks a sub-queue, whose head goes
    /// onto the wire (it draws the link's loss now, as a FIFO packet does when it is accepted),
    /// unless a module that decides at dequeue drops it; then the next departure is due at `t`
    /// too, if a packet still waits.
    #[cold]
    #[inline(never)]
    pub(super) fn start_sub(&mut self, t: Time, pkts: &mut Packets) {
        let x = self.extra.as_deref_mut().expect("a sub-queued port has its lists");
        let mut heads = std::mem::take(&mut x.heads);
        for (h, s) in heads.iter_mut().zip(&x.subs) {
            *h = (s.0 != NIL).then(|| pkts.slots[s.0 as usize].size);
        }
        let q = self.module.pick(t, &heads);
        let name = self.module.name();
        let x = self.extra.as_deref_mut().expect("a sub-queued port has its lists");
        x.heads = heads;
        let sub = &mut x.subs[q];
        let idx = sub.0;
        assert!(idx != NIL, "router module {name} picked the empty sub-queue {q}");
        let mut s = pkts.slots[idx as usize];
        sub.0 = s.next;
        if s.next == NIL {
            sub.1 = NIL;
        }
        let more = x.subs.iter().any(|s| s.0 != NIL);
        self.account_queue(t);
        self.queue_pkts -= 1;
        self.queue_bytes -= s.size as u64;
        let enqueued = std::mem::replace(&mut s.next_arrive, NEVER);
        if self.dequeue_hook {
            let sojourn = t - enqueued;
            if !self.dequeue_admits(t, idx, sojourn, q, pkts) {
                pkts.dropped.push(idx);
                self.next_departure = if more { t } else { NEVER };
                return;
            }
        }
        s.next = NIL;
        s.lost = self.lose();
        self.busy_until = t + self.tx_time(s.size);
        let arrive = self.busy_until + self.delay;
        self.push(pkts, s, idx, t, arrive);
        self.depart(t, pkts);
        if more {
            self.next_departure = self.busy_until;
        }
    }
}

impl Port {
    /// The module's dequeue verdict on packet `idx` of sub-queue `q`, which waited `sojourn`
    /// (the queue figures already without it): false if it drops it (counted), a mark counted.
    fn dequeue_admits(&mut self, t: Time, idx: u32, sojourn: Time, q: usize, pkts: &mut Packets) -> bool {
        self.refresh_view(t);
        match self.module.on_dequeue(t, &mut pkts.pkts[idx as usize], sojourn, q, &self.view) {
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

    /// A packet that finds the link idle at `now` leaves at once: the module is asked about it
    /// with no sojourn (for CoDel that is the RFC's dequeue of a packet that never waited).
    #[cold]
    #[inline(never)]
    pub(super) fn dequeue_idle(&mut self, now: Time, idx: u32, pkts: &mut Packets) -> bool {
        let q = self.module.sub_queue(&pkts.pkts[idx as usize]);
        self.dequeue_admits(now, idx, 0, q, pkts)
    }
}
