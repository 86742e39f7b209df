//! JetMax (Zhang, Leonard and Loguinov, Computer Networks 2008; XCC-Linux), as reconstructed in
//! docs/PROTOCOLS.md §7: routers count the flows bottlenecked at them by the inter-packet times
//! their packets carry, offer each the leftover capacity split evenly, and stamp their id on
//! the packets whose feedback they lower; senders move a fraction τ of the way to that rate
//! once per RTT and name the router that set it, so that only that router counts them.
//! Properties J1–J7 (§7) are tested here (unit) and in `racc-sim/tests/jetmax.rs`.
//!
//! - [`router`]: [`JetMaxRouter`], the per-port module (3 additions per packet)
//! - [`rate`]: [`JetMaxRate`], the sender's rate controller over the TCP transport
//! - [`params`]: the flow's and the router's parameter tables
//!
//! The receiver is the TCP receiver with [`HeaderEcho`](crate::xcc::HeaderEcho), which copies
//! the latest feedback and fb_id into every ACK.
//!
//! **Router identity.** Each port gets the id `port + 1` from the [`PortIdentity`] it is
//! built for (0 means "no router"). The engine numbers ports densely across the whole run
//! (2·link + direction), so the ids are unique per port in a run and the same in every run
//! of a scenario. Hashing the port's name into 16 bits would collide with probability about
//! n²/2¹⁷ for n ports (0.03 % for 100 ports, silently merging two bottlenecks); a counter in
//! the factory would not be unique, since every link parses its own factory, nor stable, since
//! a factory can build the ports of several runs. Beyond 65 535 ports ids would repeat (the
//! header field has 16 bits); no racc scenario comes near that. A live deployment must number
//! its router ports likewise across all its routers.

pub mod params;
pub mod rate;
pub mod router;

pub use params::{JetMaxParams, JetMaxRouterParams, Window};
pub use rate::JetMaxRate;
pub use router::JetMaxRouter;

use crate::endpoint::{Endpoint, FlowConfig};
use crate::params::{parse, ParamError};
use crate::protocol::{ContractValue, FlowProtocol, PortIdentity, Presence, Requirement, RouterFactory};

/// JetMax's contract keys.
pub mod keys {
    /// A JetMax router module is present (Int 1; docs/PROTOCOLS.md §7).
    pub const XCC_JETMAX: &str = "xcc.jetmax";
    /// The control interval Δ (s) of a JetMax router, which the sender's first step waits 2Δ of.
    pub const JETMAX_DELTA: &str = "jetmax.delta";
}
use crate::rng::SimRng;
use crate::router::RouterModule;
use crate::tcp::{self, Recovery};
use crate::xcc::HeaderEcho;
use std::sync::Arc;

/// The header's "no router" id (cur_id before the first update, fb_id before any stamp).
pub const NO_ID: u16 = 0;

/// The JetMax id of a port: its engine number + 1, folded into 1..=65535.
pub fn router_id(port: &PortIdentity<'_>) -> u16 {
    (port.port % u16::MAX as u32) as u16 + 1
}

/// A JetMax flow's checked parameters (the registry's "jetmax").
#[derive(Debug)]
struct JetMaxFlow(JetMaxParams);

impl FlowProtocol for JetMaxFlow {
    fn sender(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        let mss = tcp::mss_for(cfg, rate::HEADER_BYTES);
        // s: the full data packet on the wire (IPv4 + TCP + the JetMax header + MSS).
        let wire = mss + crate::packet::hdr::IPV4 + crate::packet::hdr::TCP + rate::HEADER_BYTES;
        let cc = JetMaxRate::new(&self.0, wire);
        tcp::tcp_sender_with(cfg, Recovery::NewReno, &self.0.tcp, Box::new(cc))
    }

    fn receiver(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        tcp::tcp_receiver_with(cfg, Box::new(HeaderEcho::new()))
    }

    fn path_requirements(&self) -> Vec<Requirement> {
        vec![
            Requirement {
                key: keys::XCC_JETMAX,
                value: ContractValue::Int(1),
                presence: Presence::Somewhere,
                param: "protocol",
                unit: "",
                why: "JetMax senders take their rate from the routers' fair share, so at least one \
                      router on the path must run the 'jetmax' module",
            },
            Requirement {
                key: keys::JETMAX_DELTA,
                value: ContractValue::Real(self.0.delta),
                presence: Presence::IfProvided,
                param: "delta",
                unit: " s",
                why: "a JetMax sender's first step waits 2Δ of the routers' interval (docs/PROTOCOLS.md §7), \
                      so set the same delta on both",
            },
        ]
    }
}

/// The registry's "jetmax" protocol.
pub fn parse_flow(params: &serde_json::Value) -> Result<Arc<dyn FlowProtocol>, ParamError> {
    let p: JetMaxParams = parse(params)?;
    p.validate()?;
    Ok(Arc::new(JetMaxFlow(p)))
}

/// A JetMax router's checked parameters.
#[derive(Debug)]
struct JetMaxRouterFactory(JetMaxRouterParams);

impl RouterFactory for JetMaxRouterFactory {
    fn build(&self, port: &PortIdentity<'_>, rng: SimRng) -> Box<dyn RouterModule> {
        Box::new(JetMaxRouter::new(&self.0, router_id(port), rng))
    }

    fn provides(&self) -> Vec<(&'static str, ContractValue)> {
        vec![(keys::XCC_JETMAX, ContractValue::Int(1)), (keys::JETMAX_DELTA, ContractValue::Real(self.0.delta))]
    }
}

/// The registry's "jetmax" router module.
pub fn parse_router(params: &serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError> {
    let p: JetMaxRouterParams = parse(params)?;
    p.validate()?;
    Ok(Arc::new(JetMaxRouterFactory(p)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{CongHeader, Kind};
    use crate::protocol::ANY_PORT;
    use crate::time::NS_PER_MS;
    use serde_json::json;

    #[test]
    fn parses_and_checks_jetmax() {
        assert_eq!(parse_flow(&serde_json::Value::Null).map(drop), Ok(()));
        assert_eq!(parse_flow(&json!({"tau": 2.0})).map(drop).unwrap_err().key, "tau");
        assert_eq!(parse_flow(&json!({"tcp": {"max_rto": 0}})).map(drop).unwrap_err().key, "tcp.max_rto");
        assert!(parse_flow(&json!({"gamma": 0.9})).map(drop).unwrap_err().reason.contains("gamma"));
        assert_eq!(parse_router(&serde_json::Value::Null).map(drop), Ok(()));
        assert_eq!(parse_router(&json!({"gamma": 0.0})).map(drop).unwrap_err().key, "gamma");
        assert_eq!(parse_router(&json!({"delta": -1.0})).map(drop).unwrap_err().key, "delta");
        assert!(parse_router(&json!({"tau": 0.5})).map(drop).unwrap_err().reason.contains("tau"));
        let m = parse_router(&serde_json::Value::Null)
            .map(|f| f.build(&ANY_PORT, SimRng::for_component(1, "router/port0")))
            .unwrap();
        assert_eq!(m.name(), "jetmax");
        assert!(m.next_tick().unwrap() < 10 * NS_PER_MS);
        // The path contracts: JetMax needs a JetMax router somewhere, with its delta.
        let reqs = parse_flow(&json!({"delta": 0.02})).unwrap().path_requirements();
        assert!(reqs.iter().any(|q| q.key == keys::XCC_JETMAX && q.presence == Presence::Somewhere));
        assert!(reqs.iter().any(|q| q.key == keys::JETMAX_DELTA && q.value == ContractValue::Real(0.02)));
        let prov = parse_router(&json!({"delta": 0.02})).unwrap().provides();
        assert!(prov.contains(&(keys::JETMAX_DELTA, ContractValue::Real(0.02))));
        assert!(prov.contains(&(keys::XCC_JETMAX, ContractValue::Int(1))));
    }

    #[test]
    fn router_ids_are_the_port_numbers_plus_one() {
        assert_eq!(router_id(&ANY_PORT), 1);
        assert_eq!(router_id(&PortIdentity { port: 41, ..ANY_PORT }), 42);
        assert_eq!(router_id(&PortIdentity { port: 65_534, ..ANY_PORT }), 65_535);
        assert_eq!(router_id(&PortIdentity { port: 65_535, ..ANY_PORT }), 1, "wraps, never 0");
    }

    /// Sender and receiver built by the registry, back to back: data carries the 20-byte
    /// header, and the ACK echoes the feedback and fb_id a router would have stamped.
    #[test]
    fn sender_and_receiver_back_to_back() {
        let cfg = FlowConfig::new(3, 1000);
        let mut s = parse_flow(&serde_json::Value::Null).map(|p| p.sender(&cfg)).unwrap();
        let mut r = parse_flow(&serde_json::Value::Null).map(|p| p.receiver(&cfg)).unwrap();
        s.start(0);
        r.start(0);
        let mut p = s.poll_transmit(0).expect("one packet may always go");
        assert!(s.poll_transmit(0).is_none(), "paced: 1 packet per 100 ms before an RTT sample");
        assert_eq!((p.kind, p.size, p.payload), (Kind::Data, 1000, 940));
        assert!(matches!(
            p.cong,
            CongHeader::JetMax { cur_id: 0, fb_id: 0, feedback: u32::MAX, ipt_ns: 100_000_000, .. }
        ));
        if let CongHeader::JetMax { feedback, fb_id, .. } = &mut p.cong {
            (*feedback, *fb_id) = (123_456, 9);
        }
        r.on_packet(5 * NS_PER_MS, &p);
        let a = r.poll_transmit(5 * NS_PER_MS).unwrap();
        assert!(matches!(a.cong, CongHeader::JetMax { feedback: 123_456, fb_id: 9, .. }));
        assert_eq!(s.poll_timeout(), Some(100 * NS_PER_MS));
    }
}
