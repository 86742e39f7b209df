//! The protocol registry: a scenario names a protocol ("newreno") or a router module
//! ("red") and the registry builds the matching parts with their typed parameters. Engines
//! know protocols only through this file (DESIGN.md: the simulator must not know any
//! protocol by name except through the registry).

use crate::aqm::{DropTail, Red, RedParams};
use crate::dcpew::{self, DcpewParams, DcpewRouter, DcpewRouterParams};
use crate::dpcp::{self, DpcpParams, DpcpRouter, DpcpRouterParams};
use crate::endpoint::{Endpoint, FlowConfig};
use crate::params::{parse, ParamError};
use crate::rng::SimRng;
use crate::router::RouterModule;
use crate::tcp::{self, Recovery, TcpParams};
use crate::vcp::{self, VcpParams, VcpRouter, VcpRouterParams};

/// How a protocol regulates its sending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regulation {
    Window,
    Rate,
}

/// One entry of `racc list`.
#[derive(Clone, Copy, Debug)]
pub struct ProtocolInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub regulation: Regulation,
    pub description: &'static str,
}

#[derive(Clone, Copy, Debug)]
pub struct RouterInfo {
    pub name: &'static str,
    pub description: &'static str,
}

pub const PROTOCOLS: &[ProtocolInfo] = &[
    ProtocolInfo {
        name: "newreno",
        aliases: &["tcp-newreno", "tcp"],
        regulation: Regulation::Window,
        description: "TCP NewReno (RFC 5681, 6582, 6298), optional ECN (RFC 3168)",
    },
    ProtocolInfo {
        name: "reno",
        aliases: &["tcp-reno"],
        regulation: Regulation::Window,
        description: "TCP Reno: fast recovery ends at the first new ACK (RFC 5681)",
    },
    ProtocolInfo {
        name: "vcp",
        aliases: &["tcp-vcp"],
        regulation: Regulation::Window,
        description: "TCP/VCP: VCP's MI/AI/MD on a 2-bit load-factor code (seed 001 A1-A5) over the NewReno transport",
    },
    ProtocolInfo {
        name: "dpcp",
        aliases: &["tcp-dpcp", "mpcp"],
        regulation: Regulation::Window,
        description: "TCP/DPCP: a 4-bit load factor split over 2 packets, seq/ack ordering (seed 000 §3), VCP fallback",
    },
    ProtocolInfo {
        name: "tpcp",
        aliases: &["tcp-tpcp"],
        regulation: Regulation::Window,
        description: "TCP/TPCP: DPCP with 3-packet chains ordered by checksum offsets (seed 000 §5)",
    },
    ProtocolInfo {
        name: "dcpew",
        aliases: &["tcp-dcpew", "dcp-ew"],
        regulation: Regulation::Window,
        description: "TCP/DCP-EW: DPCP ordered by the IP ID's LSB (works through IPsec tunnels), loss differentiation N=32 T=16 (seed 003 §III)",
    },
];

pub const ROUTER_MODULES: &[RouterInfo] = &[
    RouterInfo { name: "droptail", description: "FIFO with a packet or byte limit; drops arrivals when full" },
    RouterInfo {
        name: "red",
        description: "Random Early Detection (Floyd & Jacobson 1993), gentle mode, packet or byte mode, drop or ECN mark",
    },
    RouterInfo {
        name: "vcp",
        description: "VCP load factor (seed 001 A1, A2) every t_p, raises the 2-bit code of ECN-capable data at dequeue",
    },
    RouterInfo {
        name: "dpcp",
        description: "VCP's load factor quantised to seed 000 Table 1, written over 2-packet chains by Alg. 2 at dequeue",
    },
    RouterInfo {
        name: "tpcp",
        description: "DPCP router with 3-packet chains (seed 000 §5; chain = 2|3|4), position from the TCP checksum",
    },
    RouterInfo {
        name: "dcpew",
        description: "DCP-EW: DPCP's Alg. 2 by the visible IP ID's LSB (outer ID in a tunnel) + the IPsec security module at gateways (seed 003 §III.C)",
    },
];

/// The canonical name of a protocol, accepting aliases; `None` if unknown.
pub fn canonical_protocol(name: &str) -> Option<&'static str> {
    PROTOCOLS.iter().find(|p| p.name == name || p.aliases.contains(&name)).map(|p| p.name)
}

fn unknown_protocol(name: &str) -> ParamError {
    let known: Vec<&str> = PROTOCOLS.iter().map(|p| p.name).collect();
    ParamError::new("", format!("unknown protocol '{name}' (known: {})", known.join(", ")))
}

/// Check a protocol name and its parameter table without building anything.
pub fn check_protocol(name: &str, params: &serde_json::Value) -> Result<(), ParamError> {
    match canonical_protocol(name) {
        Some("newreno") | Some("reno") => parse::<TcpParams>(params)?.validate(),
        Some("vcp") => parse::<VcpParams>(params)?.validate(),
        Some("dpcp") | Some("tpcp") => parse_dpcp(name, params).map(|_| ()),
        Some("dcpew") => parse_dcpew(params).map(|_| ()),
        _ => Err(unknown_protocol(name)),
    }
}

/// Build the sending endpoint of a flow.
pub fn sender(name: &str, cfg: &FlowConfig, params: &serde_json::Value) -> Result<Box<dyn Endpoint>, ParamError> {
    match canonical_protocol(name) {
        Some("newreno") => Ok(tcp::tcp_sender(cfg, Recovery::NewReno, &parse_tcp(params)?)),
        Some("reno") => Ok(tcp::tcp_sender(cfg, Recovery::Reno, &parse_tcp(params)?)),
        Some("vcp") => vcp::vcp_sender(cfg, &parse::<VcpParams>(params)?),
        Some("dpcp") | Some("tpcp") => dpcp::dpcp_sender(cfg, &parse_dpcp(name, params)?),
        Some("dcpew") => dcpew::dcpew_sender(cfg, &parse_dcpew(params)?),
        _ => Err(unknown_protocol(name)),
    }
}

/// Build the receiving endpoint of a flow.
pub fn receiver(name: &str, cfg: &FlowConfig, params: &serde_json::Value) -> Result<Box<dyn Endpoint>, ParamError> {
    match canonical_protocol(name) {
        Some("newreno") | Some("reno") => {
            parse_tcp(params)?;
            Ok(tcp::tcp_receiver(cfg))
        }
        Some("vcp") => {
            parse::<VcpParams>(params)?.validate()?;
            Ok(vcp::vcp_receiver(cfg))
        }
        Some("dpcp") | Some("tpcp") => dpcp::dpcp_receiver(cfg, &parse_dpcp(name, params)?),
        Some("dcpew") => dcpew::dcpew_receiver(cfg, &parse_dcpew(params)?),
        _ => Err(unknown_protocol(name)),
    }
}

/// DPCP/TPCP flow parameters: "tpcp" defaults to chains of 3, "dpcp" to 2; `chain` overrides.
fn parse_dpcp(name: &str, params: &serde_json::Value) -> Result<DpcpParams, ParamError> {
    let n = if canonical_protocol(name) == Some("tpcp") { 3 } else { 2 };
    let p: DpcpParams = with_chain_default(params, n)?;
    p.validate()?;
    Ok(p)
}

fn parse_dcpew(params: &serde_json::Value) -> Result<DcpewParams, ParamError> {
    let p: DcpewParams = parse(params)?;
    p.validate()?;
    Ok(p)
}

/// Parse a table whose `chain` defaults to `n` (the name's) unless given.
fn with_chain_default<T: serde::de::DeserializeOwned + Default>(
    params: &serde_json::Value,
    n: u8,
) -> Result<T, ParamError> {
    let mut v = if params.is_null() { serde_json::json!({}) } else { params.clone() };
    if let Some(m) = v.as_object_mut() {
        m.entry("chain").or_insert(serde_json::json!(n));
    }
    parse(&v)
}

fn parse_tcp(params: &serde_json::Value) -> Result<TcpParams, ParamError> {
    let p: TcpParams = parse(params)?;
    p.validate()?;
    Ok(p)
}

/// Build a router module for one output port. `rng` is that port's own stream.
pub fn router(name: &str, params: &serde_json::Value, rng: SimRng) -> Result<Box<dyn RouterModule>, ParamError> {
    match name {
        "droptail" => {
            let _: EmptyParams = parse(params)?;
            Ok(Box::new(DropTail::new()))
        }
        "red" => {
            let p: RedParams = parse(params)?;
            Ok(Box::new(Red::new(p, rng)?))
        }
        "vcp" => {
            let p: VcpRouterParams = parse(params)?;
            Ok(Box::new(VcpRouter::new(&p, rng)?))
        }
        "dpcp" | "tpcp" => {
            let p: DpcpRouterParams = with_chain_default(params, if name == "tpcp" { 3 } else { 2 })?;
            Ok(Box::new(DpcpRouter::new(&p, rng)?))
        }
        "dcpew" => {
            let p: DcpewRouterParams = parse(params)?;
            Ok(Box::new(DcpewRouter::new(&p, rng)?))
        }
        _ => {
            let known: Vec<&str> = ROUTER_MODULES.iter().map(|r| r.name).collect();
            Err(ParamError::new("", format!("unknown router module '{name}' (known: {})", known.join(", "))))
        }
    }
}

/// Check a router module name and parameters without building it.
pub fn check_router(name: &str, params: &serde_json::Value) -> Result<(), ParamError> {
    router(name, params, SimRng::for_component(0, "check")).map(|_| ())
}

/// The load-factor interval t_p (s) a flow's sender scales MI and AI by (seed 001 A3/A4), or
/// `None` for protocols without router feedback. `params` must already have been checked.
pub fn sender_t_p(name: &str, params: &serde_json::Value) -> Option<f64> {
    match canonical_protocol(name) {
        Some("vcp") => parse::<VcpParams>(params).ok().map(|p| p.t_p),
        Some("dpcp") | Some("tpcp") => parse_dpcp(name, params).ok().map(|p| p.t_p),
        Some("dcpew") => parse_dcpew(params).ok().map(|p| p.t_p),
        _ => None,
    }
}

/// The interval t_p (s) over which a router module measures its load factor (seed 001 A1), or
/// `None` for modules without one. `params` must already have been checked.
pub fn router_t_p(name: &str, params: &serde_json::Value) -> Option<f64> {
    match name {
        "vcp" => parse::<VcpRouterParams>(params).ok().map(|p| p.t_p),
        "dpcp" | "tpcp" => with_chain_default::<DpcpRouterParams>(params, 2).ok().map(|p| p.t_p),
        "dcpew" => parse::<DcpewRouterParams>(params).ok().map(|p| p.t_p),
        _ => None,
    }
}

/// Modules without parameters still refuse unknown keys.
#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct EmptyParams {}
