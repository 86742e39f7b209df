//! VCP, the Variable-structure congestion Control Protocol, over the TCP NewReno transport
//! (TCP/VCP; VCP-DCCP App. A1–A5, MPCP §2; docs/PROTOCOLS.md §2).
//!
//! - [`load_factor`]: the per-port load-factor estimator (A1, A2), reusable by DPCP and DCP-EW
//! - [`queue_term`]: A1's queue term, A2's EWMA or the reference ns-2 router's (`queue_term`)
//! - [`router`]: [`VcpRouter`], the router module (counts arrivals, marks at dequeue)
//! - [`laws`]: [`VcpLaws`], MI/AI/MD (A3–A5) on a window in packets, for any transport
//! - [`ai_law`]: [`AiLaw`], A4 as printed or the reference ns-2 sender's AI (`ai_law`)
//! - [`window`]: [`VcpWindow`], those laws as the TCP transport's congestion controller
//! - [`params`]: [`VcpParams`], a VCP flow's parameter table and the family's shared checks
//! - [`pacing`]: the optional window pacing (`pacing_gain`) the family shares
//! - [`echo`]: [`VcpEcho`], the receiver's echo of the largest code into each ACK
//!
//! The 2-bit code travels in the IP ECN bits (01 low, 10 high, 11 overload; 00 = not VCP) and
//! back in the ACK's reserved-bit echo field.

pub mod ai_law;
pub mod echo;
pub mod laws;
pub mod load_factor;
pub mod pacing;
pub mod params;
pub mod queue_term;
pub mod router;
pub mod window;

pub use ai_law::{ai_step, check_ai_law, AiLaw, AiLawName, Ns2Ai};
pub use echo::VcpEcho;
pub use laws::{mi_step, MdEpisode, VcpLaws};
pub use load_factor::{load_factor, queue_ewma, vcp_code, LoadFactor, LoadFactorParams, RHO_HIGH, RHO_OVERLOAD};
pub use pacing::{check_pacing_gain, window_pacing_rate};
pub use params::{MdHold, VcpParams, WindowLaws};
pub use queue_term::{QueueTerm, NS2_QUEUE_SHIFT};
pub use router::{VcpRouter, VcpRouterParams};
pub use window::VcpWindow;

use crate::endpoint::{Endpoint, FlowConfig};
use crate::params::{parse, ParamError};
use crate::protocol::{ContractValue, FlowProtocol, PortIdentity, Presence, Requirement, RouterFactory};

/// The contract keys of the load-factor family (what VCP-family routers provide and its flows
/// require: VCP, DPCP/TPCP, DCP-EW, DCCP/VCP).
pub mod keys {
    /// The interval t_p (s) over which a router measures its load factor (VCP-DCCP A1).
    pub const LOAD_FACTOR_T_P: &str = "load_factor.t_p";
    /// The packets a load factor is spread over (DPCP 2, TPCP 3, ...; MPCP §3, §5).
    pub const LOAD_FACTOR_CHAIN: &str = "load_factor.chain";
}
use crate::rng::SimRng;
use crate::router::RouterModule;
use crate::tcp::{self, Recovery};
use std::sync::Arc;

/// Why a VCP-family sender and the routers on its path must share t_p.
pub const T_P_WHY: &str = "VCP-family senders scale MI and AI by rtt/t_p of the routers' own interval \
                            (VCP-DCCP A3/A4), so set the same t_p on both";

/// The VCP family's requirement on its path: the routers' t_p is the sender's.
pub fn t_p_requirement(t_p: f64) -> Requirement {
    Requirement {
        key: keys::LOAD_FACTOR_T_P,
        value: ContractValue::Real(t_p),
        presence: Presence::IfProvided,
        param: "t_p",
        unit: " s",
        why: T_P_WHY,
    }
}

/// A TCP/VCP flow's checked parameters (the registry's "vcp").
#[derive(Debug)]
struct VcpFlow(VcpParams);

impl FlowProtocol for VcpFlow {
    fn sender(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        let w = VcpWindow::new(cfg, tcp::mss_for(cfg, 0), &self.0);
        tcp::tcp_sender_with(cfg, Recovery::NewReno, &self.0.tcp, Box::new(w))
    }

    fn receiver(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        tcp::tcp_receiver_with(cfg, Box::new(VcpEcho::new()))
    }

    fn path_requirements(&self) -> Vec<Requirement> {
        vec![t_p_requirement(self.0.t_p)]
    }
}

/// The registry's "vcp" protocol.
pub fn parse_flow(params: &serde_json::Value) -> Result<Arc<dyn FlowProtocol>, ParamError> {
    let p: VcpParams = parse(params)?;
    p.validate()?;
    Ok(Arc::new(VcpFlow(p)))
}

/// A VCP router's checked parameters.
#[derive(Debug)]
struct VcpRouterFactory(VcpRouterParams);

impl RouterFactory for VcpRouterFactory {
    fn build(&self, _port: &PortIdentity<'_>, rng: SimRng) -> Box<dyn RouterModule> {
        Box::new(VcpRouter::new(&self.0, rng).expect("checked when parsed"))
    }

    fn provides(&self) -> Vec<(&'static str, ContractValue)> {
        vec![(keys::LOAD_FACTOR_T_P, ContractValue::Real(self.0.t_p))]
    }
}

/// The registry's "vcp" router module.
pub fn parse_router(params: &serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError> {
    let p: VcpRouterParams = parse(params)?;
    p.validate()?;
    Ok(Arc::new(VcpRouterFactory(p)))
}

#[cfg(test)]
mod tests {
    use crate::endpoint::FlowConfig;
    use crate::packet::{ecn, Kind};
    use crate::protocol::ANY_PORT;
    use crate::rng::SimRng;
    use crate::time::NS_PER_MS;
    use serde_json::json;

    #[test]
    fn parses_and_checks_vcp() {
        assert_eq!(super::parse_flow(&serde_json::Value::Null).map(drop), Ok(()));
        assert_eq!(super::parse_flow(&json!({"beta": 2.0})).map(drop).unwrap_err().key, "beta");
        assert_eq!(super::parse_flow(&json!({"tcp": {"max_rto": 0}})).map(drop).unwrap_err().key, "tcp.max_rto");
        assert!(super::parse_flow(&json!({"gama": 1})).map(drop).unwrap_err().reason.contains("gama"));
        assert_eq!(super::parse_router(&serde_json::Value::Null).map(drop), Ok(()));
        assert_eq!(super::parse_router(&json!({"t_q": -0.01})).map(drop).unwrap_err().key, "t_q");
        assert!(super::parse_router(&json!({"mu": 0.1})).map(drop).unwrap_err().reason.contains("mu"));
        let r = super::parse_router(&json!({"gamma": 0.95}))
            .map(|f| f.build(&ANY_PORT, SimRng::for_component(1, "router/port0")))
            .unwrap();
        assert_eq!(r.name(), "vcp");
    }

    /// Sender and receiver built by the registry, wired back to back: 2 packets at 01, ACKs
    /// echo the code, MI grows the window by one mi_step per acknowledged packet.
    #[test]
    fn sender_and_receiver_back_to_back() {
        let cfg = FlowConfig::new(3, 1040); // MSS 1000
        let mut s = super::parse_flow(&serde_json::Value::Null).map(|p| p.sender(&cfg)).unwrap();
        let mut r = super::parse_flow(&serde_json::Value::Null).map(|p| p.receiver(&cfg)).unwrap();
        s.start(0);
        r.start(0);
        let out: Vec<_> = std::iter::from_fn(|| s.poll_transmit(0)).collect();
        assert_eq!(out.len(), 2, "initial window 2 packets");
        assert!(out.iter().all(|p| p.kind == Kind::Data && p.ecn == ecn::ECT1 && p.size == 1040));
        // A router raised the second packet to 10 (high load).
        let mut second = out[1];
        second.ecn = ecn::ECT0;
        let t = 200 * NS_PER_MS; // rtt = t_p: mi_step = μ, ai_step = α/cwnd
        r.on_packet(t, &out[0]);
        r.on_packet(t, &second);
        let acks: Vec<_> = std::iter::from_fn(|| r.poll_transmit(t)).collect();
        assert_eq!(acks.iter().map(|a| a.tcp_hdr().unwrap().echo).collect::<Vec<_>>(), vec![0b01, 0b10]);
        s.on_packet(t, &acks[0]);
        assert!((s.stats().cwnd_bytes - 2062.5).abs() < 1e-9, "MI: 2 + 0.0625 packets");
        s.on_packet(t, &acks[1]);
        let want = (2.0625 + 1.0 / 2.0625) * 1000.0;
        assert!((s.stats().cwnd_bytes - want).abs() < 1e-9, "AI: + 1/cwnd packets");
    }
}
