//! CoDel, Controlled Delay AQM (RFC 8289; docs/PROTOCOLS.md §12): drops (or marks) at dequeue
//! once the sojourn time has stayed above TARGET for an INTERVAL, at times `interval/sqrt(count)`
//! apart. The router interface's dequeue hook (`RouterModule::on_dequeue`) carries it.
//!
//! - `params.rs`: the scenario keys and the RFC's constants.
//! - `law.rs`: the per-queue state machine (§5.5) and the control law (§5.6).
//! - `router.rs`: the module on a port.
//!
//! fq_codel (RFC 8290) is not here: docs/PROTOCOLS.md §12 says why.

pub mod law;
pub mod params;
pub mod router;

pub use law::{control_law, Action, CodelLaw};
pub use params::CodelParams;
pub use router::Codel;

use crate::params::{parse, ParamError};
use crate::protocol::{PortIdentity, RouterFactory};
use crate::rng::SimRng;
use crate::router::RouterModule;
use std::sync::Arc;

#[derive(Debug)]
struct CodelFactory(CodelParams);

impl RouterFactory for CodelFactory {
    fn build(&self, port: &PortIdentity<'_>, _rng: SimRng) -> Box<dyn RouterModule> {
        Box::new(Codel::new(&self.0, port.mean_pkt_size))
    }
    fn settings(&self, port: &PortIdentity<'_>) -> Vec<(&'static str, f64)> {
        match self.0.mtu_bytes {
            Some(_) => Vec::new(),
            None => vec![("mtu_bytes", self.0.mtu(port.mean_pkt_size) as f64)],
        }
    }
}

/// The registry's "codel": parse and validate `router_params`.
pub fn parse_router(params: &serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError> {
    let p: CodelParams = parse(params)?;
    p.validate()?;
    Ok(Arc::new(CodelFactory(p)))
}

#[cfg(test)]
mod tests;
