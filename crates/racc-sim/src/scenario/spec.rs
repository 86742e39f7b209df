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
    /// Record each flow group's share of every recorded port (`record.groups`).
    pub record_groups: bool,
    /// Ports sampled into the time series (port numbers, ascending).
    pub record_ports: Vec<usize>,
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    /// Shared media (`topology.media`): their member ports follow the links' ports.
    pub media: Vec<MediumSpec>,
    /// Port lists of every path in use. Port 2i is link i's a -> b direction, 2i+1 its b -> a;
    /// after the 2 × links ports come the media's member ports, medium by medium, the access
    /// point first (see [`PortMap`]).
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
///
/// What a topology shortcut gives every one of its access links (key, router module, loss) is
/// shared, not copied: a dumbbell of 10,000 pairs has 20,001 links, and copies made them 7.7 MB.
#[derive(Clone, Debug, Serialize)]
pub struct LinkSpec {
    /// The scenario key the link was written at (`topology.bottleneck`, `links[2]`), for errors
    /// found once routes are known (a BDP buffer's size).
    #[serde(skip)]
    pub key: Arc<str>,
    pub a: usize,
    pub b: usize,
    pub capacity_bps: f64,
    pub delay: Time,
    pub buffer: BufferSpec,
    #[serde(serialize_with = "inner")]
    pub router: Arc<str>,
    #[serde(serialize_with = "inner")]
    pub router_params: Arc<serde_json::Value>,
    /// The module's checked parameters, building each direction's module.
    #[serde(skip)]
    pub router_factory: Arc<dyn RouterFactory>,
    #[serde(serialize_with = "debug_str")]
    pub loss_forward: Arc<LossSpec>,
    #[serde(serialize_with = "debug_str")]
    pub loss_reverse: Arc<LossSpec>,
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

/// A shared half-duplex medium (`kind = "wlan"`): an access point and stations contending for
/// one channel by a simplified IEEE 802.11 DCF (`crate::medium`). Each member has one output
/// port onto the medium, with its own FIFO, router module and loss process; the access point's
/// port reaches every station, a station's port reaches the access point.
#[derive(Clone, Debug, Serialize)]
pub struct MediumSpec {
    pub name: String,
    /// Member nodes: the access point first, then the stations in the file's order.
    pub members: Vec<usize>,
    /// Rate at which data frames are sent, b/s.
    pub phy_rate_bps: f64,
    /// The capacity router modules are told (`PortView::capacity_bps`): nominal, not the
    /// medium's real throughput, which contention and overhead set.
    pub capacity_bps: f64,
    pub delay: Time,
    pub buffer: BufferSpec,
    pub dcf: DcfSpec,
    pub router: String,
    pub router_params: serde_json::Value,
    #[serde(skip)]
    pub router_factory: Arc<dyn RouterFactory>,
    /// One router module per member's port, or one for the whole medium. Left out of the
    /// resolved scenario when per member (the default), as resolved scenarios were before it.
    #[serde(skip_serializing_if = "RouterScope::is_member")]
    pub router_scope: RouterScope,
    /// Per member (same order as `members`): the loss process of its frames.
    #[serde(serialize_with = "debug_str")]
    pub loss: Vec<LossSpec>,
}

/// `topology.media[].router_scope`: what one router module of a medium manages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RouterScope {
    /// Each member's port has its own module, which sees that member's queue only.
    #[default]
    Member,
    /// One module for the medium, which every member's packets pass through
    /// (`crate::shared_router`): it sees the medium's whole queue and both directions.
    Medium,
    /// Each member's own module and, behind it, the medium's one.
    Both,
}

impl RouterScope {
    pub fn is_member(&self) -> bool {
        *self == RouterScope::Member
    }
}

/// DCF timing and backoff parameters (IEEE 802.11-2016 §10.3; defaults are 802.11b DSSS).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct DcfSpec {
    pub slot: Time,
    pub sifs: Time,
    pub difs: Time,
    /// PHY preamble and header of a data frame, sent before its bits.
    pub phy_header: Time,
    /// The whole ACK (its PHY header included); also the ACK timeout after a collision.
    pub ack: Time,
    /// MAC header and FCS bytes added to every packet, sent at the PHY rate.
    pub mac_overhead: u32,
    pub cw_min: u32,
    pub cw_max: u32,
    /// Transmission attempts of a frame before a collided frame is dropped (dot11ShortRetryLimit).
    pub retry_limit: u32,
}

/// Every output port of a scenario, numbered as the engine numbers them: port 2i and 2i+1 are
/// link i's two directions, then each medium's member ports. The one place that knows where a
/// port leaves, its name, delay and router module.
#[derive(Clone, Copy)]
pub struct PortMap<'a> {
    pub nodes: &'a [NodeSpec],
    pub links: &'a [LinkSpec],
    pub media: &'a [MediumSpec],
}

/// What a port is: one direction of a link, or a member's port onto a medium.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortKind {
    Link { link: usize, forward: bool },
    Medium { medium: usize, member: usize },
}

impl PortMap<'_> {
    pub fn count(&self) -> usize {
        2 * self.links.len() + self.media.iter().map(|m| m.members.len()).sum::<usize>()
    }

    pub fn kind(&self, p: usize) -> PortKind {
        if p < 2 * self.links.len() {
            return PortKind::Link { link: p / 2, forward: p.is_multiple_of(2) };
        }
        let mut i = p - 2 * self.links.len();
        for (m, med) in self.media.iter().enumerate() {
            if i < med.members.len() {
                return PortKind::Medium { medium: m, member: i };
            }
            i -= med.members.len();
        }
        panic!("port {p} out of range")
    }

    /// The first port of medium `m`'s members (its access point's).
    pub fn medium_base(&self, m: usize) -> usize {
        2 * self.links.len() + self.media[..m].iter().map(|x| x.members.len()).sum::<usize>()
    }

    /// The node the port leaves.
    pub fn from(&self, p: usize) -> usize {
        match self.kind(p) {
            PortKind::Link { link, forward } => {
                let l = &self.links[link];
                if forward {
                    l.a
                } else {
                    l.b
                }
            }
            PortKind::Medium { medium, member } => self.media[medium].members[member],
        }
    }

    /// "a->b" for a link direction, "node->medium" for a member's port onto a medium.
    pub fn name(&self, p: usize) -> String {
        match self.kind(p) {
            PortKind::Link { link, forward } => {
                let l = &self.links[link];
                let (a, b) = if forward { (l.a, l.b) } else { (l.b, l.a) };
                format!("{}->{}", self.nodes[a].name, self.nodes[b].name)
            }
            PortKind::Medium { medium, member } => {
                let m = &self.media[medium];
                format!("{}->{}", self.nodes[m.members[member]].name, m.name)
            }
        }
    }

    /// Whether port `p` is named `n` ([`Self::name`] without writing the name out: a name is
    /// looked up among 40,002 ports at 10,000 flows).
    pub fn name_is(&self, p: usize, n: &str) -> bool {
        let (from, to) = match self.kind(p) {
            PortKind::Link { link, forward } => {
                let l = &self.links[link];
                let (a, b) = if forward { (l.a, l.b) } else { (l.b, l.a) };
                (self.nodes[a].name.as_str(), self.nodes[b].name.as_str())
            }
            PortKind::Medium { medium, member } => {
                let m = &self.media[medium];
                (self.nodes[m.members[member]].name.as_str(), m.name.as_str())
            }
        };
        n.strip_prefix(from).and_then(|r| r.strip_prefix("->")) == Some(to)
    }

    pub fn delay(&self, p: usize) -> Time {
        match self.kind(p) {
            PortKind::Link { link, .. } => self.links[link].delay,
            PortKind::Medium { medium, .. } => self.media[medium].delay,
        }
    }

    /// The router module's name and factory.
    pub fn router(&self, p: usize) -> (&str, &Arc<dyn RouterFactory>) {
        match self.kind(p) {
            PortKind::Link { link, .. } => (&*self.links[link].router, &self.links[link].router_factory),
            PortKind::Medium { medium, .. } => (&self.media[medium].router, &self.media[medium].router_factory),
        }
    }

    /// Every edge of the routing graph: (port, from node, to node). A link direction has one;
    /// an access point's port has one per station, a station's port one to the access point.
    pub fn edges(&self) -> Vec<(usize, usize, usize)> {
        let mut e = Vec::new();
        for (li, l) in self.links.iter().enumerate() {
            e.push((2 * li, l.a, l.b));
            e.push((2 * li + 1, l.b, l.a));
        }
        for (mi, m) in self.media.iter().enumerate() {
            let base = self.medium_base(mi);
            let ap = m.members[0];
            for (j, &s) in m.members.iter().enumerate().skip(1) {
                e.push((base, ap, s));
                e.push((base + j, s, ap));
            }
        }
        e
    }
}

impl Spec {
    pub fn port_map(&self) -> PortMap<'_> {
        PortMap { nodes: &self.nodes, links: &self.links, media: &self.media }
    }

    /// A flow's round-trip propagation delay, ns: its forward and reverse routes' link delays
    /// (what BDP buffers and the results' `rtt_prop_s` use; one place computes it).
    pub fn propagation_rtt(&self, f: &FlowSpec) -> Time {
        let pm = self.port_map();
        self.routes[f.fwd_route].iter().chain(&self.routes[f.rev_route]).map(|&p| pm.delay(p)).sum()
    }
}

fn debug_str<T: std::fmt::Debug, S: serde::Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{v:?}"))
}

/// A shared value written as the value itself.
fn inner<T: Serialize + ?Sized, S: serde::Serializer>(v: &Arc<T>, s: S) -> Result<S::Ok, S::Error> {
    T::serialize(v, s)
}
