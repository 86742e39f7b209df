//! The discrete-event engine: runs a [`Spec`]'s ports (built by `plan.rs`) and flows, events in
//! (time, sequence) order. A packet's path: an endpoint's `poll_transmit` hands it to the
//! first port of its route; each port accepts or drops it and, when it is the FIFO head,
//! schedules its arrival at the far end; on arrival it is enqueued on the next port of the
//! route or delivered to the destination endpoint, whose answers go back the same way.

use crate::event::{EventQueue, Timer, What};
use crate::medium::Medium;
use crate::metrics::{unsent_bytes, Completions, Conservation, FlowSeries, GroupSeries, PortMark, PortSeries, RowTime};
use crate::pcap::PortCapture;
use crate::plan::flow_config_for;
use crate::port::{Accept, Packets, Port, PortCounters, PortRole};
use crate::scenario::buffers::port_rtts;
use crate::scenario::{FlowSpec, ScenarioError, Spec};
use crate::sources::FlowSource;
use racc_proto::endpoint::{Endpoint, Transmit};
use racc_proto::ipsec::Tunnel;
use racc_proto::packet::{Direction, Kind, Packet, TcpHeader};
use racc_proto::rng::SimRng;
use racc_proto::time::Time;
use racc_proto::wire::ip_packet;
use std::sync::Arc;

/// Where the live runtime (racc-net) finds them; they are built in `plan.rs`.
pub use crate::plan::{build_ports, flow_config};

mod capture;
mod flows;
mod hop;
mod results;

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
        // Slots of packets a port dropped at dequeue come back first (`Packets::reclaim`).
        self.free.extend(self.pkts.reclaim());
        if let Some(&i) = self.free.last() {
            return i;
        }
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

/// Endpoint timers at one instant past which the run stops as spinning: ten times any flow count
/// racc runs (a 65,536-host fat tree's flows all starting together fire 65,536), and about a
/// second of a spinning run.
const SPIN_LIMIT: u32 = 10_000_000;

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
    /// Endpoint timers fired at `spin_at` in a row: an endpoint whose timer is due again at the
    /// instant it fired, with nothing to do, would stop simulated time for ever ([`SPIN_LIMIT`]).
    spin_at: Time,
    spin_n: u32,
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
    capture: Option<Box<PortCapture>>,
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
            spin_at: Time::MAX,
            spin_n: 0,
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
        let (dequeue_drops, unclaimed) = self.slab.pkts.dequeue_drops();
        c.dropped += dequeue_drops;
        // Every packet in flight holds exactly one slab slot; a dequeue drop's slot is free
        // once it is reclaimed.
        debug_assert_eq!(c.in_flight as usize, self.slab.pkts.len() - self.slab.free.len() - unclaimed);
        c
    }

    /// Run to the end.
    pub fn run(&mut self) {
        self.run_until(self.spec.duration);
    }
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
