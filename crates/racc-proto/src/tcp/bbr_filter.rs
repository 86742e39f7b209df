//! BBR's windowed max filter of the bottleneck bandwidth (BBR draft §4.5.2.2, "BtlBw max
//! filter"; Linux keeps it in `lib/win_minmax.c`): the largest sample of the last `window`
//! ticks (round trips, for BBR's BtlBw), kept as three samples, the best, the best since a
//! quarter of the window and the best since half of it, so that when the best ages out the
//! next best is already known (Kathleen Nichols' algorithm). Memory is constant.

/// One kept sample: when (in the caller's ticks) and its value.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Sample {
    at: u64,
    value: f64,
}

/// The running maximum over a sliding window of ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MaxFilter {
    best: [Sample; 3],
}

impl MaxFilter {
    /// The maximum of the window (0 before the first sample).
    pub fn get(&self) -> f64 {
        self.best[0].value
    }

    /// Forget everything: `value` at `at` is the only sample.
    pub fn reset(&mut self, at: u64, value: f64) {
        self.best = [Sample { at, value }; 3];
    }

    /// Add `value` measured at tick `at` (ticks never decrease) to a window of `window` ticks
    /// and return the maximum.
    pub fn update(&mut self, window: u64, at: u64, value: f64) -> f64 {
        let s = Sample { at, value };
        // A new maximum, or nothing kept is young enough: start over from this sample.
        if value >= self.best[0].value || at.saturating_sub(self.best[2].at) > window {
            self.reset(at, value);
            return self.get();
        }
        if value >= self.best[1].value {
            self.best[1] = s;
            self.best[2] = s;
        } else if value >= self.best[2].value {
            self.best[2] = s;
        }
        self.age(window, s);
        self.get()
    }

    /// Retire the best sample once it is older than the window, and refresh the second and
    /// third choices once they are older than a quarter and a half of it.
    fn age(&mut self, window: u64, s: Sample) {
        let age = s.at.saturating_sub(self.best[0].at);
        if age > window {
            self.best = [self.best[1], self.best[2], s];
            if s.at.saturating_sub(self.best[0].at) > window {
                self.best = [self.best[1], self.best[2], s];
            }
        } else if self.best[1].at == self.best[0].at && age > window / 4 {
            self.best[1] = s;
            self.best[2] = s;
        } else if self.best[2].at == self.best[1].at && age > window / 2 {
            self.best[2] = s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::MaxFilter;

    #[test]
    fn the_maximum_holds_for_the_window_then_the_next_best_takes_over() {
        let mut f = MaxFilter::default();
        assert_eq!(f.get(), 0.0);
        assert_eq!(f.update(10, 0, 100.0), 100.0);
        // Lower samples within 10 ticks leave the maximum where it is.
        for t in 1..=10 {
            assert_eq!(f.update(10, t, 50.0 + t as f64), 100.0, "tick {t}");
        }
        // Tick 11: the sample of tick 0 is 11 ticks old and goes; the best kept since is
        // tick 10's 60 or a later one, never more than what was seen after tick 0.
        let m = f.update(10, 11, 40.0);
        assert!((55.0..100.0).contains(&m), "after expiry {m}");
        // A new maximum replaces everything at once.
        assert_eq!(f.update(10, 12, 120.0), 120.0);
        // Nothing for more than the window: the next sample is the maximum, however low.
        assert_eq!(f.update(10, 30, 5.0), 5.0);
    }

    /// The exact maximum of a sliding window is never exceeded and, for a falling sequence,
    /// the filter follows within the window: at each tick its value is one of the samples of
    /// the last `window` + 1 ticks.
    #[test]
    fn falling_samples_are_tracked_within_the_window() {
        let mut f = MaxFilter::default();
        let w = 10u64;
        let samples: Vec<f64> = (0..100).map(|t| 1000.0 - 7.0 * t as f64).collect();
        for (t, &v) in samples.iter().enumerate() {
            let m = f.update(w, t as u64, v);
            let lo = t.saturating_sub(w as usize + 1);
            let window_max = samples[lo..=t].iter().cloned().fold(f64::MIN, f64::max);
            assert!(m <= window_max, "tick {t}: {m} above the window's max {window_max}");
            assert!(samples[lo..=t].contains(&m), "tick {t}: {m} not a sample of the window");
        }
    }
}
