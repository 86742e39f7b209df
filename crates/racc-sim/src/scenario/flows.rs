//! Flow generation: each `[[flows]]` group and `[[traffic]]` generator expands into its flows,
//! with endpoints resolved by name and routed.

use super::ctx::Ctx;
use super::error::ScenarioError;
use super::host_options::host_opts;
use super::limits::{self, Limits, MAX_ARRIVAL_RATE};
use super::raw::{RawFlows, RawTraffic};
use super::routes::Routes;
use super::sizes::{bytes, size_dist};
use super::spec::{FlowSpec, NodeSpec, SourceSpec};
use crate::traffic;
use racc_proto::packet::hdr::payload;
use rustc_hash::FxHashMap as FastMap;

/// What every `[[flows]]` group and `[[traffic]]` generator is resolved against, and the flows
/// they expand to, in file order.
pub(super) struct FlowBuilder<'a> {
    pub(super) cx: &'a Ctx<'a>,
    pub(super) names: &'a FastMap<&'a str, usize>,
    pub(super) nodes: &'a [NodeSpec],
    pub(super) routes: &'a mut Routes,
    pub(super) handshake: bool,
    pub(super) packet_size: u32,
    pub(super) duration: u64,
    pub(super) seed: u64,
    pub(super) limits: Limits,
    pub(super) out: Vec<FlowSpec>,
    /// Closed-loop sources (`[[traffic]] kind = "web"`), and the flows they are expected to
    /// make (`web.rs`), counted against `limits.flows` with the listed ones.
    pub(super) sources: Vec<SourceSpec>,
    pub(super) expected_made: f64,
}

impl FlowBuilder<'_> {
    /// Flows counted against `limits.flows` so far: those listed and those sources will make.
    pub(super) fn used(&self) -> usize {
        self.out.len().saturating_add(self.expected_made.ceil() as usize)
    }

    pub(super) fn flow_group(&mut self, gi: usize, g: &RawFlows) -> Result<(), ScenarioError> {
        let (cx, packet_size, duration) = (self.cx, self.packet_size, self.duration);
        let key = format!("flows[{gi}]");
        let opts = host_opts(cx, &key, &g.protocol, &g.host_options(), self.handshake, packet_size)?;
        if !(1..=10_000_000).contains(&g.count) {
            return Err(cx.err(format!("{key}.count"), format!("must be 1..10000000, got {}", g.count)));
        }
        if g.count as u64 > limits::flows_left(&self.limits, self.used()) {
            let what = format!("{} flows here after {} before", g.count, self.used());
            return Err(limits::too_many_flows(cx, &format!("{key}.count"), &self.limits, what));
        }
        if g.index_offset < 0 {
            return Err(cx.err(format!("{key}.index_offset"), "must be >= 0"));
        }
        let start = time_opt(cx, &format!("{key}.start"), g.start)?.unwrap_or(0);
        let spread = time_opt(cx, &format!("{key}.start_spread"), g.start_spread)?.unwrap_or(0);
        let stop = time_opt(cx, &format!("{key}.stop"), g.stop)?;
        if start >= duration {
            return Err(cx.err(format!("{key}.start"), "starts at or after the end of the run"));
        }
        if let Some(s) = stop {
            if s <= start {
                return Err(cx.err(format!("{key}.stop"), "must be later than start"));
            }
        }
        let size = match g.size {
            None => None,
            Some(s) => Some(bytes(cx, &format!("{key}.size"), s.0, packet_size)?),
        };
        let name = g.name.clone().unwrap_or_else(|| format!("flows{gi}"));
        let starts = traffic::spread_starts(self.seed, &name, g.count as usize, start, spread);
        self.out.reserve(starts.len());
        let (src_parts, dst_parts): (Vec<&str>, Vec<&str>) =
            (g.src.split("{i}").collect(), g.dst.split("{i}").collect());
        for (i, st) in starts.into_iter().enumerate() {
            let idx = crate::names::numbered("", i + g.index_offset as usize);
            let (src, dst) = (src_parts.join(idx.as_str()), dst_parts.join(idx.as_str()));
            let ends = endpoints(cx, &key, &src, &dst, self.names, self.nodes, self.routes)?;
            self.out.push(opts.flow(&name, ends, st, stop, size));
        }
        Ok(())
    }

    pub(super) fn traffic_generator(&mut self, ti: usize, t: &RawTraffic) -> Result<(), ScenarioError> {
        match t.kind.as_str() {
            "poisson" => self.poisson_generator(ti, t),
            "web" => self.web_generator(ti, t),
            // htsim's connection matrix: the front end reads it into the same rows as a trace.
            "trace" | "connection_matrix" => self.trace_generator(ti, t),
            other => Err(self.cx.err(
                format!("traffic[{ti}].kind"),
                format!("unknown traffic kind '{other}' (known: poisson, web, trace, connection_matrix)"),
            )),
        }
    }

    fn poisson_generator(&mut self, ti: usize, t: &RawTraffic) -> Result<(), ScenarioError> {
        let (cx, packet_size, duration) = (self.cx, self.packet_size, self.duration);
        let key = format!("traffic[{ti}]");
        for (k, present) in [
            ("sources", t.sources.is_some()),
            ("index_offset", t.index_offset.is_some()),
            ("index_stride", t.index_stride.is_some()),
            ("think", t.think.is_some()),
        ] {
            if present {
                return Err(
                    cx.err(format!("{key}.{k}"), "a key of the 'web' kind, not of 'poisson' (set kind = \"web\")")
                );
            }
        }
        for (k, present) in [("file", t.file.is_some()), ("arrivals", t.arrivals.is_some())] {
            if present {
                return Err(cx.err(
                    format!("{key}.{k}"),
                    "a key of the 'trace' kind (an arrival list) or, for `file`, of 'web' (its file-length law), \
                     not of 'poisson'",
                ));
            }
        }
        let opts = host_opts(cx, &key, &t.protocol, &t.host_options(), self.handshake, packet_size)?;
        let ends = endpoints(cx, &key, &t.src, &t.dst, self.names, self.nodes, self.routes)?;
        let rate = t
            .rate
            .ok_or_else(|| cx.err(format!("{key}.rate"), "missing: `rate` is required (mean arrivals per second)"))?;
        let size = t
            .size
            .as_ref()
            .ok_or_else(|| cx.err(format!("{key}.size"), "missing: `size` is required (the flow-size law)"))?;
        if !(rate.is_finite() && rate > 0.0) {
            return Err(cx.err(format!("{key}.rate"), format!("must be > 0 arrivals per second, got {rate}")));
        }
        if rate > MAX_ARRIVAL_RATE {
            return Err(cx.err(
                format!("{key}.rate"),
                format!(
                    "{} arrivals per second is a mean gap under the clock's resolution of 1 ns (at most 1e9)",
                    rate
                ),
            ));
        }
        let start = time_opt(cx, &format!("{key}.start"), t.start)?.unwrap_or(0);
        let stop = time_opt(cx, &format!("{key}.stop"), t.stop)?.unwrap_or(duration).min(duration);
        if start >= stop {
            return Err(cx.err(format!("{key}.start"), "no time left for arrivals before stop / the end of the run"));
        }
        let max_flows = match t.max_flows {
            None => u64::MAX,
            Some(m) if m >= 1 => m as u64,
            Some(m) => return Err(cx.err(format!("{key}.max_flows"), format!("must be >= 1, got {m}"))),
        };
        let dist = size_dist(cx, &format!("{key}.size"), size, packet_size)?;
        let name = t.name.clone().unwrap_or_else(|| format!("traffic{ti}"));
        // Checked before drawing: the expected count, then (never drawing more than the limit
        // plus one) the drawn one.
        let left = limits::flows_left(&self.limits, self.used());
        let expected = rate * (stop - start) as f64 * 1e-9;
        if max_flows > left && expected > left as f64 {
            let what = format!(
                "{} arrivals per second for {} s is about {expected:.3e} flows",
                rate,
                (stop - start) as f64 * 1e-9
            );
            return Err(limits::too_many_flows(cx, &format!("{key}.rate"), &self.limits, what));
        }
        let draw = max_flows.min(left.saturating_add(1));
        let arrivals = traffic::poisson_arrivals(
            self.seed,
            &name,
            traffic::Poisson { rate, start, stop, max_flows: draw },
            &dist,
            payload(packet_size),
        );
        if arrivals.len() as u64 > left {
            let what = format!("the arrivals drawn at {} per second number more than the {left} flows left", rate);
            return Err(limits::too_many_flows(cx, &format!("{key}.rate"), &self.limits, what));
        }
        for (i, a) in arrivals.into_iter().enumerate() {
            // With ECMP each arrival is a flow of its own, with its own route.
            let ends = match (i, self.routes.is_ecmp()) {
                (1.., true) => {
                    let (fwd, rev) = self.routes.flow(ends.0, ends.1).expect("routed once already");
                    (ends.0, ends.1, fwd, rev)
                }
                _ => ends,
            };
            self.out.push(opts.flow(&name, ends, a.time, None, Some(a.bytes)));
        }
        Ok(())
    }
}

pub(super) fn endpoints(
    cx: &Ctx,
    key: &str,
    src: &str,
    dst: &str,
    names: &FastMap<&str, usize>,
    nodes: &[NodeSpec],
    routes: &mut Routes,
) -> Result<(usize, usize, usize, usize), ScenarioError> {
    let find = |which: &str, name: &str| -> Result<usize, ScenarioError> {
        let i = *names.get(name).ok_or_else(|| {
            let hosts: Vec<&str> = nodes.iter().filter(|n| n.host).map(|n| n.name.as_str()).take(6).collect();
            cx.err(format!("{key}.{which}"), format!("no node named '{name}' (hosts include: {})", hosts.join(", ")))
        })?;
        if !nodes[i].host {
            return Err(cx.err(format!("{key}.{which}"), format!("'{name}' is a router; flows run between hosts")));
        }
        Ok(i)
    };
    let (s, d) = (find("src", src)?, find("dst", dst)?);
    if s == d {
        return Err(cx.err(format!("{key}.dst"), "a flow needs two different hosts"));
    }
    let no_path =
        || cx.err(format!("{key}.dst"), format!("no path from '{src}' to '{dst}': the nodes are not connected"));
    let (fwd, rev) = routes.flow(s, d).ok_or_else(no_path)?;
    Ok((s, d, fwd, rev))
}

pub(super) fn time_opt(cx: &Ctx, key: &str, s: Option<super::units::Seconds>) -> Result<Option<u64>, ScenarioError> {
    match s {
        None => Ok(None),
        Some(s) if s.0.is_finite() && s.0 >= 0.0 => Ok(Some(limits::clock_ns(cx, key, s.0)?)),
        Some(s) => Err(cx.err(key, format!("must be a time >= 0, got {} s", s.0))),
    }
}
