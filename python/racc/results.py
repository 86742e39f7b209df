"""`Results`: the engine's columns as polars frames, plus atomic save/load of a results folder.

A results folder holds ``links/flows/completions/flow_info/port_info.parquet``,
``summary.json``, ``scenario.resolved.json``, ``scenario.toml`` (when the scenario
came as TOML text) and optionally ``plots/`` and ``report.html``. It is written
into a hidden temporary sibling and renamed into place only when complete.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import shutil
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from racc.errors import ResultsError

FORMAT = "racc-results/1"

TABLES: dict[str, dict[str, pl.DataType]] = {
    "links": {
        "time_s": pl.Float64,
        "port": pl.Int64,
        "name": pl.Categorical,
        "tx_bytes": pl.Int64,
        "tx_pkts": pl.Int64,
        "throughput_bps": pl.Float64,
        "utilisation": pl.Float64,
        "queue_pkts": pl.Int64,
        "queue_bytes": pl.Int64,
        "drops": pl.Int64,
        "losses": pl.Int64,
        "marks": pl.Int64,
        "arrivals": pl.Int64,
    },
    "flows": {
        "time_s": pl.Float64,
        "flow": pl.Int64,
        "goodput_bps": pl.Float64,
        "cwnd_bytes": pl.Float64,
        "rate_bps": pl.Float64,
        "srtt_s": pl.Float64,
        "acked_bytes": pl.Int64,
    },
    "group_links": {
        "time_s": pl.Float64,
        "port": pl.Int64,
        "name": pl.Categorical,
        "group": pl.Categorical,
        "tx_bytes": pl.Int64,
        "share": pl.Float64,
    },
    "completions": {
        "flow": pl.Int64,
        "size_bytes": pl.Int64,
        "start_s": pl.Float64,
        "end_s": pl.Float64,
        "fct_s": pl.Float64,
    },
    "flow_info": {
        "flow": pl.Int64,
        "protocol": pl.Categorical,
        "src": pl.Categorical,
        "dst": pl.Categorical,
        "group": pl.Categorical,
        "start_s": pl.Float64,
        "stop_s": pl.Float64,
        "size_bytes": pl.Int64,
        "rtt_prop_s": pl.Float64,
    },
    "port_info": {
        "port": pl.Int64,
        "name": pl.Utf8,
        "capacity_bps": pl.Float64,
        "delay_s": pl.Float64,
        "router": pl.Utf8,
        "limit_pkts": pl.Int64,
        "limit_bytes": pl.Int64,
    },
}


def frame(name: str, columns: Any) -> pl.DataFrame:
    """A polars frame from the engine's column dict, known columns cast to their documented types.

    A column may be a list, a numpy array, a ``(dtype, buffer)`` pair such as
    ``("<f8", bytes)``: raw little-endian values, read without building Python objects, or
    ``("cat", (dtype, codes), names)``: text stored once per distinct value (a categorical).
    Names (ports, groups, protocols, nodes) are categorical columns, so a table of millions of
    rows holds each name once (Parquet writes them dictionary-encoded).
    """
    schema = TABLES[name]
    if isinstance(columns, pl.DataFrame):
        df = columns
    elif not columns:
        return pl.DataFrame(schema=schema)
    else:
        df = pl.DataFrame({k: _column(k, v) for k, v in dict(columns).items()})
    casts = [_cast(c, df.schema[c], t) for c, t in schema.items() if c in df.columns and df.schema[c] != t]
    return df.with_columns(casts) if casts else df


def _cast(name: str, have: pl.DataType, want: pl.DataType) -> pl.Expr:
    """The column as its documented type. The engine's counters are unsigned 64-bit and the tables'
    signed: read in place (``reinterpret``, no copy of the column; counters stay far below 2^63), so
    that millions of sample rows are not held twice while the table is made (issue 37)."""
    if have == pl.UInt64 and want == pl.Int64:
        return pl.col(name).reinterpret(signed=True)
    return pl.col(name).cast(want, strict=False)


def _column(name: str, v: Any) -> Any:
    """A column from the engine: ``(dtype, buffer)``, or ``(dtype, buffer, presence)`` for a
    protocol's named metric, whose rows with presence 0 (flows whose protocol does not report
    it) become nulls."""
    if isinstance(v, tuple) and len(v) == 3 and v[0] == "cat":
        return _categorical(name, _column(name, v[1]), v[2])
    if isinstance(v, tuple) and len(v) in (2, 3) and isinstance(v[0], str):
        import numpy as np

        s = pl.Series(name, np.frombuffer(v[1], dtype=np.dtype(v[0])))
        if len(v) == 3:
            present = pl.Series(np.frombuffer(v[2], dtype=np.bool_))
            if not present.all():
                s = pl.select(pl.when(present).then(s).otherwise(None).alias(name)).to_series()
        return s
    return v


def _categorical(name: str, codes: Any, names: list[str]) -> pl.Series:
    """Row ``i`` is ``names[codes[i]]``, as a categorical column (each name stored once)."""
    return pl.Series(name, names, dtype=pl.Categorical).gather(pl.Series(codes).cast(pl.UInt32)).alias(name)


def _with_port_names(links: pl.DataFrame, port_info: pl.DataFrame, table: str = "links") -> pl.DataFrame:
    """Add a ``name`` column from ``port_info`` when the engine sent only port numbers."""
    if "name" in links.columns or "port" not in links.columns or "name" not in port_info.columns:
        return links
    names = dict(zip(port_info.get_column("port").to_list(), port_info.get_column("name").to_list()))
    col = pl.col("port").replace_strict(names, default=None, return_dtype=pl.Categorical).alias("name")
    df = links.with_columns(col)
    known = [c for c in TABLES[table] if c in df.columns]
    return df.select(known + [c for c in df.columns if c not in known])


@dataclass(repr=False)
class Results:
    """One run's output: frames ``links``, ``group_links`` (per-aggregate link shares), ``flows``,
    ``completions``, ``flow_info``, ``port_info``, and ``summary``."""

    links: pl.DataFrame
    flows: pl.DataFrame
    completions: pl.DataFrame
    flow_info: pl.DataFrame
    port_info: pl.DataFrame
    summary: dict[str, Any]
    group_links: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=TABLES["group_links"]))
    resolved: dict[str, Any] = field(default_factory=dict)
    scenario_text: str | None = None
    name: str = "scenario"
    path: Path | None = None

    @classmethod
    def from_core(cls, raw: dict[str, Any], **kw: Any) -> Results:
        """Wrap the dict returned by ``Simulation.results()``; ``summary`` is the engine's, unextended."""
        raw = dict(raw)
        groups = raw.get("group_links")
        if groups and "group_names" in raw and not isinstance(groups.get("group"), (list, pl.Series)):
            groups = dict(groups)
            groups["group"] = ("cat", groups["group"], list(raw["group_names"]))
            raw["group_links"] = groups
        frames = {t: frame(t, raw.get(t)) for t in TABLES}
        frames["links"] = _with_port_names(frames["links"], frames["port_info"])
        frames["group_links"] = _with_port_names(frames["group_links"], frames["port_info"], "group_links")
        return cls(**frames, summary=dict(raw.get("summary") or {}), **kw)

    def __repr__(self) -> str:
        f = self.summary.get("flows", {})
        return (
            f"<Results {self.name!r}: {self.flow_info.height} flows, {self.port_info.height} ports, "
            f"{self.links.height + self.flows.height} samples, Jain={f.get('jain')}>"
        )

    def jain_over_time(self, step_s: float = 1.0) -> pl.DataFrame:
        """Jain's index in consecutive ``step_s`` windows (see :func:`racc.summary.jain_over_time`)."""
        from racc.summary import jain_over_time

        return jain_over_time(self.flows, self.flow_info, self.completions, step_s)

    def fct_by_size(self, bins_per_decade: int = 4) -> pl.DataFrame:
        """Mean/median FCT per logarithmic flow-size bin."""
        from racc.summary import size_bins

        return size_bins(self.completions, bins_per_decade)

    def tables(self) -> dict[str, pl.DataFrame]:
        """The frames by name."""
        return {t: getattr(self, t) for t in TABLES}

    def save(self, out: str | os.PathLike, *, plots: bool = False) -> Path:
        """Write the folder atomically (see module doc); with ``plots`` also ``plots/`` and ``report.html``."""

        def write(tmp: Path) -> None:
            for t, df in self.tables().items():
                try:
                    df.write_parquet(tmp / f"{t}.parquet")
                except pl.exceptions.PolarsError as exc:
                    raise os_error(exc, Path(out) / f"{t}.parquet") from None
            _write_resolved(tmp / "scenario.resolved.json", self.resolved)
            if self.scenario_text is not None:
                (tmp / "scenario.toml").write_text(self.scenario_text, encoding="utf-8")
            run = self.summary.get("run", {})
            if run.get("peak_memory_bytes") is not None:
                # The run's peak with its tables written, before any plotting (matplotlib's own
                # memory is not the run's).
                from racc.memory import peak_bytes

                run["peak_memory_bytes"] = max(run["peak_memory_bytes"], peak_bytes() or 0)
            if plots:
                self._render(tmp)
            _write_json(tmp / "summary.json", self.summary)  # last: marks the folder complete

        self.summary.setdefault("run", {})["format"] = FORMAT
        dest = atomic_dir(out, write)
        self.path = dest
        return dest

    def _render(self, folder: Path) -> None:
        """Plots and report into ``folder``; a plotting failure warns but never loses the data."""
        from racc import plots as _plots
        from racc import report as _report

        try:
            _plots.render_all(self, folder / "plots")
            _report.write(self, folder / "report.html", folder / "plots")
        except Exception as exc:  # noqa: BLE001 - the data matter more than the figures
            self.summary.setdefault("run", {})["plot_error"] = f"{type(exc).__name__}: {exc}"
            warnings.warn(f"plots not written: {type(exc).__name__}: {exc}", stacklevel=3)


def os_error(exc: Exception, path: Path) -> Exception:
    """The OS error inside a polars error (``... (os error 28)``) as an :class:`OSError` naming
    ``path``, the file being written (a full disk is one line naming it); else ``exc``."""
    import re

    m = re.search(r"\(os error (\d+)\)", str(exc))
    if not m:
        return exc
    code = int(m.group(1))
    return OSError(code, os.strerror(code), str(path))


def load(path: str | os.PathLike) -> Results:
    """Read a results folder written by :meth:`Results.save`."""
    p = Path(path)
    if not is_results_dir(p):
        raise ResultsError(f"{p}: not a racc results folder (no valid summary.json)")
    summary = json.loads((p / "summary.json").read_text(encoding="utf-8"))
    frames = {}
    for t in TABLES:
        f = p / f"{t}.parquet"
        if not f.exists():
            raise ResultsError(f"{p}: incomplete results folder, {f.name} is missing")
        try:
            frames[t] = pl.read_parquet(f)
        except (pl.exceptions.PolarsError, OSError) as exc:  # the reader's words may quote the file
            raise ResultsError(f"{f}: not a readable Parquet file ({type(exc).__name__})") from None
    resolved_f = p / "scenario.resolved.json"
    from racc.resolved import Resolved

    try:
        resolved = Resolved(resolved_f.read_text(encoding="utf-8")) if resolved_f.exists() else {}
        toml_f = p / "scenario.toml"
        text = toml_f.read_text(encoding="utf-8") if toml_f.exists() else None
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{p}: a scenario file there is not readable ({type(exc).__name__})") from None
    name = summary.get("run", {}).get("scenario") or resolved.get("name") or p.name
    return Results(**frames, summary=summary, resolved=resolved, scenario_text=text, name=name, path=p)


def replot(path: str | os.PathLike) -> Results:
    """Regenerate ``plots/`` and ``report.html`` of a results folder; old plots are replaced only on success."""
    from racc import plots as _plots
    from racc import report as _report

    res = load(path)
    folder = Path(path)
    tmp = _fresh_sibling(folder / "plots", "tmp")
    try:
        _plots.render_all(res, tmp)
        _report.write(res, folder / "report.html", tmp)
        _replace_dir(tmp, folder / "plots", check=False)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return res


def is_results_dir(p: Path) -> bool:
    """True if ``p`` holds a ``summary.json`` written by racc."""
    from racc.errors import ScenarioError
    from racc.inputs import read_bytes

    try:  # a regular file, bounded: a FIFO named summary.json never blocks
        s = json.loads(read_bytes(p / "summary.json", "summary.json", 256 * 2**20, "summary"))
    except (OSError, ValueError, ScenarioError, RecursionError):
        return False
    return isinstance(s, dict) and str(s.get("run", {}).get("format", "")).startswith("racc-results/")


def atomic_dir(out: str | os.PathLike, write: Callable[[Path], None], force: bool = True) -> Path:
    """Call ``write(tmp)`` on a fresh hidden sibling of ``out`` and rename it to ``out`` on success.

    An existing ``out`` is replaced only if it is empty or a racc results folder; otherwise
    :class:`ResultsError`. On any exception (including KeyboardInterrupt) the temporary
    folder is removed and ``out`` is left as it was.
    """
    dest = Path(os.path.abspath(out))
    check_replaceable(dest, force)
    dest.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(dest)
    tmp = _fresh_sibling(dest, "tmp")
    try:
        write(tmp)
        _replace_dir(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


#: What racc writes in a results folder (`Results.save`, `racc live run --compare`); a folder
#: holding anything else is the user's, and is never replaced, even with --force.
OWN_ENTRIES = frozenset(
    {
        "summary.json",
        "scenario.resolved.json",
        "scenario.toml",
        "report.html",
        "plots",
        "simulated",
        "compare.json",
        "compare.txt",
        "compare.png",
    }
)


def foreign_entries(folder: Path) -> list[str]:
    """The names in ``folder`` that racc does not write in a results folder (escaped)."""
    from racc.inputs import escape

    return sorted(
        escape(p.name, 40) for p in folder.iterdir() if p.name not in OWN_ENTRIES and not p.name.endswith(".parquet")
    )


def check_replaceable(dest: Path, force: bool = True) -> None:
    """Raise :class:`ResultsError` unless ``dest`` is absent, empty, or racc's own results
    folder (holding only what racc writes there) and ``force`` allows replacing it. The command
    line passes its ``--force``; the API replaces its own folders, never anyone else's."""
    if not dest.exists() and not dest.is_symlink():
        return
    if dest.is_symlink() or not dest.is_dir():
        raise ResultsError(f"{dest}: exists and is not a directory; refusing to overwrite it")
    try:
        if not any(dest.iterdir()):
            return
        foreign = foreign_entries(dest)
    except OSError as exc:
        raise ResultsError(f"{dest}: cannot list the folder ({exc.strerror or type(exc).__name__})") from None
    if foreign or not is_results_dir(dest):
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        why = "not a racc results folder" + (f": holds files racc did not write ({shown})" if foreign else "")
        raise ResultsError(f"{dest}: {why}; refusing to replace it, even with --force")
    if not force:
        raise ResultsError(f"{dest}: holds the results of an earlier run; pass --force to replace them")


def _replace_dir(tmp: Path, dest: Path, check: bool = True) -> None:
    if check:
        check_replaceable(dest)  # again: it may have changed while we were writing
    if dest.exists():
        old = _fresh_sibling(dest, "old")
        os.rmdir(old)
        os.replace(dest, old)
        try:
            os.replace(tmp, dest)
        except BaseException:
            os.replace(old, dest)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, dest)


def remove_own_temporaries(dest: str | os.PathLike) -> None:
    """Remove this process's hidden temporaries of ``dest``: a Ctrl-C can land between a
    temporary's creation and the ``try`` that would remove it, and an interrupted run must leave
    nothing but its finished folders."""
    dest = Path(os.path.abspath(dest))
    for kind in ("tmp", "old"):
        for p in dest.parent.glob(f".{dest.name}.{kind}-{os.getpid()}-*"):
            shutil.rmtree(p, ignore_errors=True)


def _remove_stale(dest: Path) -> None:
    """Remove temporaries of ``dest`` left by a killed process (their pid no longer exists)."""
    for p in dest.parent.glob(f".{dest.name}.*-*-*"):
        kind, _, rest = p.name[len(dest.name) + 2 :].partition("-")
        pid = rest.split("-")[0]
        if kind in ("tmp", "old") and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(p, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _fresh_sibling(dest: Path, kind: str) -> Path:
    """A new empty hidden directory next to ``dest`` (created with the umask's permissions)."""
    while True:
        p = dest.parent / f".{dest.name}.{kind}-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            os.mkdir(p)
            return p
        except FileExistsError:
            continue


def _write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(_clean(obj), indent=2, allow_nan=False) + "\n", encoding="utf-8")


def _write_resolved(path: Path, resolved: Any) -> None:
    """The resolved scenario, one list element per line: readable, and written by json's C
    encoder (an indented dump goes through the pure-Python one, seconds and hundreds of MB for
    the 60,000 generated flows of qfcp-fct). The engine's JSON has no NaN to clean. The engine's
    text in that layout (`racc.resolved.Resolved`, never parsed) is written as it is."""
    text = getattr(resolved, "text", None)
    if text is not None:
        path.write_text(text, encoding="utf-8")
        return
    with path.open("w", encoding="utf-8") as f:
        f.write("{\n")
        for i, (k, v) in enumerate(resolved.items()):
            f.write(f"  {json.dumps(k)}: ")
            if isinstance(v, list) and v:
                f.write("[\n")
                f.write(",\n".join("    " + json.dumps(x, allow_nan=False) for x in v))
                f.write("\n  ]")
            else:
                f.write(json.dumps(v, allow_nan=False))
            f.write(",\n" if i + 1 < len(resolved) else "\n")
        f.write("}\n")


def _clean(obj: Any) -> Any:
    """JSON-safe copy: NaN/inf -> null."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj
