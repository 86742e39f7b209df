//! Metrics: counters sampled at a fixed interval into column vectors (no per-packet log),
//! handed to Python as columns for Parquet; plus the end-of-run summary.

use crate::port::{Packets, Port, PortCounters};
use racc_proto::endpoint::Endpoint;
use racc_proto::metrics::{MetricSink, MetricValue};
use racc_proto::time::Time;

/// One row per (sample, port). A row covers the interval since the previous sample.
#[derive(Default, Debug, Clone, PartialEq)]
pub struct PortSeries {
    pub time_s: Vec<f64>,
    pub port: Vec<u32>,
    /// Whole packets (and their bytes) that started serialisation in the interval: integers
    /// that reconcile with the port's counters and the engine's packet conservation.
    pub tx_bytes: Vec<u64>,
    pub tx_pkts: Vec<u64>,
    /// Bytes on the wire during the interval × 8 / its length: a packet straddling a sample
    /// boundary is split in proportion to its serialisation time on either side
    /// ([`crate::port::Port::unsent`]), so this never exceeds the capacity, and over the
    /// samples it adds up to the whole-run figure.
    pub throughput_bps: Vec<f64>,
    pub utilisation: Vec<f64>,
    pub queue_pkts: Vec<u32>,
    pub queue_bytes: Vec<u64>,
    pub drops: Vec<u64>,
    pub losses: Vec<u64>,
    pub marks: Vec<u64>,
    pub arrivals: Vec<u64>,
    /// Each port's router module's own metrics (`RouterModule::metrics`: a fair-share rate,
    /// operation counts), one column per name; missing where a port's module does not report it.
    pub named: NamedColumns,
}

/// A borrowed column of a series, as engines hand it on (to Python, to files).
#[derive(Clone, Copy, Debug)]
pub enum Column<'a> {
    F64(&'a [f64]),
    U64(&'a [u64]),
    U32(&'a [u32]),
    U16(&'a [u16]),
}

/// When a `links` row is taken: the sample time in seconds, the port's own clock (settled
/// to it; the live router's may be a little past the sample time), and the seconds the row
/// covers since the previous one.
#[derive(Clone, Copy, Debug)]
pub struct RowTime {
    pub t_s: f64,
    pub now: Time,
    pub dt_s: f64,
}

impl PortSeries {
    /// Every column by its results name, in table order: the one list of the `links` table.
    pub fn columns(&self) -> [(&'static str, Column<'_>); 12] {
        [
            ("time_s", Column::F64(&self.time_s)),
            ("port", Column::U32(&self.port)),
            ("tx_bytes", Column::U64(&self.tx_bytes)),
            ("tx_pkts", Column::U64(&self.tx_pkts)),
            ("throughput_bps", Column::F64(&self.throughput_bps)),
            ("utilisation", Column::F64(&self.utilisation)),
            ("queue_pkts", Column::U32(&self.queue_pkts)),
            ("queue_bytes", Column::U64(&self.queue_bytes)),
            ("drops", Column::U64(&self.drops)),
            ("losses", Column::U64(&self.losses)),
            ("marks", Column::U64(&self.marks)),
            ("arrivals", Column::U64(&self.arrivals)),
        ]
    }
}

impl PortSeries {
    /// The standard columns and the router module's metrics of port `index`'s row at `now`
    /// (`t_s` in seconds), covering the `dt_s` seconds since `prev`; the port must be settled
    /// to `now`. The row stays open for the caller's further metrics (a medium's) and its
    /// `named.end_row()`. Returns the port's mark for the next row. The one row computation of
    /// both engines' `links` table.
    pub fn push_port(&mut self, at: RowTime, index: u32, p: &Port, pkts: &Packets, prev: PortMark) -> PortMark {
        let RowTime { t_s, now, dt_s } = at;
        let c = p.c;
        let PortMark { c: pv, unsent: pu } = prev;
        let unsent = p.unsent(now, pkts);
        // Bytes on the wire in the interval: those that started in it, plus what was still to
        // go of the packet on the wire at the previous sample, less what is still to go now.
        let tx_bytes = c.tx_bytes - pv.tx_bytes;
        let wire = tx_bytes as f64 + unsent_bytes(pu, None) - unsent_bytes(unsent, None);
        self.time_s.push(t_s);
        self.port.push(index);
        self.tx_bytes.push(tx_bytes);
        self.tx_pkts.push(c.tx_pkts - pv.tx_pkts);
        let thr = if dt_s > 0.0 { wire * 8.0 / dt_s } else { 0.0 };
        self.throughput_bps.push(thr);
        self.utilisation.push(thr / p.capacity_bps());
        let (qp, qb) = p.queue();
        self.queue_pkts.push(qp);
        self.queue_bytes.push(qb);
        self.drops.push(c.drops - pv.drops);
        self.losses.push(c.losses - pv.losses);
        self.marks.push(c.marks - pv.marks);
        self.arrivals.push(c.arrivals - pv.arrivals);
        p.module().metrics(&mut self.named);
        PortMark { c, unsent }
    }
}

impl FlowSeries {
    /// Every standard column by its results name, in table order: the one list of the `flows`
    /// table (each protocol's own metrics follow in `named`).
    pub fn columns(&self) -> [(&'static str, Column<'_>); 10] {
        [
            ("time_s", Column::F64(&self.time_s)),
            ("flow", Column::U32(&self.flow)),
            ("goodput_bps", Column::F64(&self.goodput_bps)),
            ("cwnd_bytes", Column::F64(&self.cwnd_bytes)),
            ("rate_bps", Column::F64(&self.rate_bps)),
            ("srtt_s", Column::F64(&self.srtt_s)),
            ("acked_bytes", Column::U64(&self.acked_bytes)),
            ("retransmits", Column::U64(&self.retransmits)),
            ("timeouts", Column::U64(&self.timeouts)),
            ("spurious_timeouts", Column::U64(&self.spurious_timeouts)),
        ]
    }
}

/// A port as of the previous sample: its counters and the part of the packet then being
/// serialised that was still to go (group, bytes), from which an interval's wire bytes follow.
#[derive(Clone, Copy, Debug, Default)]
pub struct PortMark {
    pub c: PortCounters,
    pub unsent: Option<(u16, f64)>,
}

/// Bytes of a [`PortMark::unsent`] part that count for flow group `group` (any group for `None`).
pub fn unsent_bytes(unsent: Option<(u16, f64)>, group: Option<u16>) -> f64 {
    match (unsent, group) {
        (Some((_, b)), None) => b,
        (Some((g, b)), Some(k)) if g == k => b,
        _ => 0.0,
    }
}

/// One row per (sample, running flow), plus one at the first sample after a finite flow
/// completes with what it delivered since its previous row: every delivered byte is in a row.
#[derive(Default, Debug, Clone, PartialEq)]
pub struct FlowSeries {
    pub time_s: Vec<f64>,
    pub flow: Vec<u32>,
    /// Payload bytes delivered in order in the interval since the previous sample × 8 / its length.
    pub goodput_bps: Vec<f64>,
    pub cwnd_bytes: Vec<f64>,
    pub rate_bps: Vec<f64>,
    pub srtt_s: Vec<f64>,
    pub acked_bytes: Vec<u64>,
    /// Cumulative retransmitted data packets and retransmission timeouts.
    pub retransmits: Vec<u64>,
    pub timeouts: Vec<u64>,
    /// Cumulative timeouts found spurious and undone (RFC 3522), a subset of `timeouts`.
    pub spurious_timeouts: Vec<u64>,
    /// Each sender's own metrics (`Endpoint::metrics`), one column per name, in order of
    /// first report; missing where a flow's protocol does not report the name.
    pub named: NamedColumns,
}

impl FlowSeries {
    /// A row for `flow` at `t_s`: `delivered` payload bytes over `dt_s` seconds, the rest from
    /// the sender (zeros without one).
    pub fn push(&mut self, t_s: f64, flow: u32, delivered: u64, dt_s: f64, sender: Option<&dyn Endpoint>) {
        let st = sender.map(|s| s.stats()).unwrap_or_default();
        self.time_s.push(t_s);
        self.flow.push(flow);
        self.goodput_bps.push(if dt_s > 0.0 { delivered as f64 * 8.0 / dt_s } else { 0.0 });
        self.cwnd_bytes.push(st.cwnd_bytes);
        self.rate_bps.push(st.rate_bps);
        self.srtt_s.push(st.srtt as f64 * 1e-9);
        self.acked_bytes.push(st.bytes);
        self.retransmits.push(st.retransmits);
        self.timeouts.push(st.timeouts);
        self.spurious_timeouts.push(st.spurious_timeouts);
        if let Some(snd) = sender {
            snd.metrics(&mut self.named);
        }
        self.named.end_row();
    }
}

/// The values of one named metric column.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnValues {
    Count(Vec<u64>),
    Gauge(Vec<f64>),
    Flag(Vec<bool>),
}

impl ColumnValues {
    fn len(&self) -> usize {
        match self {
            ColumnValues::Count(v) => v.len(),
            ColumnValues::Gauge(v) => v.len(),
            ColumnValues::Flag(v) => v.len(),
        }
    }

    /// Append `v`, converted to this column's kind (the kind of the first report of the name).
    fn push(&mut self, v: MetricValue) {
        let (n, x, b) = match v {
            MetricValue::Count(n) => (n, n as f64, n != 0),
            MetricValue::Gauge(x) => (x as u64, x, x != 0.0),
            MetricValue::Flag(b) => (b as u64, b as u8 as f64, b),
        };
        match self {
            ColumnValues::Count(c) => c.push(n),
            ColumnValues::Gauge(c) => c.push(x),
            ColumnValues::Flag(c) => c.push(b),
        }
    }

    fn push_missing(&mut self) {
        match self {
            ColumnValues::Count(c) => c.push(0),
            ColumnValues::Gauge(c) => c.push(f64::NAN),
            ColumnValues::Flag(c) => c.push(false),
        }
    }
}

/// One named metric: its unit, values and which rows have one.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedColumn {
    pub name: &'static str,
    pub unit: &'static str,
    pub values: ColumnValues,
    pub present: Vec<bool>,
}

/// Named metric columns aligned with a series' rows.
#[derive(Default, Debug, Clone, PartialEq)]
pub struct NamedColumns {
    pub columns: Vec<NamedColumn>,
    /// Rows so far (the series' length once a row is closed).
    rows: usize,
}

impl NamedColumns {
    /// The column named `name`, if any flow reported it.
    pub fn get(&self, name: &str) -> Option<&NamedColumn> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The values of a count column named `name` (`None`: no such name, or not counts).
    pub fn counts(&self, name: &str) -> Option<&[u64]> {
        match &self.get(name)?.values {
            ColumnValues::Count(v) => Some(v),
            _ => None,
        }
    }

    /// The values of a flag column named `name` (`None`: no such name, or not flags).
    pub fn flags(&self, name: &str) -> Option<&[bool]> {
        match &self.get(name)?.values {
            ColumnValues::Flag(v) => Some(v),
            _ => None,
        }
    }

    /// Close the current row: every column without a value for it gets a missing one.
    pub fn end_row(&mut self) {
        self.rows += 1;
        for c in &mut self.columns {
            if c.values.len() < self.rows {
                c.values.push_missing();
                c.present.push(false);
            }
        }
    }
}

impl MetricSink for NamedColumns {
    /// A value for the current row. A name first seen now gets a column whose earlier rows
    /// are missing.
    fn put(&mut self, name: &'static str, unit: &'static str, value: MetricValue) {
        let i = match self.columns.iter().position(|c| c.name == name) {
            Some(i) => i,
            None => {
                let mut values = match value {
                    MetricValue::Count(_) => ColumnValues::Count(Vec::new()),
                    MetricValue::Gauge(_) => ColumnValues::Gauge(Vec::new()),
                    MetricValue::Flag(_) => ColumnValues::Flag(Vec::new()),
                };
                for _ in 0..self.rows {
                    values.push_missing();
                }
                self.columns.push(NamedColumn { name, unit, values, present: vec![false; self.rows] });
                self.columns.len() - 1
            }
        };
        let c = &mut self.columns[i];
        if c.values.len() == self.rows {
            c.values.push(value);
            c.present.push(true);
        }
    }
}

/// One row per (sample, recorded port, flow group that has crossed the port): the bytes each
/// aggregate sent and its share of the capacity (docs/PROTOCOLS.md §15 "link share").
#[derive(Default, Debug, Clone, PartialEq)]
pub struct GroupSeries {
    pub time_s: Vec<f64>,
    pub port: Vec<u32>,
    pub group: Vec<u16>,
    pub tx_bytes: Vec<u64>,
    pub share: Vec<f64>,
}

/// One row per finished finite flow.
#[derive(Default, Debug, Clone, PartialEq)]
pub struct Completions {
    pub flow: Vec<u32>,
    pub size_bytes: Vec<u64>,
    pub start_s: Vec<f64>,
    pub end_s: Vec<f64>,
    pub fct_s: Vec<f64>,
}

impl Completions {
    pub fn push(&mut self, flow: u32, size: u64, start: Time, end: Time) {
        self.flow.push(flow);
        self.size_bytes.push(size);
        self.start_s.push(start as f64 * 1e-9);
        self.end_s.push(end as f64 * 1e-9);
        self.fct_s.push((end - start) as f64 * 1e-9);
    }
}

/// Packet accounting for the conservation law: sent = delivered + dropped + lost + in flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conservation {
    /// Packets handed to the network by endpoints.
    pub sent: u64,
    /// Packets that reached the endpoint they were addressed to.
    pub delivered: u64,
    /// Dropped by a buffer or a router module.
    pub dropped: u64,
    /// Lost on a wire by a loss model.
    pub lost: u64,
    /// Held by ports right now (waiting or propagating).
    pub in_flight: u64,
}

impl Conservation {
    pub fn holds(&self) -> bool {
        self.sent == self.delivered + self.dropped + self.lost + self.in_flight
    }
}

/// Jain's fairness index (docs/PROTOCOLS.md §15): (Σx)² / (n Σx²); 1 for an empty set.
pub fn jain(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if n == 0.0 || s2 == 0.0 {
        1.0
    } else {
        s * s / (n * s2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_bounds() {
        assert!((jain(&[1.0, 1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        // (1+2+3)^2 / (3 * 14) = 36/42
        assert!((jain(&[1.0, 2.0, 3.0]) - 36.0 / 42.0).abs() < 1e-12);
    }
}
