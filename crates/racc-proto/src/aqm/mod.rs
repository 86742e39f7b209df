//! Classic queue management for router output ports (docs/PROTOCOLS.md §12).
//!
//! - [`DropTail`]: forward everything; the engine's port enforces the buffer limit after the
//!   module's verdict, so a DropTail module only gives the port a name and its counters.
//! - [`Red`]: Random Early Detection (Floyd & Jacobson 1993) with ns-2's gentle mode, packet or
//!   byte mode, drop or ECN mark (RFC 3168).
//! - [`Step`]: DCTCP's step marking above K on the instantaneous queue (RFC 8257 §3.1).
//! - [`RandomDrop`]: htsim's `RandomQueue`, random drop in a zone just below a full buffer.

pub mod droptail;
pub mod random_drop;
pub mod red;
pub mod red_config;
pub mod step;

pub use droptail::DropTail;
pub use random_drop::{RandomDrop, RandomDropParams};
pub use red::{red_byte_scale, red_ewma, red_idle_decay, red_pa, red_pb, Red, RedAction, RedMode, RedParams};
pub use red_config::RedConfig;
pub use step::{Step, StepParams};

use crate::params::{parse, ParamError};
use crate::protocol::{PortIdentity, RouterFactory};
use crate::rng::SimRng;
use crate::router::RouterModule;
use std::sync::Arc;

/// RED's checked settings, building one module per port with what the port decides.
#[derive(Debug)]
struct RedFactory(RedConfig);

impl RouterFactory for RedFactory {
    fn build(&self, port: &PortIdentity<'_>, rng: SimRng) -> Box<dyn RouterModule> {
        Box::new(Red::new(self.0.for_port(port), rng).expect("checked when parsed; automatic values are valid"))
    }
    fn warnings(&self, port: &PortIdentity<'_>) -> Vec<String> {
        self.0.warnings(port)
    }
    fn settings(&self, port: &PortIdentity<'_>) -> Vec<(&'static str, f64)> {
        self.0.settings(port)
    }
}

/// The registry's "red": parse and validate `router_params`.
pub fn parse_red(params: &serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError> {
    let c: RedConfig = parse(params)?;
    c.validate()?;
    Ok(Arc::new(RedFactory(c)))
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

#[derive(Debug)]
struct StepFactory(StepParams);

impl RouterFactory for StepFactory {
    fn build(&self, port: &PortIdentity<'_>, _rng: SimRng) -> Box<dyn RouterModule> {
        Box::new(Step::new(self.0.for_port(port)).expect("checked when parsed; a default K is set"))
    }
    fn settings(&self, port: &PortIdentity<'_>) -> Vec<(&'static str, f64)> {
        let p = self.0.for_port(port);
        match (p.k_pkts, p.k_bytes) {
            (Some(k), _) => vec![("k_pkts", k as f64)],
            (_, Some(k)) => vec![("k_bytes", k as f64)],
            _ => Vec::new(),
        }
    }
}

/// The registry's "step": parse and validate `router_params` (K in packets or bytes).
pub fn parse_step(params: &serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError> {
    let p: StepParams = parse(params)?;
    p.validate()?;
    Ok(Arc::new(StepFactory(p)))
}

#[derive(Debug)]
struct RandomDropFactory(RandomDropParams);

impl RouterFactory for RandomDropFactory {
    fn build(&self, _port: &PortIdentity<'_>, rng: SimRng) -> Box<dyn RouterModule> {
        Box::new(RandomDrop::new(self.0.clone(), rng).expect("checked when parsed"))
    }
    fn settings(&self, _port: &PortIdentity<'_>) -> Vec<(&'static str, f64)> {
        vec![("zone_pkts", f64::from(self.0.zone_pkts)), ("p", self.0.p)]
    }
}

/// The registry's "random-drop": parse and validate `router_params` (zone and probability).
pub fn parse_random_drop(params: &serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError> {
    let p: RandomDropParams = parse(params)?;
    p.validate()?;
    Ok(Arc::new(RandomDropFactory(p)))
}
