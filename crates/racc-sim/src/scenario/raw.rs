//! The scenario file as written (TOML, or JSON from the Python front end), before any
//! checking beyond types. Every table refuses unknown keys so that a typo is an error that
//! names the key, not a silently ignored setting.

use super::units::{Buffer, Rate, Seconds, Size};
use racc_proto::loss::LossSpec;
use serde::Deserialize;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    pub name: Option<String>,
    pub description: Option<String>,
    /// Simulated time to run.
    pub duration: Seconds,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Full wire size of a data packet, headers included (docs/PROTOCOLS.md §1).
    #[serde(default = "default_packet_size")]
    pub packet_size: i64,
    /// RFC 6298 minimum RTO, one value for the whole run.
    pub min_rto: Option<Seconds>,
    /// Open every flow with SYN / SYN-ACK (docs/PROTOCOLS.md §1 host rules).
    #[serde(default = "default_true")]
    pub handshake: bool,
    pub topology: RawTopology,
    #[serde(default)]
    pub flows: Vec<RawFlows>,
    #[serde(default)]
    pub traffic: Vec<RawTraffic>,
    #[serde(default)]
    pub record: RawRecord,
    /// IPsec ESP tunnels between pairs of gateway routers (DCP-EW §III.C).
    #[serde(default)]
    pub tunnels: Vec<RawTunnel>,
    /// Memory caps checked before the run (`limits.rs`).
    #[serde(default)]
    pub limits: RawLimits,
}

/// `[limits]`: how many flows and sample rows a run may have (defaults in `limits.rs`). A run
/// whose up-front estimate exceeds one is refused, naming the key to raise.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct RawLimits {
    /// Upper bound on the sample rows (port, group and flow rows plus sample times).
    pub samples: Option<f64>,
    /// Flows in the run, from every group and generator.
    pub flows: Option<f64>,
    /// Estimated peak memory of the run (`estimate.rs`), bytes or "4GB".
    pub memory: Option<super::units::Size>,
    /// Estimated simulated events of the run (`estimate.rs`).
    pub events: Option<f64>,
}

/// A site-to-site ESP tunnel: everything a gateway sends toward the other gateway is
/// encapsulated; tunnel packets leaving the other gateway on any other port are decapsulated.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct RawTunnel {
    pub id: i64,
    pub between: Vec<String>,
}

fn default_seed() -> u64 {
    1
}
fn default_packet_size() -> i64 {
    1000
}
fn default_true() -> bool {
    true
}

/// `kind` selects a shortcut ("dumbbell", "parking_lot", "fat_tree") or an explicit node/link list
/// ("explicit"). Kept flat (not a tagged enum) so that errors keep their full key path.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct RawTopology {
    pub kind: String,
    /// dumbbell: number of sender/receiver host pairs.
    pub pairs: Option<i64>,
    /// dumbbell: the r0 -> r1 link.
    pub bottleneck: Option<RawLink>,
    /// dumbbell, parking_lot: the host access links.
    pub access: Option<RawLink>,
    /// dumbbell: per-pair one-way delay of the sender's access link (RTT spread).
    pub access_delays: Option<Vec<Seconds>>,
    /// parking_lot: the chain of bottleneck links L0..Lk-1; explicit: every link.
    pub links: Option<Vec<RawLink>>,
    /// explicit: every node.
    pub nodes: Option<Vec<RawNode>>,
    /// explicit: shared media (an access point and its stations on one channel).
    pub media: Option<Vec<RawMedium>>,
    /// fat_tree: the switches' port count k (even): k pods, k³/4 hosts (`fat_tree.rs`).
    pub k: Option<i64>,
    /// fat_tree: each host's link to its edge switch.
    pub host: Option<RawLink>,
    /// fat_tree: every edge-aggregation link.
    pub edge_agg: Option<RawLink>,
    /// fat_tree: every aggregation-core link.
    pub agg_core: Option<RawLink>,
    /// Per-flow ECMP: each flow's route is one of the equal-cost shortest paths, chosen by a
    /// hash of (src, dst, flow number, seed) (`routing.rs`). Default: on for fat_tree, off
    /// otherwise (the lowest-port shortest path).
    pub ecmp: Option<bool>,
}

/// A shared half-duplex medium, e.g. an 802.11 WLAN: `ap` and every station contend for one
/// channel (`crate::medium`). Timing keys default to 802.11b DSSS (long preamble).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct RawMedium {
    pub name: String,
    /// "wlan" (the only kind so far).
    pub kind: Option<String>,
    /// The access point: the member that reaches every station.
    pub ap: String,
    pub stations: Vec<String>,
    /// Rate of the data frames' bits.
    pub phy_rate: Option<Rate>,
    /// The capacity router modules are told; default the PHY rate.
    pub capacity: Option<Rate>,
    pub delay: Option<Seconds>,
    /// Each member's queue; default 50 packets (ns-2's interface queue).
    pub buffer: Option<Buffer>,
    pub router: Option<String>,
    pub router_params: Option<serde_json::Value>,
    /// "member" (default: a router module per member's port) or "medium" (one for the medium).
    pub router_scope: Option<String>,
    /// Loss of every member's frames (after the MAC's retries: the loss the transport sees).
    pub loss: Option<LossSpec>,
    /// Per member (access point or station, by node name): its own loss, replacing `loss`.
    pub station_loss: Option<std::collections::BTreeMap<String, LossSpec>>,
    pub slot: Option<Seconds>,
    pub sifs: Option<Seconds>,
    pub difs: Option<Seconds>,
    pub phy_header: Option<Seconds>,
    pub ack: Option<Seconds>,
    pub mac_overhead: Option<Size>,
    pub cw_min: Option<i64>,
    pub cw_max: Option<i64>,
    pub retry_limit: Option<i64>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct RawNode {
    pub name: String,
    #[serde(default = "default_router_kind")]
    pub kind: String,
}

fn default_router_kind() -> String {
    "router".into()
}

/// A full-duplex point-to-point link. Both directions share capacity, delay, buffer and
/// router module; loss applies to the a -> b ("forward") direction unless `loss_direction`
/// says otherwise.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawLink {
    /// explicit topologies: the two end nodes.
    pub a: Option<String>,
    pub b: Option<String>,
    pub capacity: Option<Rate>,
    pub delay: Option<Seconds>,
    pub buffer: Option<Buffer>,
    pub router: Option<String>,
    pub router_params: Option<serde_json::Value>,
    pub loss: Option<LossSpec>,
    /// "forward" (a -> b, the default), "reverse" or "both".
    pub loss_direction: Option<String>,
}

/// Declares a scenario table that also takes the per-flow transport options, written into each
/// table here, once (serde cannot combine `flatten` with `deny_unknown_fields`), with
/// `host_options()` reading them back as one [`RawHostOptions`].
macro_rules! with_host_options {
    ($(#[$meta:meta])* pub struct $name:ident { $($fields:tt)* }) => {
        $(#[$meta])*
        pub struct $name {
            $($fields)*
            pub params: Option<serde_json::Value>,
            pub ecn: Option<bool>,
            pub delayed_ack: Option<bool>,
            /// SACK (RFC 2018) with RFC 6675 loss recovery, for the TCP-based protocols.
            pub sack: Option<bool>,
            pub initial_window: Option<i64>,
            pub initial_ssthresh: Option<Size>,
            pub handshake: Option<bool>,
        }

        impl $name {
            pub fn host_options(&self) -> RawHostOptions {
                RawHostOptions {
                    params: self.params.clone(),
                    ecn: self.ecn,
                    delayed_ack: self.delayed_ack,
                    sack: self.sack,
                    initial_window: self.initial_window,
                    initial_ssthresh: self.initial_ssthresh,
                    handshake: self.handshake,
                }
            }
        }
    };
}

with_host_options! {
    /// Per-flow transport options shared by flow groups and traffic generators.
    #[derive(Debug, Default, Clone)]
    pub struct RawHostOptions {}
}

with_host_options! {
    /// A group of flows with the same protocol and timing. `src`/`dst` may contain `{i}`,
    /// replaced by the flow's index in the group (0..count-1, plus `index_offset`).
    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    pub struct RawFlows {
        pub name: Option<String>,
        pub protocol: String,
        pub src: String,
        pub dst: String,
        #[serde(default = "default_count")]
        pub count: i64,
        #[serde(default)]
        pub index_offset: i64,
        pub start: Option<Seconds>,
        /// Spread start times uniformly over [start, start + start_spread) (seeded).
        pub start_spread: Option<Seconds>,
        pub stop: Option<Seconds>,
        /// Bytes to send; absent = unbounded (FTP-like).
        pub size: Option<Size>,
    }
}

fn default_count() -> i64 {
    1
}

with_host_options! {
    /// A traffic generator. `kind = "poisson"` (the default): Poisson arrivals with sizes from a
    /// distribution, drawn from the generator's own seeded stream so every protocol sees the
    /// identical list (QFCP §III.A). `kind = "web"`: `sources` web-like on/off sources (seed
    /// 001 §4), each thinking, sending a file as one flow, and thinking again once it completes;
    /// `src`/`dst` may contain `{i}` (the source's number times `index_stride` plus
    /// `index_offset`), as in `[[flows]]`. `kind = "trace"`: a given arrival list (`file`, read by
    /// the front end into `arrivals`).
    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    pub struct RawTraffic {
        pub name: Option<String>,
        #[serde(default = "default_poisson")]
        pub kind: String,
        pub protocol: String,
        pub src: String,
        pub dst: String,
        /// poisson: mean arrivals per second.
        pub rate: Option<f64>,
        /// poisson: the flow-size law.
        pub size: Option<RawSizeDist>,
        /// poisson: no arrivals before this; web: the sources' first think period begins here.
        pub start: Option<Seconds>,
        /// poisson: no arrivals after this; web: no transfer begins after this.
        pub stop: Option<Seconds>,
        /// poisson: stop after this many arrivals.
        pub max_flows: Option<i64>,
        /// web: the number of sources.
        pub sources: Option<i64>,
        /// web: added to each source's number in `{i}`.
        pub index_offset: Option<i64>,
        /// web: the step between consecutive sources' `{i}` (default 1): source k's `{i}` is
        /// k * index_stride + index_offset, so 10 sources with stride 20 sit one per block of 20
        /// hosts (one per subnet of VCP-DCCP's T3 topology).
        pub index_stride: Option<i64>,
        /// web: the think-time law (defaults: the paper's).
        pub think: Option<RawThink>,
        /// web: the file-length law (a table, defaults: the paper's); trace: the arrival list's
        /// file (a path relative to the scenario file). Kept untyped here so that each kind reads
        /// it with its own error messages (`RawFile` for web).
        pub file: Option<serde_json::Value>,
        /// trace: the arrival list's columns, as the front end read them from `file` (or written
        /// inline).
        pub arrivals: Option<RawArrivals>,
    }
}

/// The web source's think time, P{T > t} = p_h [1 + (t/pi_h)^eta_h]^-1 + p_l [1 + (t/pi_l)^eta_l]^-1
/// (VCP-DCCP §4; the paper lists p_l, pi_l, eta_l as P_f, π_f, η_f). Each key defaults to the
/// paper's value; giving one of p_h, p_l alone sets the other to 1 minus it.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct RawThink {
    pub p_h: Option<f64>,
    pub pi_h: Option<Seconds>,
    pub eta_h: Option<f64>,
    pub p_l: Option<f64>,
    pub pi_l: Option<Seconds>,
    pub eta_l: Option<f64>,
}

/// The web source's file length, P{F > f} = [1 + (f/pi)^eta]^-1 with median `pi` (VCP-DCCP §4:
/// eta = φ = 1.15066, pi = 2190 bytes [reconstructed unit]).
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct RawFile {
    pub pi: Option<Size>,
    pub eta: Option<f64>,
}

/// A trace's rows as columns: `start` (seconds from the start of the run) and `size` (payload
/// bytes), and optionally per-row `src`, `dst` and `protocol` overriding the entry's. `rows`
/// says how to name a row in messages: "line" (a CSV file's line, header on line 1), "row"
/// (1-based, Parquet or inline).
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct RawArrivals {
    pub start: Vec<f64>,
    pub size: Vec<f64>,
    pub src: Option<Vec<String>>,
    pub dst: Option<Vec<String>>,
    pub protocol: Option<Vec<String>>,
    pub rows: Option<String>,
}

fn default_poisson() -> String {
    "poisson".into()
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct RawSizeDist {
    /// "pareto", "exponential" or "fixed".
    pub dist: String,
    pub mean: Option<Size>,
    pub shape: Option<f64>,
    pub size: Option<Size>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct RawRecord {
    /// Metric sampling interval.
    pub interval: Option<Seconds>,
    /// Sample every flow's cwnd, rate, RTT and goodput.
    #[serde(default = "default_true")]
    pub flows: bool,
    /// Ports to sample: "all" (default), "routers" (ports leaving a router) or a list of
    /// port names such as ["r0->r1"]. Whole-run port totals always cover every port.
    pub ports: Option<RawPortSelection>,
    /// Each flow group's share of every recorded port (`group_links`): off by default, since
    /// it costs a row per group, port and sample; the experiments that plot shares turn it on.
    #[serde(default)]
    pub groups: bool,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(untagged)]
pub enum RawPortSelection {
    Keyword(String),
    Names(Vec<String>),
}

impl Default for RawRecord {
    fn default() -> Self {
        RawRecord { interval: None, flows: true, ports: None, groups: false }
    }
}
