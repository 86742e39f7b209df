//! `racc._core`: thin PyO3 bindings. Conversion only — scenario checking, the engine and the
//! protocols live in racc-sim and racc-proto.

mod bench;
mod catalogue;
mod checking;
mod columns;
mod laws;
mod resolved;
mod simulation;
mod xcc_laws;

use bench::run_bench;
use catalogue::{list_loss_models, list_protocols, list_router_modules};
use checking::{check, validate, ScenarioError};
use laws::{
    dcpew_window_trace, dpcp_encode_cases, dpcp_levels, dpcp_window_trace, vcp_laws_trace, vcp_load_factor_trace,
};
use pyo3::prelude::*;
use resolved::ResolvedScenario;
use simulation::Simulation;
use xcc_laws::{
    jetmax_flow_check, jetmax_router_check, jetmax_router_trace, piqi_router_check, piqi_router_trace,
    rcp_router_check, rcp_router_trace, xcp_router_check, xcp_router_trace, xcp_window_trace,
};

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(list_protocols, m)?)?;
    m.add_function(wrap_pyfunction!(list_router_modules, m)?)?;
    m.add_function(wrap_pyfunction!(list_loss_models, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    m.add_function(wrap_pyfunction!(vcp_laws_trace, m)?)?;
    m.add_function(wrap_pyfunction!(vcp_load_factor_trace, m)?)?;
    m.add_function(wrap_pyfunction!(xcp_router_trace, m)?)?;
    m.add_function(wrap_pyfunction!(xcp_window_trace, m)?)?;
    m.add_function(wrap_pyfunction!(xcp_router_check, m)?)?;
    m.add_function(wrap_pyfunction!(rcp_router_trace, m)?)?;
    m.add_function(wrap_pyfunction!(rcp_router_check, m)?)?;
    m.add_function(wrap_pyfunction!(piqi_router_trace, m)?)?;
    m.add_function(wrap_pyfunction!(piqi_router_check, m)?)?;
    m.add_function(wrap_pyfunction!(jetmax_router_trace, m)?)?;
    m.add_function(wrap_pyfunction!(jetmax_router_check, m)?)?;
    m.add_function(wrap_pyfunction!(jetmax_flow_check, m)?)?;
    m.add_function(wrap_pyfunction!(dpcp_window_trace, m)?)?;
    m.add_function(wrap_pyfunction!(dpcp_levels, m)?)?;
    m.add_function(wrap_pyfunction!(dpcp_encode_cases, m)?)?;
    m.add_function(wrap_pyfunction!(dcpew_window_trace, m)?)?;
    m.add_class::<Simulation>()?;
    m.add_class::<ResolvedScenario>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
