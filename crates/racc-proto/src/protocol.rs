//! The protocol interface: what every protocol and router module implements, and what an
//! engine or the registry needs to know of them. A protocol's parsed parameters build both ends
//! of its flows ([`FlowProtocol`]); a router module's build one module per port
//! ([`RouterFactory`]). Each states what it requires of the router modules on its data path
//! ([`Requirement`]) or what it provides ([`RouterFactory::provides`]), under contract keys its
//! own folder defines (`vcp::keys`, `jetmax::keys`, ...); the scenario check matches the two and
//! knows no protocol by name.
//!
//! The ground floor of the crate, beside [`crate::cc`], [`crate::endpoint`] and
//! [`crate::router`]: every protocol folder imports it, and it imports none of them. The table
//! of protocols (`registry.rs`) is the top floor, and no protocol imports it.

use crate::endpoint::{Endpoint, FlowConfig};
use crate::rng::SimRng;
use crate::router::RouterModule;

/// A protocol's checked parameters: builds both ends of each of its flows.
pub trait FlowProtocol: Send + Sync + std::fmt::Debug {
    /// The sending endpoint of a flow.
    fn sender(&self, cfg: &FlowConfig) -> Box<dyn Endpoint>;
    /// The receiving endpoint of a flow.
    fn receiver(&self, cfg: &FlowConfig) -> Box<dyn Endpoint>;
    /// What the flow requires of the router modules on its data path. Default: nothing.
    fn path_requirements(&self) -> Vec<Requirement> {
        Vec::new()
    }
}

/// The output port a router module is built for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PortIdentity<'a> {
    /// The node that owns the port, and the port's number and name ("r0->r1").
    pub node: &'a str,
    pub port: u32,
    pub name: &'a str,
    pub capacity_bps: f64,
    /// Propagation delay of the link, ns.
    pub delay: u64,
    /// Buffer limit: packets (`u32::MAX` if limited in bytes) and bytes (`u64::MAX` if in packets).
    pub limit_pkts: u32,
    pub limit_bytes: u64,
    /// The scenario's packet size, bytes (0 where unknown): what settings given in packets, or
    /// derived from the link's rate in packets per second, are scaled by.
    pub mean_pkt_size: u32,
}

impl PortIdentity<'_> {
    /// The buffer as a number of `mean_pkt_size` packets, whichever unit limits it.
    pub fn buffer_pkts(&self) -> f64 {
        let by_bytes = if self.limit_bytes == u64::MAX || self.mean_pkt_size == 0 {
            f64::INFINITY
        } else {
            self.limit_bytes as f64 / self.mean_pkt_size as f64
        };
        let by_pkts = if self.limit_pkts == u32::MAX { f64::INFINITY } else { self.limit_pkts as f64 };
        by_pkts.min(by_bytes)
    }
}

/// A router module's checked parameters: builds the module of each port that uses it.
pub trait RouterFactory: Send + Sync + std::fmt::Debug {
    /// The module for one output port; `rng` is that port's own stream.
    fn build(&self, port: &PortIdentity<'_>, rng: SimRng) -> Box<dyn RouterModule>;
    /// Values this module gives the flows through it (matched against [`Requirement`]s).
    fn provides(&self) -> Vec<(&'static str, ContractValue)> {
        Vec::new()
    }
    /// What the module's settings provably cannot do on this port (a threshold above the
    /// buffer, say), one sentence each: the scenario check passes them to the user as warnings,
    /// since the run is valid but a setting in it does nothing. Default: none.
    fn warnings(&self, _port: &PortIdentity<'_>) -> Vec<String> {
        Vec::new()
    }
    /// The settings the module runs with on this port where it derives them from the port
    /// (RED's automatic thresholds), by name, for the run's summary. Default: none.
    fn settings(&self, _port: &PortIdentity<'_>) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// A value of a path contract.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ContractValue {
    /// Compared with a relative tolerance of 1e-9 (both sides come from decimal text).
    Real(f64),
    Int(i64),
}

impl ContractValue {
    pub fn matches(self, other: ContractValue) -> bool {
        match (self, other) {
            (ContractValue::Real(a), ContractValue::Real(b)) => (a - b).abs() <= 1e-9 * a.abs().max(b.abs()),
            (ContractValue::Int(a), ContractValue::Int(b)) => a == b,
            _ => false,
        }
    }
}

impl std::fmt::Display for ContractValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ContractValue::Real(x) => write!(f, "{x}"),
            ContractValue::Int(n) => write!(f, "{n}"),
        }
    }
}

/// Where on the data path a requirement must be met.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    /// Every router module that provides the key must provide this value; modules without it
    /// are fine (a VCP flow over DropTail sees code 00 and behaves as TCP).
    IfProvided,
    /// As `IfProvided`, and at least one module on the path must provide the key (a protocol
    /// that cannot run without its routers).
    Somewhere,
}

/// What a flow requires of the router modules on its data path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Requirement {
    /// The contract key routers provide ("load_factor.t_p").
    pub key: &'static str,
    pub value: ContractValue,
    pub presence: Presence,
    /// The flow parameter the value comes from, for the error's key path ("t_p"), and its unit
    /// as written after a value (" s", or "" for a count).
    pub param: &'static str,
    pub unit: &'static str,
    /// Why the two must agree, for the error's reason.
    pub why: &'static str,
}

/// A port with no particular identity, for building modules outside an engine.
pub const ANY_PORT: PortIdentity<'static> = PortIdentity {
    node: "",
    port: 0,
    name: "",
    capacity_bps: 0.0,
    delay: 0,
    limit_pkts: u32::MAX,
    limit_bytes: u64::MAX,
    mean_pkt_size: 0,
};

#[cfg(test)]
mod tests {
    use super::ContractValue;

    #[test]
    fn contract_values_match_within_1e_9_and_by_kind() {
        assert!(ContractValue::Real(0.2).matches(ContractValue::Real(0.2 + 1e-12)));
        assert!(!ContractValue::Real(0.2).matches(ContractValue::Real(0.21)));
        assert!(ContractValue::Int(3).matches(ContractValue::Int(3)));
        assert!(!ContractValue::Int(2).matches(ContractValue::Real(2.0)));
    }
}
