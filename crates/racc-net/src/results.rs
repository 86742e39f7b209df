//! A live run's results in the shape of the simulator's (`racc._core.Simulation.results()`):
//! the `links`, `flows`, `group_links`, `completions`, `flow_info` and `port_info` columns and
//! the engine summary, as one JSON document that `racc live run` turns into the same results
//! folder as `racc run` (Parquet tables, `summary.json`, plots, report). Columns are JSON lists;
//! a named metric's missing values (a flow whose protocol does not report it) are `null`.
//!
//! The per-flow rows are built with the simulator's own [`FlowSeries::push`] from the ends'
//! snapshots at each sample time (the sender's counters and metrics, the receiver's delivered
//! bytes), so the columns are the simulator's, computed the same way.

use crate::host::Snapshot;
use crate::report::{quantile, LiveReport};
use crate::schedule::{sample_count, sample_time};
use racc_proto::endpoint::{Endpoint, EndpointStats};
use racc_proto::metrics::MetricSink;
use racc_proto::packet::Packet;
use racc_proto::time::Time;
use racc_sim::metrics::{Column, ColumnValues, FlowSeries, NamedColumns};
use racc_sim::Spec;
use serde_json::{json, Map, Value};

/// A sender as it was at one sample: what [`FlowSeries::push`] reads of an endpoint.
struct Replay<'a>(&'a Snapshot);

impl Endpoint for Replay<'_> {
    fn start(&mut self, _: Time) {}
    fn on_packet(&mut self, _: Time, _: &Packet) {}
    fn poll_transmit(&mut self, _: Time) -> Option<Packet> {
        None
    }
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn on_timeout(&mut self, _: Time) {}
    fn stats(&self) -> EndpointStats {
        self.0.stats
    }
    fn metrics(&self, out: &mut dyn MetricSink) {
        for &(name, unit, v) in &self.0.metrics.0 {
            out.put(name, unit, v);
        }
    }
}

fn column(c: Column<'_>) -> Value {
    match c {
        Column::F64(v) => json!(v),
        Column::U64(v) => json!(v),
        Column::U32(v) => json!(v),
        Column::U16(v) => json!(v),
    }
}

/// Named metric columns: values, `null` where a row has none; and their units.
fn named(cols: &NamedColumns, table: &mut Map<String, Value>, units: &mut Map<String, Value>) {
    for c in &cols.columns {
        let vals: Vec<Value> = match &c.values {
            ColumnValues::Count(v) => {
                v.iter().zip(&c.present).map(|(x, &p)| if p { json!(x) } else { Value::Null }).collect()
            }
            ColumnValues::Gauge(v) => {
                v.iter().zip(&c.present).map(|(x, &p)| if p { json!(x) } else { Value::Null }).collect()
            }
            ColumnValues::Flag(v) => {
                v.iter().zip(&c.present).map(|(x, &p)| if p { json!(x) } else { Value::Null }).collect()
            }
        };
        table.insert(c.name.into(), Value::Array(vals));
        units.insert(c.name.into(), json!(c.unit));
    }
}

/// The flows table: per sample, a row for every flow whose sender existed at it.
fn flow_series(spec: &Spec, rep: &LiveReport) -> FlowSeries {
    let mut fs = FlowSeries::default();
    let n = sample_count(spec);
    // Per flow, where its ends' snapshot lists have got to, and the receiver's bytes at the
    // previous row.
    let mut at = vec![(0usize, 0usize); rep.flows.len()];
    let mut last_bytes = vec![0u64; rep.flows.len()];
    let mut rx_bytes = vec![0u64; rep.flows.len()];
    for k in 1..=n {
        let (t, t0) = (sample_time(spec, k), sample_time(spec, k - 1));
        let dt = (t - t0) as f64 * 1e-9;
        for (f, fr) in rep.flows.iter().enumerate() {
            let (si, ri) = &mut at[f];
            while *ri < fr.receiver_samples.len() && fr.receiver_samples[*ri].k <= k {
                rx_bytes[f] = fr.receiver_samples[*ri].stats.bytes;
                *ri += 1;
            }
            if *si < fr.sender_samples.len() && fr.sender_samples[*si].k == k {
                let delta = rx_bytes[f].saturating_sub(last_bytes[f]);
                last_bytes[f] = rx_bytes[f];
                fs.push(t as f64 * 1e-9, f as u32, delta, dt, Some(&Replay(&fr.sender_samples[*si])));
                *si += 1;
            }
        }
    }
    fs
}

/// The whole document.
pub fn to_json(spec: &Spec, rep: &LiveReport) -> Value {
    let mut link_units = Map::new();
    let mut links = Map::new();
    for (name, c) in rep.port_series.columns() {
        links.insert(name.into(), column(c));
    }
    named(&rep.port_series.named, &mut links, &mut link_units);

    let fs = flow_series(spec, rep);
    let mut flows = Map::new();
    for (name, c) in fs.columns() {
        flows.insert(name.into(), column(c));
    }
    let mut flow_units = Map::new();
    named(&fs.named, &mut flows, &mut flow_units);

    let done: Vec<_> = rep.flows.iter().filter_map(|f| Some((f, f.done_s?))).collect();
    let completions = json!({
        "flow": done.iter().map(|(f, _)| f.flow).collect::<Vec<_>>(),
        "size_bytes": done.iter().map(|(f, _)| spec.flows[f.flow].size_bytes.unwrap_or(0)).collect::<Vec<_>>(),
        "start_s": done.iter().map(|(f, _)| f.start_s).collect::<Vec<_>>(),
        "end_s": done.iter().map(|(_, e)| *e).collect::<Vec<_>>(),
        "fct_s": done.iter().map(|(f, e)| e - f.start_s).collect::<Vec<_>>(),
    });
    let flow_info = json!({
        "flow": (0..spec.flows.len()).collect::<Vec<_>>(),
        "protocol": spec.flows.iter().map(|f| f.protocol.as_str()).collect::<Vec<_>>(),
        "src": spec.flows.iter().map(|f| spec.nodes[f.src].name.as_str()).collect::<Vec<_>>(),
        "dst": spec.flows.iter().map(|f| spec.nodes[f.dst].name.as_str()).collect::<Vec<_>>(),
        "group": spec.flows.iter().map(|f| f.group.as_str()).collect::<Vec<_>>(),
        "start_s": spec.flows.iter().map(|f| f.start as f64 * 1e-9).collect::<Vec<_>>(),
        "stop_s": spec.flows.iter().map(|f| f.stop.map(|s| s as f64 * 1e-9)).collect::<Vec<_>>(),
        "size_bytes": spec.flows.iter().map(|f| f.size_bytes.unwrap_or(0)).collect::<Vec<_>>(),
        "rtt_prop_s": spec.flows.iter().map(|f| spec.propagation_rtt(f) as f64 * 1e-9).collect::<Vec<_>>(),
    });
    let port_info = json!({
        "port": (0..rep.ports.len()).collect::<Vec<_>>(),
        "name": rep.ports.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        "capacity_bps": rep.ports.iter().map(|p| p.capacity_bps).collect::<Vec<_>>(),
        "delay_s": rep.ports.iter().map(|p| p.delay_s).collect::<Vec<_>>(),
        "router": rep.ports.iter().map(|p| p.router).collect::<Vec<_>>(),
        "limit_pkts": rep.ports.iter().map(|p| p.limit_pkts).collect::<Vec<_>>(),
        "limit_bytes": rep.ports.iter().map(|p| p.limit_bytes).collect::<Vec<_>>(),
    });
    let ports: Vec<Value> = rep
        .ports
        .iter()
        .enumerate()
        .map(|(i, p)| {
            json!({
                "port": i, "name": p.name, "router": p.router, "capacity_bps": p.capacity_bps,
                "utilisation": p.utilisation, "mean_queue_pkts": p.mean_queue_pkts,
                "mean_queue_bytes": p.mean_queue_bytes, "max_queue_pkts": p.max_queue_pkts,
                "drop_rate": if p.arrivals > 0 { p.drops as f64 / p.arrivals as f64 } else { 0.0 },
                "arrivals": p.arrivals, "tx_pkts": p.tx_pkts, "tx_bytes": p.tx_bytes,
                "drops": p.drops, "losses": p.losses, "marks": p.marks,
            })
        })
        .collect();
    let r = &rep.router;
    let sent: u64 = rep.flows.iter().map(|f| f.tx_pkts).sum();
    let dropped: u64 = rep.ports.iter().map(|p| p.drops).sum();
    let lost: u64 = rep.ports.iter().map(|p| p.losses).sum();
    let live_flows: Vec<Value> = rep
        .flows
        .iter()
        .map(|f| {
            json!({
                "flow": f.flow, "goodput_bps": f.goodput_bps, "rx_bytes": f.rx_bytes,
                "owd_p50_s": quantile(&f.owd_ns, 0.5) * 1e-9, "owd_p99_s": quantile(&f.owd_ns, 0.99) * 1e-9,
                "host_drops": f.tx_errors,
            })
        })
        .collect();
    let router = json!({
        "rx_pkts": r.rx_pkts, "delivered": r.delivered, "foreign": r.foreign(),
        "not_ipv4": r.not_ipv4, "not_udp": r.not_udp, "not_racc": r.not_racc,
        "bad_version": r.bad_version, "misrouted": r.misrouted,
        "forged": r.forged, "replayed": r.replayed,
        "write_errors": r.write_errors + r.write_back_errors,
        "cpu_ns_per_pkt": if r.rx_pkts > 0 { r.cpu_ns as f64 / r.rx_pkts as f64 } else { 0.0 },
        "lateness_p50_s": quantile(&r.lateness_ns, 0.5) * 1e-9,
        "lateness_p99_s": quantile(&r.lateness_ns, 0.99) * 1e-9,
        // A stall of the router shows here (the p99 hides one of tens of ms).
        "lateness_max_s": r.lateness_ns.iter().copied().max().unwrap_or(0) as f64 * 1e-9,
        "runnable_not_running_s": r.run_delay_ns as f64 * 1e-9,
        // Due-time sends (`LoopConfig::due_sends`): packets stamped at their carried send time.
        "stamped_sent": r.stamped_sent,
        "stamp_back_mean_s": if r.stamped_sent > 0 { r.stamp_back_ns as f64 * 1e-9 / r.stamped_sent as f64 } else { 0.0 },
    });
    let summary = json!({
        "scenario": spec.name,
        "seed": spec.seed,
        // False for a run broken off by a signal (issue 37 item 2): `sim_time_s` is then the
        // time it reached, short of the scenario's duration.
        "complete": rep.stopped.is_none(),
        "sim_time_s": rep.duration as f64 * 1e-9,
        "events": 0,
        "packet_hops": rep.ports.iter().map(|p| p.tx_pkts).sum::<u64>(),
        "sent_pkts": sent,
        "delivered_pkts": r.delivered,
        "dropped_pkts": dropped,
        "lost_pkts": lost,
        "in_flight_pkts": sent.saturating_sub(r.delivered + dropped + lost),
        "goodput_bytes": rep.flows.iter().map(|f| f.rx_bytes).sum::<u64>(),
        "sample_interval_s": spec.sample_interval as f64 * 1e-9,
        "ports": ports,
        "flow_metric_units": flow_units,
        "link_metric_units": link_units,
        "live": {
            "wall_s": rep.duration as f64 * 1e-9,
            "reached_s": rep.duration as f64 * 1e-9,
            "duration_s": spec.duration as f64 * 1e-9,
            "stopped_by": rep.stopped,
            "swept": rep.swept,
            "flows": live_flows,
            // Issue 37 item 8: packets not tied to the run, or replayed, dropped before any port
            // saw them (router and hosts).
            "forged": rep.forged(),
            "replayed": rep.replayed(),
            "router": router,
        },
    });
    json!({
        "links": links,
        "flows": flows,
        "group_links": {},
        "completions": completions,
        "flow_info": flow_info,
        "port_info": port_info,
        "summary": summary,
    })
}
