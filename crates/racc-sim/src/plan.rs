//! What both engines build from a checked [`Spec`]: the output ports (buffer, router module and
//! loss process, each from the port's own random streams) and each flow's endpoint
//! configuration. The simulator (`engine.rs`, `medium.rs`) and the live runtime build them
//! here, so both run the same.

use crate::port::{Port, PortLink};
use crate::scenario::buffers::{buffer_limits, port_rtts};
use crate::scenario::spec::{BufferSpec, FlowSpec, Spec};
use crate::scenario::ScenarioError;
use racc_proto::endpoint::FlowConfig;
use racc_proto::loss::{LossProcess, LossSpec};
use racc_proto::registry::{PortIdentity, RouterFactory};
use racc_proto::rng::SimRng;
use racc_proto::time::Time;

/// The output ports of a run's links, two per link (port 2i is link i's a -> b direction): buffer limits
/// resolved (a BDP buffer from the mean round-trip propagation delay of the flows crossing the
/// port), each with its router module and loss process built from the port's own random streams.
/// The simulator and the live runtime's router build their link ports here, so both run the same;
/// the simulator adds the ports of shared media after them ([`crate::medium::Medium::build`]).
pub fn build_ports(spec: &Spec) -> Result<Vec<Port>, ScenarioError> {
    let (rtt_sum, rtt_n) = port_rtts(spec);
    let mut ports = Vec::with_capacity(spec.port_map().count());
    for (p, name, plan) in link_port_plans(spec) {
        ports.push(plan.build(spec, p, name, &rtt_sum, &rtt_n)?);
    }
    Ok(ports)
}

/// Each link direction's output port: its number (2i for link i's a -> b), name and plan.
pub(crate) fn link_port_plans(spec: &Spec) -> impl Iterator<Item = (usize, String, PortPlan<'_>)> {
    spec.links.iter().enumerate().flat_map(move |(li, l)| {
        (0..2).map(move |dir| {
            let (from, to) = if dir == 0 { (l.a, l.b) } else { (l.b, l.a) };
            let name = crate::names::arrow(&spec.nodes[from].name, &spec.nodes[to].name);
            let plan = PortPlan {
                key: &l.key,
                node: from,
                capacity_bps: l.capacity_bps,
                delay: l.delay,
                buffer: l.buffer,
                router_factory: l.router_factory.as_ref(),
                loss: if dir == 0 { &l.loss_forward } else { &l.loss_reverse },
            };
            (2 * li + dir, name, plan)
        })
    })
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
        let (limit_pkts, limit_bytes) = self.limits(spec, p, &name, rtt_sum, rtt_n)?;
        let identity = self.identity(spec, p, &name, (limit_pkts, limit_bytes));
        let mut buf = [0u8; 40];
        let router_rng = SimRng::for_component(spec.seed, crate::names::label(&mut buf, "router/port", p));
        let module = self.router_factory.build(&identity, router_rng);
        let loss_rng = SimRng::for_component(spec.seed, crate::names::label(&mut buf, "loss/port", p));
        let loss = LossProcess::new(self.loss, loss_rng).map_err(|e| self.error(spec, "loss", e.to_string()))?;
        let link = PortLink {
            capacity_bps: self.capacity_bps,
            delay: self.delay,
            limit_pkts,
            limit_bytes,
            mean_pkt_size: spec.packet_size,
        };
        Ok(Port::new(name, link, module, loss))
    }

    /// The port's buffer limits (packets, bytes); a BDP buffer from the mean RTT of the flows
    /// crossing it.
    pub(crate) fn limits(
        &self,
        spec: &Spec,
        p: usize,
        name: &str,
        rtt_sum: &[f64],
        rtt_n: &[u64],
    ) -> Result<(u32, u64), ScenarioError> {
        buffer_limits(self.buffer, self.capacity_bps, rtt_sum[p], rtt_n[p], spec.packet_size)
            .map_err(|reason| self.error(spec, "buffer", format!("port {name}: {reason}")))
    }

    /// What the port's router module is told of the port.
    pub(crate) fn identity<'s>(
        &self,
        spec: &'s Spec,
        p: usize,
        name: &'s str,
        (limit_pkts, limit_bytes): (u32, u64),
    ) -> PortIdentity<'s> {
        PortIdentity {
            node: &spec.nodes[self.node].name,
            port: p as u32,
            name,
            capacity_bps: self.capacity_bps,
            delay: self.delay,
            limit_pkts,
            limit_bytes,
            mean_pkt_size: spec.packet_size,
        }
    }

    fn error(&self, spec: &Spec, key: &str, reason: String) -> ScenarioError {
        ScenarioError { source: spec.name.clone(), key: format!("{}.{key}", self.key), reason }
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
