//! `Simulation`: one run of a checked scenario, stepped from Python, and its results as columns.

use crate::checking::{from_json, scenario_err, ScenarioError};
use crate::columns::*;
use crate::resolved::ResolvedScenario;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use racc_sim::Simulator;
use std::sync::{Arc, Mutex};

/// Events between two looks at the wall clock: about a millisecond of engine time.
const SLICE_EVENTS: u64 = 1 << 13;
/// Wall time between two looks at Ctrl-C during a run.
const SIGNAL_CHECK: std::time::Duration = std::time::Duration::from_millis(100);

/// One simulation run, advanced in steps so that Python can show progress.
#[pyclass]
pub(crate) struct Simulation {
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
        let e = racc_sim::scenario::estimate::Estimate::of(&self.sim.lock().unwrap().spec);
        let d = PyDict::new(py);
        d.set_item("memory_bytes", e.memory_bytes())?;
        d.set_item("events", e.events)?;
        d.set_item("rows", e.rows)?;
        d.set_item("flows", e.flows)?;
        d.set_item("ports", e.ports)?;
        d.set_item("packets", e.packets)?;
        Ok(d)
    }

    /// What the scenario's settings provably cannot do, as (key, reason) pairs, checked before
    /// the run (`racc_sim::notes::warnings`): the run is valid, and the user is told.
    fn warnings(&self) -> PyResult<Vec<(String, String)>> {
        let sim = self.sim.lock().unwrap();
        let w = racc_sim::notes::warnings(&sim.spec).map_err(crate::checking::scenario_err)?;
        Ok(w.into_iter().map(|w| (w.key, w.reason)).collect())
    }

    /// The settings router modules derived from their ports (RED's automatic thresholds):
    /// {port name: {setting: value}}.
    fn router_settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = self.sim.lock().unwrap();
        let all = racc_sim::notes::port_settings(&sim.spec).map_err(crate::checking::scenario_err)?;
        let d = PyDict::new(py);
        for p in all {
            let s = PyDict::new(py);
            for (k, v) in p.settings {
                s.set_item(k, v)?;
            }
            d.set_item(p.port, s)?;
        }
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
