//! Classic queue management for router output ports (docs/PROTOCOLS.md §12).
//!
//! - [`DropTail`]: forward everything; the engine's port enforces the buffer limit after the
//!   module's verdict, so a DropTail module only gives the port a name and its counters.
//! - [`Red`]: Random Early Detection (Floyd & Jacobson 1993) with ns-2's gentle mode, packet or
//!   byte mode, drop or ECN mark (RFC 3168).

pub mod droptail;
pub mod red;

pub use droptail::DropTail;
pub use red::{red_byte_scale, red_ewma, red_idle_decay, red_pa, red_pb, Red, RedAction, RedMode, RedParams};

use crate::params::{parse, ParamError};
use crate::protocol::{PortIdentity, RouterFactory};
use crate::rng::SimRng;
use crate::router::RouterModule;
use std::sync::Arc;

/// RED's checked parameters, building one module per port.
#[derive(Debug)]
struct RedFactory(RedParams);

impl RouterFactory for RedFactory {
    fn build(&self, _port: &PortIdentity<'_>, rng: SimRng) -> Box<dyn RouterModule> {
        Box::new(Red::new(self.0.clone(), rng).expect("checked when parsed"))
    }
}

/// The registry's "red": parse and validate `router_params`.
pub fn parse_red(params: &serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError> {
    let p: RedParams = parse(params)?;
    Red::new(p.clone(), SimRng::for_component(0, "check"))?;
    Ok(Arc::new(RedFactory(p)))
}

/// DropTail takes no parameters, and still refuses unknown keys.
#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct NoParams {}

#[derive(Debug)]
struct DropTailFactory;

impl RouterFactory for DropTailFactory {
    fn build(&self, _port: &PortIdentity<'_>, _rng: SimRng) -> Box<dyn RouterModule> {
        Box::new(DropTail::new())
    }
}

/// The registry's "droptail": no parameters.
pub fn parse_droptail(params: &serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError> {
    let _: NoParams = parse(params)?;
    Ok(Arc::new(DropTailFactory))
}
