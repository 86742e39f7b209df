//! TPCP: DPCP with chains of 3 packets (MPCP §5), a 6-bit load factor. It is DPCP's code with
//! `chain = 3` as the default; what differs lives where the chain length matters:
//! - the packet's position from the TCP checksum offset (`ordering.rs`, `position_n`), since
//!   seq/ack order only tells two positions apart;
//! - the levels' TPCP refinement (`levels.rs`) and the decoder of chains of n (`decode/`).
//!
//! These are the registry's "tpcp" protocol and router module.

use super::{parse_flow, parse_router};
use crate::params::ParamError;
use crate::protocol::{FlowProtocol, RouterFactory};
use std::sync::Arc;

/// The registry's "tpcp": chains of 3 unless `chain` says otherwise.
pub fn parse_tpcp_flow(params: &serde_json::Value) -> Result<Arc<dyn FlowProtocol>, ParamError> {
    parse_flow(params, 3)
}

/// The registry's "tpcp" router module.
pub fn parse_tpcp_router(params: &serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError> {
    parse_router(params, 3)
}
