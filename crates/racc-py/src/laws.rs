//! The load-factor family's laws one step at a time, for the differential tests of the kernel's
//! fixed-point twins (`kernel/bpf/`, docs/KERNEL-BPF.md): conversion and replay only, the laws
//! are racc-proto's (`vcp::VcpLaws`, `vcp::LoadFactor`).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use racc_proto::params::parse;
use racc_proto::vcp::{LoadFactor, LoadFactorParams, VcpLaws, VcpParams};

fn json(text: &str, what: &str) -> PyResult<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| PyValueError::new_err(format!("{what}: not JSON: {e}")))
}

/// The window (packets) after each step `(code, k, rtt_s, now_ns)` of `VcpLaws::on_code`, from
/// `cwnd`, for the VCP flow parameters `params` (a JSON object); also each step's MD count.
#[pyfunction]
pub(crate) fn vcp_laws_trace(params: &str, cwnd: f64, steps: Vec<(u8, f64, f64, u64)>) -> PyResult<Vec<(f64, u64)>> {
    let p: VcpParams = parse(&json(params, "params")?).map_err(|e| PyValueError::new_err(e.to_string()))?;
    p.validate().map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut laws = VcpLaws::new(&p);
    let mut w = cwnd;
    Ok(steps
        .into_iter()
        .map(|(code, k, rtt_s, now)| {
            w = laws.on_code(w, code, k, rtt_s, now);
            (w, laws.md_count())
        })
        .collect())
}

/// The estimator's (ρ, code, q_l) after each event `(now_ns, queue_bytes, arrival_bytes)`: the
/// t_q samples and t_p boundaries due by `now_ns` run first with that queue, then the arrival is
/// counted. Timers start at 0 with phase 0; `capacity_bps` is the link rate.
#[pyfunction]
pub(crate) fn vcp_load_factor_trace(
    params: &str,
    capacity_bps: f64,
    events: Vec<(u64, u64, u32)>,
) -> PyResult<Vec<(f64, u8, f64)>> {
    let p: LoadFactorParams = parse(&json(params, "params")?).map_err(|e| PyValueError::new_err(e.to_string()))?;
    p.validate().map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut lf = LoadFactor::with_phase(&p, 0, 0);
    Ok(events
        .into_iter()
        .map(|(now, queue, bytes)| {
            lf.on_tick(now, queue, capacity_bps);
            lf.on_arrival(bytes);
            (lf.rho(), lf.code(), lf.q_l())
        })
        .collect())
}
