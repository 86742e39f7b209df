//! `racc._core`: thin PyO3 bindings. Conversion only — scenario checking, the engine and the
//! protocols live in racc-sim and racc-proto.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use racc_proto::registry::{self, Regulation};
use racc_sim::metrics::{Column as SeriesColumn, ColumnValues, NamedColumn};
use racc_sim::scenario::{self, ScenarioError as RsScenarioError};
use racc_sim::{bench as std_bench, Simulator};
use std::sync::{Arc, Mutex};

create_exception!(_core, ScenarioError, PyException, "A scenario was refused: names the file, the key and the reason.");

fn scenario_err(e: RsScenarioError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

/// A numeric column handed to Python as `(numpy dtype, little-endian bytes)`: a million rows
/// cost 8 MB instead of the ~32 MB of a list of Python numbers.
trait Column: Copy {
    const DTYPE: &'static str;
    fn put(self, out: &mut Vec<u8>);
}

impl Column for f64 {
    const DTYPE: &'static str = "<f8";
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl Column for u64 {
    const DTYPE: &'static str = "<u8";
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl Column for u32 {
    const DTYPE: &'static str = "<u4";
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl Column for bool {
    const DTYPE: &'static str = "|b1";
    fn put(self, out: &mut Vec<u8>) {
        out.push(self as u8);
    }
}

impl Column for u16 {
    const DTYPE: &'static str = "<u2";
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

/// One of the engine's series columns, whatever its type.
fn any_col<'py>(py: Python<'py>, c: SeriesColumn<'_>) -> (&'static str, Bound<'py, PyBytes>) {
    match c {
        SeriesColumn::F64(v) => col(py, v),
        SeriesColumn::U64(v) => col(py, v),
        SeriesColumn::U32(v) => col(py, v),
        SeriesColumn::U16(v) => col(py, v),
    }
}

/// A named metric column: `(dtype, values, presence)`, presence one byte per row (0 = the
/// flow's protocol does not report this metric: a null in the table).
fn named_col<'py>(py: Python<'py>, c: &NamedColumn) -> (&'static str, Bound<'py, PyBytes>, Bound<'py, PyBytes>) {
    let (dtype, values) = match &c.values {
        ColumnValues::Count(v) => col(py, v),
        ColumnValues::Gauge(v) => col(py, v),
        ColumnValues::Flag(v) => col(py, v),
    };
    (dtype, values, col(py, &c.present).1)
}

fn col<'py, T: Column>(py: Python<'py>, v: &[T]) -> (&'static str, Bound<'py, PyBytes>) {
    let mut out = Vec::with_capacity(std::mem::size_of_val(v));
    for &x in v {
        x.put(&mut out);
    }
    (T::DTYPE, PyBytes::new(py, &out))
}

/// A scenario from JSON text and its trace entries' rows, `{traffic index: {"start": f64 bytes,
/// "size": f64 bytes, "src"/"dst"/"protocol": [str] (optional), "rows": "line" | "row"}}`:
/// numbers cross as little-endian buffers, not as a million JSON numbers.
fn from_json(text: &str, source: &str, arrivals: Option<&Bound<'_, PyDict>>) -> PyResult<scenario::Spec> {
    let mut parts = Vec::new();
    for (k, v) in arrivals.into_iter().flat_map(|d| d.iter()) {
        let i: usize = k.extract()?;
        let d = v.cast::<PyDict>()?;
        let floats = |name: &str| -> PyResult<Vec<f64>> {
            let b = d.get_item(name)?.ok_or_else(|| PyException::new_err(format!("arrivals: no `{name}`")))?;
            let b = b.cast::<PyBytes>()?;
            Ok(b.as_bytes().chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
        };
        let names = |name: &str| -> PyResult<Option<Vec<String>>> {
            d.get_item(name)?.map(|l| l.extract::<Vec<String>>()).transpose()
        };
        let a = scenario::raw::RawArrivals {
            start: floats("start")?,
            size: floats("size")?,
            src: names("src")?,
            dst: names("dst")?,
            protocol: names("protocol")?,
            rows: d.get_item("rows")?.map(|r| r.extract::<String>()).transpose()?,
        };
        parts.push((i, a));
    }
    scenario::from_json_parts(text, source, registry::Registry::standard(), parts).map_err(scenario_err)
}

/// A dictionary-encoded column as it crosses to Python.
type CatColumn<'py, 'a> = (&'static str, (&'static str, Bound<'py, PyBytes>), Vec<&'a str>);

/// A text column dictionary-encoded: each distinct value once, a `u32` code per row.
#[derive(Default)]
struct Dict<'a> {
    names: Vec<&'a str>,
    index: std::collections::HashMap<&'a str, u32>,
    codes: Vec<u32>,
}

impl<'a> Dict<'a> {
    fn push(&mut self, v: &'a str) {
        let next = self.names.len() as u32;
        let c = *self.index.entry(v).or_insert_with(|| {
            self.names.push(v);
            next
        });
        self.codes.push(c);
    }

    /// `("cat", (dtype, codes), names)`, which Python turns into a categorical column.
    fn column<'py>(&self, py: Python<'py>) -> CatColumn<'py, 'a> {
        ("cat", col(py, &self.codes), self.names.clone())
    }
}

/// Parse and check a scenario (JSON text); return the resolved scenario as JSON text, one
/// top-level key per line and each element of a top-level list on its own line (the layout of
/// `scenario.resolved.json`, so Python can write it without parsing it).
#[pyfunction]
#[pyo3(signature = (json_text, source, arrivals = None))]
fn validate(json_text: &str, source: &str, arrivals: Option<&Bound<'_, PyDict>>) -> PyResult<String> {
    resolved_lines(&from_json(json_text, source, arrivals)?)
}

/// Parse and check a scenario (JSON text), refusing it as `validate` does; return only its
/// simulated duration in seconds. For callers that need the check and the run's length but not
/// the resolved text, which for a long flow list is hundreds of MB (sweeps, progress bars).
#[pyfunction]
#[pyo3(signature = (json_text, source, arrivals = None))]
fn check(json_text: &str, source: &str, arrivals: Option<&Bound<'_, PyDict>>) -> PyResult<f64> {
    Ok(from_json(json_text, source, arrivals)?.duration as f64 / 1e9)
}

/// The resolved scenario as JSON text in the layout `validate` describes.
fn resolved_lines(spec: &scenario::Spec) -> PyResult<String> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Lines::default());
    serde::Serialize::serialize(spec, &mut ser).map_err(|e| PyException::new_err(e.to_string()))?;
    out.push(b'\n');
    String::from_utf8(out).map_err(|e| PyException::new_err(e.to_string()))
}

/// A run's checked scenario, kept after the run without a copy: its JSON text (the layout of
/// `validate`) is made only when asked for, so that a run of a million listed flows neither
/// checks its scenario twice nor writes hundreds of MB of text before it starts (issue 21).
#[pyclass(frozen)]
struct ResolvedScenario {
    spec: Arc<scenario::Spec>,
}

#[pymethods]
impl ResolvedScenario {
    /// The resolved scenario as JSON text, one top-level key per line.
    fn json(&self) -> PyResult<String> {
        resolved_lines(&self.spec)
    }
}

/// serde_json's compact output with line breaks at the top two levels and Python's `", "` and
/// `": "` separators below them (`json.dumps`'s defaults).
#[derive(Default)]
struct Lines {
    depth: usize,
    /// The top-level list being written has no element yet.
    empty: bool,
}

impl serde_json::ser::Formatter for Lines {
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth += 1;
        self.empty |= self.depth == 2;
        w.write_all(b"[")
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth -= 1;
        if self.depth == 1 && !std::mem::take(&mut self.empty) {
            w.write_all(b"\n  ]")
        } else {
            w.write_all(b"]")
        }
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        if self.depth == 2 {
            self.empty = false;
        }
        match (self.depth, first) {
            (2, true) => w.write_all(b"\n    "),
            (2, false) => w.write_all(b",\n    "),
            (_, true) => Ok(()),
            _ => w.write_all(b", "),
        }
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth += 1;
        w.write_all(b"{")
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth -= 1;
        if self.depth == 0 {
            w.write_all(b"\n}")
        } else {
            w.write_all(b"}")
        }
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        match (self.depth, first) {
            (1, true) => w.write_all(b"\n  "),
            (1, false) => w.write_all(b",\n  "),
            (_, true) => Ok(()),
            _ => w.write_all(b", "),
        }
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
}

/// Events between two looks at the wall clock: about a millisecond of engine time.
const SLICE_EVENTS: u64 = 1 << 13;
/// Wall time between two looks at Ctrl-C during a run.
const SIGNAL_CHECK: std::time::Duration = std::time::Duration::from_millis(100);

/// One simulation run, advanced in steps so that Python can show progress.
#[pyclass]
struct Simulation {
    sim: Mutex<Simulator>,
}

#[pymethods]
impl Simulation {
    #[new]
    #[pyo3(signature = (json_text, source, arrivals = None))]
    fn new(json_text: &str, source: &str, arrivals: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let spec = from_json(json_text, source, arrivals)?;
        let sim = Simulator::new(spec).map_err(scenario_err)?;
        Ok(Simulation { sim: Mutex::new(sim) })
    }

    #[getter]
    fn now_s(&self) -> f64 {
        self.sim.lock().unwrap().now() as f64 * 1e-9
    }

    #[getter]
    fn end_s(&self) -> f64 {
        self.sim.lock().unwrap().end() as f64 * 1e-9
    }

    #[getter]
    fn events(&self) -> u64 {
        self.sim.lock().unwrap().events()
    }

    /// The run's estimated cost, as checked against `[limits]` before it was built
    /// (`racc_sim::scenario::estimate`): memory_bytes, events, rows, flows, ports, packets.
    fn estimate<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let e = scenario::estimate::Estimate::of(&self.sim.lock().unwrap().spec);
        let d = PyDict::new(py);
        d.set_item("memory_bytes", e.memory_bytes())?;
        d.set_item("events", e.events)?;
        d.set_item("rows", e.rows)?;
        d.set_item("flows", e.flows)?;
        d.set_item("ports", e.ports)?;
        d.set_item("packets", e.packets)?;
        Ok(d)
    }

    /// The checked scenario this run was built from (its JSON text made on demand).
    fn resolved(&self) -> ResolvedScenario {
        ResolvedScenario { spec: Arc::clone(&self.sim.lock().unwrap().spec) }
    }

    /// Advance to simulated time `t_s` (seconds) with the GIL released; True when complete.
    /// Ctrl-C (any pending Python signal) is looked at every [`SIGNAL_CHECK`] of wall time, in
    /// slices of [`SLICE_EVENTS`] events, and raises KeyboardInterrupt mid-run (issue 37).
    fn run_until(&self, py: Python<'_>, t_s: f64) -> PyResult<bool> {
        let t = racc_proto::time::secs(t_s.max(0.0));
        let mut guard = self.sim.lock().unwrap();
        let sim: &mut Simulator = &mut guard;
        loop {
            let reached = py.detach(|| {
                let deadline = std::time::Instant::now() + SIGNAL_CHECK;
                loop {
                    if sim.run_slice(t, SLICE_EVENTS) {
                        return true;
                    }
                    if std::time::Instant::now() >= deadline {
                        return false;
                    }
                }
            });
            py.check_signals()?;
            if reached {
                return Ok(sim.finished());
            }
        }
    }

    /// Capture the packets that start serialisation on the ports named `ports` (every port if
    /// None) into a pcapng file at `path`, written as the run goes. Call before running.
    #[pyo3(signature = (path, ports = None))]
    fn capture(&self, path: &str, ports: Option<Vec<String>>) -> PyResult<()> {
        let mut sim = self.sim.lock().unwrap();
        let idx = match ports {
            None => None,
            Some(names) => {
                let all: Vec<&str> = sim.ports().iter().map(|p| p.name.as_str()).collect();
                let mut v = Vec::with_capacity(names.len());
                for n in &names {
                    match all.iter().position(|a| a == n) {
                        Some(i) => v.push(i),
                        None => {
                            return Err(ScenarioError::new_err(format!(
                                "--pcap-port {n}: no such port (ports: {})",
                                all.join(", ")
                            )))
                        }
                    }
                }
                Some(v)
            }
        };
        sim.capture(std::path::Path::new(path), idx.as_deref()).map_err(|e| PyException::new_err(e.to_string()))
    }

    /// Packets written to the capture per port name, and the error that stopped it (or None).
    fn capture_status<'py>(&self, py: Python<'py>) -> PyResult<Option<(Bound<'py, PyDict>, Option<String>)>> {
        let sim = self.sim.lock().unwrap();
        let Some((counts, err)) = sim.capture_status() else { return Ok(None) };
        let d = PyDict::new(py);
        for (p, &n) in sim.ports().iter().zip(counts) {
            if n > 0 {
                d.set_item(p.name.as_str(), n)?;
            }
        }
        Ok(Some((d, err.map(str::to_string))))
    }

    /// Packet accounting: sent, delivered, dropped, lost, in_flight.
    fn conservation<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = self.sim.lock().unwrap().conservation();
        let d = PyDict::new(py);
        d.set_item("sent", c.sent)?;
        d.set_item("delivered", c.delivered)?;
        d.set_item("dropped", c.dropped)?;
        d.set_item("lost", c.lost)?;
        d.set_item("in_flight", c.in_flight)?;
        Ok(d)
    }

    /// Every recorded column and the engine's summary.
    fn results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut sim = self.sim.lock().unwrap();
        let out = PyDict::new(py);
        let ports = sim.port_summary();

        let ps = &sim.port_series;
        let links = PyDict::new(py);
        // No per-row port name: Python joins it from `port_info`.
        for (name, c) in ps.columns() {
            links.set_item(name, any_col(py, c))?;
        }
        // Each router module's own metrics, by the names and units it reports them under.
        let link_units = PyDict::new(py);
        for c in &ps.named.columns {
            links.set_item(c.name, named_col(py, c))?;
            link_units.set_item(c.name, c.unit)?;
        }
        out.set_item("links", links)?;

        let fs = &sim.flow_series;
        let flows = PyDict::new(py);
        for (name, c) in fs.columns() {
            flows.set_item(name, any_col(py, c))?;
        }
        // Each protocol's own metrics, by the names and units it reports them under.
        let units = PyDict::new(py);
        for c in &fs.named.columns {
            flows.set_item(c.name, named_col(py, c))?;
            units.set_item(c.name, c.unit)?;
        }
        out.set_item("flows", flows)?;

        // Per-aggregate link shares (`record.groups`): the group's index per row and its name
        // once (`group_names`), which Python makes a categorical column.
        let gs = &sim.group_series;
        let group_links = PyDict::new(py);
        group_links.set_item("time_s", col(py, &gs.time_s))?;
        group_links.set_item("port", col(py, &gs.port))?;
        group_links.set_item("group", col(py, &gs.group))?;
        out.set_item("group_names", sim.groups.iter().map(String::as_str).collect::<Vec<_>>())?;
        group_links.set_item("tx_bytes", col(py, &gs.tx_bytes))?;
        group_links.set_item("share", col(py, &gs.share))?;
        out.set_item("group_links", group_links)?;

        let c = &sim.completions;
        let comp = PyDict::new(py);
        comp.set_item("flow", col(py, &c.flow))?;
        comp.set_item("size_bytes", col(py, &c.size_bytes))?;
        comp.set_item("start_s", col(py, &c.start_s))?;
        comp.set_item("end_s", col(py, &c.end_s))?;
        comp.set_item("fct_s", col(py, &c.fct_s))?;
        out.set_item("completions", comp)?;

        let spec = &sim.spec;
        let fi = PyDict::new(py);
        // Listed flows, then those closed-loop sources made during the run. Text columns are
        // dictionary-encoded: each distinct name once, a code per flow (`cat`).
        let n = sim.flow_count();
        let (mut protocol, mut src, mut dst, mut group) =
            (Dict::default(), Dict::default(), Dict::default(), Dict::default());
        let mut start = Vec::with_capacity(n);
        let mut stop = Vec::with_capacity(n);
        let mut size = Vec::with_capacity(n);
        let mut rtt = Vec::with_capacity(n);
        for i in 0..n {
            let info = sim.flow_info(i);
            let f = info.spec;
            protocol.push(&f.protocol);
            src.push(&spec.nodes[f.src].name);
            dst.push(&spec.nodes[f.dst].name);
            group.push(&f.group);
            start.push(info.start as f64 * 1e-9);
            stop.push(f.stop.map_or(f64::NAN, |s| s as f64 * 1e-9));
            size.push(info.size_bytes.unwrap_or(0));
            rtt.push(spec.propagation_rtt(f) as f64 * 1e-9);
        }
        fi.set_item("flow", col(py, &(0..n as u32).collect::<Vec<u32>>()))?;
        fi.set_item("protocol", protocol.column(py))?;
        fi.set_item("src", src.column(py))?;
        fi.set_item("dst", dst.column(py))?;
        fi.set_item("group", group.column(py))?;
        fi.set_item("start_s", col(py, &start))?;
        fi.set_item("stop_s", col(py, &stop))?;
        fi.set_item("size_bytes", col(py, &size))?;
        fi.set_item("rtt_prop_s", col(py, &rtt))?;
        out.set_item("flow_info", fi)?;

        let pi = PyDict::new(py);
        let sim_ports = sim.ports();
        pi.set_item("port", (0..sim_ports.len() as u32).collect::<Vec<u32>>())?;
        pi.set_item("name", sim_ports.iter().map(|p| p.name.as_str()).collect::<Vec<_>>())?;
        pi.set_item("capacity_bps", sim_ports.iter().map(|p| p.capacity_bps()).collect::<Vec<_>>())?;
        pi.set_item("delay_s", sim_ports.iter().map(|p| p.delay as f64 * 1e-9).collect::<Vec<_>>())?;
        pi.set_item("router", sim_ports.iter().map(|p| p.module_name()).collect::<Vec<_>>())?;
        pi.set_item("limit_pkts", sim_ports.iter().map(|p| p.limit_pkts).collect::<Vec<_>>())?;
        pi.set_item("limit_bytes", sim_ports.iter().map(|p| p.limit_bytes).collect::<Vec<_>>())?;
        out.set_item("port_info", pi)?;

        let cons = sim.conservation();
        let summary = PyDict::new(py);
        summary.set_item("scenario", spec.name.as_str())?;
        summary.set_item("seed", spec.seed)?;
        summary.set_item("sim_time_s", sim.now() as f64 * 1e-9)?;
        summary.set_item("events", sim.events())?;
        summary.set_item("packet_hops", ports.iter().map(|p| p.counters.tx_pkts).sum::<u64>())?;
        summary.set_item("sent_pkts", cons.sent)?;
        summary.set_item("delivered_pkts", cons.delivered)?;
        summary.set_item("dropped_pkts", cons.dropped)?;
        summary.set_item("lost_pkts", cons.lost)?;
        summary.set_item("in_flight_pkts", cons.in_flight)?;
        summary.set_item("goodput_bytes", sim.goodput_bytes())?;
        summary.set_item("sample_interval_s", spec.sample_interval as f64 * 1e-9)?;
        let plist = PyList::empty(py);
        for p in &ports {
            let d = PyDict::new(py);
            d.set_item("port", p.port)?;
            d.set_item("name", p.name.as_str())?;
            d.set_item("router", p.router)?;
            d.set_item("capacity_bps", p.capacity_bps)?;
            d.set_item("utilisation", p.utilisation)?;
            d.set_item("mean_queue_pkts", p.mean_queue_pkts)?;
            d.set_item("mean_queue_bytes", p.mean_queue_bytes)?;
            d.set_item("max_queue_pkts", p.max_queue_pkts)?;
            d.set_item("drop_rate", p.drop_rate)?;
            d.set_item("arrivals", p.counters.arrivals)?;
            d.set_item("tx_pkts", p.counters.tx_pkts)?;
            d.set_item("tx_bytes", p.counters.tx_bytes)?;
            d.set_item("drops", p.counters.drops)?;
            d.set_item("losses", p.counters.losses)?;
            d.set_item("marks", p.counters.marks)?;
            plist.append(d)?;
        }
        summary.set_item("ports", plist)?;
        summary.set_item("flow_metric_units", units)?;
        summary.set_item("link_metric_units", link_units)?;
        out.set_item("summary", summary)?;
        Ok(out)
    }
}

#[pyfunction]
fn list_protocols<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
    let l = PyList::empty(py);
    for p in registry::PROTOCOLS {
        let d = PyDict::new(py);
        d.set_item("name", p.name)?;
        d.set_item("aliases", p.aliases.to_vec())?;
        d.set_item(
            "regulation",
            match p.regulation {
                Regulation::Window => "window",
                Regulation::Rate => "rate",
            },
        )?;
        d.set_item("description", p.description)?;
        l.append(d)?;
    }
    Ok(l)
}

#[pyfunction]
fn list_router_modules<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
    let l = PyList::empty(py);
    for r in registry::ROUTER_MODULES {
        let d = PyDict::new(py);
        d.set_item("name", r.name)?;
        d.set_item("description", r.description)?;
        l.append(d)?;
    }
    Ok(l)
}

#[pyfunction]
fn list_loss_models<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
    let l = PyList::empty(py);
    for (name, desc) in racc_proto::loss::MODELS {
        let d = PyDict::new(py);
        d.set_item("name", *name)?;
        d.set_item("description", *desc)?;
        l.append(d)?;
    }
    Ok(l)
}

/// Run the standard benchmark in-engine (GIL released), with its CPU time, set-up time and
/// memory figures (`racc_sim::bench`).
#[pyfunction(name = "bench")]
#[pyo3(signature = (flows, simtime_s = 60.0, seed = 1, bottleneck_mbps = 100.0, access_mbps = 1000.0))]
fn run_bench<'py>(
    py: Python<'py>,
    flows: u32,
    simtime_s: f64,
    seed: u64,
    bottleneck_mbps: f64,
    access_mbps: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let c = std_bench::BenchConfig { flows, simtime_s, seed, bottleneck_mbps, access_mbps };
    let r = py.detach(|| std_bench::run_config(&c)).map_err(scenario_err)?;
    let d = PyDict::new(py);
    d.set_item("sim", "racc")?;
    d.set_item("flows", r.flows)?;
    d.set_item("simtime", r.simtime)?;
    d.set_item("bottleneck_mbps", r.bottleneck_mbps)?;
    d.set_item("access_mbps", r.access_mbps)?;
    d.set_item("events", r.events)?;
    d.set_item("bottleneck_tx_pkts", r.bottleneck_tx_pkts)?;
    d.set_item("bottleneck_drops", r.bottleneck_drops)?;
    d.set_item("util", r.util)?;
    d.set_item("goodput_mbps", r.goodput_mbps)?;
    d.set_item("delivered_pkts", r.delivered_pkts)?;
    d.set_item("link_tx_pkts", r.link_tx_pkts)?;
    d.set_item("packet_hops", r.link_tx_pkts)?;
    d.set_item("wall_s", r.wall_s)?;
    d.set_item("events_per_s", r.events_per_s())?;
    d.set_item("pkthops_per_s", r.pkthops_per_s())?;
    d.set_item("cpu_s", r.cpu_s)?;
    d.set_item("setup_s", r.setup_cpu_s)?;
    d.set_item("mhops_per_cpu_s", r.mhops_per_cpu_s())?;
    d.set_item("ns_per_hop", r.ns_per_hop())?;
    d.set_item("events_per_hop", r.events_per_hop())?;
    d.set_item("peak_rss_kb", r.peak_rss_kb)?;
    d.set_item("bytes_per_flow", r.bytes_per_flow())?;
    Ok(d)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(list_protocols, m)?)?;
    m.add_function(wrap_pyfunction!(list_router_modules, m)?)?;
    m.add_function(wrap_pyfunction!(list_loss_models, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    m.add_class::<Simulation>()?;
    m.add_class::<ResolvedScenario>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
