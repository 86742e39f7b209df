//! The recorded ports' rows of the live run, at the simulator's sample times (`links` table).

use super::Router;
use crate::clock::Clock;
use crate::device::Device;
use racc_proto::time::{Time, NEVER};
use racc_sim::metrics::RowTime;

impl Router {
    pub(super) fn next_sample(&self) -> Time {
        if self.next_k <= self.samples {
            (self.next_k as Time * self.interval).min(self.duration)
        } else {
            NEVER
        }
    }

    /// Every sample due by `now`: the events before it first, then the recorded ports' rows.
    pub(super) fn sample_due(&mut self, now: Time, tuns: &[&Device], clock: &Clock) {
        loop {
            let t = self.next_sample();
            if t > now || t == NEVER {
                return;
            }
            self.run_due(t, tuns, clock);
            self.sample(t);
            self.next_k += 1;
        }
    }

    /// One row per recorded port at `t`, computed as the simulator's sample does (the same
    /// columns from the same `Port` counters): what started serialisation in the interval,
    /// the bytes on the wire in it, the queue now, drops, losses, marks, arrivals, and the
    /// router module's own metrics.
    pub(super) fn sample(&mut self, t: Time) {
        let dt = (t - self.last_sample) as f64 * 1e-9;
        for k in 0..self.record_ports.len() {
            let i = self.record_ports[k];
            // A port's time never goes back: a packet read after the sample time may already
            // be in it (by microseconds).
            let now = self.port_now(i, t);
            let p = &mut self.ports[i];
            p.settle(now, &mut self.pkts);
            self.prev[i] = self.series.push_port(
                RowTime { t_s: t as f64 * 1e-9, now, dt_s: dt },
                i as u32,
                p,
                &self.pkts,
                self.prev[i],
            );
            self.series.named.end_row();
        }
        self.last_sample = t;
    }

    /// Every port's departures due by `end` carried out and its queue integral brought there.
    pub(super) fn settle_all(&mut self, end: Time) {
        for p in 0..self.ports.len() {
            let t = self.port_now(p, end);
            self.ports[p].settle(t, &mut self.pkts);
        }
    }
}
