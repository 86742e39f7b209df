//! VCP and TCP/RED sharing one link through two sub-queues (VCP-DCCP §4.4): the router module
//! `vcp-red`.
//!
//! §4.4: VCP's load factor comes from link utilisation and RED's drop probability from the
//! average queue, so "VCP controlled traffic and TCP/RED controlled traffic can not share the
//! same queue"; instead "one can set up two sub-queues as proposed in [6, 13]". The paper gives
//! no rule for splitting the link between them. Its first reference, XCP (Katabi, Handley and
//! Rohrs, SIGCOMM 2002, §7 "XCP-TCP compatibility"), separates XCP and TCP traffic into two
//! queues served by weighted fair queuing, and XCP's ns-2 router (`XCPWrapQ`, ns-2.35
//! `xcp/xcp.cc`; ns manual §21.2.2) serves them by weighted round robin with fixed weights of
//! 0.5 each. This module does the same with fixed weights: the VCP sub-queue's share w
//! (`vcp_share`, 0.5 as ns-2's) and the RED sub-queue's 1 − w, served by deficit round robin
//! (Shreedhar & Varghese 1995, [`drr`]), which gives backlogged sub-queues their weights in bytes
//! whatever their packet sizes, and lends an idle sub-queue's share to the other
//! (work-conserving). XCP's dynamic weights (equal average throughput per flow in both queues)
//! are not modelled.
//!
//! Each sub-queue's controller sees a router of its own on its share: VCP's load factor (A1) is
//! computed against w·C with its own queue in A2; RED's average follows its own queue; each
//! holds at most its share of the port's buffer. Packets are classed by their ECN bits
//! ([`router::sub_queue_of`]).
//!
//! - [`router`]: [`SubQueues`], the module
//! - [`drr`]: [`Drr`], the scheduler between the sub-queues

pub mod drr;
pub mod router;

pub use drr::Drr;
pub use router::{sub_queue_of, SubQueues, RED, VCP};

use crate::aqm::{Red, RedConfig};
use crate::params::{parse, ParamError};
use crate::protocol::{ContractValue, PortIdentity, RouterFactory};
use crate::rng::SimRng;
use crate::router::RouterModule;
use crate::vcp::{keys, VcpRouter, VcpRouterParams};
use std::sync::Arc;

/// The `vcp-red` module's `router_params`.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CoexistParams {
    /// The VCP sub-queue's share w of the link and of the buffer; the RED sub-queue has 1 − w
    /// [ns-2 `XCPWrapQ`: 0.5 each].
    pub vcp_share: f64,
    /// DRR quantum of the sub-queue with the smaller share, bytes (the other's is in proportion);
    /// at least a full-size packet.
    pub quantum: u32,
    /// The VCP sub-queue's load-factor router (A1, A2; the `vcp` module's keys).
    pub vcp: VcpRouterParams,
    /// The RED sub-queue's parameters (the `red` module's keys; what they leave out is set from
    /// the sub-queue's share of the port, as the `red` module sets it from a whole port).
    pub red: RedConfig,
}

impl Default for CoexistParams {
    fn default() -> CoexistParams {
        CoexistParams { vcp_share: 0.5, quantum: 1500, vcp: VcpRouterParams::default(), red: RedConfig::default() }
    }
}

impl CoexistParams {
    /// Refuse impossible settings, naming the key (nested keys with their table's name).
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.vcp_share > 0.0 && self.vcp_share < 1.0) {
            return Err(ParamError::new("vcp_share", format!("must be in (0, 1), got {}", self.vcp_share)));
        }
        if self.quantum == 0 {
            return Err(ParamError::new("quantum", "must be > 0 bytes"));
        }
        self.vcp.validate().map_err(|e| ParamError::new(format!("vcp.{}", e.key), e.reason))?;
        self.red.validate().map_err(|e| ParamError::new(format!("red.{}", e.key), e.reason))
    }

    /// The module for `port`, its timers' phase and RED's draws from `rng` (the port's stream).
    pub fn build(&self, port: &PortIdentity<'_>, mut rng: SimRng) -> SubQueues {
        let vcp = VcpRouter::new(&self.vcp, SimRng::for_component(rng.next_u64(), "vcp-red/vcp"))
            .expect("checked when parsed");
        let red = Red::new(self.red.for_port(&self.red_share(port)), rng).expect("checked when parsed");
        SubQueues::new(self, vcp, red)
    }
}

impl CoexistParams {
    /// The port as the RED sub-queue sees it: its share 1 − w of the rate and of the buffer.
    fn red_share<'a>(&self, port: &PortIdentity<'a>) -> PortIdentity<'a> {
        let w = 1.0 - self.vcp_share;
        let scale_pkts = |n: u32| if n == u32::MAX { n } else { ((n as f64 * w) as u32).max(1) };
        let scale_bytes = |n: u64| if n == u64::MAX { n } else { (n as f64 * w) as u64 };
        PortIdentity {
            capacity_bps: port.capacity_bps * w,
            limit_pkts: scale_pkts(port.limit_pkts),
            limit_bytes: scale_bytes(port.limit_bytes),
            ..*port
        }
    }
}

#[derive(Debug)]
struct CoexistFactory(CoexistParams);

impl RouterFactory for CoexistFactory {
    fn build(&self, port: &PortIdentity<'_>, rng: SimRng) -> Box<dyn RouterModule> {
        Box::new(self.0.build(port, rng))
    }
    fn warnings(&self, port: &PortIdentity<'_>) -> Vec<String> {
        self.0.red.warnings(&self.0.red_share(port)).into_iter().map(|w| format!("the RED sub-queue: {w}")).collect()
    }
    fn settings(&self, port: &PortIdentity<'_>) -> Vec<(&'static str, f64)> {
        self.0.red.settings(&self.0.red_share(port))
    }

    /// VCP flows through it find a load-factor router, as through `vcp`.
    fn provides(&self) -> Vec<(&'static str, ContractValue)> {
        vec![(keys::LOAD_FACTOR_T_P, ContractValue::Real(self.0.vcp.t_p))]
    }
}

/// The registry's "vcp-red".
pub fn parse_router(params: &serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError> {
    let p: CoexistParams = parse(params)?;
    p.validate()?;
    Ok(Arc::new(CoexistFactory(p)))
}
