//! Scenario checking from Python: JSON text (and a trace's rows as buffers) in, the resolved
//! scenario or a `ScenarioError` naming the file, key and reason out.

use crate::resolved::resolved_lines;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use racc_proto::registry::{self};
use racc_sim::scenario::{self, ScenarioError as RsScenarioError};

create_exception!(_core, ScenarioError, PyException, "A scenario was refused: names the file, the key and the reason.");

pub(crate) fn scenario_err(e: RsScenarioError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

/// A scenario from JSON text and its trace entries' rows, `{traffic index: {"start": f64 bytes,
/// "size": f64 bytes, "src"/"dst"/"protocol": [str] (optional), "rows": "line" | "row"}}`:
/// numbers cross as little-endian buffers, not as a million JSON numbers.
pub(crate) fn from_json(text: &str, source: &str, arrivals: Option<&Bound<'_, PyDict>>) -> PyResult<scenario::Spec> {
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

/// Parse and check a scenario (JSON text); return the resolved scenario as JSON text, one
/// top-level key per line and each element of a top-level list on its own line (the layout of
/// `scenario.resolved.json`, so Python can write it without parsing it).
#[pyfunction]
#[pyo3(signature = (json_text, source, arrivals = None))]
pub(crate) fn validate(json_text: &str, source: &str, arrivals: Option<&Bound<'_, PyDict>>) -> PyResult<String> {
    resolved_lines(&from_json(json_text, source, arrivals)?)
}

/// Parse and check a scenario (JSON text), refusing it as `validate` does; return only its
/// simulated duration in seconds. For callers that need the check and the run's length but not
/// the resolved text, which for a long flow list is hundreds of MB (sweeps, progress bars).
#[pyfunction]
#[pyo3(signature = (json_text, source, arrivals = None))]
pub(crate) fn check(json_text: &str, source: &str, arrivals: Option<&Bound<'_, PyDict>>) -> PyResult<f64> {
    Ok(from_json(json_text, source, arrivals)?.duration as f64 / 1e9)
}
