//! DCCP with CCID2, TCP-like congestion control without reliability (RFC 4340, RFC 4341;
//! VCP-DCCP §2; docs/PROTOCOLS.md §11), and DCCP/VCP: the same transport growing its window by
//! VCP's laws (VCP-DCCP §2 and App. A3–A5).
//!
//! - [`sender`]: [`DccpSender`], pipe and cwnd in packets, loss from the Ack Vector, no
//!   retransmission, the RTO, acknowledgements of ACKs
//! - [`receiver`]: [`DccpReceiver`], one ACK per Ack Ratio packets with an Ack Vector
//! - [`window`]: [`DccpWindow`], Fig. 2's slow start and congestion avoidance or VCP's laws;
//!   halving and timeout
//! - [`ack_ratio`]: [`AckRatio`], the Ack Ratio's bounds and RFC 4341 §6.1.2's changes
//! - [`ack_vector`]: the receiver's record and its Ack Vector encoding
//! - [`params`]: the parameter table, [`DccpParams`]
//! - [`fluid`]: the equilibrium of VCP-DCCP Eqs. 7–9
//! - [`seq`]: 48-bit sequence numbers
//!
//! A "dccp-vcp" flow's parameter table is a "vcp" flow's (the VCP laws, `iw`,
//! `initial_slow_start`, `md_hold`) with the transport's knobs under `dccp` instead of `tcp`.

pub mod ack_ratio;
pub mod ack_vector;
pub mod fluid;
pub mod params;
pub mod receiver;
pub mod sender;
pub mod seq;
pub mod window;

#[cfg(test)]
mod tests;

pub use ack_ratio::AckRatio;
pub use params::{AckRatioBounds, DccpParams};
pub use receiver::DccpReceiver;
pub use sender::DccpSender;
pub use window::{DccpWindow, Growth};

use crate::endpoint::{Endpoint, FlowConfig};
use crate::packet::{ecn, hdr};
use crate::params::{parse, ParamError};
use crate::protocol::{FlowProtocol, Requirement};
use crate::vcp::{self, VcpEcho, VcpLaws, VcpParams};
use std::sync::Arc;

/// Payload bytes of a full data packet.
pub fn mss_for(cfg: &FlowConfig) -> u32 {
    cfg.packet_size.saturating_sub(hdr::IPV4 + hdr::DCCP_DATA).max(1)
}

/// A CCID2 sender for `cfg`.
pub fn ccid2_sender(cfg: &FlowConfig, p: &DccpParams) -> DccpSender {
    let iw = cfg.initial_window.unwrap_or_else(|| p.initial_window(mss_for(cfg))).max(1) as f64;
    let ssthresh = cfg.initial_ssthresh.map_or(f64::INFINITY, |b| (b as f64 / mss_for(cfg) as f64).max(2.0));
    let data_ecn = if p.ecn_capable { ecn::ECT0 } else { ecn::NOT_ECT };
    DccpSender::new(cfg, p, DccpWindow::new(iw, ssthresh, Growth::Ccid2), data_ecn)
}

/// A DCCP/VCP sender for `cfg`: CCID2 with VCP's laws, data at code 01.
pub fn vcp_sender(cfg: &FlowConfig, v: &VcpParams, p: &DccpParams) -> DccpSender {
    let iw = cfg.initial_window.map_or(v.iw, |w| w.max(1) as f64);
    let ssthresh = cfg.initial_ssthresh.map_or(f64::INFINITY, |b| (b as f64 / mss_for(cfg) as f64).max(2.0));
    let growth = Growth::Vcp { laws: VcpLaws::new(v), slow_start: v.initial_slow_start };
    DccpSender::new(cfg, p, DccpWindow::new(iw, ssthresh, growth), ecn::ECT1)
}

/// A "dccp" flow's checked parameters.
#[derive(Debug)]
struct DccpFlow(DccpParams);

impl FlowProtocol for DccpFlow {
    fn sender(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        Box::new(ccid2_sender(cfg, &self.0))
    }

    fn receiver(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        Box::new(DccpReceiver::new(cfg, &self.0, None))
    }
}

/// The registry's "dccp" protocol.
pub fn parse_flow(params: &serde_json::Value) -> Result<Arc<dyn FlowProtocol>, ParamError> {
    let p: DccpParams = parse(params)?;
    p.validate()?;
    Ok(Arc::new(DccpFlow(p)))
}

/// A "dccp-vcp" flow's checked parameters.
#[derive(Debug)]
struct DccpVcpFlow {
    vcp: VcpParams,
    dccp: DccpParams,
}

impl FlowProtocol for DccpVcpFlow {
    fn sender(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        Box::new(vcp_sender(cfg, &self.vcp, &self.dccp))
    }

    fn receiver(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        Box::new(DccpReceiver::new(cfg, &self.dccp, Some(Box::new(VcpEcho::new()))))
    }

    /// As TCP/VCP: the routers' t_p is the sender's.
    fn path_requirements(&self) -> Vec<Requirement> {
        vec![vcp::t_p_requirement(self.vcp.t_p)]
    }
}

/// The registry's "dccp-vcp" protocol: a "vcp" table whose transport knobs sit under `dccp`.
pub fn parse_vcp_flow(params: &serde_json::Value) -> Result<Arc<dyn FlowProtocol>, ParamError> {
    let mut laws = params.clone();
    let mut dccp = serde_json::Value::Null;
    if let Some(t) = laws.as_object_mut() {
        if t.contains_key("tcp") {
            return Err(ParamError::new("tcp", "dccp-vcp runs over DCCP: its transport parameters go under `dccp`"));
        }
        dccp = t.remove("dccp").unwrap_or(serde_json::Value::Null);
    }
    let vcp: VcpParams = parse(&laws)?;
    vcp.validate()?;
    let prefix = |e: ParamError| {
        ParamError::new(if e.key.is_empty() { "dccp".into() } else { format!("dccp.{}", e.key) }, e.reason)
    };
    let dccp: DccpParams = parse(&dccp).map_err(prefix)?;
    dccp.validate().map_err(prefix)?;
    Ok(Arc::new(DccpVcpFlow { vcp, dccp }))
}
