//! Columns as they cross to Python: numbers as `(numpy dtype, little-endian bytes)`, text
//! dictionary-encoded.

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use racc_sim::metrics::{Column as SeriesColumn, ColumnValues, NamedColumn};

/// A numeric column handed to Python as `(numpy dtype, little-endian bytes)`: a million rows
/// cost 8 MB instead of the ~32 MB of a list of Python numbers.
pub(crate) trait Column: Copy {
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
pub(crate) fn any_col<'py>(py: Python<'py>, c: SeriesColumn<'_>) -> (&'static str, Bound<'py, PyBytes>) {
    match c {
        SeriesColumn::F64(v) => col(py, v),
        SeriesColumn::U64(v) => col(py, v),
        SeriesColumn::U32(v) => col(py, v),
        SeriesColumn::U16(v) => col(py, v),
    }
}

/// A named metric column: `(dtype, values, presence)`, presence one byte per row (0 = the
/// flow's protocol does not report this metric: a null in the table).
pub(crate) fn named_col<'py>(
    py: Python<'py>,
    c: &NamedColumn,
) -> (&'static str, Bound<'py, PyBytes>, Bound<'py, PyBytes>) {
    let (dtype, values) = match &c.values {
        ColumnValues::Count(v) => col(py, v),
        ColumnValues::Gauge(v) => col(py, v),
        ColumnValues::Flag(v) => col(py, v),
    };
    (dtype, values, col(py, &c.present).1)
}

pub(crate) fn col<'py, T: Column>(py: Python<'py>, v: &[T]) -> (&'static str, Bound<'py, PyBytes>) {
    let mut out = Vec::with_capacity(std::mem::size_of_val(v));
    for &x in v {
        x.put(&mut out);
    }
    (T::DTYPE, PyBytes::new(py, &out))
}

/// A dictionary-encoded column as it crosses to Python.
pub(crate) type CatColumn<'py, 'a> = (&'static str, (&'static str, Bound<'py, PyBytes>), Vec<&'a str>);

/// A text column dictionary-encoded: each distinct value once, a `u32` code per row.
#[derive(Default)]
pub(crate) struct Dict<'a> {
    names: Vec<&'a str>,
    index: std::collections::HashMap<&'a str, u32>,
    codes: Vec<u32>,
}

impl<'a> Dict<'a> {
    pub(crate) fn push(&mut self, v: &'a str) {
        let next = self.names.len() as u32;
        let c = *self.index.entry(v).or_insert_with(|| {
            self.names.push(v);
            next
        });
        self.codes.push(c);
    }

    /// `("cat", (dtype, codes), names)`, which Python turns into a categorical column.
    pub(crate) fn column<'py>(&self, py: Python<'py>) -> CatColumn<'py, 'a> {
        ("cat", col(py, &self.codes), self.names.clone())
    }
}
