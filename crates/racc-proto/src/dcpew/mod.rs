//! DCP-EW: DPCP for encrypted wireless networks [DCP-EW §III; docs/PROTOCOLS.md §4]. It keeps
//! DPCP's 4-bit load factor over 2-packet chains (levels, Alg. 2, decoder, exceptions) and
//! changes two things:
//!
//! - [`ordering`]: the position is the IP ID's LSB (0 = MSP), read passively; inside an IPsec
//!   tunnel the outer ID's. Hosts draw IDs per flow, incrementing or seeded random.
//! - [`router`]: [`DcpewRouter`], the NM (Alg. 2 by the visible ID, the tunnel as one flow)
//!   and the SM at gateways (docs/PROTOCOLS.md §4 steps 1–5 through the tunnel hooks).
//! - [`window`]: [`DcpewWindow`], DPCP's laws plus the loss-differentiation bit map
//!   (N = 32, T = 16): a loss without T overload ACKs before it keeps cwnd.
//! - [`params`]: [`DcpewParams`], [`DcpewRouterParams`].
//!
//! The receiver is DPCP's ([`crate::dpcp::DpcpEcho`]): it reads the position from seq/ack,
//! which a DCP-EW host sets from its ID's parity and an egress SM re-marks, and its ACKs carry
//! the echo's position by seq/ack [reconstructed: the receiver cannot choose its ACKs' IDs].

pub mod ordering;
pub mod params;
pub mod router;
pub mod window;

pub use ordering::{id_position, plaintext_position, position, IpIdSource};
pub use params::{DcpewParams, DcpewRouterParams, IpIdMode, LossMd};
pub use router::{DcpewRouter, SmStats};
pub use window::{BitMap, DcpewWindow, LossStats};

use crate::dpcp::{chain_requirements, dpcp_flow, DpcpEcho};
use crate::endpoint::{Endpoint, FlowConfig};
use crate::params::{parse, ParamError};
use crate::protocol::{ContractValue, FlowProtocol, PortIdentity, Requirement, RouterFactory};
use crate::rng::SimRng;
use crate::router::RouterModule;
use crate::tcp::{self, Recovery};
use crate::vcp::keys;
use std::sync::Arc;

/// A TCP/DCP-EW sender. Validates `p`. The flow's data sequence space starts 2³¹ on, as
/// DPCP's ([`dpcp_flow`]), so that seq and ack are far apart.
/// A TCP/DCP-EW flow's checked parameters.
#[derive(Debug)]
struct DcpewFlow(DcpewParams);

impl FlowProtocol for DcpewFlow {
    fn sender(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        let cfg = dpcp_flow(cfg);
        let w = DcpewWindow::new(&cfg, tcp::mss_for(&cfg, 0), &self.0);
        tcp::tcp_sender_with(&cfg, Recovery::NewReno, &self.0.tcp, Box::new(w))
    }

    fn receiver(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        let cfg = dpcp_flow(cfg);
        tcp::tcp_receiver_with(&cfg, Box::new(DpcpEcho::new(2, cfg.isn)))
    }

    /// DCP-EW's pairs are DPCP's chains of 2 (DCP-EW §III.B).
    fn path_requirements(&self) -> Vec<Requirement> {
        chain_requirements(self.0.t_p, 2)
    }
}

/// The registry's "dcpew" protocol.
pub fn parse_flow(params: &serde_json::Value) -> Result<Arc<dyn FlowProtocol>, ParamError> {
    let p: DcpewParams = parse(params)?;
    p.validate()?;
    Ok(Arc::new(DcpewFlow(p)))
}

/// A DCP-EW router's checked parameters.
#[derive(Debug)]
struct DcpewRouterFactory(DcpewRouterParams);

impl RouterFactory for DcpewRouterFactory {
    fn build(&self, _port: &PortIdentity<'_>, rng: SimRng) -> Box<dyn RouterModule> {
        Box::new(DcpewRouter::new(&self.0, rng).expect("checked when parsed"))
    }

    fn provides(&self) -> Vec<(&'static str, ContractValue)> {
        vec![(keys::LOAD_FACTOR_T_P, ContractValue::Real(self.0.t_p)), (keys::LOAD_FACTOR_CHAIN, ContractValue::Int(2))]
    }
}

/// The registry's "dcpew" router module.
pub fn parse_router(params: &serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError> {
    let p: DcpewRouterParams = parse(params)?;
    p.validate()?;
    Ok(Arc::new(DcpewRouterFactory(p)))
}

#[cfg(test)]
mod tests;
