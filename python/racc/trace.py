"""Arrival lists as files: reading a ``[[traffic]] kind = "trace"`` entry's ``file`` (CSV or
Parquet, with polars) and writing the list a scenario's traffic produces (``racc arrivals``).

Columns: ``start`` (seconds from the start of the run), ``size`` (payload bytes), and optionally
``src``, ``dst``, ``protocol`` overriding the entry's for that row. Here a file is read and each
value parsed (a missing or unknown column, a value that is not a number, a non-finite one, an
empty name); the engine checks every row's values against the scenario (start within the run,
size, known nodes and protocols) before anything runs. Messages name the file, the row (a CSV
file's line, the header being line 1; a Parquet file's 1-based row), the column and the reason.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from racc import inputs
from racc.errors import ScenarioError
from racc.inputs import escape

NUMERIC = ("start", "size")
TEXT = ("src", "dst", "protocol")
COLUMNS = NUMERIC + TEXT
EXPECTED = "start, size, and optionally src, dst, protocol"


@dataclass
class Trace:
    """A trace file's columns as read: numeric ones as Float64, text ones as strings."""

    file: str
    frame: pl.DataFrame
    rows: str  # "line" (CSV), "row" (Parquet) or "connection" (an htsim connection matrix)

    def columns(self) -> dict[str, Any]:
        """The rows as the engine takes them beside the scenario's JSON: numbers as
        little-endian float64 buffers, names as lists of strings."""
        out: dict[str, Any] = {"rows": self.rows}
        for c in self.frame.columns:
            col = self.frame.get_column(c)
            out[c] = col.to_numpy().astype("<f8", copy=False).tobytes() if c in NUMERIC else col.to_list()
        return out

    def to_json(self) -> str:
        """The entry's ``arrivals`` table as JSON text (columns of numbers and names)."""
        parts = [f'"rows": {json.dumps(self.rows)}']
        for c in self.frame.columns:
            parts.append(f"{json.dumps(c)}: {json.dumps(self.frame.get_column(c).to_list(), allow_nan=False)}")
        return "{" + ", ".join(parts) + "}"


def is_parquet(path: Path) -> bool:
    return path.suffix.lower() in (".parquet", ".pq")


def _read_csv(data: bytes) -> pl.DataFrame:
    """A CSV file's bytes with `start` and `size` read as numbers where every value is one (the
    common case, a million rows in a tenth of a second), else every column as text, so that the
    checks below name the line of the first value that is not a number."""
    try:
        df = pl.read_csv(
            io.BytesIO(data),
            infer_schema=False,
            schema_overrides={c: pl.Float64 for c in NUMERIC},
            truncate_ragged_lines=False,
        )
        if all(c in df.columns and df.get_column(c).null_count() == 0 for c in NUMERIC):
            return df
    except pl.exceptions.PolarsError:
        pass  # a value that is not a number (or a file polars cannot read): named below
    return pl.read_csv(io.BytesIO(data), infer_schema=False, truncate_ragged_lines=False)


def _csv_problem(data: bytes) -> str:
    """Why polars could not read a CSV file, in words that quote none of it: the line of the first
    row whose field count differs from the header's, else that it is not CSV text."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not UTF-8 text ({exc.reason} at byte {exc.start})"
    try:
        rows = csv.reader(io.StringIO(text, newline=""))
        width = None
        for row in rows:
            if width is None:
                width = len(row)
            elif row and len(row) != width:
                return f"line {rows.line_num}: {len(row)} fields, but the header has {width}"
    except csv.Error:
        return "not CSV text"
    return "not CSV text polars can read"


def _header_problem(columns: list[str]) -> str | None:
    """A header that is not a trace's, described by position: an unexpected name is not shown
    (it may be the first line of a file that is no trace at all, such as a password file)."""
    unknown = [i + 1 for i, c in enumerate(columns) if c not in COLUMNS]
    if unknown:
        which = ", ".join(map(str, unknown[:5])) + (", ..." if len(unknown) > 5 else "")
        return (
            f"line 1 is not a trace header: column{'s' if len(unknown) > 1 else ''} {which} of {len(columns)} "
            f"{'are' if len(unknown) > 1 else 'is'} not one of {EXPECTED} (names not shown)"
        )
    if len(set(columns)) != len(columns):
        return f"line 1 names a column twice (columns: {EXPECTED})"
    for c in NUMERIC:
        if c not in columns:
            return f"missing column `{c}` (columns: {EXPECTED})"
    return None


def read_file(source: str, key: str, file: str, base: Path, confine: bool, what: str = "trace"):
    """The bytes of an entry's ``file`` (relative to ``base``, the scenario file's folder), its
    path, and the function that makes an error naming the scenario, key and file. With
    ``confine`` a file resolving outside ``base`` (or an allowed folder) is refused."""
    shown = escape(file, 120)

    def fail(reason: str) -> ScenarioError:
        return ScenarioError(f"{source}: key `{key}`: {shown}: {reason}")

    path = Path(file) if Path(file).is_absolute() else base / file
    if not path.exists() and not path.is_symlink():
        where = f" (looked for {escape(str(path), 160)})" if path.as_posix() != file else ""
        raise fail(f"file not found{where}")
    if confine and not inputs.confined(path, base):
        raise fail(
            f"resolves outside the scenario file's folder; a {what} is read from there only "
            f"(allow another folder with --allow-path DIR, or {inputs.ALLOW_ENV})"
        )
    try:
        data = inputs.read_bytes(path, "file", inputs.MAX_TRACE_BYTES, what)
    except ScenarioError as exc:
        raise fail(str(exc).removeprefix("file: ")) from None
    return path, data, fail


def read(source: str, key: str, file: str, base: Path, confine: bool = True) -> Trace:
    """Read trace ``file`` (relative to ``base``, the scenario file's folder) for entry ``key``.
    With ``confine`` a file resolving outside ``base`` (or an allowed folder) is refused."""
    path, data, fail = read_file(source, key, file, base, confine)
    try:
        if is_parquet(path):
            df, rows = pl.read_parquet(io.BytesIO(data)), "row"
        else:
            df, rows = _read_csv(data), "line"
    except Exception as exc:  # noqa: BLE001 - any reader error is bad input, named with the file
        # The reader's own words may quote the file: only its kind is said.
        why = "not a readable Parquet file" if is_parquet(path) else _csv_problem(data)
        raise fail(f"{why} ({type(exc).__name__})" if is_parquet(path) else why) from None
    df = df.rename({c: c.strip() for c in df.columns})
    problem = _header_problem(df.columns)
    if problem:
        raise fail(problem)
    if df.height == 0:
        raise fail("no rows: a trace needs at least one flow")

    def at(i: int, col: str, reason: str) -> ScenarioError:
        n = i + 2 if rows == "line" else i + 1
        return fail(f"{rows} {n}, column `{col}`: {reason}")

    out = {}
    for c in NUMERIC:
        raw = df.get_column(c)
        text = raw.cast(pl.Utf8).str.strip_chars() if raw.dtype == pl.Utf8 else None
        num = (text if text is not None else raw).cast(pl.Float64, strict=False)
        bad = num.is_null()
        if bad.any():
            i = int(bad.arg_true()[0])
            v = (text if text is not None else raw)[i]
            raise at(i, c, "empty" if v is None or v == "" else "not a number (value not shown)")
        nonfinite = ~num.is_finite()
        if nonfinite.any():
            i = int(nonfinite.arg_true()[0])
            raise at(i, c, f"must be a finite number, got {num[i]}")
        out[c] = num
    for c in TEXT:
        if c in df.columns:
            col = df.get_column(c).cast(pl.Utf8).str.strip_chars()
            empty = col.is_null() | (col == "")
            if empty.any():
                raise at(int(empty.arg_true()[0]), c, "empty: a node or protocol name is needed")
            out[c] = col
    return Trace(file=file, frame=pl.DataFrame(out), rows=rows)


# ---------------------------------------------------------------------------------------------
# Writing: the list a scenario's traffic entries produce


def arrivals(resolved: dict, data: dict) -> pl.DataFrame:
    """The flows of every traffic entry (Poisson generators and traces alike) in the engine's
    order: start (s), size (B), src, dst, protocol. Web sources make their flows during the run
    (each waits for the previous one to finish), so they have no list and are refused."""
    traffic = data.get("traffic") or []
    names = {}
    for i, t in enumerate(traffic):
        name = t.get("name") or f"traffic{i}"
        if t.get("kind") == "web":
            raise ScenarioError(
                f"traffic[{i}] ({name}): a web source's flows depend on when its earlier ones finish, "
                "so there is no list to write before the run"
            )
        names[name] = i
    if not names:
        raise ScenarioError("the scenario has no [[traffic]] entries: nothing to write")
    nodes = [n["name"] for n in resolved["nodes"]]
    rows = [f for f in resolved["flows"] if f["group"] in names]
    return pl.DataFrame(
        {
            "start": [f["start"] / 1e9 for f in rows],
            "size": [f["size_bytes"] for f in rows],
            "src": [nodes[f["src"]] for f in rows],
            "dst": [nodes[f["dst"]] for f in rows],
            "protocol": [f["protocol"] for f in rows],
        },
        schema={"start": pl.Float64, "size": pl.Int64, "src": pl.Utf8, "dst": pl.Utf8, "protocol": pl.Utf8},
    )


def write(df: pl.DataFrame, out: Path, parquet: bool | None = None) -> None:
    """CSV, or Parquet for a ``.parquet`` name (or ``parquet``); start times written so that they
    read back to the same nanosecond (the shortest text that round-trips)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    if is_parquet(out) if parquet is None else parquet:
        df.write_parquet(out)
        return
    with out.open("w", encoding="utf-8") as f:
        f.write(",".join(df.columns) + "\n")
        for row in df.iter_rows():
            f.write(",".join(repr(v) if isinstance(v, float) else str(v) for v in row) + "\n")
