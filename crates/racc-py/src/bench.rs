//! The standard benchmark run in-engine from Python (`racc bench`).

use crate::checking::scenario_err;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use racc_sim::bench as std_bench;

/// Run the standard benchmark in-engine (GIL released), with its CPU time, set-up time and
/// memory figures (`racc_sim::bench`).
#[pyfunction(name = "bench")]
#[pyo3(signature = (flows, simtime_s = 60.0, seed = 1, bottleneck_mbps = 100.0, access_mbps = 1000.0))]
pub(crate) fn run_bench<'py>(
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
