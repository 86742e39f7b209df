//! What the registry offers: the protocols, router modules and loss models, for `racc list`.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use racc_proto::registry::{self, Regulation};

#[pyfunction]
pub(crate) fn list_protocols<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
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
pub(crate) fn list_router_modules<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
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
pub(crate) fn list_loss_models<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
    let l = PyList::empty(py);
    for (name, desc) in racc_proto::loss::MODELS {
        let d = PyDict::new(py);
        d.set_item("name", *name)?;
        d.set_item("description", *desc)?;
        l.append(d)?;
    }
    Ok(l)
}
