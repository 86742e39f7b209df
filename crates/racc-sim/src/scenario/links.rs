//! One link: capacity, propagation delay, buffer, router module and loss model, checked and
//! converted into a [`LinkSpec`].

use super::ctx::Ctx;
use super::error::ScenarioError;
use super::limits::{self, MAX_BYTES, MAX_TIME_NS};
use super::raw::RawLink;
use super::spec::{BufferSpec, LinkSpec};
use super::units::{Amount, Buffer};
use racc_proto::loss::LossSpec;
use racc_proto::registry::RouterFactory;
use std::sync::Arc;

pub(super) fn delay(cx: &Ctx, key: &str, s: f64) -> Result<u64, ScenarioError> {
    if !(s.is_finite() && s >= 0.0) {
        return Err(cx.err(key, format!("must be a delay >= 0, got {s} s")));
    }
    limits::clock_ns(cx, key, s)
}

pub(super) fn link(
    cx: &Ctx,
    key: &str,
    l: &RawLink,
    a: usize,
    b: usize,
    packet_size: u32,
) -> Result<LinkSpec, ScenarioError> {
    let cap =
        l.capacity.ok_or_else(|| cx.err(format!("{key}.capacity"), "missing: the link capacity, e.g. \"100Mbps\""))?;
    rate(cx, &format!("{key}.capacity"), cap.0, packet_size)?;
    let d = l
        .delay
        .ok_or_else(|| cx.err(format!("{key}.delay"), "missing: the one-way propagation delay, e.g. \"10ms\""))?;
    let delay = delay(cx, &format!("{key}.delay"), d.0)?;
    let buffer = buffer(cx, &format!("{key}.buffer"), l.buffer, packet_size, BufferSpec::Bdp(1.0))?;
    let (router, router_params, router_factory) = router(cx, key, &l.router, &l.router_params)?;
    let loss = loss(cx, &format!("{key}.loss"), l.loss.as_ref())?;
    let loss = Arc::new(loss);
    let none = || Arc::new(LossSpec::None);
    let (fwd, rev) = match l.loss_direction.as_deref().unwrap_or("forward") {
        "forward" => (loss, none()),
        "reverse" => (none(), loss),
        "both" => (loss.clone(), loss),
        d => {
            return Err(
                cx.err(format!("{key}.loss_direction"), format!("must be 'forward', 'reverse' or 'both', got '{d}'"))
            )
        }
    };
    Ok(LinkSpec {
        key: key.into(),
        a,
        b,
        capacity_bps: cap.0,
        delay,
        buffer,
        router: router.into(),
        router_params: Arc::new(router_params),
        router_factory,
        loss_forward: fwd,
        loss_reverse: rev,
    })
}

/// A buffer limit (`key`), or `default` when absent.
pub(super) fn buffer(
    cx: &Ctx,
    key: &str,
    b: Option<Buffer>,
    packet_size: u32,
    default: BufferSpec,
) -> Result<BufferSpec, ScenarioError> {
    let Some(b) = b else { return Ok(default) };
    let v = b.0.value();
    if !(v.is_finite() && v > 0.0) {
        return Err(cx.err(key, format!("must be > 0, got {v}")));
    }
    Ok(match b.0 {
        Amount::Packets(p) if p < 1.0 => return Err(cx.err(key, format!("{p} packets cannot hold one packet"))),
        Amount::Packets(p) if p.round() > u32::MAX as f64 => {
            return Err(cx.err(key, format!("{p} packets is more than 2^32 - 1")))
        }
        Amount::Packets(p) => BufferSpec::Packets(p.round() as u32),
        Amount::Bytes(by) if by > MAX_BYTES => return Err(cx.err(key, format!("{by} B is more than 2^53 bytes"))),
        Amount::Bytes(by) => {
            if by < packet_size as f64 {
                return Err(cx.err(key, format!("{by} B cannot hold one {packet_size}-byte packet")));
            }
            BufferSpec::Bytes(by.round() as u64)
        }
        Amount::Bdp(x) => BufferSpec::Bdp(x),
    })
}

/// The router module of a link or medium at `key` (`{key}.router`, `{key}.router_params`):
/// its name, parameters and checked factory.
pub(super) fn router(
    cx: &Ctx,
    key: &str,
    name: &Option<String>,
    params: &Option<serde_json::Value>,
) -> Result<(String, serde_json::Value, Arc<dyn RouterFactory>), ScenarioError> {
    let router = name.clone().unwrap_or_else(|| "droptail".into());
    let router_params = params.clone().unwrap_or(serde_json::Value::Null);
    let factory = cx.registry.parse_router(&router, &router_params).map_err(|e| {
        if e.key.is_empty() {
            cx.err(format!("{key}.router"), e.reason)
        } else {
            cx.err(format!("{key}.router_params.{}", e.key), e.reason)
        }
    })?;
    Ok((router, router_params, factory))
}

/// A checked loss model at `key` (none when absent).
pub(super) fn loss(cx: &Ctx, key: &str, l: Option<&LossSpec>) -> Result<LossSpec, ScenarioError> {
    let loss = l.cloned().unwrap_or(LossSpec::None);
    loss.validate().map_err(|e| {
        let k = if e.key.is_empty() { key.to_string() } else { format!("{key}.{}", e.key) };
        cx.err(k, e.reason)
    })?;
    Ok(loss)
}

/// A rate at `key` (b/s) at which one packet takes between 1 ns and the longest time a run can
/// represent.
pub(super) fn rate(cx: &Ctx, key: &str, r: f64, packet_size: u32) -> Result<(), ScenarioError> {
    if !(r.is_finite() && r > 0.0) {
        return Err(cx.err(key, format!("must be > 0, got {} b/s", r)));
    }
    // Serialising one packet must take at least 1 ns, else integer time cannot order events.
    if r > packet_size as f64 * 8.0 * 1e9 {
        return Err(cx.err(key, format!("{} b/s is too fast for 1 ns time resolution", r)));
    }
    // ... and at most the longest time a run can represent.
    let slowest = packet_size as f64 * 8.0 * 1e9 / MAX_TIME_NS as f64;
    if r < slowest {
        return Err(cx.err(
            key,
            format!(
                "{} b/s is too slow: one {packet_size}-byte packet would take longer than the longest time a run can \
                 represent, 2^53 ns (the least is {slowest:.3e} b/s)",
                r
            ),
        ));
    }
    Ok(())
}
