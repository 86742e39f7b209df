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

use racc_proto::ipsec::{self, Tunnel};
use racc_proto::loss::LossProcess;
use racc_proto::packet::Packet;
use racc_proto::router::{PortView, RouterModule, Verdict};
use racc_proto::time::{Time, NEVER, NS_PER_SEC};
use std::ops::{Deref, DerefMut};

/// No packet: the end of a queue's list.
const NIL: u32 = u32::MAX;

/// A packet's place in a port's queue, kept beside the packet under the same index
/// ([`Packets`]): the queues are lists through these slots, not a buffer per port (issue 19: at
/// 10,000 flows each port's ring made the write of its tail slot a cache miss per hop, while the
/// slot of the packet just taken off the previous link is still in the cache; and 40,000 rings
/// held 26 MB at their high-water sizes). A packet is in at most one queue at a time.
/// Aligned to its 32 bytes so that no slot straddles two cache lines (unaligned, half of them
/// did: at 10,000 flows the slot read of a head taken off the wire missed 1.25 times a hop).
#[derive(Clone, Copy, Debug)]
#[repr(align(32))]
struct Slot {
    /// The packet queued behind it on the same port, `NIL` if none (yet).
    next: u32,
    /// Wire size, kept here so queue accounting needs no trip to the packet.
    size: u32,
    /// The caller's routing state for the packet (the simulator: the position of this port in
    /// its flat route table, so that the next hop is found without reading the packet).
    hop: u32,
    /// The packet's flow group (scenario `[[flows]]` / `[[traffic]]` entry), for per-aggregate
    /// link shares.
    group: u16,
    /// Lost on the wire: still serialised, never delivered.
    lost: bool,
    /// When the packet behind it (`next`) starts serialisation and reaches the far end, written
    /// when that packet is queued: moving the port on to the next packet (a departure, a head
    /// taken off the wire) then reads this slot alone, not the next one's too.
    next_tx_start: Time,
    next_arrive: Time,
}

const EMPTY_SLOT: Slot =
    Slot { next: NIL, size: 0, hop: 0, group: 0, lost: false, next_tx_start: NEVER, next_arrive: NEVER };

/// The packets in the network, by index, each with its queue slot: what the ports' queues are
/// made of. Reads as a slice of packets; the slots are the ports' own business.
#[derive(Default)]
pub struct Packets {
    pkts: Vec<Packet>,
    slots: Vec<Slot>,
}

impl Packets {
    /// Add a packet at the next index (`len()` before the call).
    pub fn push(&mut self, p: Packet) {
        self.pkts.push(p);
        self.slots.push(EMPTY_SLOT);
    }
}

impl From<Vec<Packet>> for Packets {
    fn from(pkts: Vec<Packet>) -> Packets {
        let slots = vec![EMPTY_SLOT; pkts.len()];
        Packets { pkts, slots }
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
fn prefetch_slot(slots: &[Slot], i: u32) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints the cache; the pointer is never dereferenced.
    unsafe {
        let p = slots.as_ptr().wrapping_add(i as usize);
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slots, i);
}

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

/// What a port does beyond queueing onto its link. At a tunnel boundary (seed 003 §III.C):
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

impl Port {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        capacity_bps: f64,
        delay: Time,
        limit_pkts: u32,
        limit_bytes: u64,
        mean_pkt_size: u32,
        module: Box<dyn RouterModule>,
        loss: LossProcess,
    ) -> Port {
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
        p
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
        std::mem::replace(&mut self.module, module)
    }

    pub fn module_name(&self) -> &'static str {
        self.module.name()
    }

    #[inline]
    fn tx_time(&mut self, bytes: u32) -> Time {
        if self.memo_bytes != bytes {
            self.memo_tx = self.compute_tx_time(bytes);
            self.memo_bytes = bytes;
        }
        self.memo_tx
    }

    fn compute_tx_time(&self, bytes: u32) -> Time {
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
    fn idle_since(&self, now: Time) -> Option<Time> {
        if self.queue_pkts == 0 && now >= self.busy_until {
            Some(self.busy_until)
        } else {
            None
        }
    }

    /// Bring the stored view to `now`, for a module call.
    #[inline]
    fn refresh_view(&mut self, now: Time) {
        self.view.queue_pkts = self.queue_pkts;
        self.view.queue_bytes = self.queue_bytes;
        self.view.idle_since = self.idle_since(now);
    }

    #[inline]
    fn account_queue(&mut self, t: Time) {
        // A caller's clock must not go back (a wrapped `t - last_change` once made a live
        // mean queue 3·2^64 ns / 10 s); in a release build a late call adds nothing.
        debug_assert!(t >= self.last_change, "port time went back: {t} < {}", self.last_change);
        let dt = t.saturating_sub(self.last_change) as u128;
        self.c.queue_pkt_ns += self.queue_pkts as u128 * dt;
        self.c.queue_byte_ns += self.queue_bytes as u128 * dt;
        self.last_change = self.last_change.max(t);
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
    fn catch_up_due(&mut self, now: Time, pkts: &mut Packets) {
        while self.next_departure <= now {
            let t = self.next_departure;
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
    fn depart(&mut self, t: Time, pkts: &mut Packets) {
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
    fn departure_hooks(&mut self, t: Time, k: u32, pkts: &mut Packets) {
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
    #[allow(clippy::too_many_arguments)]
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
    fn push(&mut self, pkts: &mut Packets, s: Slot, idx: u32, tx_start: Time, arrive: Time) {
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
    fn module_admits(&mut self, now: Time, pkt: &mut Packet) -> bool {
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
    fn queue_grows(&mut self, now: Time, size: u32) {
        self.account_queue(now);
        self.queue_pkts += 1;
        self.queue_bytes += size as u64;
        self.c.max_queue_pkts = self.c.max_queue_pkts.max(self.queue_pkts);
        self.c.max_queue_bytes = self.c.max_queue_bytes.max(self.queue_bytes);
    }

    /// A packet arriving at a medium port: router module and buffer check as on a link, then
    /// the wait list (it counts in the queue until it wins the channel, as a frame in an
    /// interface queue does).
    #[cold]
    #[inline(never)]
    fn contend(&mut self, now: Time, idx: u32, pkts: &mut Packets, hop: u32, group: u16) -> Accept {
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
        count(self.head) + self.extra.as_ref().map_or(0, |x| count(x.wait_head))
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
