//! The run's sample times, which the host threads (endpoint rows) and the router (port rows)
//! both keep, as the simulator does.

use racc_proto::time::Time;
use racc_sim::Spec;

/// Sample `k`'s time: `k` intervals, the last one cut at the end of the run (as the simulator).
pub fn sample_time(spec: &Spec, k: u32) -> Time {
    (k as Time * spec.sample_interval).min(spec.duration)
}

/// How many samples a run of `spec` takes.
pub fn sample_count(spec: &Spec) -> u32 {
    spec.duration.div_ceil(spec.sample_interval.max(1)) as u32
}
