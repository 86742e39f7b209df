//! The resolved scenario as JSON text, one top-level key per line (`scenario.resolved.json`).

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use racc_sim::scenario::{self};
use std::sync::Arc;

/// The resolved scenario as JSON text in the layout `validate` describes.
pub(crate) fn resolved_lines(spec: &scenario::Spec) -> PyResult<String> {
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
pub(crate) struct ResolvedScenario {
    pub(crate) spec: Arc<scenario::Spec>,
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
pub(crate) struct Lines {
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
