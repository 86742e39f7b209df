//! MPCP: DPCP (n = 2) and TPCP (n = 3) router-assisted congestion control [MPCP §3, §5;
//! docs/PROTOCOLS.md §3]. A 2n-bit load-factor code travels split over n consecutive packets, two
//! ECN bits each; the packet's place in its chain rides in the TCP header (seq/ack order for
//! n = 2, a checksum offset for n ≥ 3).
//!
//! - [`levels`]: MPCP Table 1, ρ → code, ξ, MD factors; the TPCP refinement
//! - [`ordering`]: Alg. 1 (sender / receiver) and TPCP's checksum offsets; `position(&Packet)`
//! - [`encode`]: Alg. 2 at a router, one 2-bit flag per flow
//! - [`decode`]: the sender's decoder (saved LF, exceptions, VCP fallback, MD bookkeeping)
//! - [`router`]: [`DpcpRouter`], the router module (VCP's ρ, Alg. 2 at dequeue)
//! - [`tpcp`]: TPCP, DPCP with chains of 3 (MPCP §5): its registry entry points
//! - [`window`]: [`DpcpWindow`], the sender's window laws over the TCP NewReno transport
//! - [`echo`]: [`DpcpEcho`], the receiver's restore and echo
//! - [`params`]: the scenario parameters of flows and ports

pub mod decode;
pub mod echo;
pub mod encode;
pub mod levels;
pub mod ordering;
pub mod params;
pub mod router;
pub mod tpcp;
pub mod window;

pub use decode::{Action, Decoder, DecoderParams, DecoderStats, Mode};
pub use echo::DpcpEcho;
pub use encode::{encode, Flag};
pub use levels::{Lf, Zone};
pub use ordering::{position, position_n, Anchor, Position, Sequencer};
pub use params::{DpcpParams, DpcpRouterParams, Growth};
pub use router::DpcpRouter;
pub use tpcp::{parse_tpcp_flow, parse_tpcp_router};
pub use window::DpcpWindow;

use crate::endpoint::{Endpoint, FlowConfig};
use crate::params::ParamError;
use crate::protocol::{ContractValue, FlowProtocol, PortIdentity, Presence, Requirement, RouterFactory};
use crate::rng::SimRng;
use crate::router::RouterModule;
use crate::tcp::{self, Recovery};
use crate::vcp;
use crate::vcp::keys;
use params::with_chain_default;
use std::sync::Arc;

/// The flow as DPCP runs it. MPCP §3.2 rests on seq and ack being "sufficiently apart"
/// (random ISNs). The simulator's receiver numbers its own side from 2³² − 1, so data packets
/// carry ack 0 and ACKs seq 0, while flows start their data at `isn` (0 by default): seq and
/// ack would start equal. DPCP flows therefore start their data sequence space 2³¹ further on
/// (both ends, from the same `FlowConfig`) [reconstructed].
pub fn dpcp_flow(cfg: &FlowConfig) -> FlowConfig {
    FlowConfig { isn: cfg.isn.wrapping_add(1 << 31), ..cfg.clone() }
}

/// The chain family's requirements on its path: the routers' t_p and chain length are the
/// sender's (a chain of 3 decoded by chains of 2 reads every third digit as an MSP).
pub fn chain_requirements(t_p: f64, chain: u8) -> Vec<Requirement> {
    vec![
        vcp::t_p_requirement(t_p),
        Requirement {
            key: keys::LOAD_FACTOR_CHAIN,
            value: ContractValue::Int(chain as i64),
            presence: Presence::IfProvided,
            param: "chain",
            unit: "",
            why: "the routers write the load factor's digits over chains of their length (MPCP §3.2, §5) \
                  and the sender decodes chains of its own, so set the same chain on both",
        },
    ]
}

/// A TCP/DPCP or TCP/TPCP flow's checked parameters.
#[derive(Debug)]
struct DpcpFlow(DpcpParams);

impl FlowProtocol for DpcpFlow {
    fn sender(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        let cfg = dpcp_flow(cfg);
        let w = DpcpWindow::new(&cfg, tcp::mss_for(&cfg, 0), &self.0);
        tcp::tcp_sender_with(&cfg, Recovery::NewReno, &self.0.tcp, Box::new(w))
    }

    fn receiver(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        let cfg = dpcp_flow(cfg);
        tcp::tcp_receiver_with(&cfg, Box::new(DpcpEcho::new(self.0.chain, cfg.isn)))
    }

    fn path_requirements(&self) -> Vec<Requirement> {
        chain_requirements(self.0.t_p, self.0.chain)
    }
}

fn parse_flow(params: &serde_json::Value, chain: u8) -> Result<Arc<dyn FlowProtocol>, ParamError> {
    let p: DpcpParams = with_chain_default(params, chain)?;
    p.validate()?;
    Ok(Arc::new(DpcpFlow(p)))
}

/// The registry's "dpcp": chains of 2 unless `chain` says otherwise.
pub fn parse_dpcp_flow(params: &serde_json::Value) -> Result<Arc<dyn FlowProtocol>, ParamError> {
    parse_flow(params, 2)
}

/// A DPCP/TPCP router's checked parameters.
#[derive(Debug)]
struct DpcpRouterFactory(DpcpRouterParams);

impl RouterFactory for DpcpRouterFactory {
    fn build(&self, _port: &PortIdentity<'_>, rng: SimRng) -> Box<dyn RouterModule> {
        Box::new(DpcpRouter::new(&self.0, rng).expect("checked when parsed"))
    }

    fn provides(&self) -> Vec<(&'static str, ContractValue)> {
        vec![
            (keys::LOAD_FACTOR_T_P, ContractValue::Real(self.0.t_p)),
            (keys::LOAD_FACTOR_CHAIN, ContractValue::Int(self.0.chain as i64)),
        ]
    }
}

fn parse_router(params: &serde_json::Value, chain: u8) -> Result<Arc<dyn RouterFactory>, ParamError> {
    let p: DpcpRouterParams = with_chain_default(params, chain)?;
    p.validate()?;
    Ok(Arc::new(DpcpRouterFactory(p)))
}

/// The registry's "dpcp" router module.
pub fn parse_dpcp_router(params: &serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError> {
    parse_router(params, 2)
}

#[cfg(test)]
mod tests;
