//! An output port: the queue in front of one direction of a link, the link itself
//! (serialisation at the capacity, then propagation), the router module that manages the
//! queue, and the link direction's loss process.
//!
//! Speed comes from never scheduling per-packet departure events. A FIFO link serves
//! packets in order at a fixed rate, so a packet's transmission start, end and far-end
//! arrival are all known the moment it is accepted. The port therefore holds one FIFO of
//! accepted packets (waiting ones at the back, ones already on the wire at the front) and
//! the engine schedules only the arrival of the FIFO's head. The FIFO is a list through the
//! packets' own slots in [`Packets`], not a buffer of the port's: a hop writes the slot of the
//! packet it just took off the previous link, whose line is still in the cache. Departures — the moment a
//! packet leaves the queue and the router module's `on_departure` runs — are processed
//! lazily by [`Port::catch_up`] before anything observes the port (an arrival, a tick, a
//! sample, the head's delivery). Since every arrival catches up first, each departure sees
//! exactly the queue it would have seen with an explicit event: the model is exact, and the
//! engine does one event per packet-hop.
//!
//! A port onto a shared medium (`crate::medium`) cannot know its departures in advance: they
//! are decided by contention with the other members' ports. Such a port holds its waiting
//! packets in a second list (`Extra::wait_head`) and the medium starts each one when it wins the channel
//! ([`Port::start_contended`]); the FIFO then holds only packets already on the wire, exactly
//! as it does for a link, so delivery and sampling are the same code. The point-to-point path
//! pays nothing for this: a medium port is told apart by the role check that tunnel gateways
//! already needed.
//!
//! A port whose router module serves sub-queues (`RouterModule::sub_queues` > 1, VCP-DCCP §4.4)
//! cannot know its departures in advance either: which packet goes next is the module's choice
//! when the link falls free. A packet that finds the link busy waits in its sub-queue's list
//! (`Extra::subs`), and the next departure is due when the link falls free (`busy_until`); there
//! `catch_up` asks the module which sub-queue sends ([`Port::start_sub`]) and puts that packet on
//! the wire, where the FIFO holds it as it holds any packet on the wire. A one-queue port pays one
//! untaken branch per waiting arrival and per departure.
//!
//! A port whose router module decides at dequeue (`RouterModule::acts_at_dequeue`, CoDel, RFC
//! 8289 §5.5) takes the same path with one sub-queue: a waiting packet's slot carries its enqueue
//! time, and when the link falls free the module is shown the head with its sojourn time and may
//! drop it, and then the next, at that instant (`sub_queues.rs`). A packet dropped there is
//! not the engine's to free at the call that caused it (any `catch_up` may drop): the port puts
//! its slot on [`Packets`]' list of dequeue drops, which the engine takes back when it next needs
//! a slot ([`Packets::reclaim`]).

use racc_proto::ipsec::{self, Tunnel};
use racc_proto::loss::LossProcess;
use racc_proto::packet::Packet;
use racc_proto::router::{PortView, RouterModule, Verdict};
use racc_proto::time::{Time, NEVER, NS_PER_SEC};

mod contention;
mod queue;
mod slots;
mod sub_queues;

pub use slots::Packets;
use slots::{prefetch_slot, Slot, EMPTY_SLOT, NIL};

/// A packet taken off the wire at the far end ([`Port::pop_head`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    /// Index of the packet in [`Packets`].
    pub pkt: u32,
    pub size: u32,
    /// The routing state given to `enqueue`.
    pub hop: u32,
    pub group: u16,
    /// Lost on the wire: it was serialised, but is not delivered.
    pub lost: bool,
}

/// Counters, cumulative since the start of the run. `repr(C)`: the three every accepted packet
/// counts first, so that they share the port's second cache line with its queue figures.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct PortCounters {
    pub arrivals: u64,
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// Dropped by the buffer limit or the router module.
    pub drops: u64,
    /// Lost on the wire by the loss model.
    pub losses: u64,
    pub marks: u64,
    pub max_queue_bytes: u64,
    pub max_queue_pkts: u32,
    /// Integral of the waiting-queue length over time, in packet·ns and byte·ns.
    pub queue_pkt_ns: u128,
    pub queue_byte_ns: u128,
}

pub enum Accept {
    /// Accepted; true if the FIFO was empty, so the engine must schedule its head.
    Queued {
        was_empty: bool,
    },
    Dropped,
    /// Accepted by a port onto a shared medium: the packet waits for the medium, which the
    /// engine must tell ([`Port::medium`] says which). A unit variant keeps `Accept` one byte
    /// on the point-to-point path.
    Contend,
}

/// What a port does beyond queueing onto its link. At a tunnel boundary (DCP-EW §III.C):
/// packets entering the tunnel are encapsulated, packets of the tunnel leaving it are
/// decapsulated, with the router module's tunnel hooks around each step. On a shared medium:
/// packets wait for the medium to start them.
pub enum PortRole {
    Encap(Tunnel),
    Decap(u16),
    Medium { medium: u16, member: u16 },
}

impl PortRole {
    #[inline]
    fn apply(&mut self, now: Time, pkt: &mut Packet, module: &mut dyn RouterModule) {
        match self {
            PortRole::Medium { .. } => {}
            PortRole::Encap(t) => {
                if pkt.outer.is_none() {
                    module.before_encapsulation(now, pkt, t.id);
                    t.encapsulate(pkt);
                    module.after_encapsulation(now, pkt, t.id);
                }
            }
            PortRole::Decap(id) => {
                if pkt.outer.is_some_and(|o| o.tunnel == *id) {
                    module.before_decapsulation(now, pkt, *id);
                    ipsec::decapsulate(pkt, *id);
                    module.after_decapsulation(now, pkt, *id);
                }
            }
        }
    }
}

/// Fields in the order the per-hop path touches them (`repr(C)` keeps that order): the first
/// cache line holds what `catch_up`, `enqueue`, `depart` and `pop_head` read and write on every
/// packet, the second the queue's bytes, the link's limits and delay, the extras pointer and the
/// counters every accepted packet counts; a packet that waits adds the third (queue maxima and
/// integrals); the router module, its view and what only set-up, ticks, samples and summaries
/// read come after. At 10,000 flows the ports outgrow the data cache, and each hop then costs
/// the lines it touches: a passive module's port (DropTail) costs two. What only a few ports
/// have (a loss process, a tunnel or medium role, per-group counters, a capture) lives behind
/// a pointer.
#[repr(C, align(64))]
pub struct Port {
    /// `tx_start` of the next packet to depart (`waiting`), `NEVER` if none waits: lets
    /// `catch_up`, called before everything, decide with one compare that nothing is due.
    next_departure: Time,
    /// End of the last accepted packet's serialisation: when the link falls idle.
    busy_until: Time,
    /// When the FIFO's head reaches the far end, `NEVER` if the FIFO is empty.
    head_arrive: Time,
    /// The last serialisation time computed (`memo_tx`) and the size it was for: a port sees
    /// almost only one packet size, and the float-to-integer ceil is not free.
    memo_tx: Time,
    memo_bytes: u32,
    /// The FIFO, a list through the packets' slots from `head` (the next to reach the far end)
    /// to `tail` (the last accepted): packets on the wire first, then the waiting ones from
    /// `waiting` on (`NIL` if none waits). `sending` is the last packet to have started
    /// serialisation while it is still in the FIFO (`NIL` if none is).
    head: u32,
    tail: u32,
    waiting: u32,
    sending: u32,
    /// The waiting queue (what the router module's view reports, refreshed before each call).
    queue_pkts: u32,
    pub limit_pkts: u32,
    /// The router module is passive (`RouterModule::passive`): its per-packet calls, and the
    /// view refresh they need, are skipped.
    passive: bool,
    /// The router module serves sub-queues (`RouterModule::sub_queues` > 1) or decides at
    /// dequeue (`RouterModule::acts_at_dequeue`): waiting packets are in `Extra::subs`, never in
    /// the FIFO, and each departure is decided when the link falls free.
    sub_queued: bool,
    /// The router module decides at dequeue (`RouterModule::on_dequeue`).
    dequeue_hook: bool,
    // Second line.
    queue_bytes: u64,
    pub limit_bytes: u64,
    pub delay: Time,
    /// Loss process, role, per-group counters, capture: `None` on nearly every port, one
    /// untaken branch per arrival and per departure.
    extra: Option<Box<Extra>>,
    /// From byte 96: arrivals and departures count in the second line, a packet that waits in
    /// the third too (the queue maxima and integrals).
    pub c: PortCounters,
    // Cold: a waiting packet, module calls, ticks, set-up and results.
    last_change: Time,
    module: Box<dyn RouterModule>,
    /// What the router module sees: its queue figures are copied from the port's before each
    /// call, with `idle_since`; capacity, delay and limits are set once. Handing the module a
    /// reference to it saves building a 64-byte view per call.
    view: PortView,
    /// Nanoseconds per byte at the capacity (the serialisation time is rounded up per packet).
    ns_per_byte: f64,
    /// The router module's next control tick, `NEVER` if none.
    next_tick: Time,
    pub name: String,
}

/// What few ports have beyond queueing onto their link.
#[derive(Default)]
struct Extra {
    /// The link direction's loss process; `None` for one that never loses (no draw).
    loss: Option<LossProcess>,
    /// Set on a tunnel gateway's ports and on ports onto a shared medium.
    role: Option<PortRole>,
    /// Bytes sent per flow group (sized to the group count on recorded ports, else empty).
    group_tx: Vec<u64>,
    /// A capture of the port (`--pcap`): every packet that starts serialisation, as it then
    /// is (after the router module's `on_departure`), for the engine to write out.
    tap: Option<Vec<Tapped>>,
    /// A medium port's waiting packets (their times are not known yet), a list through their
    /// slots as the FIFO is; `NIL` when none waits.
    wait_head: u32,
    wait_tail: u32,
    /// When a medium port's last packet started (a medium's airtime is not the link's
    /// serialisation time, so [`Port::unsent`] cannot work it out).
    sent_start: Time,
    /// A sub-queued port's waiting packets: per sub-queue, the (head, tail) of a list through
    /// their slots, `NIL` when empty (empty for a one-queue port).
    subs: Vec<(u32, u32)>,
    /// The head sizes handed to `RouterModule::pick` (kept to save an allocation per departure).
    heads: Vec<Option<u32>>,
}

impl Extra {
    fn new() -> Extra {
        Extra { wait_head: NIL, wait_tail: NIL, ..Extra::default() }
    }

    /// The departure of packet `k` at `t`, as a captured or per-group port records it.
    #[cold]
    #[inline(never)]
    fn departed(&mut self, t: Time, k: u32, pkts: &Packets) {
        if let Some(tap) = &mut self.tap {
            tap.push(Tapped { t, slot: k, pkt: pkts.pkts[k as usize] });
        }
        let s = &pkts.slots[k as usize];
        if let Some(g) = self.group_tx.get_mut(s.group as usize) {
            *g += s.size as u64;
        }
    }
}

/// A packet a captured port started sending.
#[derive(Clone, Copy, Debug)]
pub struct Tapped {
    /// When its serialisation started.
    pub t: Time,
    /// Its index in [`Packets`] (the live router keeps its bytes there).
    pub slot: u32,
    pub pkt: Packet,
}

/// A port's link and buffer: capacity (b/s), propagation delay, buffer limits in packets and
/// bytes, and the mean packet size its router module is told (`PortView::mean_pkt_size`).
#[derive(Clone, Copy, Debug)]
pub struct PortLink {
    pub capacity_bps: f64,
    pub delay: Time,
    pub limit_pkts: u32,
    pub limit_bytes: u64,
    pub mean_pkt_size: u32,
}

impl Port {
    pub fn new(name: String, link: PortLink, module: Box<dyn RouterModule>, loss: LossProcess) -> Port {
        let PortLink { capacity_bps, delay, limit_pkts, limit_bytes, mean_pkt_size } = link;
        let next_tick = module.next_tick().unwrap_or(NEVER);
        let mut p = Port {
            next_departure: NEVER,
            busy_until: 0,
            head_arrive: NEVER,
            memo_tx: 0,
            memo_bytes: 0,
            head: NIL,
            tail: NIL,
            waiting: NIL,
            sending: NIL,
            queue_pkts: 0,
            limit_pkts,
            passive: module.passive(),
            sub_queued: false,
            dequeue_hook: false,
            queue_bytes: 0,
            limit_bytes,
            delay,
            extra: None,
            c: PortCounters::default(),
            last_change: 0,
            module,
            view: PortView {
                queue_pkts: 0,
                queue_bytes: 0,
                capacity_bps,
                delay,
                limit_pkts,
                limit_bytes,
                idle_since: Some(0),
                mean_pkt_size,
            },
            ns_per_byte: 8.0 * NS_PER_SEC as f64 / capacity_bps,
            next_tick,
            name,
        };
        if !loss.is_none() {
            p.extra_mut().loss = Some(loss);
        }
        p.set_sub_queues();
        p
    }

    /// Give the port the sub-queues its router module serves (none beyond the FIFO for one
    /// that neither serves sub-queues nor decides at dequeue; one list for CoDel).
    fn set_sub_queues(&mut self) {
        let n = self.module.sub_queues();
        self.dequeue_hook = self.module.acts_at_dequeue();
        self.sub_queued = n > 1 || self.dequeue_hook;
        if self.sub_queued {
            let x = self.extra_mut();
            x.subs = vec![(NIL, NIL); n];
            x.heads = vec![None; n];
        } else if let Some(x) = &mut self.extra {
            x.subs.clear();
            x.heads.clear();
        }
    }

    /// Link capacity, b/s.
    pub fn capacity_bps(&self) -> f64 {
        self.view.capacity_bps
    }

    fn extra_mut(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(|| Box::new(Extra::new()))
    }

    /// Make the port a tunnel gateway's or a medium member's.
    pub fn set_role(&mut self, role: PortRole) {
        self.extra_mut().role = Some(role);
    }

    /// Count the bytes sent per flow group, for `groups` groups (recorded ports).
    pub fn record_groups(&mut self, groups: usize) {
        self.extra_mut().group_tx = vec![0; groups];
    }

    /// Bytes sent per flow group so far (empty unless `record_groups` was called).
    pub fn group_tx(&self) -> &[u64] {
        self.extra.as_ref().map_or(&[], |x| &x.group_tx)
    }

    /// Capture every packet that starts serialisation from now on (`--pcap`).
    pub fn start_tap(&mut self) {
        self.extra_mut().tap = Some(Vec::new());
    }

    /// The packets captured since the caller last drained this (`None` if not captured).
    pub fn tap_mut(&mut self) -> Option<&mut Vec<Tapped>> {
        self.extra.as_mut()?.tap.as_mut()
    }

    /// The port's router module (read-only: its metrics).
    pub fn module(&self) -> &dyn RouterModule {
        self.module.as_ref()
    }

    /// Put `module` in place of the port's own (a medium's shared module, `crate::shared_router`);
    /// returns the port's own.
    pub fn replace_module(&mut self, module: Box<dyn RouterModule>) -> Box<dyn RouterModule> {
        self.next_tick = module.next_tick().unwrap_or(NEVER);
        self.passive = module.passive();
        let own = std::mem::replace(&mut self.module, module);
        self.set_sub_queues();
        own
    }

    pub fn module_name(&self) -> &'static str {
        self.module.name()
    }

    /// The packet being serialised at `now` (call after `catch_up(now)`), if any: its flow group
    /// and the bytes of it still to go onto the wire, in proportion to its serialisation time
    /// left. `tx_bytes` counts a packet whole when it starts; a rate over an interval takes
    /// this part back so that a packet straddling a sample boundary is split across the two
    /// samples and no sample exceeds the capacity. Costs nothing per packet: only the last
    /// packet to depart can still be on the wire, and the next one's start (or `busy_until`)
    /// says when it ends.
    pub fn unsent(&self, now: Time, pkts: &Packets) -> Option<(u16, f64)> {
        if self.sending == NIL {
            return None;
        }
        let cur = &pkts.slots[self.sending as usize];
        let end = if self.waiting != NIL { self.next_departure } else { self.busy_until };
        if now >= end {
            return None;
        }
        // A link serialises back to back: the packet behind starts as this one ends, and
        // `busy_until` is this one's end when it is the last. A medium's airtime is its own.
        let start = match self.medium() {
            Some(_) => self.extra.as_ref().map_or(0, |x| x.sent_start),
            None => end - self.compute_tx_time(cur.size),
        };
        Some((cur.group, cur.size as f64 * (end - now) as f64 / (end - start) as f64))
    }

    /// Bytes that have been on the wire by `now` (call after `catch_up(now)`): `tx_bytes` less
    /// the part of the packet being serialised that is still to go.
    pub fn wire_bytes(&self, now: Time, pkts: &Packets) -> f64 {
        self.c.tx_bytes as f64 - self.unsent(now, pkts).map_or(0.0, |u| u.1)
    }

    /// Packets held (waiting or on the wire): for conservation checks. Walks the lists.
    pub fn held(&self, pkts: &Packets) -> usize {
        let count = |mut i: u32| {
            let mut n = 0;
            while i != NIL {
                n += 1;
                i = pkts.slots[i as usize].next;
            }
            n
        };
        count(self.head)
            + self.extra.as_ref().map_or(0, |x| count(x.wait_head) + x.subs.iter().map(|s| count(s.0)).sum::<usize>())
    }

    pub fn queue(&self) -> (u32, u64) {
        (self.queue_pkts, self.queue_bytes)
    }

    /// Bring the queue-length integral up to `now` (before sampling).
    pub fn settle(&mut self, now: Time, pkts: &mut Packets) {
        self.catch_up(now, pkts);
        self.account_queue(now);
    }

    pub fn next_tick(&self) -> Option<Time> {
        (self.next_tick != NEVER).then_some(self.next_tick)
    }

    /// A router-module control tick at `now`.
    pub fn tick(&mut self, now: Time, pkts: &mut Packets) {
        self.catch_up(now, pkts);
        self.refresh_view(now);
        self.module.on_tick(now, &self.view);
        self.next_tick = self.module.next_tick().unwrap_or(NEVER);
    }
}

#[cfg(test)]
#[path = "port_tests.rs"]
mod tests;
