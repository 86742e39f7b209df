//! Named metrics: an endpoint or a congestion controller reports its own counters and gauges
//! under a name and a unit, and engines carry them into their results without knowing what
//! they mean. Reporting is allocation-free: names and units are `'static`, values are plain.

/// A metric's value at one sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MetricValue {
    /// A cumulative count (events, packets).
    Count(u64),
    /// An instantaneous value.
    Gauge(f64),
    /// A state that holds or not at the sample.
    Flag(bool),
}

/// Where an endpoint writes its metrics at a sample.
pub trait MetricSink {
    /// `name` is the column name (snake case, unique per protocol); `unit` is a short unit
    /// ("packets", "events", "bytes", "s", "bit/s", "" for a flag or a ratio).
    fn put(&mut self, name: &'static str, unit: &'static str, value: MetricValue);
}

/// A sink that collects into a vector: for tests and one-off reads, not per-packet paths.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricList(pub Vec<(&'static str, &'static str, MetricValue)>);

impl MetricSink for MetricList {
    fn put(&mut self, name: &'static str, unit: &'static str, value: MetricValue) {
        self.0.push((name, unit, value));
    }
}

impl MetricList {
    /// The value reported under `name`, if any.
    pub fn get(&self, name: &str) -> Option<MetricValue> {
        self.0.iter().find(|(n, _, _)| *n == name).map(|&(_, _, v)| v)
    }
}
