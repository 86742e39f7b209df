//! The protocol registry: one table of protocols and one of router modules. A scenario names a
//! protocol ("newreno") or a router module ("red") with a parameter table; the entry parses and
//! validates that table once into a factory, which then builds every flow's sender and
//! receiver (or every port's module) without parsing again. Engines know protocols only
//! through these factories (ARCHITECTURE.md: the simulator names no protocol).
//!
//! The top floor of the crate: it imports every protocol folder and none imports it back. The
//! interface the protocols implement ([`FlowProtocol`], [`RouterFactory`], [`Requirement`]) is
//! [`crate::protocol`], re-exported here; each protocol folder keeps its own contract keys
//! ([`keys`] gathers them).
//!
//! Adding a protocol: a module with its parameter type, its controller (or transport) and a
//! `parse` function returning an `Arc<dyn FlowProtocol>`, plus one entry in [`PROTOCOLS`].
//! Tests and tools can extend a [`Registry`] at run time (`Registry::with_protocol`).

use crate::aqm;
use crate::codel;
use crate::coexist;
use crate::dccp;
use crate::dcpew;
use crate::dpcp;
use crate::endpoint::{Endpoint, FlowConfig};
use crate::jetmax;
use crate::params::ParamError;
use crate::piqi_rcp;
use crate::qfcp;
use crate::rcp;
use crate::rng::SimRng;
use crate::router::RouterModule;
use crate::tcp;
use crate::vcp;
use crate::xcp;
use std::sync::{Arc, OnceLock};

// The protocol interface lives on the ground floor (`crate::protocol`); these names stay
// reachable here for the engines and tools that build through the table.
pub use crate::protocol::{ContractValue, FlowProtocol, PortIdentity, Presence, Requirement, RouterFactory, ANY_PORT};

/// How a protocol regulates its sending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regulation {
    Window,
    Rate,
}

/// One protocol of the table.
#[derive(Clone, Copy, Debug)]
pub struct ProtocolEntry {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub regulation: Regulation,
    pub description: &'static str,
    /// Parse and validate a flow's parameter table (unknown keys refused, the key named).
    pub parse: fn(&serde_json::Value) -> Result<Arc<dyn FlowProtocol>, ParamError>,
}

/// One router module of the table.
#[derive(Clone, Copy, Debug)]
pub struct RouterEntry {
    pub name: &'static str,
    pub description: &'static str,
    /// Parse and validate a port's `router_params`.
    pub parse: fn(&serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError>,
}

/// Every protocol racc implements.
pub const PROTOCOLS: &[ProtocolEntry] = &[
    ProtocolEntry {
        name: "newreno",
        aliases: &["tcp-newreno", "tcp"],
        regulation: Regulation::Window,
        description: "TCP NewReno (RFC 5681, 6582, 6298), optional ECN (RFC 3168)",
        parse: tcp::parse_newreno,
    },
    ProtocolEntry {
        name: "reno",
        aliases: &["tcp-reno"],
        regulation: Regulation::Window,
        description: "TCP Reno: fast recovery ends at the first new ACK (RFC 5681)",
        parse: tcp::parse_reno,
    },
    ProtocolEntry {
        name: "cubic",
        aliases: &["tcp-cubic"],
        regulation: Regulation::Window,
        description: "TCP CUBIC (RFC 9438): W = C(t-K)^3 + W_max, beta 0.7, Reno-friendly region, fast convergence",
        parse: tcp::cubic::parse_cubic,
    },
    ProtocolEntry {
        name: "bbr",
        aliases: &["tcp-bbr"],
        regulation: Regulation::Window,
        description: "BBR v1 (Linux tcp_bbr.c): paced at gain x BtlBw (10-round max filter), cwnd 2 BDP, STARTUP/DRAIN/PROBE_BW/PROBE_RTT",
        parse: tcp::bbr::parse_bbr,
    },
    ProtocolEntry {
        name: "dctcp",
        aliases: &["tcp-dctcp"],
        regulation: Regulation::Window,
        description: "DCTCP (RFC 8257): cwnd x (1 - alpha/2) once per window of ECN marks, alpha by g = 1/16; use with step routers",
        parse: tcp::dctcp::parse_dctcp,
    },
    ProtocolEntry {
        name: "vcp",
        aliases: &["tcp-vcp"],
        regulation: Regulation::Window,
        description: "TCP/VCP: VCP's MI/AI/MD on a 2-bit load-factor code (VCP-DCCP A1-A5) over the NewReno transport",
        parse: vcp::parse_flow,
    },
    ProtocolEntry {
        name: "dccp",
        aliases: &["ccid2", "dccp-ccid2"],
        regulation: Regulation::Window,
        description: "DCCP CCID2 (RFC 4341): TCP-like window in packets, never retransmits, loss from the Ack Vector, Ack Ratio",
        parse: dccp::parse_flow,
    },
    ProtocolEntry {
        name: "dccp-vcp",
        aliases: &[],
        regulation: Regulation::Window,
        description: "DCCP/VCP: CCID2 with VCP's MI/AI/MD on the 2-bit load-factor code (VCP-DCCP §2, A1-A5)",
        parse: dccp::parse_vcp_flow,
    },
    ProtocolEntry {
        name: "dpcp",
        aliases: &["tcp-dpcp", "mpcp"],
        regulation: Regulation::Window,
        description: "TCP/DPCP: a 4-bit load factor split over 2 packets, seq/ack ordering (MPCP §3), VCP fallback",
        parse: dpcp::parse_dpcp_flow,
    },
    ProtocolEntry {
        name: "tpcp",
        aliases: &["tcp-tpcp"],
        regulation: Regulation::Window,
        description: "TCP/TPCP: DPCP with 3-packet chains ordered by checksum offsets (MPCP §5)",
        parse: dpcp::parse_tpcp_flow,
    },
    ProtocolEntry {
        name: "dcpew",
        aliases: &["tcp-dcpew", "dcp-ew"],
        regulation: Regulation::Window,
        description: "TCP/DCP-EW: DPCP ordered by the IP ID's LSB (works through IPsec tunnels), loss differentiation N=32 T=16 (DCP-EW §III)",
        parse: dcpew::parse_flow,
    },
    ProtocolEntry {
        name: "jetmax",
        aliases: &[],
        regulation: Regulation::Rate,
        description: "JetMax (reconstructed, docs/PROTOCOLS.md §7): paced rate moving τ of the way to the bottleneck router's fair share once per RTT",
        parse: jetmax::parse_flow,
    },
    ProtocolEntry {
        name: "rcp",
        aliases: &["tcp-rcp"],
        regulation: Regulation::Rate,
        description: "RCP: one fair rate per router port (Dukkipati et al.), paced senders over the TCP transport; needs rcp or piqi-rcp routers",
        parse: rcp::parse_flow,
    },
    ProtocolEntry {
        name: "piqi-rcp",
        aliases: &["piqi"],
        regulation: Regulation::Rate,
        description: "PIQI-RCP [reconstructed]: RCP's paced sender under PI rate routers with no queue term; needs piqi-rcp or rcp routers",
        parse: rcp::parse_flow,
    },
    ProtocolEntry {
        name: "xcp",
        aliases: &["tcp-xcp"],
        regulation: Regulation::Window,
        description: "TCP/XCP: window moved by the routers' explicit per-packet feedback (Katabi et al. 2002), NewReno on loss",
        parse: xcp::parse_flow,
    },
    ProtocolEntry {
        name: "qfcp",
        aliases: &["tcp-qfcp"],
        regulation: Regulation::Window,
        description: "QFCP: cwnd = rate feedback × RTT from per-port fair shares R = (C − βq/T)/N, N = y/R; no halving on loss; needs qfcp routers",
        parse: qfcp::parse_flow,
    },
    ProtocolEntry {
        name: "xcp-b",
        aliases: &["tcp-xcp-b"],
        regulation: Regulation::Window,
        description: "XCP-b (QFCP §III.C): XCP's sender (NewReno halving on loss) under XCP routers that take the spare bandwidth from the queue (router \"xcp-b\")",
        parse: xcp::parse_flow,
    },
];

/// Every router module racc implements.
pub const ROUTER_MODULES: &[RouterEntry] = &[
    RouterEntry {
        name: "droptail",
        description: "FIFO with a packet or byte limit; drops arrivals when full",
        parse: aqm::parse_droptail,
    },
    RouterEntry {
        name: "red",
        description: "Random Early Detection (Floyd & Jacobson 1993), gentle mode, packet or byte mode, drop or ECN mark",
        parse: aqm::parse_red,
    },
    RouterEntry {
        name: "step",
        description: "Step marking (RFC 8257 §3.1, DCTCP): CE on ECN-capable arrivals while the instantaneous queue exceeds K packets or bytes",
        parse: aqm::parse_step,
    },
    RouterEntry {
        name: "random-drop",
        description: "htsim's RandomQueue (sim/randomqueue.cpp), its fat trees' switch queue: drops arrivals with probability p = 0.1 within zone_pkts = 3 packets of a full buffer",
        parse: aqm::parse_random_drop,
    },
    RouterEntry {
        name: "codel",
        description: "CoDel (RFC 8289): drops (or ECN-marks) at dequeue once the sojourn time stayed above target (5 ms) for an interval (100 ms), then every interval/sqrt(count)",
        parse: codel::parse_router,
    },
    RouterEntry {
        name: "vcp",
        description: "VCP load factor (VCP-DCCP A1, A2) every t_p, raises the 2-bit code of ECN-capable data at dequeue",
        parse: vcp::parse_router,
    },
    RouterEntry {
        name: "vcp-red",
        description: "VCP-DCCP §4.4: a VCP sub-queue (load factor on its share) and a RED sub-queue (non-ECN TCP) by ECN bits, DRR weights vcp_share / 1 - vcp_share",
        parse: coexist::parse_router,
    },
    RouterEntry {
        name: "dpcp",
        description: "VCP's load factor quantised to MPCP Table 1, written over 2-packet chains by Alg. 2 at dequeue",
        parse: dpcp::parse_dpcp_router,
    },
    RouterEntry {
        name: "tpcp",
        description: "DPCP router with 3-packet chains (MPCP §5; chain = 2|3|4), position from the TCP checksum",
        parse: dpcp::parse_tpcp_router,
    },
    RouterEntry {
        name: "dcpew",
        description: "DCP-EW: DPCP's Alg. 2 by the visible IP ID's LSB (outer ID in a tunnel) + the IPsec security module at gateways (DCP-EW §III.C)",
        parse: dcpew::parse_router,
    },
    RouterEntry {
        name: "jetmax",
        description: "JetMax (docs/PROTOCOLS.md §7): fair share of the flows bottlenecked here, counted by their inter-packet times (3 additions per packet)",
        parse: jetmax::parse_router,
    },
    RouterEntry {
        name: "rcp",
        description: "RCP (docs/PROTOCOLS.md §6): R every min(10 ms, d0) from spare capacity and the queue, written as min(rate, R) into SYN/REF/DATA at dequeue",
        parse: rcp::parse_router,
    },
    RouterEntry {
        name: "piqi-rcp",
        description: "PIQI-RCP [reconstructed]: R by a PI law on (γC − y)/N̂, no queue term, gain per RTT, newcomers counted from their first request",
        parse: piqi_rcp::parse_router,
    },
    RouterEntry {
        name: "xcp",
        description: "XCP efficiency (alpha, beta) and fairness (gamma) controllers every mean RTT, per-packet feedback at dequeue (Katabi et al. 2002 App. A)",
        parse: xcp::parse_router,
    },
    RouterEntry {
        name: "qfcp",
        description: "QFCP (§II): every T (mean RTT) N = y/R, R = (C − 0.5·q_v/T)/N with q_v the interval's minimum queue + drops; requests lowered to R on arrival; capacity told or probed",
        parse: qfcp::parse_router,
    },
    RouterEntry {
        name: "xcp-b",
        description: "XCP-b (QFCP §III.C): the xcp router module with spare = \"queue\" by default (spare bandwidth from the queue's speed, Q held at 2 packets, a probe of 0.1·y after two intervals ending empty)",
        parse: xcp::parse_router_b,
    },
];

/// A set of protocols and router modules: the standard tables, possibly extended.
#[derive(Clone, Debug)]
pub struct Registry {
    protocols: Vec<ProtocolEntry>,
    routers: Vec<RouterEntry>,
}

impl Registry {
    /// The standard tables ([`PROTOCOLS`], [`ROUTER_MODULES`]).
    pub fn standard() -> &'static Registry {
        static STANDARD: OnceLock<Registry> = OnceLock::new();
        STANDARD.get_or_init(|| Registry { protocols: PROTOCOLS.to_vec(), routers: ROUTER_MODULES.to_vec() })
    }

    /// This registry with one more protocol (replacing one of the same name).
    pub fn with_protocol(mut self, entry: ProtocolEntry) -> Registry {
        self.protocols.retain(|p| p.name != entry.name);
        self.protocols.push(entry);
        self
    }

    /// This registry with one more router module (replacing one of the same name).
    pub fn with_router(mut self, entry: RouterEntry) -> Registry {
        self.routers.retain(|r| r.name != entry.name);
        self.routers.push(entry);
        self
    }

    pub fn protocols(&self) -> &[ProtocolEntry] {
        &self.protocols
    }

    pub fn routers(&self) -> &[RouterEntry] {
        &self.routers
    }

    /// The entry of a protocol named by its name or an alias.
    pub fn protocol(&self, name: &str) -> Option<&ProtocolEntry> {
        self.protocols.iter().find(|p| p.name == name || p.aliases.contains(&name))
    }

    pub fn router(&self, name: &str) -> Option<&RouterEntry> {
        self.routers.iter().find(|r| r.name == name)
    }

    /// Parse a flow's protocol and parameters: (canonical name, factory). An unknown name is
    /// an error with an empty key and the known names.
    pub fn parse_protocol(
        &self,
        name: &str,
        params: &serde_json::Value,
    ) -> Result<(&'static str, Arc<dyn FlowProtocol>), ParamError> {
        let e = self.protocol(name).ok_or_else(|| unknown("protocol", name, self.protocols.iter().map(|p| p.name)))?;
        Ok((e.name, (e.parse)(params)?))
    }

    /// Parse a port's router module and parameters.
    pub fn parse_router(&self, name: &str, params: &serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError> {
        let e = self.router(name).ok_or_else(|| unknown("router module", name, self.routers.iter().map(|r| r.name)))?;
        (e.parse)(params)
    }
}

/// An unknown name, with the known ones (the error has no key: the caller names it).
fn unknown<'a>(what: &str, name: &str, known: impl Iterator<Item = &'a str>) -> ParamError {
    let known: Vec<&str> = known.collect();
    ParamError::new("", format!("unknown {what} '{name}' (known: {})", known.join(", ")))
}

// Conveniences over the standard registry (tests, tools).

/// The canonical name of a standard protocol, accepting aliases; `None` if unknown.
pub fn canonical_protocol(name: &str) -> Option<&'static str> {
    Registry::standard().protocol(name).map(|p| p.name)
}

/// Check a protocol name and its parameter table without building anything.
pub fn check_protocol(name: &str, params: &serde_json::Value) -> Result<(), ParamError> {
    Registry::standard().parse_protocol(name, params).map(|_| ())
}

/// Build the sending endpoint of a flow of a standard protocol.
pub fn sender(name: &str, cfg: &FlowConfig, params: &serde_json::Value) -> Result<Box<dyn Endpoint>, ParamError> {
    Ok(Registry::standard().parse_protocol(name, params)?.1.sender(cfg))
}

/// Build the receiving endpoint of a flow of a standard protocol.
pub fn receiver(name: &str, cfg: &FlowConfig, params: &serde_json::Value) -> Result<Box<dyn Endpoint>, ParamError> {
    Ok(Registry::standard().parse_protocol(name, params)?.1.receiver(cfg))
}

/// Build a standard router module for a port with no particular identity.
pub fn router(name: &str, params: &serde_json::Value, rng: SimRng) -> Result<Box<dyn RouterModule>, ParamError> {
    Ok(Registry::standard().parse_router(name, params)?.build(&ANY_PORT, rng))
}

/// Check a router module name and parameters without building it.
pub fn check_router(name: &str, params: &serde_json::Value) -> Result<(), ParamError> {
    Registry::standard().parse_router(name, params).map(|_| ())
}

/// Every contract key, gathered from the folders that define them.
pub mod keys {
    pub use crate::jetmax::keys::*;
    pub use crate::qfcp::keys::*;
    pub use crate::rcp::keys::*;
    pub use crate::vcp::keys::*;
    pub use crate::xcp::keys::*;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_aliases_and_unknowns() {
        let r = Registry::standard();
        assert_eq!(r.protocol("tcp").map(|p| p.name), Some("newreno"));
        assert_eq!(canonical_protocol("dcp-ew"), Some("dcpew"));
        let e = r.parse_protocol("vegas", &serde_json::Value::Null).unwrap_err();
        assert!(e.key.is_empty() && e.reason.contains("unknown protocol 'vegas'") && e.reason.contains("newreno"));
        let e = r.parse_router("fq", &serde_json::Value::Null).unwrap_err();
        assert!(e.reason.contains("unknown router module 'fq'") && e.reason.contains("droptail"), "{e}");
        assert!(check_router("droptail", &json!({"limit": 3})).unwrap_err().reason.contains("limit"));
    }

    #[test]
    fn contracts_of_the_load_factor_family() {
        let reqs = |name: &str, p: serde_json::Value| Registry::standard().parse_protocol(name, &p).unwrap().1;
        let provides =
            |name: &str, p: serde_json::Value| Registry::standard().parse_router(name, &p).unwrap().provides();
        assert!(reqs("newreno", json!(null)).path_requirements().is_empty());
        let tpcp = reqs("tpcp", json!({"t_p": 0.1})).path_requirements();
        assert!(tpcp.iter().any(|r| r.key == keys::LOAD_FACTOR_T_P && r.value == ContractValue::Real(0.1)));
        assert!(tpcp.iter().any(|r| r.key == keys::LOAD_FACTOR_CHAIN && r.value == ContractValue::Int(3)));
        let dpcp = reqs("dpcp", json!({"chain": 4})).path_requirements();
        assert!(dpcp.iter().any(|r| r.key == keys::LOAD_FACTOR_CHAIN && r.value == ContractValue::Int(4)));
        assert!(provides("tpcp", json!(null)).contains(&(keys::LOAD_FACTOR_CHAIN, ContractValue::Int(3))));
        assert!(provides("vcp", json!({"t_p": 0.3})).contains(&(keys::LOAD_FACTOR_T_P, ContractValue::Real(0.3))));
        assert!(provides("droptail", json!(null)).is_empty());
    }

    /// The names and aliases each protocol is found by, and its place in both tables.
    #[test]
    fn every_name_and_alias_leads_to_its_entry() {
        for (alias, name) in [
            ("tcp-vcp", "vcp"),
            ("ccid2", "dccp"),
            ("tcp-dpcp", "dpcp"),
            ("tcp-tpcp", "tpcp"),
            ("tcp-xcp", "xcp"),
            ("piqi", "piqi-rcp"),
        ] {
            assert_eq!(canonical_protocol(alias), Some(name), "{alias}");
        }
        for name in ["vcp", "dpcp", "tpcp", "dcpew", "jetmax", "rcp", "piqi-rcp", "xcp", "qfcp", "xcp-b"] {
            assert!(PROTOCOLS.iter().any(|m| m.name == name), "{name} is a protocol");
            assert!(ROUTER_MODULES.iter().any(|m| m.name == name), "{name} is a router module");
            assert_eq!(check_router(name, &serde_json::Value::Null), Ok(()), "{name}");
            let m = router(name, &serde_json::Value::Null, SimRng::for_component(1, "router/port0")).unwrap();
            assert_eq!(m.name(), if name == "xcp-b" { "xcp" } else { name }, "{name}");
        }
        let rate: Vec<&str> = PROTOCOLS.iter().filter(|p| p.regulation == Regulation::Rate).map(|p| p.name).collect();
        assert_eq!(rate, ["jetmax", "rcp", "piqi-rcp"]);
    }

    /// Every VCP-family protocol takes `ai_law` ("seed001" | "ns2") and its `ai_ns2` constants,
    /// and refuses another value with the key and the two accepted names.
    #[test]
    fn every_vcp_family_protocol_takes_ai_law() {
        for proto in ["vcp", "dpcp", "tpcp", "dcpew", "dccp-vcp"] {
            for law in ["seed001", "ns2"] {
                assert_eq!(check_protocol(proto, &json!({"ai_law": law})), Ok(()), "{proto} {law}");
            }
            let e = check_protocol(proto, &json!({"ai_law": "ns3"})).unwrap_err();
            assert_eq!(e.key, "ai_law", "{proto}");
            assert!(e.reason.contains("seed001") && e.reason.contains("ns2"), "{proto}: {e}");
            let e = check_protocol(proto, &json!({"ai_law": "ns2", "ai_ns2": {"w": 0}})).unwrap_err();
            assert_eq!(e.key, "ai_ns2.w", "{proto}");
            let e = check_protocol(proto, &json!({"ai_ns2": {"t_e": 0.1}})).unwrap_err();
            assert!(e.key.starts_with("ai_ns2") && e.reason.contains("t_e"), "{proto}: {e:?}");
        }
    }

    /// The table is the top floor: no protocol folder (nor the interface under it) may import
    /// it, or the protocols and the table import each other in a circle again (issue 38).
    /// Files still waiting for their import to move are listed in `PENDING`, and must still need it.
    #[test]
    fn no_protocol_module_imports_the_table() {
        const PENDING: &[&str] = &[];
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = vec![src.clone()];
        let mut offenders = Vec::new();
        while let Some(p) = files.pop() {
            if p.is_dir() {
                files.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
                continue;
            }
            let rel = p.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
            if !rel.ends_with(".rs") || rel == "registry.rs" || rel == "lib.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            let imports = text.lines().any(|l| l.contains("crate::registry") || l.contains("registry::"));
            if imports != PENDING.contains(&rel.as_str()) {
                offenders.push(rel);
            }
        }
        offenders.sort();
        assert!(
            offenders.is_empty(),
            "these files under racc-proto/src name the registry table (registry.rs), which only lib.rs \
             may: import the interface from crate::protocol and keys from the protocol's own folder \
             instead (or, for a file in PENDING that no longer does, remove it from PENDING): {offenders:?}"
        );
    }

    /// XCP-b (QFCP §III.C) is a registry name for XCP's flows, which need an XCP router.
    #[test]
    fn xcp_b_is_xcps_flow_under_its_own_name() {
        let (name, f) = Registry::standard().parse_protocol("xcp-b", &serde_json::json!(null)).unwrap();
        assert_eq!((name, f.path_requirements()[0].key), ("xcp-b", keys::XCC_XCP));
        assert!(check_router("xcp-b", &serde_json::json!({"capacity": "guess"})).is_err());
    }

    #[test]
    fn a_registry_extended_at_run_time() {
        let r = Registry::standard().clone().with_protocol(ProtocolEntry { name: "reno2", ..PROTOCOLS[1] });
        assert!(r.protocol("reno2").is_some() && Registry::standard().protocol("reno2").is_none());
        assert_eq!(r.protocols().len(), PROTOCOLS.len() + 1);
    }
}
