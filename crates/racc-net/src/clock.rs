//! The run's clock: monotonic nanoseconds since the run started (CLOCK_MONOTONIC through
//! `Instant`), shared by the router and every host thread, so a timestamp one host writes is
//! comparable with the time another reads (one-way delays).

use racc_proto::time::Time;
use std::time::Instant;

#[derive(Clone, Copy, Debug)]
pub struct Clock {
    epoch: Instant,
}

impl Clock {
    pub fn start() -> Clock {
        Clock { epoch: Instant::now() }
    }

    #[inline]
    pub fn now(&self) -> Time {
        self.epoch.elapsed().as_nanos() as Time
    }
}
