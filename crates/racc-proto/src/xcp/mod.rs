//! XCP, the eXplicit Control Protocol (Katabi, Handley and Rohrs, SIGCOMM 2002; docs/PROTOCOLS.md
//! §5), over the TCP NewReno transport, on XCC-Linux's congestion-header layer ([`crate::xcc`]).
//!
//! - [`router`]: [`XcpRouter`], the router module of one port
//! - [`control`]: the efficiency and fairness controllers, every control interval
//! - [`per_packet`]: the per-packet arithmetic at arrival and departure (counted or plain)
//! - [`window`]: [`XcpWindow`], the sender's window driven by the routers' feedback
//! - [`params`]: [`XcpParams`] (flow) and [`XcpRouterParams`] (router)
//!
//! XCP-b (QFCP §III.C) is this sender under XCP routers that take the spare bandwidth from
//! the queue's speed and probe with a fixed share of y once the queue stays empty
//! (`spare = "queue"`, the "xcp-b" router module's default; [`xcp_b`], [`blind`]): it keeps
//! XCP's halving on loss.
//!
//! The receiver is the layer's [`HeaderEcho`], which sums the feedback of the packets an ACK
//! covers into its reverse_feedback. An XCP flow cannot run without XCP routers (its window
//! never grows past one packet): it requires one on its data path ([`keys::XCC_XCP`]), so a
//! scenario that sends XCP through DropTail only is refused before the run.

pub mod blind;
pub mod control;
pub mod params;
pub mod per_packet;
pub mod router;
pub mod window;
pub mod xcp_b;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_throughput;

pub use blind::BlindSpare;
pub use control::{control, control_blind, Control};
pub use params::{XcpBudget, XcpForm, XcpParams, XcpRouterParams, XcpSpare};
pub use per_packet::{arrival_x, arrival_xcp, carry_terms, departure, Budget, Sums};
pub use router::XcpRouter;
pub use window::{XcpWindow, XCP_HEADER_BYTES};
pub use xcp_b::parse_router_b;

use crate::endpoint::{Endpoint, FlowConfig};
use crate::params::{parse, ParamError};
use crate::protocol::{ContractValue, FlowProtocol, PortIdentity, Presence, Requirement, RouterFactory};

/// XCP's contract keys.
pub mod keys {
    /// An XCP router module (value 1): XCP flows need one on their data path (docs/PROTOCOLS.md §5).
    pub const XCC_XCP: &str = "xcc.xcp";
    /// The form of an XCP router's header and feedback: 0 window, 1 throughput
    /// (`xcp::XcpForm`); flows and routers on one path must agree (feedback units).
    pub const XCP_FORM: &str = "xcp.form";
}
use crate::rng::SimRng;
use crate::router::RouterModule;
use crate::tcp::{self, Recovery};
use crate::xcc::HeaderEcho;
use std::sync::Arc;

/// Why an XCP flow needs an XCP router on its path.
pub const XCP_ROUTER_WHY: &str = "an XCP sender starts at one packet and grows only by the feedback XCP routers \
                                  write (docs/PROTOCOLS.md §5), so without one it never leaves one packet per RTT";

/// Why an XCP flow's form must be its routers'.
pub const XCP_FORM_WHY: &str = "form 0 is \"window\" and 1 \"throughput\"; the window form's feedback is in bytes of window and the throughput form's in \
                                B/s (docs/PROTOCOLS.md §5): a router of the other form would be read in the wrong unit";

/// A TCP/XCP flow's checked parameters (the registry's "xcp").
#[derive(Debug)]
struct XcpFlow(XcpParams);

impl FlowProtocol for XcpFlow {
    fn sender(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        let w = XcpWindow::new(cfg, tcp::mss_for(cfg, XCP_HEADER_BYTES), &self.0);
        tcp::tcp_sender_with(cfg, Recovery::NewReno, &self.0.tcp, Box::new(w))
    }

    fn receiver(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        tcp::tcp_receiver_with(cfg, Box::new(HeaderEcho::new()))
    }

    fn path_requirements(&self) -> Vec<Requirement> {
        vec![
            Requirement {
                key: keys::XCC_XCP,
                value: ContractValue::Int(1),
                presence: Presence::Somewhere,
                param: "protocol",
                unit: "",
                why: XCP_ROUTER_WHY,
            },
            Requirement {
                key: keys::XCP_FORM,
                value: ContractValue::Int(self.0.form.contract()),
                presence: Presence::IfProvided,
                param: "form",
                unit: "",
                why: XCP_FORM_WHY,
            },
        ]
    }
}

/// The registry's "xcp" protocol.
pub fn parse_flow(params: &serde_json::Value) -> Result<Arc<dyn FlowProtocol>, ParamError> {
    let p: XcpParams = parse(params)?;
    p.validate()?;
    Ok(Arc::new(XcpFlow(p)))
}

/// An XCP router's checked parameters.
#[derive(Debug)]
struct XcpRouterFactory(XcpRouterParams);

impl RouterFactory for XcpRouterFactory {
    fn build(&self, port: &PortIdentity<'_>, rng: SimRng) -> Box<dyn RouterModule> {
        let mut r = XcpRouter::new(&self.0, rng).expect("checked when parsed");
        // Room for a full buffer of carried entries (40-byte packets in byte mode), up to 2¹⁶
        // (2.6 MB); past that, or for an unlimited buffer, the deque grows when it must.
        let pkts = if port.limit_pkts != u32::MAX {
            port.limit_pkts as u64
        } else if port.limit_bytes != u64::MAX {
            port.limit_bytes / 40
        } else {
            1024
        };
        r.reserve(pkts.min(1 << 16) as usize + 1);
        Box::new(r)
    }

    fn provides(&self) -> Vec<(&'static str, ContractValue)> {
        vec![(keys::XCC_XCP, ContractValue::Int(1)), (keys::XCP_FORM, ContractValue::Int(self.0.form.contract()))]
    }
}

/// The registry's "xcp" router module.
pub fn parse_router(params: &serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError> {
    let p: XcpRouterParams = parse(params)?;
    p.validate()?;
    Ok(Arc::new(XcpRouterFactory(p)))
}
