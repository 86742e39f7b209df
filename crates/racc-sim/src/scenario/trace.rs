//! `[[traffic]] kind = "trace"`: a given arrival list, one flow per row (start, size, and
//! optionally src, dst and protocol overriding the entry's), so that racc replays the very list
//! another simulator or a measurement used. The front end reads the entry's `file` (CSV or
//! Parquet, relative to the scenario file) into `arrivals` columns; every row is checked here,
//! before anything runs, and a bad one is refused with the file, the row, the column and the
//! reason.

use super::error::ScenarioError;
use super::flows::{endpoints, FlowBuilder};
use super::host_options::{host_opts, HostOpts};
use super::limits::{self, MAX_BYTES, MAX_TIME_NS};
use super::raw::{RawArrivals, RawTraffic};
use racc_proto::time::NS_PER_SEC;
use std::collections::HashMap;

impl FlowBuilder<'_> {
    pub(super) fn trace_generator(&mut self, ti: usize, t: &RawTraffic) -> Result<(), ScenarioError> {
        let (cx, packet_size, duration) = (self.cx, self.packet_size, self.duration);
        let key = format!("traffic[{ti}]");
        for (k, present) in [
            ("rate", t.rate.is_some()),
            ("size", t.size.is_some()),
            ("start", t.start.is_some()),
            ("stop", t.stop.is_some()),
            ("max_flows", t.max_flows.is_some()),
            ("sources", t.sources.is_some()),
            ("index_offset", t.index_offset.is_some()),
            ("index_stride", t.index_stride.is_some()),
            ("think", t.think.is_some()),
        ] {
            if present {
                return Err(cx.err(
                    format!("{key}.{k}"),
                    "not a key of the 'trace' kind: its flows are the rows of `file` (start, size, and optionally \
                     src, dst, protocol)",
                ));
            }
        }
        let file = match &t.file {
            None => return Err(cx.err(format!("{key}.file"), "missing: the arrival list (a CSV or Parquet file)")),
            Some(serde_json::Value::String(f)) => f.clone(),
            Some(_) => return Err(cx.err(format!("{key}.file"), "must be a file name (CSV or Parquet)")),
        };
        let a =
            t.arrivals.as_ref().ok_or_else(|| {
                cx.err(
                format!("{key}.file"),
                format!("{file}: not read: a trace file is read by the front end (`racc run`, `racc.run`), which hands \
                         its rows over as `arrivals`"),
            )
            })?;
        let rows = Rows::new(&file, a);
        let n = a.start.len();
        for (col, len) in [
            ("size", Some(a.size.len())),
            ("src", a.src.as_ref().map(Vec::len)),
            ("dst", a.dst.as_ref().map(Vec::len)),
            ("protocol", a.protocol.as_ref().map(Vec::len)),
        ] {
            if let Some(len) = len.filter(|&l| l != n) {
                return Err(cx.err(
                    format!("{key}.arrivals.{col}"),
                    format!("has {len} values, but `start` has {n}: every column needs one per row"),
                ));
            }
        }
        if n as u64 > limits::flows_left(&self.limits, self.used()) {
            let what = format!("{file}: {n} rows here after {} flows before", self.used());
            return Err(limits::too_many_flows(cx, &format!("{key}.file"), &self.limits, what));
        }
        let name = t.name.clone().unwrap_or_else(|| format!("traffic{ti}"));
        // The entry's transport options, once per protocol its rows name (a row's protocol
        // takes the entry's params and options, checked for that protocol).
        let mut opts: HashMap<&str, HostOpts> = HashMap::new();
        opts.insert(&t.protocol, host_opts(cx, &key, &t.protocol, &t.host_options(), self.handshake, packet_size)?);
        let row_err = |i: usize, col: &str, reason: String| cx.err(format!("{key}.file"), rows.at(i, col, &reason));
        for i in 0..n {
            let s = a.start[i];
            if !s.is_finite() {
                return Err(row_err(i, "start", format!("must be a finite number of seconds, got {s}")));
            }
            if s < 0.0 {
                return Err(row_err(
                    i,
                    "start",
                    format!("must be >= 0 s (seconds from the start of the run), got {s}"),
                ));
            }
            let ns = s * NS_PER_SEC as f64;
            if s > 0.0 && ns < 1.0 {
                return Err(row_err(i, "start", format!("{s} s is below the clock's resolution of 1 ns")));
            }
            if ns > MAX_TIME_NS as f64 || ns.round() as u64 >= duration {
                return Err(row_err(
                    i,
                    "start",
                    format!("{s} s is at or after the end of the run ({} s)", duration as f64 / NS_PER_SEC as f64),
                ));
            }
            let start = ns.round() as u64;
            let b = a.size[i];
            if !(b.is_finite() && b >= 1.0) {
                return Err(row_err(i, "size", format!("must be at least 1 byte, got {b}")));
            }
            if b.fract() != 0.0 {
                return Err(row_err(i, "size", format!("must be a whole number of bytes, got {b}")));
            }
            if b > MAX_BYTES {
                return Err(row_err(
                    i,
                    "size",
                    format!("{b} B is more than a flow can send in a run (2^53 bytes, the largest byte count)"),
                ));
            }
            let (src, dst) = (row_name(&a.src, i, &t.src), row_name(&a.dst, i, &t.dst));
            let ends = endpoints(cx, &key, src, dst, self.names, self.nodes, self.routes).map_err(|e| {
                // Name the column the row's value came from (the entry's own `src`/`dst`
                // keys are named as they are when no column overrides them).
                let col = e.key.rsplit('.').next().unwrap_or("").to_string();
                if (col == "src" && a.src.is_some()) || (col == "dst" && (a.dst.is_some() || a.src.is_some())) {
                    cx.err(format!("{key}.file"), rows.at(i, &col, &e.reason))
                } else {
                    e
                }
            })?;
            let protocol = row_name(&a.protocol, i, &t.protocol);
            if !opts.contains_key(protocol) {
                let o = host_opts(cx, &key, protocol, &t.host_options(), self.handshake, packet_size).map_err(|e| {
                    let what = if e.key.ends_with(".protocol") {
                        e.reason
                    } else {
                        format!("the entry's `{}` does not fit this row's protocol: {}", e.key, e.reason)
                    };
                    cx.err(format!("{key}.file"), rows.at(i, "protocol", &what))
                })?;
                opts.insert(protocol, o);
            }
            self.out.push(opts[protocol].flow(&name, ends, start, None, Some(b as u64)));
        }
        Ok(())
    }
}

/// Row `i`'s value of an optional text column, or the entry's.
fn row_name<'a>(col: &'a Option<Vec<String>>, i: usize, entry: &'a str) -> &'a str {
    col.as_ref().map_or(entry, |c| c[i].as_str())
}

/// How rows are named in messages: a CSV file's line (its header is line 1), else the row.
/// An htsim connection matrix's rows are named by their connection's number ("connection").
struct Rows<'a> {
    file: &'a str,
    csv_lines: bool,
    connections: bool,
}

impl<'a> Rows<'a> {
    fn new(file: &'a str, a: &RawArrivals) -> Rows<'a> {
        Rows {
            file,
            csv_lines: a.rows.as_deref() == Some("line"),
            connections: a.rows.as_deref() == Some("connection"),
        }
    }

    fn at(&self, i: usize, col: &str, reason: &str) -> String {
        if self.connections {
            format!("{}: connection {}, `{col}`: {reason}", self.file, i + 1)
        } else if self.csv_lines {
            format!("{}: line {}, column `{col}`: {reason}", self.file, i + 2)
        } else {
            format!("{}: row {}, column `{col}`: {reason}", self.file, i + 1)
        }
    }
}
