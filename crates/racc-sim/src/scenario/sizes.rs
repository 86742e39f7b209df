//! Flow sizes: a fixed amount in bytes or packets, or a distribution to draw sizes from.

use super::ctx::Ctx;
use super::error::ScenarioError;
use super::limits::MAX_BYTES;
use super::units::Amount;
use crate::traffic;
use racc_proto::packet::hdr::payload;

pub(super) fn bytes(cx: &Ctx, key: &str, a: Amount, packet_size: u32) -> Result<u64, ScenarioError> {
    let b = match a {
        Amount::Bytes(b) => b,
        Amount::Packets(p) => p * payload(packet_size) as f64,
        Amount::Bdp(_) => return Err(cx.err(key, "'bdp' is only meaningful for buffers")),
    };
    if !(b.is_finite() && b >= 1.0) {
        return Err(cx.err(key, format!("must be at least 1 byte, got {b}")));
    }
    if b > MAX_BYTES {
        return Err(cx.err(key, format!("{b} B is more than 2^53 bytes")));
    }
    Ok(b.round() as u64)
}

pub(super) fn size_dist(
    cx: &Ctx,
    key: &str,
    s: &super::raw::RawSizeDist,
    packet_size: u32,
) -> Result<traffic::SizeDist, ScenarioError> {
    let mss = payload(packet_size) as f64;
    // Sizes are drawn in packets (docs/PROTOCOLS.md §13: packets = max(1, ceil(X))).
    let in_pkts = |k: &str, v: Option<super::units::Size>| -> Result<f64, ScenarioError> {
        let v = v.ok_or_else(|| cx.err(format!("{key}.{k}"), "missing"))?;
        let p = match v.0 {
            Amount::Packets(p) => p,
            Amount::Bytes(b) => b / mss,
            Amount::Bdp(_) => return Err(cx.err(format!("{key}.{k}"), "'bdp' is only meaningful for buffers")),
        };
        if !(p.is_finite() && p > 0.0) {
            return Err(cx.err(format!("{key}.{k}"), format!("must be > 0, got {p} packets")));
        }
        if p > traffic::MAX_DRAWN_PKTS as f64 {
            return Err(cx.err(
                format!("{key}.{k}"),
                format!("{p} packets is more than the largest size a flow can be drawn with, 2^40 packets"),
            ));
        }
        Ok(p)
    };
    let unexpected = |k: &str, present: bool| -> Result<(), ScenarioError> {
        if present {
            Err(cx.err(format!("{key}.{k}"), format!("not a parameter of the '{}' distribution", s.dist)))
        } else {
            Ok(())
        }
    };
    let d = match s.dist.as_str() {
        "pareto" => {
            unexpected("size", s.size.is_some())?;
            let mean = in_pkts("mean", s.mean)?;
            let shape = s.shape.ok_or_else(|| cx.err(format!("{key}.shape"), "missing: the Pareto shape a > 1"))?;
            if !(shape.is_finite() && shape > 1.0) {
                return Err(cx.err(format!("{key}.shape"), format!("must be > 1 for a finite mean, got {shape}")));
            }
            traffic::SizeDist::Pareto { mean_pkts: mean, shape }
        }
        "exponential" => {
            unexpected("size", s.size.is_some())?;
            unexpected("shape", s.shape.is_some())?;
            traffic::SizeDist::Exponential { mean_pkts: in_pkts("mean", s.mean)? }
        }
        "fixed" => {
            unexpected("mean", s.mean.is_some())?;
            unexpected("shape", s.shape.is_some())?;
            traffic::SizeDist::Fixed { pkts: in_pkts("size", s.size)? }
        }
        other => {
            return Err(cx.err(
                format!("{key}.dist"),
                format!("unknown size distribution '{other}' (known: pareto, exponential, fixed)"),
            ))
        }
    };
    Ok(d)
}
