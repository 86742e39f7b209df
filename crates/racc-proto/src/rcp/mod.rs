//! RCP, the Rate Control Protocol (Dukkipati et al.; PROTOCOLS.md §6; seed 004), over the TCP
//! transport: every router port computes one rate R for all flows through it, written into
//! each passing header as min(header, R); senders pace at the rate fed back.
//!
//! - [`router`]: [`RcpRouter`] and [`RateCore`], the per-packet half PIQI-RCP shares
//! - [`sender`]: [`RcpSender`], the rate-based controller (also PIQI-RCP's)
//! - [`params`]: [`RcpParams`] (flow) and [`RcpRouterParams`] (port)
//!
//! The receiver is TCP's with `xcc::HeaderEcho`, which copies the rate into every ACK,
//! SYN-ACK and REF answer.

pub mod params;
pub mod router;
pub mod sender;

#[cfg(test)]
mod tests;

pub use params::{D0Gain, RcpParams, RcpRouterParams};
pub use router::{RateCore, RcpRouter};
pub use sender::{RcpSender, NO_LIMIT, RCP_HEADER};

use crate::endpoint::{Endpoint, FlowConfig};
use crate::params::{parse, ParamError};
use crate::registry::{keys, ContractValue, FlowProtocol, PortIdentity, Presence, Requirement, RouterFactory};
use crate::rng::SimRng;
use crate::router::RouterModule;
use crate::tcp::{self, Recovery};
use crate::xcc::HeaderEcho;
use std::sync::Arc;

/// What a rate router provides, and what RCP-family flows require somewhere on their path.
pub fn rate_requirement() -> Requirement {
    Requirement {
        key: keys::XCC_RATE,
        value: ContractValue::Int(1),
        presence: Presence::Somewhere,
        param: "protocol",
        unit: "",
        why: "RCP-family senders learn their rate only from an \"rcp\" or \"piqi-rcp\" router module; \
              without one on the path a flow stays at one packet per round trip",
    }
}

/// An RCP (or PIQI-RCP) flow's checked parameters: the same sender and receiver for both.
#[derive(Debug)]
struct RcpFlow(RcpParams);

impl FlowProtocol for RcpFlow {
    fn sender(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        let cc = RcpSender::new(tcp::mss_for(cfg, RCP_HEADER));
        tcp::tcp_sender_with(cfg, Recovery::NewReno, &self.0.tcp, Box::new(cc))
    }

    fn receiver(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        tcp::tcp_receiver_with(cfg, Box::new(HeaderEcho::new()))
    }

    fn path_requirements(&self) -> Vec<Requirement> {
        vec![rate_requirement()]
    }
}

/// The registry's "rcp" and "piqi-rcp" protocols (one sender for both).
pub fn parse_flow(params: &serde_json::Value) -> Result<Arc<dyn FlowProtocol>, ParamError> {
    let p: RcpParams = parse(params)?;
    p.validate()?;
    Ok(Arc::new(RcpFlow(p)))
}

#[derive(Debug)]
struct RcpRouterFactory(RcpRouterParams);

impl RouterFactory for RcpRouterFactory {
    fn build(&self, port: &PortIdentity<'_>, rng: SimRng) -> Box<dyn RouterModule> {
        Box::new(RcpRouter::new(&self.0, port.capacity_bps, rng).expect("checked when parsed"))
    }

    fn provides(&self) -> Vec<(&'static str, ContractValue)> {
        vec![(keys::XCC_RATE, ContractValue::Int(1))]
    }
}

/// The registry's "rcp" router module.
pub fn parse_router(params: &serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError> {
    let p: RcpRouterParams = parse(params)?;
    p.validate()?;
    Ok(Arc::new(RcpRouterFactory(p)))
}
