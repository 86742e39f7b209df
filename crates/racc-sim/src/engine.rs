//! The discrete-event engine: builds ports and flows from a [`Spec`], then runs events in
//! (time, sequence) order. A packet's path: an endpoint's `poll_transmit` hands it to the
//! first port of its route; each port accepts or drops it and, when it is the FIFO head,
//! schedules its arrival at the far end; on arrival it is enqueued on the next port of the
//! route or delivered to the destination endpoint, whose answers go back the same way.

use crate::event::{EventQueue, Timer, What};
use crate::medium::Medium;
use crate::metrics::{unsent_bytes, Completions, Conservation, FlowSeries, GroupSeries, PortMark, PortSeries};
use crate::port::{Accept, Packets, Port, PortCounters, PortRole};
use crate::scenario::{BufferSpec, FlowSpec, ScenarioError, Spec};
use crate::sources::FlowSource;
use racc_proto::endpoint::{Endpoint, FlowConfig, Transmit};
use racc_proto::ipsec::Tunnel;
use racc_proto::loss::{LossProcess, LossSpec};
use racc_proto::packet::{Direction, Kind, Packet, TcpHeader};
use racc_proto::registry::{PortIdentity, RouterFactory};
use racc_proto::rng::SimRng;
use racc_proto::time::Time;
use racc_proto::wire::ip_packet;
use std::sync::Arc;

/// Runtime state of one flow. Endpoints exist only while the flow runs, so a study with tens
/// of thousands of short flows holds only the live ones: a flow runs exactly while it has them
/// (started, not yet complete). One cache line holding all a delivery and the answer it sends
/// read of the flow (issue 19: at 10,000 flows the 80-byte record it replaced straddled two
/// lines on most flows, and the routes and group, in arrays of their own, were two more misses
/// per delivery).
#[repr(align(64))]
struct FlowRt {
    sender: Option<Box<dyn Endpoint>>,
    receiver: Option<Box<dyn Endpoint>>,
    /// Each side's timer event in the queue (lazily cancelled).
    timer: [Timer; 2],
    /// Where each side's route starts in `Simulator::route_ports` (the sender's is the data path).
    routes: [u32; 2],
    /// Bytes to send; `UNSIZED` = until stopped.
    size: u64,
}

/// `FlowRt::size` of a flow without a size (sizes are at most 2^53 bytes: `scenario::limits`).
const UNSIZED: u64 = u64::MAX;

/// A closed-loop source during the run (`sources.rs`): its state, where its flows run, and
/// the size of the flow it will make next.
struct SourceRt {
    source: Box<dyn FlowSource>,
    routes: [u32; 2],
    group: u16,
    next_bytes: u64,
}

/// A flow a source made: which source, and when it started. Its id is the number of listed
/// flows plus its index here.
#[derive(Clone, Copy, Debug)]
struct Made {
    source: u32,
    start: Time,
}

/// What the results say of one flow, listed or made by a source.
#[derive(Clone, Copy, Debug)]
pub struct FlowInfo<'a> {
    /// The flow's group, protocol, ends, routes and options (for a made flow, its source's template).
    pub spec: &'a FlowSpec,
    pub start: Time,
    pub size_bytes: Option<u64>,
    /// The source (index into `Spec::sources`) that made it.
    pub source: Option<usize>,
}

/// Packets in the network live here from `poll_transmit` to delivery or drop; ports and
/// events refer to them by index. Freed slots are reused, so after warm-up no packet costs
/// an allocation, and a packet is written once however many hops it crosses.
#[derive(Default)]
struct Slab {
    /// The packets, with their places in the ports' queues.
    pkts: Packets,
    free: Vec<u32>,
}

impl FlowRt {
    fn pending(size: Option<u64>, routes: [u32; 2]) -> FlowRt {
        FlowRt { sender: None, receiver: None, timer: [Timer::default(); 2], routes, size: size.unwrap_or(UNSIZED) }
    }

    fn running(&self) -> bool {
        self.sender.is_some()
    }

    fn size(&self) -> Option<u64> {
        (self.size != UNSIZED).then_some(self.size)
    }
}

impl Slab {
    /// The slot the next packet will take, still free: an endpoint writes its packet straight
    /// into it (`Endpoint::poll_transmit_into`), and `take` claims it if one was written.
    #[inline]
    fn vacant(&mut self) -> u32 {
        match self.free.last() {
            Some(&i) => i,
            None => self.grow(),
        }
    }

    #[cold]
    fn grow(&mut self) -> u32 {
        let i = self.pkts.len() as u32;
        self.pkts.push(Packet::tcp(0, Kind::Data, 0, 0, TcpHeader::default()));
        self.free.push(i);
        i
    }

    /// Claim the slot `vacant` gave.
    #[inline]
    fn take(&mut self) {
        self.free.pop();
    }

    #[inline]
    fn release(&mut self, i: u32) {
        self.free.push(i);
    }
}

const SENDER: usize = 0;
const RECEIVER: usize = 1;

/// Ends each route in `Simulator::route_ports` (no port has this number).
const ROUTE_END: u32 = u32::MAX;

pub struct Simulator {
    /// The checked scenario, shared with whoever needs it after the run (the resolved
    /// scenario a front end writes), without a copy of its flow list.
    pub spec: Arc<Spec>,
    now: Time,
    q: EventQueue,
    ports: Vec<Port>,
    /// Shared media; their members' ports are in `ports`.
    media: Vec<Medium>,
    /// Every route's ports, end to end, each followed by `ROUTE_END` (where a flow's two routes
    /// start is in its `FlowRt`). A packet's slot carries its position here (`Slot::hop`), so
    /// the per-hop lookup reads one entry of this array: not the packet, not the flow (issue 19:
    /// at 10,000 flows both were cache misses on every hop).
    route_ports: Vec<u32>,
    /// Flow groups (scenario `[[flows]]`/`[[traffic]]` names) in order of first appearance,
    /// and each flow's index into it (a delivery's answer takes it from the delivered packet's
    /// slot instead: this array is read when a flow starts or a timer fires).
    pub groups: Vec<String>,
    flow_group: Vec<u16>,
    /// Per flow, its receiver's bytes at the previous sample, for goodput (read only by samples
    /// and a flow's completion, so kept out of `FlowRt`'s line).
    last_bytes: Vec<u64>,
    /// Per recorded port (`spec.record_ports` order), its group counters at the last sample.
    prev_group_tx: Vec<Vec<u64>>,
    pub group_series: GroupSeries,
    slab: Slab,
    flows: Vec<FlowRt>,
    next_start: usize,
    sources: Vec<SourceRt>,
    /// Flows made by sources, in the order made (ids from `spec.flows.len()` on).
    made: Vec<Made>,
    events: u64,
    time_reversals: u64,
    cons: Conservation,
    // Metrics.
    last_sample: Time,
    /// Per recorded port (`spec.record_ports` order), its mark at the last sample.
    prev: Vec<PortMark>,
    pub port_series: PortSeries,
    pub flow_series: FlowSeries,
    pub completions: Completions,
    /// Payload bytes delivered in order to receivers, all flows.
    goodput_bytes: u64,
    /// Receiver bytes of flows already finished and freed.
    done_bytes: u64,
    /// A packet capture of some ports (`capture`), written at each sample and at the end.
    capture: Option<Box<CaptureState>>,
}

/// A capture in progress: the file, the tapped packets being put in time order, the first
/// write error (the capture stops there; the run goes on).
struct CaptureState {
    file: crate::pcap::Capture,
    batch: Vec<(u32, crate::port::Tapped)>,
    buf: Vec<u8>,
    error: Option<String>,
}

impl Simulator {
    /// Build a run from a checked scenario. Fails only if a protocol refuses its parameters,
    /// which scenario checking already rules out.
    pub fn new(spec: Spec) -> Result<Simulator, ScenarioError> {
        let mut ports = build_ports(&spec)?;
        let (rtt_sum, rtt_n) = port_rtts(&spec);
        let (media, medium_ports) = Medium::build(&spec, &rtt_sum, &rtt_n)?;
        ports.extend(medium_ports);
        // Marks per recorded port, not per port: at 10,000 flows one per port was 5.1 MB.
        let prev = vec![PortMark::default(); spec.record_ports.len()];
        let mut route_ports = Vec::with_capacity(spec.routes.iter().map(|r| r.len() + 1).sum());
        let mut starts = Vec::with_capacity(spec.routes.len());
        for r in &spec.routes {
            starts.push(route_ports.len() as u32);
            route_ports.extend(r.iter().map(|&p| p as u32));
            route_ports.push(ROUTE_END);
        }
        assert!(route_ports.len() <= u32::MAX as usize, "route table outgrew 2^32 entries");
        let flows = spec
            .flows
            .iter()
            .map(|f| FlowRt::pending(f.size_bytes, [starts[f.fwd_route], starts[f.rev_route]]))
            .collect();
        let last_bytes = vec![0; spec.flows.len()];
        let mut groups: Vec<String> = Vec::new();
        let mut group_of = |f: &FlowSpec| match groups.iter().position(|g| *g == f.group) {
            Some(i) => i as u16,
            None => {
                groups.push(f.group.clone());
                (groups.len() - 1) as u16
            }
        };
        let flow_group: Vec<u16> = spec.flows.iter().map(&mut group_of).collect();
        let sources = spec
            .sources
            .iter()
            .map(|s| SourceRt {
                source: s.law.source(spec.seed),
                routes: [starts[s.flow.fwd_route], starts[s.flow.rev_route]],
                group: group_of(&s.flow),
                next_bytes: 0,
            })
            .collect();
        // Per-group byte counters on recorded ports, when asked for (`record.groups`) and there is
        // more than one group to tell apart: a row per group, port and sample is what made a list
        // of 10,000 single-flow groups cost a gigabyte (issue 21).
        let mut prev_group_tx = vec![Vec::new(); spec.record_ports.len()];
        if spec.record_groups && groups.len() > 1 {
            for (r, &p) in spec.record_ports.iter().enumerate() {
                ports[p].record_groups(groups.len());
                prev_group_tx[r] = vec![0; groups.len()];
            }
        }
        for t in &spec.tunnels {
            for &p in &t.encap_ports {
                let first_id = SimRng::for_component(spec.seed, &format!("tunnel/{}/port{p}", t.id)).below(1 << 16);
                ports[p].set_role(PortRole::Encap(Tunnel::new(t.id, first_id as u16)));
            }
            for &p in &t.decap_ports {
                ports[p].set_role(PortRole::Decap(t.id));
            }
        }
        let mut sim = Simulator {
            spec: Arc::new(spec),
            now: 0,
            q: EventQueue::default(),
            ports,
            media,
            route_ports,
            groups,
            flow_group,
            last_bytes,
            prev_group_tx,
            group_series: GroupSeries::default(),
            slab: Slab::default(),
            flows,
            next_start: 0,
            sources,
            made: Vec::new(),
            events: 0,
            time_reversals: 0,
            cons: Conservation::default(),
            last_sample: 0,
            prev,
            port_series: PortSeries::default(),
            flow_series: FlowSeries::default(),
            completions: Completions::default(),
            goodput_bytes: 0,
            done_bytes: 0,
            capture: None,
        };
        for p in 0..sim.ports.len() {
            if let Some(t) = sim.ports[p].next_tick() {
                sim.q.push(t, What::Tick, p as u32);
            }
        }
        if let Some(f) = sim.spec.flows.first() {
            sim.q.push(f.start, What::FlowStart, 0);
        }
        for (i, f) in sim.spec.flows.iter().enumerate() {
            if let Some(s) = f.stop {
                sim.q.push(s, What::FlowStop, i as u32);
            }
        }
        sim.q.push(sim.spec.sample_interval.min(sim.spec.duration), What::Sample, 0);
        for s in 0..sim.sources.len() {
            let first = sim.sources[s].source.first();
            sim.schedule_source(s, first);
        }
        Ok(sim)
    }

    pub fn now(&self) -> Time {
        self.now
    }
    pub fn end(&self) -> Time {
        self.spec.duration
    }
    pub fn events(&self) -> u64 {
        self.events
    }
    /// Events that were found scheduled before the current time (must stay 0).
    pub fn time_reversals(&self) -> u64 {
        self.time_reversals
    }
    pub fn finished(&self) -> bool {
        self.now >= self.spec.duration
    }
    pub fn ports(&self) -> &[Port] {
        &self.ports
    }
    /// Packets port `p` holds, waiting or on the wire (for conservation checks).
    pub fn held(&self, p: usize) -> usize {
        self.ports[p].held(&self.slab.pkts)
    }
    pub fn media(&self) -> &[Medium] {
        &self.media
    }
    /// Payload bytes delivered in order to receivers so far.
    pub fn goodput_bytes(&self) -> u64 {
        self.goodput_bytes
    }

    /// Packet accounting as of now.
    pub fn conservation(&self) -> Conservation {
        let mut c = self.cons;
        c.in_flight = self.ports.iter().map(|p| p.held(&self.slab.pkts) as u64).sum();
        // Every packet in flight holds exactly one slab slot.
        debug_assert_eq!(c.in_flight as usize, self.slab.pkts.len() - self.slab.free.len());
        c
    }

    /// Run every event up to and including time `t` (capped at the end of the run).
    /// Returns true once the run is complete.
    pub fn run_until(&mut self, t: Time) -> bool {
        self.run_slice(t, u64::MAX);
        self.finished()
    }

    /// [`Self::run_until`] `t`, but stop after at most `max_events` events; true once `t` is
    /// reached. Slices bound the wall time between two looks at Ctrl-C at any event density;
    /// where a run is sliced does not change it (events run in the same order).
    pub fn run_slice(&mut self, t: Time, max_events: u64) -> bool {
        let t = t.min(self.spec.duration);
        let stop = self.events.saturating_add(max_events);
        loop {
            if self.events >= stop {
                return false;
            }
            let Some(ev) = self.q.pop_due(t) else { break };
            // Causality: checked on every event (one compare), reported by `time_reversals`.
            if ev.time < self.now {
                self.time_reversals += 1;
            }
            self.now = ev.time;
            self.events += 1;
            let i = ev.idx() as usize;
            match ev.what() {
                What::PortHead => self.port_head(i),
                What::SenderTimer => self.timer(i, SENDER),
                What::ReceiverTimer => self.timer(i, RECEIVER),
                What::Tick => {
                    self.ports[i].tick(self.now, &mut self.slab.pkts);
                    if let Some(nt) = self.ports[i].next_tick() {
                        self.q.push(nt.max(self.now + 1), What::Tick, i as u32);
                    }
                }
                What::FlowStart => self.flow_start(),
                What::SourceFlow => self.source_flow(i),
                What::FlowStop => {
                    if let Some(s) = self.flows[i].sender.as_mut() {
                        s.stop(self.now);
                    }
                }
                // The run's last sample is taken below, after every event at the end time.
                What::Sample if self.now >= self.spec.duration => {}
                What::Sample => {
                    self.sample();
                    self.write_capture();
                }
                What::Medium => self.medium_event(i),
            }
        }
        self.now = self.now.max(t);
        if self.now >= self.spec.duration && self.last_sample < self.spec.duration {
            // Last, so that what events at the end time deliver is in the samples too.
            self.sample();
        }
        if self.capture.is_some() {
            self.write_capture();
        }
        true
    }

    /// Capture the packets that start serialisation on `ports` (every port if `None`) into a
    /// pcapng file at `path` ([`crate::pcap`]); call before running. Written as the run goes
    /// (at each sample and when `run_until` returns); a write error stops the capture, not the
    /// run ([`Self::capture_error`]).
    pub fn capture(&mut self, path: &std::path::Path, ports: Option<&[usize]>) -> std::io::Result<()> {
        let all: Vec<usize> = (0..self.ports.len()).collect();
        let ports = ports.unwrap_or(&all);
        let named: Vec<(usize, &str)> = ports.iter().map(|&p| (p, self.ports[p].name.as_str())).collect();
        let file = crate::pcap::Capture::create(path, &named, self.ports.len(), 0)?;
        for &p in ports {
            self.ports[p].start_tap();
        }
        self.capture = Some(Box::new(CaptureState { file, batch: Vec::new(), buf: vec![0; 2048], error: None }));
        Ok(())
    }

    /// Packets written to the capture per port, and the error that stopped it, if any.
    pub fn capture_status(&self) -> Option<(&[u64], Option<&str>)> {
        self.capture.as_ref().map(|c| (&c.file.counts[..], c.error.as_deref()))
    }

    /// Write what the captured ports sent since the last call, in time order.
    fn write_capture(&mut self) {
        let Some(cap) = self.capture.as_mut() else { return };
        for (p, port) in self.ports.iter_mut().enumerate() {
            if let Some(tap) = port.tap_mut() {
                cap.batch.extend(tap.drain(..).map(|t| (p as u32, t)));
            }
        }
        cap.batch.sort_by_key(|&(p, t)| (t.t, p));
        for (p, t) in cap.batch.drain(..) {
            if cap.error.is_some() {
                break;
            }
            let info = match (t.pkt.flow as usize).checked_sub(self.spec.flows.len()) {
                None => &self.spec.flows[t.pkt.flow as usize],
                Some(m) => &self.spec.sources[self.made[m].source as usize].flow,
            };
            let addrs = [ip_packet::host_addr(info.src), ip_packet::host_addr(info.dst)];
            let r = ip_packet::emit(&t.pkt, addrs, &mut cap.buf).map_err(|e| e.to_string()).and_then(|(n, total)| {
                cap.file.write(p as usize, t.t, &cap.buf[..n], total).map_err(|e| e.to_string())
            });
            if let Err(e) = r {
                cap.error = Some(e);
            }
        }
        cap.batch.clear();
        if self.now >= self.spec.duration {
            if let Err(e) = cap.file.flush() {
                cap.error.get_or_insert(e.to_string());
            }
        }
    }

    /// Run to the end.
    pub fn run(&mut self) {
        self.run_until(self.spec.duration);
    }

    // -----------------------------------------------------------------------------------
    // Packets

    #[inline]
    fn port_head(&mut self, p: usize) {
        let port = &mut self.ports[p];
        let slot = port.pop_head(self.now, &mut self.slab.pkts);
        if let Some(t) = port.head_arrival() {
            self.q.push(t, What::PortHead, p as u32);
        }
        if slot.lost {
            self.cons.lost += 1;
            self.slab.release(slot.pkt);
            return;
        }
        // The slot's position in the route table: the next entry is the next port, or the
        // route's end. Only delivery reads the packet.
        let next = slot.hop + 1;
        let np = self.route_ports[next as usize];
        if np != ROUTE_END {
            self.forward(np as usize, slot.pkt, next, slot.group, slot.size);
        } else {
            let pkt = &self.slab.pkts[slot.pkt as usize];
            // The direction the emitting endpoint set: the data path or the return path.
            let (f, forward_dir) = (pkt.flow as usize, pkt.dir == Direction::Forward);
            self.deliver(f, slot.pkt, forward_dir, slot.group);
        }
    }

    /// Offer slab packet `idx` (`size` bytes on the wire) to port `p`, the entry `hop` of the
    /// route table. Inlined into its two callers (the per-hop path and `transmit`): as a call
    /// its register saves cost more than its body's bookkeeping.
    #[inline(always)]
    fn forward(&mut self, p: usize, idx: u32, hop: u32, group: u16, size: u32) {
        match self.ports[p].enqueue_sized(self.now, idx, &mut self.slab.pkts, hop, group, size) {
            Accept::Queued { was_empty: true } => {
                let t = self.ports[p].head_arrival().expect("just queued");
                self.q.push(t, What::PortHead, p as u32);
            }
            Accept::Queued { was_empty: false } => {}
            other => self.not_queued(p, idx, other),
        }
    }

    /// The rare outcomes of `forward`, out of line so that the per-hop path stays as short as
    /// it was before media existed.
    #[cold]
    #[inline(never)]
    fn not_queued(&mut self, p: usize, idx: u32, a: Accept) {
        match a {
            Accept::Dropped => {
                self.cons.dropped += 1;
                self.slab.release(idx);
            }
            Accept::Contend => self.contend(p),
            Accept::Queued { .. } => unreachable!(),
        }
    }

    /// Port `p`, a member's port onto a medium, has a packet waiting: the member contends,
    /// which may bring the medium's next decision forward.
    fn contend(&mut self, p: usize) {
        let (m, member) = self.ports[p].medium().expect("a medium port");
        if let Some(t) = self.media[m].join(self.now, member) {
            self.q.push(t, What::Medium, m as u32);
        }
    }

    /// Medium `m` decides its channel at `now` (a transmission or a collision starts).
    #[inline(never)]
    fn medium_event(&mut self, m: usize) {
        let med = &mut self.media[m];
        let next = med.decide(self.now, &mut self.ports, &mut self.slab.pkts);
        for (p, t) in med.started.drain(..) {
            self.q.push(t, What::PortHead, p);
        }
        if let Some(t) = next {
            self.q.push(t, What::Medium, m as u32);
        }
    }

    /// Packet `idx` of flow `f` (in flow group `group`, from its slot) reaches its endpoint.
    fn deliver(&mut self, f: usize, idx: u32, forward_dir: bool, group: u16) {
        self.cons.delivered += 1;
        if !self.flows[f].running() {
            self.slab.release(idx);
            return; // a straggler of a finished flow
        }
        let side = if forward_dir { RECEIVER } else { SENDER };
        let now = self.now;
        {
            let fl = &mut self.flows[f];
            let ep = if side == SENDER { fl.sender.as_mut() } else { fl.receiver.as_mut() };
            ep.expect("running flow has endpoints").on_packet(now, &self.slab.pkts[idx as usize]);
        }
        self.slab.release(idx);
        self.send(f, side, group);
        if side == SENDER {
            self.check_done(f);
        }
    }

    /// `send` with the flow's group looked up (a flow's start, a timer): out of line, so that
    /// `send` is inlined only into the per-delivery path.
    #[inline(never)]
    fn transmit(&mut self, f: usize, side: usize) {
        self.send(f, side, self.flow_group[f]);
    }

    /// Drain an endpoint's `poll_transmit_into` onto the first port of its path (each packet
    /// written straight into its slab slot; a drain ends at `Last` without an empty poll), then
    /// re-arm its timer. Flow `f` is in flow group `group`.
    #[inline(always)]
    fn send(&mut self, f: usize, side: usize, group: u16) {
        debug_assert_eq!(group, self.flow_group[f]);
        let now = self.now;
        let hop = self.flows[f].routes[side];
        let first = self.route_ports[hop as usize] as usize;
        loop {
            let fl = &mut self.flows[f];
            let ep = if side == SENDER { fl.sender.as_mut() } else { fl.receiver.as_mut() };
            let Some(ep) = ep else { return };
            let idx = self.slab.vacant();
            let sent = ep.poll_transmit_into(now, &mut self.slab.pkts[idx as usize]);
            if sent == Transmit::Idle {
                break;
            }
            self.slab.take();
            let pkt = &self.slab.pkts[idx as usize];
            debug_assert_eq!(pkt.flow as usize, f);
            // A sender emits onto the data path, a receiver onto the return path.
            debug_assert_eq!(pkt.dir == Direction::Forward, side == SENDER, "flow {f}: {:?}", pkt.dir);
            self.cons.sent += 1;
            let size = pkt.size;
            self.forward(first, idx, hop, group, size);
            if sent == Transmit::Last {
                break;
            }
        }
        self.arm(f, side);
    }

    /// Keep one timer event per endpoint ([`Timer`]): only schedule when the wanted time is
    /// earlier than the one already queued. A later deadline (an RTO pushed back by an ACK) is
    /// left to the earlier event, which finds nothing due and re-arms (lazy timers).
    #[inline]
    fn arm(&mut self, f: usize, side: usize) {
        let fl = &mut self.flows[f];
        let ep = if side == SENDER { fl.sender.as_ref() } else { fl.receiver.as_ref() };
        let Some(ep) = ep else { return };
        if let Some(t) = ep.poll_timeout() {
            let what = if side == SENDER { What::SenderTimer } else { What::ReceiverTimer };
            fl.timer[side].arm(&mut self.q, t.max(self.now), what, f as u32);
        }
    }

    fn timer(&mut self, f: usize, side: usize) {
        if !self.flows[f].timer[side].fire(self.now) {
            return; // superseded by an earlier event
        }
        let now = self.now;
        {
            let fl = &mut self.flows[f];
            let ep = if side == SENDER { fl.sender.as_mut() } else { fl.receiver.as_mut() };
            match ep {
                Some(ep) => ep.on_timeout(now),
                None => return,
            }
        }
        self.transmit(f, side);
        if side == SENDER {
            self.check_done(f);
        }
    }

    fn check_done(&mut self, f: usize) {
        let fl = &self.flows[f];
        let Some(size) = fl.size() else { return };
        if fl.sender.as_ref().is_some_and(|s| s.stats().done) {
            self.complete(f, size);
        }
    }

    /// Flow `f` has all its `size` bytes acknowledged: count them, record it, free its endpoints.
    /// Out of line: it runs once per flow, its caller once per ACK.
    #[cold]
    #[inline(never)]
    fn complete(&mut self, f: usize, size: u64) {
        let made = f.checked_sub(self.spec.flows.len()).map(|m| self.made[m]);
        let start = made.map_or_else(|| self.spec.flows[f].start, |m| m.start);
        let fl = &mut self.flows[f];
        let rb = fl.receiver.as_ref().map_or(0, |r| r.stats().bytes);
        let delta = rb - self.last_bytes[f];
        self.goodput_bytes += delta;
        self.done_bytes += rb;
        self.last_bytes[f] = rb;
        if self.spec.record_flows {
            // The flow has no row after this: what it delivered since its last row goes into
            // one at the next sample time, so its series adds up to every byte. (The run's last
            // sample comes after every event, so that time is still ahead.)
            let next = (self.last_sample + self.spec.sample_interval).min(self.spec.duration);
            let dt = (next - self.last_sample) as f64 * 1e-9;
            self.flow_series.push(next as f64 * 1e-9, f as u32, delta, dt, fl.sender.as_deref());
        }
        fl.sender = None;
        fl.receiver = None;
        self.completions.push(f as u32, size, start, self.now);
        if let Some(m) = made {
            // Its source answers with its next flow (seed 001 §4: a think time after this one).
            let s = m.source as usize;
            let next = self.sources[s].source.on_complete(self.now);
            self.schedule_source(s, next);
        }
    }

    // -----------------------------------------------------------------------------------
    // Flows

    fn flow_start(&mut self) {
        let i = self.next_start;
        self.next_start += 1;
        if let Some(n) = self.spec.flows.get(self.next_start) {
            self.q.push(n.start, What::FlowStart, self.next_start as u32);
        }
        let (snd, rcv) = self.endpoints(&self.spec.flows[i], i, self.spec.flows[i].size_bytes);
        self.run_flow(i, snd, rcv);
    }

    /// A source's next flow arrives: make it from the source's template, with the next id.
    fn source_flow(&mut self, s: usize) {
        let f = self.flows.len();
        let size = self.sources[s].next_bytes;
        self.flows.push(FlowRt::pending(Some(size), self.sources[s].routes));
        self.flow_group.push(self.sources[s].group);
        self.last_bytes.push(0);
        self.made.push(Made { source: s as u32, start: self.now });
        let (snd, rcv) = self.endpoints(&self.spec.sources[s].flow, f, Some(size));
        self.run_flow(f, snd, rcv);
    }

    /// Schedule a source's next flow, if it has one.
    fn schedule_source(&mut self, s: usize, next: Option<crate::traffic::Arrival>) {
        if let Some(a) = next {
            // Ids are u32 (`Packet::flow`); `limits.flows` keeps runs far below.
            assert!(self.flows.len() < u32::MAX as usize, "flow ids exhausted");
            self.sources[s].next_bytes = a.bytes;
            self.q.push(a.time.max(self.now), What::SourceFlow, s as u32);
        }
    }

    /// The sender and receiver of flow `id` as `spec` describes it, sending `size` bytes.
    fn endpoints(&self, spec: &FlowSpec, id: usize, size: Option<u64>) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let cfg = flow_config_for(&self.spec, spec, id, size);
        // The factory holds the parameters checked when the scenario was built.
        (spec.factory.sender(&cfg), spec.factory.receiver(&cfg))
    }

    /// Start flow `f` with its endpoints.
    fn run_flow(&mut self, f: usize, mut snd: Box<dyn Endpoint>, mut rcv: Box<dyn Endpoint>) {
        let now = self.now;
        rcv.start(now);
        snd.start(now);
        let fl = &mut self.flows[f];
        fl.sender = Some(snd);
        fl.receiver = Some(rcv);
        self.transmit(f, SENDER);
        self.transmit(f, RECEIVER);
    }

    /// Flows so far: the listed ones and those sources have made.
    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }

    /// What the results say of flow `f` (< [`Self::flow_count`]).
    pub fn flow_info(&self, f: usize) -> FlowInfo<'_> {
        match f.checked_sub(self.spec.flows.len()) {
            None => {
                let spec = &self.spec.flows[f];
                FlowInfo { spec, start: spec.start, size_bytes: spec.size_bytes, source: None }
            }
            Some(m) => {
                let Made { source, start } = self.made[m];
                let spec = &self.spec.sources[source as usize].flow;
                FlowInfo { spec, start, size_bytes: self.flows[f].size(), source: Some(source as usize) }
            }
        }
    }

    /// Flows whose endpoints exist now (started, not yet completed).
    pub fn running_flows(&self) -> usize {
        self.flows.iter().filter(|f| f.running()).count()
    }

    // -----------------------------------------------------------------------------------
    // Metrics

    fn sample(&mut self) {
        let now = self.now;
        let dt = (now - self.last_sample) as f64 * 1e-9;
        let t_s = now as f64 * 1e-9;
        for (r, &i) in self.spec.record_ports.iter().enumerate() {
            let p = &mut self.ports[i];
            p.settle(now, &mut self.slab.pkts);
            let prev = self.prev[r];
            let mark = self.port_series.push_port(t_s, i as u32, p, &self.slab.pkts, prev, now, dt);
            if let Some((m, member)) = p.medium() {
                self.media[m].metrics(member, &mut self.port_series.named);
            }
            self.port_series.named.end_row();
            self.prev[r] = mark;
            let (pu, unsent) = (prev.unsent, mark.unsent);
            let g = &mut self.group_series;
            for (k, (&now_b, prev_b)) in p.group_tx().iter().zip(self.prev_group_tx[r].iter_mut()).enumerate() {
                if now_b == 0 {
                    continue; // this group never crossed the port
                }
                let b = now_b - *prev_b;
                *prev_b = now_b;
                let wire = b as f64 + unsent_bytes(pu, Some(k as u16)) - unsent_bytes(unsent, Some(k as u16));
                g.time_s.push(t_s);
                g.port.push(i as u32);
                g.group.push(k as u16);
                g.tx_bytes.push(b);
                g.share.push(if dt > 0.0 { wire * 8.0 / (dt * p.capacity_bps()) } else { 0.0 });
            }
        }
        for (f, fl) in self.flows.iter_mut().enumerate() {
            if !fl.running() {
                continue;
            }
            let rb = fl.receiver.as_ref().map_or(0, |r| r.stats().bytes);
            let delta = rb - self.last_bytes[f];
            self.goodput_bytes += delta;
            self.last_bytes[f] = rb;
            if self.spec.record_flows {
                self.flow_series.push(t_s, f as u32, delta, dt, fl.sender.as_deref());
            }
        }
        self.last_sample = now;
        if now < self.spec.duration {
            let next = (now + self.spec.sample_interval).min(self.spec.duration);
            self.q.push(next, What::Sample, 0);
        }
    }

    /// Per-port totals over the whole run, as of now.
    pub fn port_summary(&mut self) -> Vec<PortSummary> {
        (0..self.ports.len()).map(|i| self.port_summary_of(i)).collect()
    }

    /// Whole-run figures of port `i`, as of now: one row of [`Self::port_summary`], for a
    /// caller that needs a few rows of a large run (40,002 rows were 9 MB at 10,000 flows).
    pub fn port_summary_of(&mut self, i: usize) -> PortSummary {
        let now = self.now.max(1);
        let p = &mut self.ports[i];
        p.settle(now, &mut self.slab.pkts);
        let c = p.c;
        // Bytes on the wire, as the samples count them, so that they add up to this.
        let wire = p.wire_bytes(now, &self.slab.pkts);
        PortSummary {
            port: i,
            name: p.name.clone(),
            router: p.module_name(),
            capacity_bps: p.capacity_bps(),
            utilisation: wire * 8.0 / (p.capacity_bps() * now as f64 * 1e-9),
            mean_queue_pkts: c.queue_pkt_ns as f64 / now as f64,
            mean_queue_bytes: c.queue_byte_ns as f64 / now as f64,
            max_queue_pkts: c.max_queue_pkts,
            drop_rate: if c.arrivals > 0 { c.drops as f64 / c.arrivals as f64 } else { 0.0 },
            counters: c,
        }
    }
}

/// Per port, the sum of the round-trip propagation delays of the flows (listed and made by
/// sources) that cross it, and their number: a BDP buffer is sized from their mean.
pub(crate) fn port_rtts(spec: &Spec) -> (Vec<f64>, Vec<u64>) {
    let n_ports = spec.port_map().count();
    let mut rtt_sum = vec![0f64; n_ports];
    let mut rtt_n = vec![0u64; n_ports];
    for f in spec.flows.iter().chain(spec.sources.iter().map(|s| &s.flow)) {
        let rtt = spec.propagation_rtt(f) as f64;
        for &p in spec.routes[f.fwd_route].iter().chain(&spec.routes[f.rev_route]) {
            rtt_sum[p] += rtt;
            rtt_n[p] += 1;
        }
    }
    (rtt_sum, rtt_n)
}

/// The output ports of a run's links, two per link (port 2i is link i's a -> b direction): buffer limits
/// resolved (a BDP buffer from the mean round-trip propagation delay of the flows crossing the
/// port), each with its router module and loss process built from the port's own random streams.
/// The simulator and the live runtime's router build their link ports here, so both run the same;
/// the simulator adds the ports of shared media after them ([`Medium::build`]).
pub fn build_ports(spec: &Spec) -> Result<Vec<Port>, ScenarioError> {
    let (rtt_sum, rtt_n) = port_rtts(spec);
    let mut ports = Vec::with_capacity(spec.port_map().count());
    for (li, l) in spec.links.iter().enumerate() {
        for dir in 0..2 {
            let p = 2 * li + dir;
            let (from, to) = if dir == 0 { (l.a, l.b) } else { (l.b, l.a) };
            let name = crate::names::arrow(&spec.nodes[from].name, &spec.nodes[to].name);
            let loss_spec = if dir == 0 { &l.loss_forward } else { &l.loss_reverse };
            let plan = PortPlan {
                key: &l.key,
                node: from,
                capacity_bps: l.capacity_bps,
                delay: l.delay,
                buffer: l.buffer,
                router_factory: l.router_factory.as_ref(),
                loss: loss_spec,
            };
            ports.push(plan.build(spec, p, name, &rtt_sum, &rtt_n)?);
        }
    }
    Ok(ports)
}

/// Every BDP buffer of a checked scenario resolves to a size a port can hold (scenario checking
/// calls this once routes are known, so such a scenario is refused before anything runs).
pub(crate) fn check_bdp_buffers(spec: &Spec) -> Result<(), ScenarioError> {
    let (rtt_sum, rtt_n) = port_rtts(spec);
    let pm = spec.port_map();
    // Port order as `PortMap` numbers them: two per link, then one per medium member. The key
    // is written out only for a refusal (40,002 ports at 10,000 flows).
    let link_ports = spec.links.iter().flat_map(|l| [0, 1].map(|_| (None, l.capacity_bps, l.buffer)));
    let medium_ports = spec
        .media
        .iter()
        .enumerate()
        .flat_map(|(mi, m)| m.members.iter().map(move |_| (Some(mi), m.capacity_bps, m.buffer)));
    for (p, (medium, capacity_bps, buffer)) in link_ports.chain(medium_ports).enumerate() {
        if let BufferSpec::Bdp(_) = buffer {
            buffer_limits(buffer, capacity_bps, rtt_sum[p], rtt_n[p], spec.packet_size).map_err(|reason| {
                let key = match medium {
                    Some(mi) => format!("topology.media[{mi}]"),
                    None => spec.links[p / 2].key.to_string(),
                };
                ScenarioError {
                    source: spec.name.clone(),
                    key: format!("{key}.buffer"),
                    reason: format!("port {}: {reason}", pm.name(p)),
                }
            })?;
        }
    }
    Ok(())
}

/// What one output port is built from, whatever carries it (a link direction or a member of a
/// shared medium): both build it here, so buffers, router modules and loss processes are made
/// the same way from the port's own random streams.
pub(crate) struct PortPlan<'a> {
    /// The scenario key of what carries the port (`links[3]`, `topology.media[0]`), for errors.
    pub key: &'a str,
    /// The node the port leaves.
    pub node: usize,
    pub capacity_bps: f64,
    pub delay: Time,
    pub buffer: BufferSpec,
    pub router_factory: &'a dyn RouterFactory,
    pub loss: &'a LossSpec,
}

impl PortPlan<'_> {
    /// Port `p` named `name`; a BDP buffer from the mean RTT of the flows crossing it.
    pub(crate) fn build(
        &self,
        spec: &Spec,
        p: usize,
        name: String,
        rtt_sum: &[f64],
        rtt_n: &[u64],
    ) -> Result<Port, ScenarioError> {
        let err = |key: &str, reason: String| ScenarioError {
            source: spec.name.clone(),
            key: format!("{}.{key}", self.key),
            reason,
        };
        let (limit_pkts, limit_bytes) =
            buffer_limits(self.buffer, self.capacity_bps, rtt_sum[p], rtt_n[p], spec.packet_size)
                .map_err(|reason| err("buffer", format!("port {name}: {reason}")))?;
        let identity = PortIdentity {
            node: &spec.nodes[self.node].name,
            port: p as u32,
            name: &name,
            capacity_bps: self.capacity_bps,
            delay: self.delay,
            limit_pkts,
            limit_bytes,
        };
        let mut buf = [0u8; 40];
        let router_rng = SimRng::for_component(spec.seed, crate::names::label(&mut buf, "router/port", p));
        let module = self.router_factory.build(&identity, router_rng);
        let loss_rng = SimRng::for_component(spec.seed, crate::names::label(&mut buf, "loss/port", p));
        let loss = LossProcess::new(self.loss, loss_rng).map_err(|e| err("loss", e.to_string()))?;
        Ok(Port::new(name, self.capacity_bps, self.delay, limit_pkts, limit_bytes, spec.packet_size, module, loss))
    }
}

/// What flow `i`'s sender and receiver are built from (both engines build them the same way).
pub fn flow_config(spec: &Spec, i: usize) -> FlowConfig {
    flow_config_for(spec, &spec.flows[i], i, spec.flows[i].size_bytes)
}

/// The same for any flow description (a listed flow or a source's template) as flow `id`
/// sending `size` bytes.
pub(crate) fn flow_config_for(spec: &Spec, f: &FlowSpec, id: usize, size: Option<u64>) -> FlowConfig {
    let mut cfg = FlowConfig::new(id as u32, spec.packet_size);
    cfg.size_bytes = size;
    cfg.initial_window = f.initial_window;
    cfg.initial_ssthresh = f.initial_ssthresh;
    cfg.min_rto = spec.min_rto;
    cfg.ecn = f.ecn;
    cfg.delayed_ack = f.delayed_ack;
    cfg.sack = f.sack;
    cfg.handshake = f.handshake;
    cfg.seed = spec.seed;
    cfg
}

/// A port's buffer limit in packets and bytes; a BDP buffer counts the mean round-trip
/// propagation delay of the flows crossing the port (`rtt_sum` over `rtt_n` flows, ns).
/// A BDP multiple that resolves to less than one packet, or to more packets than a port can
/// count, is refused (issue 12 item 5: never silently clamped). A port no flow crosses has no
/// BDP; it carries no packet, and gets a nominal 100-packet buffer.
pub(crate) fn buffer_limits(
    b: BufferSpec,
    capacity_bps: f64,
    rtt_sum: f64,
    rtt_n: u64,
    packet_size: u32,
) -> Result<(u32, u64), String> {
    Ok(match b {
        BufferSpec::Packets(n) => (n, u64::MAX),
        BufferSpec::Bytes(b) => (u32::MAX, b),
        BufferSpec::Bdp(_) if rtt_n == 0 => (100, u64::MAX),
        BufferSpec::Bdp(x) => {
            let rtt = rtt_sum / rtt_n as f64;
            let exact = x * capacity_bps * rtt * 1e-9 / 8.0 / packet_size as f64;
            let pkts = exact.round();
            if pkts.is_nan() || pkts < 1.0 {
                return Err(format!(
                    "{x} bdp is {exact:.3} packets of {packet_size} B (capacity {capacity_bps} b/s, mean RTT {:.6} s): \
                     less than one packet",
                    rtt * 1e-9
                ));
            }
            if pkts > u32::MAX as f64 {
                return Err(format!("{x} bdp is {pkts:e} packets, more than 2^32 - 1"));
            }
            (pkts as u32, u64::MAX)
        }
    })
}

/// Whole-run figures of one port.
#[derive(Clone, Debug)]
pub struct PortSummary {
    pub port: usize,
    pub name: String,
    pub router: &'static str,
    pub capacity_bps: f64,
    pub utilisation: f64,
    pub mean_queue_pkts: f64,
    pub mean_queue_bytes: f64,
    pub max_queue_pkts: u32,
    pub drop_rate: f64,
    pub counters: PortCounters,
}
