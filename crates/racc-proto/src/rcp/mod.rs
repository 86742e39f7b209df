//! RCP, the Rate Control Protocol (Dukkipati et al.; docs/PROTOCOLS.md §6; XCC-Linux), over the TCP
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

pub use params::{D0Gain, RcpParams, RcpRouterParams, Stamp};
pub use router::{RateController, RateCore, RcpRouter};
pub use sender::{RcpSender, NO_LIMIT, RCP_HEADER};

use crate::endpoint::{Endpoint, FlowConfig};
use crate::params::{parse, ParamError};
use crate::protocol::{ContractValue, FlowProtocol, PortIdentity, Presence, Requirement, RouterFactory};

/// The rate routers' contract key (RCP's and PIQI-RCP's).
pub mod keys {
    /// A router module that writes a rate into RCP headers (rcp, piqi-rcp): Int(1).
    pub const XCC_RATE: &str = "xcc.rate";
}
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

/// The factory of a rate router module (rcp, piqi-rcp): its checked parameters and how to build
/// one port's module from them, the port's capacity and its own stream; provides xcc.rate.
#[derive(Debug)]
struct RateRouterFactory<P> {
    params: P,
    build: fn(&P, f64, SimRng) -> Box<dyn RouterModule>,
}

impl<P: std::fmt::Debug + Send + Sync> RouterFactory for RateRouterFactory<P> {
    fn build(&self, port: &PortIdentity<'_>, rng: SimRng) -> Box<dyn RouterModule> {
        (self.build)(&self.params, port.capacity_bps, rng)
    }

    fn provides(&self) -> Vec<(&'static str, ContractValue)> {
        vec![(keys::XCC_RATE, ContractValue::Int(1))]
    }
}

/// A rate router module's registry entry: parse `params`, check them with `validate`, and
/// build each port's module with `build`.
pub fn parse_rate_router<P>(
    params: &serde_json::Value,
    validate: fn(&P) -> Result<(), ParamError>,
    build: fn(&P, f64, SimRng) -> Box<dyn RouterModule>,
) -> Result<Arc<dyn RouterFactory>, ParamError>
where
    P: serde::de::DeserializeOwned + Default + std::fmt::Debug + Send + Sync + 'static,
{
    let p: P = parse(params)?;
    validate(&p)?;
    Ok(Arc::new(RateRouterFactory { params: p, build }))
}

/// The registry's "rcp" router module.
pub fn parse_router(params: &serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError> {
    parse_rate_router(params, RcpRouterParams::validate, |p, c, rng| {
        Box::new(RcpRouter::new(p, c, rng).expect("checked when parsed"))
    })
}
