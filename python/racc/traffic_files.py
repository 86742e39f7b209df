"""Every traffic entry's file, read before a run: trace arrival lists (``racc.trace``) and
htsim's connection matrices (``racc.connection_matrix``, which builds a trace's rows). It sits
above both, so that neither imports the other back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from racc import connection_matrix, trace
from racc.trace import Trace


def load_traces(data: dict[str, Any], source: str, base: Path, confine: bool = True) -> dict[int, Trace]:
    """Read every trace entry's file; the entries are left as written (``file`` stays a name).
    ``confine``: see :func:`read` (a scenario file's traces are; the API's dicts and text are not)."""
    traces: dict[int, Trace] = {}
    for i, t in enumerate(data.get("traffic") or []):
        if not isinstance(t, dict) or t.get("kind") not in ("trace", "connection_matrix") or "arrivals" in t:
            continue
        f = t.get("file")
        if isinstance(f, str) and t["kind"] == "trace":
            traces[i] = trace.read(source, f"traffic[{i}].file", f, base, confine)
        elif isinstance(f, str):
            traces[i] = connection_matrix.read(source, f"traffic[{i}].file", f, base, confine)
    return traces
