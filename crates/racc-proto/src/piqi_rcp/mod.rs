//! PIQI-RCP, Proportional-Integral Queue-Independent RCP (Jain and Loguinov, IWQoS 2007;
//! seed 004; PROTOCOLS.md §8) **[reconstructed]**: the paper's equations are unavailable. Only
//! the router differs from RCP; flows of protocol "piqi-rcp" use RCP's sender and receiver
//! (`rcp::RcpSender`, `xcc::HeaderEcho`).
//!
//! - [`router`]: [`PiqiRouter`], the PI rate law and its design notes
//! - [`params`]: the router's parameters, [`PiqiRouterParams`]

pub mod params;
pub mod router;

#[cfg(test)]
mod fluid;

pub use params::PiqiRouterParams;
pub use router::PiqiRouter;

use crate::params::{parse, ParamError};
use crate::registry::{keys, ContractValue, PortIdentity, RouterFactory};
use crate::rng::SimRng;
use crate::router::RouterModule;
use std::sync::Arc;

#[derive(Debug)]
struct PiqiRouterFactory(PiqiRouterParams);

impl RouterFactory for PiqiRouterFactory {
    fn build(&self, port: &PortIdentity<'_>, rng: SimRng) -> Box<dyn RouterModule> {
        Box::new(PiqiRouter::new(&self.0, port.capacity_bps, rng).expect("checked when parsed"))
    }

    fn provides(&self) -> Vec<(&'static str, ContractValue)> {
        vec![(keys::XCC_RATE, ContractValue::Int(1))]
    }
}

/// The registry's "piqi-rcp" router module.
pub fn parse_router(params: &serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError> {
    let p: PiqiRouterParams = parse(params)?;
    p.validate()?;
    Ok(Arc::new(PiqiRouterFactory(p)))
}
