//! What a run can represent, checked before anything runs (issue 12, item 5).
//!
//! Hard limits, from the representation:
//! - Every time (duration, delays, starts, stops, `record.interval`, `min_rto`) is a whole
//!   number of nanoseconds (the clock is a `u64` of ns) between 1 ns and [`MAX_TIME_NS`] = 2^53 ns
//!   (about 104 days), or exactly 0 where 0 is allowed. A positive time under 1 ns would be
//!   rounded to 0 or 1 ns; a time past 2^53 ns could not be written exactly in the results' float
//!   seconds (and sums of such times approach the clock's end). Both are refused, not rounded or
//!   clamped.
//! - A link must serialise one packet within that range, a Poisson generator's mean gap must be at
//!   least 1 ns (rate <= 10^9 per second), byte counts are at most 2^53.
//!
//! Memory limits, configurable in `[limits]` (an estimate that exceeds one is refused, naming the
//! key to change):
//! - `limits.flows` (default [`DEFAULT_MAX_FLOWS`]): flows in the run, counted as groups expand
//!   and generators draw (a generator's expected count is checked before it draws anything, and
//!   it never draws more than the limit plus one).
//! - `limits.samples` (default [`DEFAULT_MAX_SAMPLES`]): an upper bound on the rows the run can
//!   record, each about 100 bytes in the engine (and again once in the results' tables): one per
//!   sample time, per recorded port per sample (times the flow groups crossing it, with
//!   `record.groups` and more than one group), and, with `record.flows`, per flow per sample from its start to its
//!   stop or the end of the run, plus its final row. Sized flows usually finish sooner, so this
//!   bounds rather than predicts; a run it refuses can sample less often (`record.interval`),
//!   record fewer ports (`record.ports`) or no per-flow series (`record.flows = false`), or raise
//!   `limits.samples`. A closed-loop source (`crate::sources`) runs one flow at a time: a row
//!   per sample from its start, plus a final row per flow it is expected to make.
//! - Flows that closed-loop sources make during the run count against `limits.flows` by the
//!   number their law expects (`FlowBuilder::expected_made`).
//! - `limits.memory` (default [`DEFAULT_MAX_MEMORY`]) and `limits.events` (default
//!   [`DEFAULT_MAX_EVENTS`]): the run's estimated peak memory and simulated events
//!   (`estimate.rs`), checked from the file's counts before the topology is expanded and again
//!   once the scenario is built, before the engine exists.

use super::ctx::Ctx;
use super::error::ScenarioError;
use super::raw::RawLimits;
use super::spec::{FlowSpec, SourceSpec};
use racc_proto::time::NS_PER_SEC;

/// The longest time a run can represent: 2^53 ns, about 104 days.
pub const MAX_TIME_NS: u64 = 1 << 53;
/// The largest byte count (flow size, buffer, initial ssthresh): 2^53 B.
pub const MAX_BYTES: f64 = (1u64 << 53) as f64;
/// Default of `limits.samples`: about 2 GB of sampled rows.
pub const DEFAULT_MAX_SAMPLES: u64 = 20_000_000;
/// Default of `limits.flows`.
pub const DEFAULT_MAX_FLOWS: u64 = 1_000_000;
/// Default of `limits.memory`: the estimated peak memory of a run (`estimate.rs`), 4 GB.
pub const DEFAULT_MAX_MEMORY: u64 = 4_000_000_000;
/// Default of `limits.events`: the estimated simulated events of a run (`estimate.rs`), 10^10
/// (about an hour of computing at a few million events per second).
pub const DEFAULT_MAX_EVENTS: u64 = 10_000_000_000;
/// A Poisson generator's highest rate: a mean gap of 1 ns.
pub const MAX_ARRIVAL_RATE: f64 = 1e9;

/// The resolved `[limits]`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    pub samples: u64,
    pub flows: u64,
    pub memory: u64,
    pub events: u64,
}

pub(super) fn limits(cx: &Ctx, raw: &RawLimits) -> Result<Limits, ScenarioError> {
    let count = |key: &str, v: Option<f64>, default: u64| -> Result<u64, ScenarioError> {
        match v {
            None => Ok(default),
            Some(v) if v.is_finite() && v >= 1.0 && v.fract() == 0.0 && v <= MAX_BYTES => Ok(v as u64),
            Some(v) => Err(cx.err(key, format!("must be a whole number between 1 and 2^53, got {v}"))),
        }
    };
    Ok(Limits {
        samples: count("limits.samples", raw.samples, DEFAULT_MAX_SAMPLES)?,
        flows: count("limits.flows", raw.flows, DEFAULT_MAX_FLOWS)?,
        memory: match raw.memory {
            None => DEFAULT_MAX_MEMORY,
            Some(super::units::Size(super::units::Amount::Bytes(b))) => count("limits.memory", Some(b), 0)?,
            Some(_) => return Err(cx.err("limits.memory", "must be bytes, such as 4e9 or \"4GB\"")),
        },
        events: count("limits.events", raw.events, DEFAULT_MAX_EVENTS)?,
    })
}

/// `s` seconds (already checked finite and >= 0 by the caller, whose message says which sign it
/// wants) as clock nanoseconds: 0 stays 0; anything else must lie in [1 ns, 2^53 ns].
pub(super) fn clock_ns(cx: &Ctx, key: &str, s: f64) -> Result<u64, ScenarioError> {
    debug_assert!(s.is_finite() && s >= 0.0);
    let ns = s * NS_PER_SEC as f64;
    if s > 0.0 && ns < 1.0 {
        return Err(cx.err(key, format!("{s} s is below the clock's resolution of 1 ns")));
    }
    if ns > MAX_TIME_NS as f64 {
        return Err(cx.err(
            key,
            format!(
                "{s} s is beyond the longest time a run can represent, 2^53 ns (about 104 days): the clock counts \
                 whole nanoseconds and the results hold times as float seconds, exact to the nanosecond up to 2^53 ns"
            ),
        ));
    }
    Ok(ns.round() as u64)
}

/// How many flows `limits.flows` still admits after `so_far`.
pub(super) fn flows_left(lim: &Limits, so_far: usize) -> u64 {
    lim.flows.saturating_sub(so_far as u64)
}

/// The refusal of a run with more flows than `limits.flows`.
pub(super) fn too_many_flows(cx: &Ctx, key: &str, lim: &Limits, what: String) -> ScenarioError {
    cx.err(
        key,
        format!(
            "{what}, more than the run's limit of {} flows (each costs memory for its state and results); \
             raise `limits.flows` if the machine has room",
            lim.flows
        ),
    )
}

/// What a run records, for [`check_samples`]: its duration and sample interval (ns; whether
/// `record.interval` was given), the ports, flows and groups it records, and its flows (listed,
/// sources' templates, and the expected number the sources make).
#[derive(Clone, Copy)]
pub(super) struct Recording<'a> {
    pub duration: u64,
    pub interval: u64,
    pub interval_given: bool,
    pub record_ports: usize,
    pub record_flows: bool,
    pub record_groups: bool,
    pub flows: &'a [FlowSpec],
    pub sources: &'a [SourceSpec],
    pub expected_made: f64,
}

/// An upper bound on the rows the run records (module doc), and the refusal when it exceeds
/// `limits.samples`. `interval_given`: whether `record.interval` was set (then it is the key
/// named), else `limits.samples` is.
pub(super) fn check_samples(cx: &Ctx, lim: &Limits, run: &Recording) -> Result<(), ScenarioError> {
    let Recording {
        duration,
        interval,
        interval_given,
        record_ports,
        record_flows,
        record_groups,
        flows,
        sources,
        expected_made,
    } = *run;
    let interval = interval.max(1) as u128;
    let times = (duration as u128).div_ceil(interval) + 1;
    let per_port = 1 + if record_groups {
        let mut groups: Vec<&str> =
            flows.iter().chain(sources.iter().map(|s| &s.flow)).map(|f| f.group.as_str()).collect();
        groups.sort_unstable();
        groups.dedup();
        if groups.len() > 1 {
            groups.len() as u128
        } else {
            0
        }
    } else {
        0
    };
    let port_rows = times * record_ports as u128 * per_port;
    let flow_rows: u128 = if record_flows {
        let listed: u128 = flows
            .iter()
            .map(|f| {
                let end = f.stop.unwrap_or(duration).min(duration);
                (end.saturating_sub(f.start) as u128).div_ceil(interval) + 2
            })
            .sum();
        // A source runs one flow at a time: a row per sample from its start, plus each of its
        // flows' final row (their expected number).
        let made: u128 = sources
            .iter()
            .map(|s| (duration.saturating_sub(s.flow.start) as u128).div_ceil(interval) + 1)
            .sum::<u128>()
            + expected_made.ceil() as u128;
        listed + made
    } else {
        0
    };
    let rows = times + port_rows + flow_rows;
    if rows <= lim.samples as u128 {
        return Ok(());
    }
    let key = if interval_given { "record.interval" } else { "limits.samples" };
    Err(cx.err(
        key,
        format!(
            "the run could record up to {rows} sample rows ({times} sample times, {port_rows} port rows over \
             {record_ports} recorded ports, {flow_rows} flow rows), more than `limits.samples` = {} (about 100 bytes \
             each): sample less often (`record.interval`), record fewer ports (`record.ports`) or no per-flow series \
             (`record.flows = false`), or raise `limits.samples` if the machine has room",
            lim.samples
        ),
    ))
}
