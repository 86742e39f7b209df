//! An output port: the queue in front of one direction of a link, the link itself
//! (serialisation at the capacity, then propagation), the router module that manages the
//! queue, and the link direction's loss process.
//!
//! Speed comes from never scheduling per-packet departure events. A FIFO link serves
//! packets in order at a fixed rate, so a packet's transmission start, end and far-end
//! arrival are all known the moment it is accepted. The port therefore holds one FIFO of
//! accepted packets (waiting ones at the back, ones already on the wire at the front) and
//! the engine schedules only the arrival of the FIFO's head. Departures — the moment a
//! packet leaves the queue and the router module's `on_departure` runs — are processed
//! lazily by [`Port::catch_up`] before anything observes the port (an arrival, a tick, a
//! sample, the head's delivery). Since every arrival catches up first, each departure sees
//! exactly the queue it would have seen with an explicit event: the model is exact, and the
//! engine does one event per packet-hop.
//!
//! A port onto a shared medium (`crate::medium`) cannot know its departures in advance: they
//! are decided by contention with the other members' ports. Such a port holds its waiting
//! packets in a second ring (`wait`) and the medium starts each one when it wins the channel
//! ([`Port::start_contended`]); the FIFO then holds only packets already on the wire, exactly
//! as it does for a link, so delivery and sampling are the same code. The point-to-point path
//! pays nothing for this: a medium port is told apart by the role check that tunnel gateways
//! already needed.

use racc_proto::ipsec::{self, Tunnel};
use racc_proto::loss::LossProcess;
use racc_proto::packet::Packet;
use racc_proto::router::{PortView, RouterModule, Verdict};
use racc_proto::time::{Time, NEVER, NS_PER_SEC};

/// A packet accepted by a port, with the times the FIFO link gives it. The packet itself
/// stays in the engine's slab (`pkts`): queues move 32-byte slots, never 104-byte packets.
#[derive(Clone, Copy, Debug, Default)]
pub struct Slot {
    /// Index of the packet in the engine's slab.
    pub pkt: u32,
    /// Wire size, kept here so queue accounting needs no trip to the slab.
    pub size: u32,
    /// The caller's routing state for the packet (the simulator: the position of this port in
    /// its flat route table, so that the next hop is found without reading the packet).
    pub hop: u32,
    /// Lost on the wire: still serialised, never delivered.
    pub lost: bool,
    /// The packet's flow group (scenario `[[flows]]` / `[[traffic]]` entry), for per-aggregate
    /// link shares.
    pub group: u16,
    pub tx_start: Time,
    pub arrive: Time,
}

/// The port's FIFO of slots: a ring over a power-of-two buffer, so that indexing is a mask
/// rather than `VecDeque`'s wrap-around arithmetic (it is indexed several times per hop).
/// Grows to the port's peak occupancy and stays there: no allocation per packet after
/// warm-up, and idle access ports cost nothing.
#[derive(Default)]
struct Ring {
    /// Empty or a power of two long. A boxed slice and 32-bit positions keep the ring to 16
    /// bytes of the port's hot lines.
    buf: Box<[Slot]>,
    head: u32,
    len: u32,
}

impl Ring {
    #[inline]
    fn len(&self) -> usize {
        self.len as usize
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn mask(&self) -> usize {
        self.buf.len().wrapping_sub(1)
    }

    /// The `i`-th slot from the front; `i < len`.
    #[inline]
    fn at(&self, i: usize) -> &Slot {
        debug_assert!(i < self.len());
        &self.buf[(self.head as usize + i) & self.mask()]
    }

    #[inline]
    fn get(&self, i: usize) -> Option<&Slot> {
        (i < self.len()).then(|| self.at(i))
    }

    #[inline]
    fn front(&self) -> Option<&Slot> {
        self.get(0)
    }

    #[inline]
    fn push_back(&mut self, s: Slot) {
        if self.len() == self.buf.len() {
            self.grow();
        }
        let i = (self.head as usize + self.len()) & self.mask();
        self.buf[i] = s;
        self.len += 1;
    }

    /// Remove the front slot; the ring must not be empty.
    #[inline]
    fn pop_front(&mut self) -> Slot {
        assert!(self.len > 0, "pop_head on an empty port");
        let s = self.buf[self.head as usize];
        self.head = ((self.head as usize + 1) & self.mask()) as u32;
        self.len -= 1;
        s
    }

    #[cold]
    fn grow(&mut self) {
        let cap = (2 * self.buf.len()).max(8);
        assert!(cap <= u32::MAX as usize, "a port's FIFO outgrew 2^32 packets");
        let mut buf = Vec::with_capacity(cap);
        buf.extend((0..self.len()).map(|i| *self.at(i)));
        buf.resize(cap, Slot::default());
        self.buf = buf.into_boxed_slice();
        self.head = 0;
    }
}

/// Counters, cumulative since the start of the run. `repr(C)`: the three every accepted packet
/// counts first, so that they share the port's third cache line with its module and extras.
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

/// Fields in the order the per-hop path touches them (`repr(C)` keeps that order; the
/// compiler's own order scattered them over the whole struct): first what `catch_up`,
/// `enqueue`, `depart` and `pop_head` read and write on every packet, then what they only
/// test, then what only set-up, ticks, samples and summaries read. At 10,000 flows the
/// ports outgrow the data cache, and each hop then costs the lines it touches: an arrival
/// onto an idle link touches the first three, a packet that waits the fourth too. What only a
/// few ports have (a loss process, a tunnel or medium role, per-group counters, a capture)
/// lives behind a pointer, so that a port is five lines, not eight (40,002 ports at
/// 10,000 flows: 12.8 MB, not 20.5).
#[repr(C, align(64))]
pub struct Port {
    /// `tx_start` of fifo[departed] (the next departure), `NEVER` if none waits: lets
    /// `catch_up`, called before everything, decide with one compare that nothing is due.
    next_departure: Time,
    /// End of the last accepted packet's serialisation: when the link falls idle.
    busy_until: Time,
    last_change: Time,
    /// fifo[..departed] are on the wire, fifo[departed..] are waiting.
    departed: u32,
    /// The last serialisation time computed (`memo_tx`) and the size it was for: a port sees
    /// almost only one packet size, and the float-to-integer ceil is not free.
    memo_bytes: u32,
    memo_tx: Time,
    /// What the router module sees, kept up to date in place: its queue figures are the
    /// port's own (the single source of truth), only `idle_since` is set per call. Handing
    /// the module a reference to it saves building a 64-byte view twice per packet-hop.
    /// The hot path reads the capacity, delay and limits from here too.
    view: PortView,
    fifo: Ring,
    module: Box<dyn RouterModule>,
    /// The link direction's loss process; `None` for one that never loses (no draw).
    loss: Option<Box<LossProcess>>,
    /// Role, per-group counters, capture: `None` on nearly every port, one untaken branch
    /// per arrival and per departure.
    extra: Option<Box<Extra>>,
    /// From byte 160: arrivals and departures count in this line, a packet that waits in the
    /// next one too (the queue integrals).
    pub c: PortCounters,
    // Cold: per size change, per tick, set-up and results.
    /// Nanoseconds per byte at the capacity (the serialisation time is rounded up per packet).
    ns_per_byte: f64,
    /// The router module's next control tick, `NEVER` if none.
    next_tick: Time,
    pub name: String,
    pub delay: Time,
    pub limit_bytes: u64,
    pub limit_pkts: u32,
    /// The router module is passive (`RouterModule::passive`): its per-packet calls, and the
    /// view refresh they need, are skipped. In the tail padding, so a port stays five lines.
    passive: bool,
}

/// What few ports have beyond queueing onto their link.
#[derive(Default)]
struct Extra {
    /// Set on a tunnel gateway's ports and on ports onto a shared medium.
    role: Option<PortRole>,
    /// Bytes sent per flow group (sized to the group count on recorded ports, else empty).
    group_tx: Vec<u64>,
    /// A capture of the port (`--pcap`): every packet that starts serialisation, as it then
    /// is (after the router module's `on_departure`), for the engine to write out.
    tap: Option<Vec<Tapped>>,
    /// A medium port's waiting packets (their times are not known yet); empty otherwise.
    wait: Ring,
}

impl Extra {
    /// The departure of `slot` at `t`, as a captured or per-group port records it.
    #[cold]
    #[inline(never)]
    fn departed(&mut self, t: Time, slot: &Slot, pkts: &[Packet]) {
        if let Some(tap) = &mut self.tap {
            tap.push(Tapped { t, slot: slot.pkt, pkt: pkts[slot.pkt as usize] });
        }
        if let Some(g) = self.group_tx.get_mut(slot.group as usize) {
            *g += slot.size as u64;
        }
    }
}

/// A packet a captured port started sending.
#[derive(Clone, Copy, Debug)]
pub struct Tapped {
    /// When its serialisation started.
    pub t: Time,
    /// Its index in the engine's slab (the live router keeps its bytes there).
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
        Port {
            passive: module.passive(),
            name,
            ns_per_byte: 8.0 * NS_PER_SEC as f64 / capacity_bps,
            delay,
            limit_pkts,
            limit_bytes,
            module,
            loss: (!loss.is_none()).then(|| Box::new(loss)),
            extra: None,
            fifo: Ring::default(),
            departed: 0,
            next_departure: NEVER,
            memo_bytes: 0,
            memo_tx: 0,
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
            busy_until: 0,
            last_change: 0,
            next_tick,
            c: PortCounters::default(),
        }
    }

    /// Link capacity, b/s.
    pub fn capacity_bps(&self) -> f64 {
        self.view.capacity_bps
    }

    fn extra_mut(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Box::default)
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
        PortView { idle_since: self.idle_since(now), ..self.view }
    }

    #[inline]
    fn idle_since(&self, now: Time) -> Option<Time> {
        if self.view.queue_pkts == 0 && now >= self.busy_until {
            Some(self.busy_until)
        } else {
            None
        }
    }

    /// Bring the stored view's time-dependent part to `now`, for a module call.
    #[inline]
    fn refresh_view(&mut self, now: Time) {
        self.view.idle_since = self.idle_since(now);
    }

    #[inline]
    fn account_queue(&mut self, t: Time) {
        let dt = (t - self.last_change) as u128;
        self.c.queue_pkt_ns += self.view.queue_pkts as u128 * dt;
        self.c.queue_byte_ns += self.view.queue_bytes as u128 * dt;
        self.last_change = t;
    }

    /// Carry out every departure due by `now`, in order, at its own time.
    #[inline(always)]
    pub fn catch_up(&mut self, now: Time, pkts: &mut [Packet]) {
        // Most calls find nothing due: keep that case to one inlined compare.
        if self.next_departure <= now {
            self.catch_up_due(now, pkts);
        }
    }

    #[inline(never)]
    fn catch_up_due(&mut self, now: Time, pkts: &mut [Packet]) {
        while self.next_departure <= now {
            let t = self.next_departure;
            self.account_queue(t);
            let size = self.fifo.at(self.departed as usize).size;
            self.view.queue_pkts -= 1;
            self.view.queue_bytes -= size as u64;
            self.depart(t, pkts);
        }
    }

    /// The packet at `fifo[departed]` starts serialisation at `t`. Inlined into its callers:
    /// with a passive module and no extras it is a few counter updates, and as a call its
    /// register saves and the copy of the slot cost more than that.
    #[inline(always)]
    fn depart(&mut self, t: Time, pkts: &mut [Packet]) {
        if !self.passive || self.extra.is_some() {
            self.departure_hooks(t, pkts);
        }
        let size = self.fifo.at(self.departed as usize).size;
        self.c.tx_pkts += 1;
        self.c.tx_bytes += size as u64;
        self.departed += 1;
        self.next_departure = self.fifo.get(self.departed as usize).map_or(NEVER, |s| s.tx_start);
    }

    /// What a departure does beyond the port's counters: the router module's `on_departure`
    /// (unless it is passive), then a capture's or the per-group counters' record.
    #[inline(never)]
    fn departure_hooks(&mut self, t: Time, pkts: &mut [Packet]) {
        let slot = *self.fifo.at(self.departed as usize);
        if !self.passive {
            self.refresh_view(t);
            if self.module.on_departure(t, &mut pkts[slot.pkt as usize], &self.view) {
                self.c.marks += 1;
            }
        }
        if let Some(x) = &mut self.extra {
            x.departed(t, &slot, pkts);
        }
    }

    /// Packet `idx` of the slab arrives at the port at `now`: router module, buffer check,
    /// then the FIFO.
    #[inline]
    pub fn enqueue(&mut self, now: Time, idx: u32, pkts: &mut [Packet], hop: u32, group: u16) -> Accept {
        let size = pkts[idx as usize].size;
        self.enqueue_sized(now, idx, pkts, hop, group, size)
    }

    /// [`Self::enqueue`] of a packet whose wire size `size` the caller knows (the previous
    /// port's slot has it): a hop through a module that does not look at the packet then never
    /// reads it (issue 19: at 10,000 flows that read was a cache miss per hop).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn enqueue_sized(
        &mut self,
        now: Time,
        idx: u32,
        pkts: &mut [Packet],
        hop: u32,
        group: u16,
        size: u32,
    ) -> Accept {
        self.catch_up(now, pkts);
        self.c.arrivals += 1;
        debug_assert_eq!(size, pkts[idx as usize].size);
        let pkt = &mut pkts[idx as usize];
        let mut size = size;
        if let Some(Extra { role: Some(r), .. }) = self.extra.as_deref_mut() {
            if let PortRole::Medium { .. } = r {
                self.refresh_view(now);
                return self.contend(now, idx, pkts, hop, group);
            }
            r.apply(now, pkt, self.module.as_mut());
            // A tunnel boundary adds or takes off the outer header.
            size = pkt.size;
        }
        if !self.passive {
            self.refresh_view(now);
            if !self.module_admits(now, pkt) {
                return Accept::Dropped;
            }
        }
        let link_idle = now >= self.busy_until;
        // A packet that goes straight onto an idle link never waits, so it needs no space.
        let v = &self.view;
        if !link_idle && (v.queue_pkts + 1 > v.limit_pkts || v.queue_bytes + size as u64 > v.limit_bytes) {
            if !self.passive {
                self.module.on_buffer_drop(now, pkt, &self.view);
            }
            self.c.drops += 1;
            return Accept::Dropped;
        }
        let tx_start = if link_idle { now } else { self.busy_until };
        self.busy_until = tx_start + self.tx_time(size);
        let arrive = self.busy_until + self.view.delay;
        let lost = self.lose();
        let was_empty = self.fifo.is_empty();
        self.fifo.push_back(Slot { pkt: idx, size, hop, lost, group, tx_start, arrive });
        if self.next_departure == NEVER {
            // It is the only packet not yet on the wire.
            self.next_departure = tx_start;
        }
        if link_idle {
            self.depart(now, pkts);
        } else {
            self.queue_grows(now, size);
        }
        Accept::Queued { was_empty }
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
    /// medium's wait ring): the queue integrals first, then the counts and their maxima.
    #[inline(always)]
    fn queue_grows(&mut self, now: Time, size: u32) {
        self.account_queue(now);
        self.view.queue_pkts += 1;
        self.view.queue_bytes += size as u64;
        self.c.max_queue_pkts = self.c.max_queue_pkts.max(self.view.queue_pkts);
        self.c.max_queue_bytes = self.c.max_queue_bytes.max(self.view.queue_bytes);
    }

    /// A packet arriving at a medium port: router module and buffer check as on a link, then
    /// the wait ring (it counts in the queue until it wins the channel, as a frame in an
    /// interface queue does).
    #[cold]
    #[inline(never)]
    fn contend(&mut self, now: Time, idx: u32, pkts: &mut [Packet], hop: u32, group: u16) -> Accept {
        let pkt = &mut pkts[idx as usize];
        if !self.module_admits(now, pkt) {
            return Accept::Dropped;
        }
        let size = pkt.size;
        let v = &self.view;
        if v.queue_pkts + 1 > v.limit_pkts || v.queue_bytes + size as u64 > v.limit_bytes {
            self.module.on_buffer_drop(now, pkt, &self.view);
            self.c.drops += 1;
            return Accept::Dropped;
        }
        self.extra_mut().wait.push_back(Slot {
            pkt: idx,
            size,
            hop,
            lost: false,
            group,
            tx_start: NEVER,
            arrive: NEVER,
        });
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
    pub fn waiting_head(&self) -> Option<u32> {
        self.extra.as_ref()?.wait.front().map(|s| s.size)
    }

    /// A medium port's next waiting packet goes onto the medium at `t` (it won the channel, or
    /// it is dropped after too many collisions: `lost`). Its bits are on the air until
    /// `data_end`; it reaches the far end at `arrive`. Returns true if the FIFO was empty, so
    /// the engine must schedule its head.
    pub fn start_contended(&mut self, t: Time, data_end: Time, arrive: Time, lost: bool, pkts: &mut [Packet]) -> bool {
        let mut slot = self.extra_mut().wait.pop_front();
        self.account_queue(t);
        self.view.queue_pkts -= 1;
        self.view.queue_bytes -= slot.size as u64;
        slot.tx_start = t;
        slot.arrive = arrive;
        slot.lost = lost;
        let was_empty = self.fifo.is_empty();
        self.fifo.push_back(slot);
        // The FIFO holds only packets on the wire: `depart` leaves `next_departure` at NEVER.
        self.busy_until = data_end;
        self.depart(t, pkts);
        was_empty
    }

    /// A medium port's loss process, drawn once per frame sent.
    #[inline]
    pub fn lose(&mut self) -> bool {
        match &mut self.loss {
            Some(l) => l.lose(),
            None => false,
        }
    }

    /// Arrival time of the FIFO's head at the far end.
    #[inline]
    pub fn head_arrival(&self) -> Option<Time> {
        self.fifo.front().map(|s| s.arrive)
    }

    /// Take the head off the wire at its arrival time `now` (the engine's one event).
    #[inline]
    pub fn pop_head(&mut self, now: Time, pkts: &mut [Packet]) -> Slot {
        self.catch_up(now, pkts);
        debug_assert!(self.departed > 0);
        self.departed -= 1;
        let s = self.fifo.pop_front();
        if s.lost {
            self.c.losses += 1;
        }
        s
    }

    /// The packet being serialised at `now` (call after `catch_up(now)`), if any: its flow group
    /// and the bytes of it still to go onto the wire, in proportion to its serialisation time
    /// left. `tx_bytes` counts a packet whole when it starts; a rate over an interval takes
    /// this part back so that a packet straddling a sample boundary is split across the two
    /// samples and no sample exceeds the capacity. Costs nothing per packet: only the last
    /// packet to depart can still be on the wire, and the next slot (or `busy_until`) says
    /// when it ends.
    pub fn unsent(&self, now: Time) -> Option<(u16, f64)> {
        let cur = self.fifo.get((self.departed as usize).checked_sub(1)?)?;
        let end = self.fifo.get(self.departed as usize).map_or(self.busy_until, |s| s.tx_start);
        (now < end).then(|| (cur.group, cur.size as f64 * (end - now) as f64 / (end - cur.tx_start) as f64))
    }

    /// Bytes that have been on the wire by `now` (call after `catch_up(now)`): `tx_bytes` less
    /// the part of the packet being serialised that is still to go.
    pub fn wire_bytes(&self, now: Time) -> f64 {
        self.c.tx_bytes as f64 - self.unsent(now).map_or(0.0, |u| u.1)
    }

    /// Packets held (waiting or on the wire): for conservation checks.
    pub fn held(&self) -> usize {
        self.fifo.len() + self.extra.as_ref().map_or(0, |x| x.wait.len())
    }

    pub fn queue(&self) -> (u32, u64) {
        (self.view.queue_pkts, self.view.queue_bytes)
    }

    /// Bring the queue-length integral up to `now` (before sampling).
    pub fn settle(&mut self, now: Time, pkts: &mut [Packet]) {
        self.catch_up(now, pkts);
        self.account_queue(now);
    }

    pub fn next_tick(&self) -> Option<Time> {
        (self.next_tick != NEVER).then_some(self.next_tick)
    }

    /// A router-module control tick at `now`.
    pub fn tick(&mut self, now: Time, pkts: &mut [Packet]) {
        self.catch_up(now, pkts);
        self.refresh_view(now);
        self.module.on_tick(now, &self.view);
        self.next_tick = self.module.next_tick().unwrap_or(NEVER);
    }
}

#[cfg(test)]
#[path = "port_tests.rs"]
mod tests;
