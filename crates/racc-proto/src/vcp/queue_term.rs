//! The queue term q_l of the load factor A1, ρ = (λ + k_q·q_l)/(γ·C·t_p) (docs/PROTOCOLS.md §2),
//! in the two forms racc knows (`queue_term` in a VCP-family port's `router_params`):
//!
//! - `"a2"` (default) [VCP-DCCP A2]: an EWMA over the t_q samples, q_l ← a·q_l + (1 − a)·q,
//!   carried from one t_p interval to the next.
//! - `"ns2"` [checked: the VCP authors' ns-2 router, the VCP distribution's `vcp-queue.cc`,
//!   `VcpQueueLoadMeasurementTimer::expire`, with `vcp-queue.h`, `VcpQueue::moving_avg_int`]:
//!   at each t_p boundary the mean of that interval's t_q samples in whole bytes
//!   (`last_queue_sum_ / last_queue_times_`), then `moving_avg_int(mean, steady_queue_, 2)`.
//!   That helper is meant as an EWMA with weight 1/4 on the new sample, but it is written
//!   `current_sample >> bits + last_avg - last_avg >> bits`; C's `+`/`-` bind tighter than
//!   `>>`, so it computes `(mean >> 2) >> 2` = mean >> 4: the old value drops out and the mean
//!   is divided by 16. The router the authors ran therefore weighs the interval's mean queue
//!   with k_q/16 (1/32 at k_q = 0.5) and keeps no memory across intervals. The shift is the
//!   parameter `ns2_queue_shift` (4 as compiled; 0 gives the plain interval mean).
//!   (The same file asserts `last_queue_times_ == 0` just before using it, which holds for no
//!   interval with a sample: a run gets past its first t_p only with assertions compiled out.)

/// Which queue term A1 uses (`queue_term`).
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum QueueTerm {
    /// A2's EWMA over the t_q samples, weight `a` on the old value [VCP-DCCP].
    #[default]
    #[serde(rename = "a2")]
    A2,
    /// The reference router's: each interval's mean t_q sample, shifted right by
    /// `ns2_queue_shift` bits, no memory (module docs) [checked: `vcp-queue.cc`].
    #[serde(rename = "ns2")]
    Ns2,
}

/// `ns2_queue_shift` as the reference router computes it: `moving_avg_int(.., 2)` parsed as
/// `(x >> 2) >> 2` (`vcp-queue.h`, `VcpQueue::moving_avg_int`).
pub const NS2_QUEUE_SHIFT: u32 = 4;

/// The `"ns2"` term's accumulator: the sum and count of one interval's t_q samples
/// (`last_queue_sum_`, `last_queue_times_` in `vcp-queue.cc`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntervalQueue {
    sum: u64,
    samples: u64,
}

impl IntervalQueue {
    /// One t_q sample of the queue, bytes (`VcpQueueSamplingTimer::expire`).
    #[inline]
    pub fn sample(&mut self, queue_bytes: u64) {
        self.sum += queue_bytes;
        self.samples += 1;
    }

    /// The term at a t_p boundary: (sum / samples) >> shift in whole bytes, 0 without a sample;
    /// the interval's sums restart (`VcpQueueLoadMeasurementTimer::expire`).
    #[inline]
    pub fn close(&mut self, shift: u32) -> u64 {
        let mean = self.sum.checked_div(self.samples).unwrap_or(0);
        *self = IntervalQueue::default();
        mean >> shift
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand from the reference code: samples 4000, 8000, 6001 B → mean 18 001/3 = 6000
    /// (integer division), 6000 >> 4 = 375 (= 6000/16 = 375); an interval without samples
    /// gives 0; the shift 0 gives the plain mean; the sums restart at every boundary.
    #[test]
    fn hand_computed_interval_mean_and_shift() {
        let mut q = IntervalQueue::default();
        for s in [4000, 8000, 6001] {
            q.sample(s);
        }
        assert_eq!(q.close(NS2_QUEUE_SHIFT), 375);
        assert_eq!(q.close(NS2_QUEUE_SHIFT), 0, "no sample since the last boundary");
        q.sample(1000);
        q.sample(2001);
        assert_eq!(q.close(0), 1500);
        // 15 B: 15 >> 4 = 0, the reference router drops a small queue entirely.
        q.sample(15);
        assert_eq!(q.close(NS2_QUEUE_SHIFT), 0);
    }

    /// The helper as written in `vcp-queue.h` and as meant, evaluated with C's precedence
    /// (additive binds tighter than shift, shifts associate left): as written it is x >> 4
    /// whatever the old average; the intended EWMA (x >> 2) + old − (old >> 2) is not.
    #[test]
    fn moving_avg_int_parses_as_a_shift_by_four() {
        fn as_written(current: u32, last: u32, bits: u32) -> u32 {
            // current_sample >> bits + last_avg - last_avg >> bits
            (current >> (bits.wrapping_add(last).wrapping_sub(last))) >> bits
        }
        fn as_meant(current: u32, last: u32, bits: u32) -> u32 {
            (current >> bits) + last - (last >> bits)
        }
        for (cur, last) in [(6000, 0), (6000, 40_000), (160_000, 1), (0, 5000)] {
            assert_eq!(as_written(cur, last, 2), cur >> NS2_QUEUE_SHIFT, "{cur} {last}");
        }
        assert_eq!(as_meant(6000, 40_000, 2), 1500 + 30_000);
    }
}
