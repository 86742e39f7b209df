//! QFCP, the Quick Flow Control Protocol (QFCP; docs/PROTOCOLS.md §9), over the TCP transport, on
//! XCC-Linux's congestion-header layer ([`crate::xcc`]): every router port computes one
//! fair-share rate R from a flow-count estimate, lowers each passing request to it, and the
//! sender sets its window to feedback·rtt; loss is not read as congestion.
//!
//! - [`router`]: [`QfcpRouter`], eqs. (1), (2), (6) every T, the capacity probe (4) from
//!   [`crate::xcc::capacity_probe`]
//! - [`window`]: [`QfcpWindow`], eqs. (3) and (5)
//! - [`params`]: [`QfcpParams`] (flow) and [`QfcpRouterParams`] (router)
//!
//! The receiver is the layer's [`HeaderEcho`], which copies the rate request of the latest
//! packet into the ACK's rate feedback (QFCP §II step 3). A QFCP flow cannot run without a
//! QFCP router on its path (its window stays at one packet): it requires one
//! ([`keys::XCC_QFCP`]), so a scenario that sends QFCP through other routers only is refused
//! before the run.

pub mod params;
pub mod router;
pub mod window;

#[cfg(test)]
mod tests;

pub use params::{QfcpParams, QfcpRouterParams};
pub use router::{control, Control, Interval, QfcpRouter};
pub use window::{QfcpWindow, NO_LIMIT, QFCP_HEADER_BYTES};

use crate::endpoint::{Endpoint, FlowConfig};
use crate::params::{parse, ParamError};
use crate::protocol::{ContractValue, FlowProtocol, PortIdentity, Presence, Requirement, RouterFactory};
use crate::rng::SimRng;
use crate::router::RouterModule;
use crate::tcp::{self, Recovery};
use crate::xcc::HeaderEcho;
use std::sync::Arc;

/// QFCP's contract keys (the table gathers every folder's keys for the engines).
pub mod keys {
    /// A QFCP router module (value 1): QFCP flows need one on their data path (QFCP §II).
    pub const XCC_QFCP: &str = "xcc.qfcp";
}

/// Why a QFCP flow needs a QFCP router on its path.
pub const QFCP_ROUTER_WHY: &str = "a QFCP sender's window is feedback·rtt with the rate a QFCP router writes \
                                   (QFCP §II); without one on the path it never leaves one packet per RTT";

/// A QFCP flow's checked parameters.
#[derive(Debug)]
struct QfcpFlow(QfcpParams);

impl FlowProtocol for QfcpFlow {
    fn sender(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        let w = QfcpWindow::new(cfg, tcp::mss_for(cfg, QFCP_HEADER_BYTES), &self.0);
        tcp::tcp_sender_with(cfg, Recovery::NewReno, &self.0.tcp, Box::new(w))
    }

    fn receiver(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        tcp::tcp_receiver_with(cfg, Box::new(HeaderEcho::new()))
    }

    fn path_requirements(&self) -> Vec<Requirement> {
        vec![Requirement {
            key: keys::XCC_QFCP,
            value: ContractValue::Int(1),
            presence: Presence::Somewhere,
            param: "protocol",
            unit: "",
            why: QFCP_ROUTER_WHY,
        }]
    }
}

/// The registry's "qfcp" protocol.
pub fn parse_flow(params: &serde_json::Value) -> Result<Arc<dyn FlowProtocol>, ParamError> {
    Ok(Arc::new(QfcpFlow(QfcpParams::from_value(params)?)))
}

/// A QFCP router's checked parameters.
#[derive(Debug)]
struct QfcpRouterFactory(QfcpRouterParams);

impl RouterFactory for QfcpRouterFactory {
    fn build(&self, port: &PortIdentity<'_>, rng: SimRng) -> Box<dyn RouterModule> {
        Box::new(QfcpRouter::new(&self.0, port.capacity_bps, rng).expect("checked when parsed"))
    }

    fn provides(&self) -> Vec<(&'static str, ContractValue)> {
        vec![(keys::XCC_QFCP, ContractValue::Int(1))]
    }
}

/// The registry's "qfcp" router module.
pub fn parse_router(params: &serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError> {
    let p: QfcpRouterParams = parse(params)?;
    p.validate()?;
    Ok(Arc::new(QfcpRouterFactory(p)))
}
