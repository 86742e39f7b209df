//! The checked, resolved scenario that the engine runs: names resolved to indices, units to
//! integer nanoseconds, bits per second and bytes, shortcuts expanded, every flow listed.

use crate::sources::SourceLaw;
use racc_proto::loss::LossSpec;
use racc_proto::registry::{FlowProtocol, RouterFactory};
use racc_proto::time::Time;
use serde::Serialize;
use std::sync::Arc;

#[derive(Clone, Debug, Serialize)]
pub struct Spec {
    pub name: String,
    pub seed: u64,
    pub duration: Time,
    pub packet_size: u32,
    pub min_rto: Time,
    pub sample_interval: Time,
    pub record_flows: bool,
    /// Ports sampled into the time series (port numbers, ascending).
    pub record_ports: Vec<usize>,
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    /// Port lists of every path in use. Port 2i is link i's a -> b direction, 2i+1 its b -> a.
    pub routes: Vec<Vec<usize>>,
    pub flows: Vec<FlowSpec>,
    /// Closed-loop sources (`sources.rs`), whose flows the engine makes during the run; their
    /// flow ids follow those of `flows`, in the order they are made.
    pub sources: Vec<SourceSpec>,
    pub tunnels: Vec<TunnelSpec>,
}

/// A closed-loop source: every flow it makes is `flow` with the start time and size its law
/// gives (the template's own `start` is the law's start and its size is `None`).
#[derive(Clone, Debug, Serialize)]
pub struct SourceSpec {
    pub flow: FlowSpec,
    /// The law's kind and parameters as checked, for the resolved scenario.
    pub kind: String,
    pub law_params: serde_json::Value,
    #[serde(skip)]
    pub law: Arc<dyn SourceLaw>,
}

/// An IPsec tunnel: the ports where packets enter it (the gateways' ports toward each other)
/// and where its packets leave it (the gateways' other ports).
#[derive(Clone, Debug, Serialize)]
pub struct TunnelSpec {
    pub id: u16,
    pub encap_ports: Vec<usize>,
    pub decap_ports: Vec<usize>,
}

#[derive(Clone, Debug, Serialize)]
pub struct NodeSpec {
    pub name: String,
    pub host: bool,
}

/// A full-duplex link between nodes `a` and `b`; direction a -> b is "forward".
#[derive(Clone, Debug, Serialize)]
pub struct LinkSpec {
    pub a: usize,
    pub b: usize,
    pub capacity_bps: f64,
    pub delay: Time,
    pub buffer: BufferSpec,
    pub router: String,
    pub router_params: serde_json::Value,
    /// The module's checked parameters, building each direction's module.
    #[serde(skip)]
    pub router_factory: Arc<dyn RouterFactory>,
    #[serde(serialize_with = "debug_str")]
    pub loss_forward: LossSpec,
    #[serde(serialize_with = "debug_str")]
    pub loss_reverse: LossSpec,
}

/// Buffer limit of each direction's output queue.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum BufferSpec {
    Packets(u32),
    Bytes(u64),
    /// Multiples of capacity x mean round-trip propagation delay of the flows using the port.
    Bdp(f64),
}

#[derive(Clone, Debug, Serialize)]
pub struct FlowSpec {
    /// Name of the group or generator the flow comes from.
    pub group: String,
    /// Canonical protocol name (registry).
    pub protocol: String,
    /// The protocol's checked parameters, building the flow's sender and receiver.
    #[serde(skip)]
    pub factory: Arc<dyn FlowProtocol>,
    pub src: usize,
    pub dst: usize,
    /// Indices into `Spec::routes`.
    pub fwd_route: usize,
    pub rev_route: usize,
    pub start: Time,
    pub stop: Option<Time>,
    pub size_bytes: Option<u64>,
    pub params: serde_json::Value,
    pub ecn: bool,
    pub delayed_ack: bool,
    pub sack: bool,
    pub initial_window: Option<u32>,
    pub initial_ssthresh: Option<u64>,
    pub handshake: bool,
}

impl Spec {
    /// A flow's round-trip propagation delay, ns: its forward and reverse routes' link delays
    /// (what BDP buffers and the results' `rtt_prop_s` use; one place computes it).
    pub fn propagation_rtt(&self, f: &FlowSpec) -> Time {
        self.routes[f.fwd_route].iter().chain(&self.routes[f.rev_route]).map(|&p| self.links[p / 2].delay).sum()
    }
}

fn debug_str<T: std::fmt::Debug, S: serde::Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{v:?}"))
}
