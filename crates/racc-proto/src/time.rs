//! Time in racc is an integer count of nanoseconds since the start of a run.
//! The protocol crate never reads a clock: every entry point is handed `now`.

/// A point in time, in nanoseconds since the run (or connection) started.
pub type Time = u64;
/// A span of time in nanoseconds.
pub type Dur = u64;

pub const NS_PER_US: u64 = 1_000;
pub const NS_PER_MS: u64 = 1_000_000;
pub const NS_PER_SEC: u64 = 1_000_000_000;

/// "Never": used for timers that are not armed.
pub const NEVER: Time = u64::MAX;

/// Seconds (f64) to nanoseconds, rounded to the nearest nanosecond.
#[inline]
pub fn secs(s: f64) -> Dur {
    (s * NS_PER_SEC as f64).round() as Dur
}

/// Nanoseconds to seconds.
#[inline]
pub fn to_secs(ns: Dur) -> f64 {
    ns as f64 / NS_PER_SEC as f64
}

/// Serialisation time of `bytes` on a link of `bps` bits per second, in ns (rounded up,
/// so that a link never transmits faster than its capacity).
#[inline]
pub fn tx_time(bytes: u32, bps: f64) -> Dur {
    ((bytes as f64 * 8.0 * NS_PER_SEC as f64) / bps).ceil() as Dur
}
