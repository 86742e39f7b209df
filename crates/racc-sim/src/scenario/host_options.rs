//! The transport options of a flow group or traffic generator: protocol (checked through the
//! registry), its parameters, ECN, delayed ACK, SACK, initial window and ssthresh, handshake.

use super::ctx::Ctx;
use super::error::ScenarioError;
use super::raw::RawHostOptions;
use super::sizes::bytes;
use super::spec::FlowSpec;
use racc_proto::registry::FlowProtocol;
use std::sync::Arc;

/// Shared checks of the per-flow transport options.
pub(super) struct HostOpts {
    protocol: String,
    factory: Arc<dyn FlowProtocol>,
    params: serde_json::Value,
    ecn: bool,
    delayed_ack: bool,
    sack: bool,
    initial_window: Option<u32>,
    initial_ssthresh: Option<u64>,
    handshake: bool,
}

impl HostOpts {
    /// One flow of a group or generator: `ends` = (src, dst, forward route, reverse route).
    pub(super) fn flow(
        &self,
        group: &str,
        ends: (usize, usize, usize, usize),
        start: u64,
        stop: Option<u64>,
        size: Option<u64>,
    ) -> FlowSpec {
        let (src, dst, fwd_route, rev_route) = ends;
        FlowSpec {
            group: group.to_string(),
            protocol: self.protocol.clone(),
            factory: self.factory.clone(),
            src,
            dst,
            fwd_route,
            rev_route,
            start,
            stop,
            size_bytes: size,
            params: self.params.clone(),
            ecn: self.ecn,
            delayed_ack: self.delayed_ack,
            sack: self.sack,
            initial_window: self.initial_window,
            initial_ssthresh: self.initial_ssthresh,
            handshake: self.handshake,
        }
    }
}

pub(super) fn host_opts(
    cx: &Ctx,
    key: &str,
    protocol: &str,
    o: &RawHostOptions,
    handshake: bool,
    packet_size: u32,
) -> Result<HostOpts, ScenarioError> {
    let params = o.params.clone().unwrap_or(serde_json::Value::Null);
    // Parsed and validated once: every flow of the group is built from this factory.
    let (canonical, factory) = cx.registry.parse_protocol(protocol, &params).map_err(|e| {
        if cx.registry.protocol(protocol).is_none() {
            cx.err(format!("{key}.protocol"), e.reason)
        } else if e.key.is_empty() {
            cx.err(format!("{key}.params"), e.reason)
        } else {
            cx.err(format!("{key}.params.{}", e.key), e.reason)
        }
    })?;
    let initial_window = match o.initial_window {
        None => None,
        Some(w) if (1..=1_000_000).contains(&w) => Some(w as u32),
        Some(w) => return Err(cx.err(format!("{key}.initial_window"), format!("must be 1..1000000 packets, got {w}"))),
    };
    let initial_ssthresh = match o.initial_ssthresh {
        None => None,
        Some(s) => Some(bytes(cx, &format!("{key}.initial_ssthresh"), s.0, packet_size)?),
    };
    Ok(HostOpts {
        protocol: canonical.to_string(),
        factory,
        params,
        ecn: o.ecn.unwrap_or(false),
        delayed_ack: o.delayed_ack.unwrap_or(false),
        sack: o.sack.unwrap_or(false),
        initial_window,
        initial_ssthresh,
        handshake: o.handshake.unwrap_or(handshake),
    })
}
