//! Traffic generators. Each draws from its own stream, derived from the scenario seed and the
//! generator's name, so every protocol compared in a study sees the identical arrival list
//! (QFCP §III.A; docs/PROTOCOLS.md §13).

use racc_proto::rng::SimRng;
use racc_proto::time::{secs, Time};

/// The largest flow size drawn, in packets: a flow larger than 2^40 packets cannot finish anyway.
pub const MAX_DRAWN_PKTS: u64 = 1 << 40;

/// Flow-size law, in packets of MSS bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeDist {
    /// Pareto with the given mean and shape a > 1: x_m = mean (a-1)/a, X = x_m U^(-1/a).
    Pareto {
        mean_pkts: f64,
        shape: f64,
    },
    Exponential {
        mean_pkts: f64,
    },
    Fixed {
        pkts: f64,
    },
}

impl SizeDist {
    /// One flow size in packets: max(1, ceil(X)) (docs/PROTOCOLS.md §13).
    pub fn draw_pkts(&self, rng: &mut SimRng) -> u64 {
        let x = match *self {
            SizeDist::Pareto { mean_pkts, shape } => rng.pareto(mean_pkts * (shape - 1.0) / shape, shape),
            SizeDist::Exponential { mean_pkts } => rng.exponential(mean_pkts),
            SizeDist::Fixed { pkts } => pkts,
        };
        // Guard the extreme Pareto tail (the scenario refuses a mean or fixed size above this).
        (x.ceil().clamp(1.0, MAX_DRAWN_PKTS as f64)) as u64
    }
}

/// One generated flow arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub time: Time,
    pub bytes: u64,
}

/// A Poisson arrival process: `rate` flows per second in [start, stop), at most `max_flows`.
#[derive(Clone, Copy, Debug)]
pub struct Poisson {
    pub rate: f64,
    pub start: Time,
    pub stop: Time,
    pub max_flows: u64,
}

/// Arrivals of `process`, sizes from `dist` in packets of `mss` payload bytes.
pub fn poisson_arrivals(seed: u64, name: &str, process: Poisson, dist: &SizeDist, mss: u32) -> Vec<Arrival> {
    let Poisson { rate, start, stop, max_flows } = process;
    // Separate streams for gaps and sizes: changing the size law keeps the arrival times.
    let mut gaps = SimRng::for_component(seed, &format!("traffic/{name}/gaps"));
    let mut sizes = SimRng::for_component(seed, &format!("traffic/{name}/sizes"));
    let mut out = Vec::new();
    let mut t = start as f64 / 1e9;
    let stop_s = stop as f64 / 1e9;
    while (out.len() as u64) < max_flows {
        t += gaps.exponential(1.0 / rate);
        if t >= stop_s {
            break;
        }
        let pkts = dist.draw_pkts(&mut sizes);
        out.push(Arrival { time: secs(t), bytes: pkts * mss as u64 });
    }
    out
}

/// Start times for a group of `n` flows: all at `start`, or spread uniformly over
/// [start, start + spread) from the group's own stream.
pub fn spread_starts(seed: u64, name: &str, n: usize, start: Time, spread: Time) -> Vec<Time> {
    if spread == 0 {
        return vec![start; n];
    }
    let mut rng = SimRng::for_component(seed, &format!("flows/{name}/start"));
    (0..n).map(|_| start + rng.below(spread)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pareto_scale_matches_protocols_md() {
        // m = 30, a = 1.2 -> x_m = 5 (qfcp-fct): X > 5, so the smallest size is ceil(X) = 6.
        let d = SizeDist::Pareto { mean_pkts: 30.0, shape: 1.2 };
        let mut r = SimRng::for_component(1, "t");
        let min = (0..10_000).map(|_| d.draw_pkts(&mut r)).min().unwrap();
        assert_eq!(min, 6);
    }

    #[test]
    fn poisson_rate_and_replay() {
        let d = SizeDist::Fixed { pkts: 1.0 };
        let a = poisson_arrivals(
            9,
            "web",
            Poisson { rate: 625.0, start: 0, stop: secs(20.0), max_flows: u64::MAX },
            &d,
            960,
        );
        let b = poisson_arrivals(
            9,
            "web",
            Poisson { rate: 625.0, start: 0, stop: secs(20.0), max_flows: u64::MAX },
            &d,
            960,
        );
        assert_eq!(a, b, "same seed and name must give the identical list");
        let expect = 625.0 * 20.0;
        // Poisson count: s.d. = sqrt(12500) = 112; allow 4 s.d.
        assert!((a.len() as f64 - expect).abs() < 450.0, "{} arrivals", a.len());
        assert!(a.windows(2).all(|w| w[0].time <= w[1].time));
        let c =
            poisson_arrivals(9, "web", Poisson { rate: 625.0, start: 0, stop: secs(20.0), max_flows: 100 }, &d, 960);
        assert_eq!(c.len(), 100);
        assert_eq!(&a[..100], &c[..]);
    }
}
