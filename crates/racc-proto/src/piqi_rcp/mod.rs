//! PIQI-RCP, Proportional-Integral Queue-Independent RCP (Jain and Loguinov, IWQoS 2007;
//! XCC-Linux; docs/PROTOCOLS.md §8) **[reconstructed]**: the paper's equations are unavailable. Only
//! the router differs from RCP; flows of protocol "piqi-rcp" use RCP's sender and receiver
//! (`rcp::RcpSender`, `xcc::HeaderEcho`).
//!
//! - [`pi_law`]: the router rule, the PI rate law of one interval ([`pi_law::pi_step`])
//! - [`router`]: [`PiqiRouter`], the router module around it and its design notes
//! - [`due_cut`]: the due cut of admission on traffic ([`due_cut::DueCut`])
//! - [`params`]: the router's parameters, [`PiqiRouterParams`]

pub mod due_cut;
pub mod params;
pub mod pi_law;
pub mod router;

#[cfg(test)]
mod fluid;

pub use params::PiqiRouterParams;
pub use router::PiqiRouter;

use crate::params::ParamError;
use crate::protocol::RouterFactory;
use crate::rcp::parse_rate_router;
use std::sync::Arc;

/// The registry's "piqi-rcp" router module (RCP's factory glue: it provides xcc.rate).
pub fn parse_router(params: &serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError> {
    parse_rate_router(params, PiqiRouterParams::validate, |p, c, rng| {
        Box::new(PiqiRouter::new(p, c, rng).expect("checked when parsed"))
    })
}
