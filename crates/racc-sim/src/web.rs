//! The web-like on/off source of VCP-DCCP §4 (after SRED, its reference [12]): each source
//! thinks for a time T, then sends a file of F bytes as one new flow, and thinks again once
//! that flow completes (a closed loop, docs/PROTOCOLS.md §13 [reconstructed]).
//!
//! P{T > t} = p_h [1 + (t/π_h)^η_h]^-1 + p_l [1 + (t/π_l)^η_l]^-1 and
//! P{F > f} = [1 + (f/π)^η]^-1: log-logistic laws with median π and shape η. The paper lists
//! the second think component as P_f, π_f, η_f while its formula says p_l, π_l, η_l; they are
//! the same numbers, named here by the formula (l = the short, "low" component). The file's
//! shape is printed as φ = 1.15066 and its median π = 2190 without a unit: bytes
//! [reconstructed], as in SRED's web model, whose median web file is a couple of kilobytes;
//! in 1024-byte packets 2190 would make a median "short-lived" transfer 2.2 MB.

use crate::sources::{FlowSource, SourceLaw};
use crate::traffic::Arrival;
use racc_proto::rng::SimRng;
use racc_proto::time::{secs, Time};
use std::f64::consts::PI;

/// The largest file drawn, in bytes (the scenario's largest byte count, 2^53): the law's tail
/// is unbounded, and a file this large never finishes in a run anyway.
pub const MAX_FILE_BYTES: f64 = (1u64 << 53) as f64;

/// One log-logistic law: P{X > x} = [1 + (x/median)^shape]^-1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogLogistic {
    pub median: f64,
    pub shape: f64,
}

impl LogLogistic {
    /// P{X <= x}.
    pub fn cdf(&self, x: f64) -> f64 {
        if x <= 0.0 {
            0.0
        } else {
            1.0 - 1.0 / (1.0 + (x / self.median).powf(self.shape))
        }
    }

    /// E[X] = median·b / sin b with b = π/shape, finite for shape > 1.
    pub fn mean(&self) -> f64 {
        if self.shape <= 1.0 {
            return f64::INFINITY;
        }
        let b = PI / self.shape;
        self.median * b / b.sin()
    }
}

/// The think time T, in seconds: a mixture of two log-logistic laws.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThinkTime {
    pub p_h: f64,
    pub h: LogLogistic,
    pub p_l: f64,
    pub l: LogLogistic,
}

impl ThinkTime {
    /// VCP-DCCP §4's parameters, seconds.
    pub const PAPER: ThinkTime = ThinkTime {
        p_h: 0.4953916,
        h: LogLogistic { median: 1.0, shape: 1.243437 },
        p_l: 0.5046084,
        l: LogLogistic { median: 0.0245032, shape: 3.252665 },
    };

    /// One draw, seconds: the component first (p_h against p_l), then its law (docs/PROTOCOLS.md §13).
    pub fn draw(&self, rng: &mut SimRng) -> f64 {
        let c = if rng.uniform() * (self.p_h + self.p_l) < self.p_h { self.h } else { self.l };
        rng.log_logistic(c.median, c.shape)
    }

    pub fn cdf(&self, t: f64) -> f64 {
        (self.p_h * self.h.cdf(t) + self.p_l * self.l.cdf(t)) / (self.p_h + self.p_l)
    }

    pub fn mean(&self) -> f64 {
        (self.p_h * self.h.mean() + self.p_l * self.l.mean()) / (self.p_h + self.p_l)
    }
}

/// The file length F, in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FileSize(pub LogLogistic);

impl FileSize {
    /// VCP-DCCP §4: η = φ = 1.15066, median π = 2190 (bytes [reconstructed], module doc).
    pub const PAPER: FileSize = FileSize(LogLogistic { median: 2190.0, shape: 1.15066 });

    /// One draw of the continuous law, bytes.
    pub fn draw(&self, rng: &mut SimRng) -> f64 {
        rng.log_logistic(self.0.median, self.0.shape)
    }

    /// A file as sent: a whole number of bytes, at least 1, at most [`MAX_FILE_BYTES`].
    pub fn draw_bytes(&self, rng: &mut SimRng) -> u64 {
        self.draw(rng).ceil().clamp(1.0, MAX_FILE_BYTES) as u64
    }
}

/// One web-like source's law: its think and file laws, its random-stream label, and the span
/// [start, stop) in which its transfers may begin.
#[derive(Clone, Debug)]
pub struct WebLaw {
    pub think: ThinkTime,
    pub file: FileSize,
    /// `traffic/<generator name>/source<k>`: the source's streams are this plus "/think" and
    /// "/file", so changing one law keeps the other's draws.
    pub label: String,
    /// The first think period begins here ("enters the network after a random think time").
    pub start: Time,
    /// No transfer begins at or after this; one under way runs on.
    pub stop: Time,
}

impl SourceLaw for WebLaw {
    fn source(&self, seed: u64) -> Box<dyn FlowSource> {
        Box::new(WebSource {
            law: self.clone(),
            think: SimRng::for_component(seed, &format!("{}/think", self.label)),
            file: SimRng::for_component(seed, &format!("{}/file", self.label)),
        })
    }
}

/// A web-like source during a run.
pub struct WebSource {
    law: WebLaw,
    think: SimRng,
    file: SimRng,
}

impl WebSource {
    /// Think from `from`, then a file, unless the think period ends at or after `stop`.
    fn next(&mut self, from: Time) -> Option<Arrival> {
        let t = self.law.think.draw(&mut self.think);
        // Compared in seconds first: the law's tail can exceed the clock's range.
        let left = self.law.stop.saturating_sub(from) as f64 * 1e-9;
        if t.is_nan() || t >= left {
            return None;
        }
        let time = from + secs(t);
        if time >= self.law.stop {
            return None;
        }
        Some(Arrival { time, bytes: self.law.file.draw_bytes(&mut self.file) })
    }
}

impl FlowSource for WebSource {
    fn first(&mut self) -> Option<Arrival> {
        self.next(self.law.start)
    }

    fn on_complete(&mut self, now: Time) -> Option<Arrival> {
        self.next(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kolmogorov–Smirnov statistic of `xs` against `cdf`: the largest distance between the
    /// empirical and the analytic CDF, on either side of each step.
    fn ks(mut xs: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
        xs.sort_by(f64::total_cmp);
        let n = xs.len() as f64;
        xs.iter()
            .enumerate()
            .map(|(i, &x)| {
                let f = cdf(x);
                (f - i as f64 / n).max((i + 1) as f64 / n - f)
            })
            .fold(0.0, f64::max)
    }

    /// Critical value of the one-sample KS test at the 1 % level for large n: 1.628/sqrt(n).
    fn ks_1pct(n: usize) -> f64 {
        1.628 / (n as f64).sqrt()
    }

    const N: usize = 5000;

    #[test]
    fn think_times_follow_the_mixture() {
        let mut r = SimRng::for_component(1, "traffic/web/source0/think");
        let xs: Vec<f64> = (0..N).map(|_| ThinkTime::PAPER.draw(&mut r)).collect();
        let d = ks(xs, |t| ThinkTime::PAPER.cdf(t));
        assert!(d < ks_1pct(N), "KS D = {d:.4} >= {:.4}", ks_1pct(N));
    }

    #[test]
    fn file_sizes_follow_the_log_logistic_law() {
        let mut r = SimRng::for_component(1, "traffic/web/source0/file");
        let xs: Vec<f64> = (0..N).map(|_| FileSize::PAPER.draw(&mut r)).collect();
        let d = ks(xs, |f| FileSize::PAPER.0.cdf(f));
        assert!(d < ks_1pct(N), "KS D = {d:.4} >= {:.4}", ks_1pct(N));
        // As sent (whole bytes), the steps of ceil move the CDF by at most the density over one
        // byte, which is under 1.4e-4 here: the same test still passes.
        let mut r = SimRng::for_component(1, "traffic/web/source0/file");
        let xs: Vec<f64> = (0..N).map(|_| FileSize::PAPER.draw_bytes(&mut r) as f64).collect();
        assert!(xs.iter().all(|&b| b >= 1.0));
        let d = ks(xs, |f| FileSize::PAPER.0.cdf(f));
        assert!(d < ks_1pct(N), "whole bytes: KS D = {d:.4}");
    }

    #[test]
    fn a_wrong_law_is_rejected() {
        // The test has power: the think draws against the file law, and against the paper's
        // think law with weights 0.6/0.4 instead of 0.495/0.505, both fail by far.
        let mut r = SimRng::for_component(1, "traffic/web/source0/think");
        let xs: Vec<f64> = (0..N).map(|_| ThinkTime::PAPER.draw(&mut r)).collect();
        let reweighted = ThinkTime { p_h: 0.6, p_l: 0.4, ..ThinkTime::PAPER };
        assert!(ks(xs.clone(), |t| reweighted.cdf(t)) > 2.0 * ks_1pct(N));
        assert!(ks(xs, |t| FileSize::PAPER.0.cdf(t)) > 2.0 * ks_1pct(N));
    }

    #[test]
    fn means_and_medians_by_hand() {
        // docs/PROTOCOLS.md §13: mean think ≈ 2.18 s, median ≈ 0.065 s; mean file ≈ 14.95 kB.
        // By hand: b_h = π/1.243437 = 2.52654, sin b_h = 0.57700, mean_h = 4.3787 s;
        // b_l = π/3.252665 = 0.96585, sin b_l = 0.82253, mean_l = 0.028773 s;
        // 0.4953916·4.3787 + 0.5046084·0.028773 = 2.1837 s.
        let m = ThinkTime::PAPER.mean();
        assert!((m - 2.1837).abs() < 0.0005, "mean think {m}");
        // Median: the mixture's CDF crosses 1/2 near 0.065 s.
        assert!(ThinkTime::PAPER.cdf(0.064) < 0.5 && ThinkTime::PAPER.cdf(0.066) > 0.5);
        // b = π/1.15066 = 2.73025, sin b = 0.39984: 2190·2.73025/0.39984 = 14 954 B.
        let f = FileSize::PAPER.0.mean();
        assert!((f - 14_954.0).abs() < 1.0, "mean file {f}");
        assert_eq!(FileSize::PAPER.0.cdf(2190.0), 0.5);
    }

    #[test]
    fn a_source_thinks_from_each_completion_and_stops_at_stop() {
        let law = WebLaw {
            think: ThinkTime::PAPER,
            file: FileSize::PAPER,
            label: "traffic/web/source3".into(),
            start: secs(1.0),
            stop: secs(100.0),
        };
        let mut a = law.source(7);
        let mut think = SimRng::for_component(7, "traffic/web/source3/think");
        let first = a.first().expect("a first transfer within 99 s");
        assert_eq!(first.time, secs(1.0) + secs(ThinkTime::PAPER.draw(&mut think)));
        let second = a.on_complete(secs(5.0)).expect("a second transfer");
        assert_eq!(second.time, secs(5.0) + secs(ThinkTime::PAPER.draw(&mut think)));
        assert_eq!(a.on_complete(secs(100.0)), None, "nothing starts at or after stop");
        // The same seed and label replay the same list.
        let mut b = law.source(7);
        assert_eq!(b.first(), Some(first));
        assert_eq!(b.on_complete(secs(5.0)), Some(second));
    }
}
