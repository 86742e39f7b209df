//! A port onto a shared medium: its waiting packets sit in a second list until the medium
//! starts them (module doc of `port.rs`; `crate::medium`).

use super::*;

impl Port {
    /// A packet arriving at a medium port: router module and buffer check as on a link, then
    /// the wait list (it counts in the queue until it wins the channel, as a frame in an
    /// interface queue does).
    #[cold]
    #[inline(never)]
    pub(super) fn contend(&mut self, now: Time, idx: u32, pkts: &mut Packets, hop: u32, group: u16) -> Accept {
        let pkt = &mut pkts.pkts[idx as usize];
        if !self.module_admits(now, pkt) {
            return Accept::Dropped;
        }
        let size = pkt.size;
        if self.queue_pkts + 1 > self.limit_pkts || self.queue_bytes + size as u64 > self.limit_bytes {
            self.module.on_buffer_drop(now, pkt, &self.view);
            self.c.drops += 1;
            return Accept::Dropped;
        }
        pkts.slots[idx as usize] = Slot { next: NIL, size, hop, group, ..EMPTY_SLOT };
        let x = self.extra_mut();
        if x.wait_head == NIL {
            x.wait_head = idx;
        } else {
            pkts.slots[x.wait_tail as usize].next = idx;
        }
        x.wait_tail = idx;
        self.queue_grows(now, size);
        Accept::Contend
    }

    /// The medium and member index of a port onto a shared medium.
    pub fn medium(&self) -> Option<(usize, usize)> {
        match self.extra.as_deref()?.role {
            Some(PortRole::Medium { medium, member }) => Some((medium as usize, member as usize)),
            _ => None,
        }
    }

    /// Wire size of a medium port's next waiting packet.
    pub fn waiting_head(&self, pkts: &Packets) -> Option<u32> {
        let h = self.extra.as_ref()?.wait_head;
        (h != NIL).then(|| pkts.slots[h as usize].size)
    }

    /// A medium port's next waiting packet goes onto the medium at `t` (it won the channel, or
    /// it is dropped after too many collisions: `lost`). Its bits are on the air until
    /// `data_end`; it reaches the far end at `arrive`. Returns true if the FIFO was empty, so
    /// the engine must schedule its head.
    pub fn start_contended(&mut self, t: Time, data_end: Time, arrive: Time, lost: bool, pkts: &mut Packets) -> bool {
        let x = self.extra_mut();
        let idx = x.wait_head;
        assert!(idx != NIL, "start_contended on a port with nothing waiting");
        let mut s = pkts.slots[idx as usize];
        x.wait_head = s.next;
        if s.next == NIL {
            x.wait_tail = NIL;
        }
        x.sent_start = t;
        self.account_queue(t);
        self.queue_pkts -= 1;
        self.queue_bytes -= s.size as u64;
        s.next = NIL;
        s.lost = lost;
        let was_empty = self.head == NIL;
        self.push(pkts, s, idx, t, arrive);
        // The FIFO holds only packets on the wire: `depart` leaves `next_departure` at NEVER.
        self.busy_until = data_end;
        self.depart(t, pkts);
        was_empty
    }
}
