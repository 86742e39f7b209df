//! XCP-b (QFCP §III.C): XCP's sender (NewReno halving on loss) under XCP routers that take the
//! spare bandwidth from the queue's speed instead of a known capacity, holding the queue at
//! `q_target_pkts` and probing with a fixed share of y once intervals end empty. The router is
//! XCP's with `spare = "queue"` by default; the spare-bandwidth estimate is in `blind.rs`
//! ([`super::BlindSpare`], [`super::control_blind`]). These are the registry's "xcp-b" protocol
//! (XCP's flow factory) and router module.

use super::parse_router;
use crate::params::ParamError;
use crate::protocol::RouterFactory;
use std::sync::Arc;

/// The registry's "xcp-b" router module: XCP's with `spare = "queue"` unless given (QFCP
/// §III.C's XCP-b, "enhanced with an algorithm to probe the available bandwidth when the link
/// capacity is unknown": [`blind`]).
pub fn parse_router_b(params: &serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError> {
    let mut v = if params.is_null() { serde_json::json!({}) } else { params.clone() };
    if let Some(m) = v.as_object_mut() {
        m.entry("spare").or_insert(serde_json::json!("queue"));
    }
    parse_router(&v)
}
