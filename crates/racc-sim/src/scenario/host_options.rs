//! The transport options of a flow group or traffic generator: protocol (checked through the
//! registry), its parameters, ECN, delayed ACK, SACK, initial window and ssthresh, handshake.

use super::ctx::Ctx;
use super::error::ScenarioError;
use super::raw::RawHostOptions;
use super::sizes::bytes;
use super::spec::FlowSpec;

/// The checked per-flow transport options: every flow of the group or generator is this
/// template with its own ends, times and size.
pub(super) struct HostOpts(FlowSpec);

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
            src,
            dst,
            fwd_route,
            rev_route,
            start,
            stop,
            size_bytes: size,
            ..self.0.clone()
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
    Ok(HostOpts(FlowSpec {
        group: String::new(),
        protocol: canonical.to_string(),
        factory,
        src: 0,
        dst: 0,
        fwd_route: 0,
        rev_route: 0,
        start: 0,
        stop: None,
        size_bytes: None,
        params,
        ecn: o.ecn.unwrap_or(false),
        delayed_ack: o.delayed_ack.unwrap_or(false),
        sack: o.sack.unwrap_or(false),
        initial_window,
        initial_ssthresh,
        handshake: o.handshake.unwrap_or(handshake),
    }))
}
