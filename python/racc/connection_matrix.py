"""htsim's connection-matrix files as a traffic source: ``[[traffic]] kind = "connection_matrix"``.

The format is the one ``ConnectionMatrix::load(istream&)`` reads (htsim,
``sim/datacenter/connection_matrix.cpp``; its generators are
``sim/datacenter/connection_matrices/gen_*.py``)::

    Nodes 128
    Connections 2
    # a comment
    3->17 id 1 start 0 size 2000000
    5->17 start 1500000 size 2000000

Header lines ``Nodes N``, ``Connections C`` (and ``Triggers``, ``Failures``) come before the first
connection; a connection line is ``SRC->DST`` then attributes: ``start`` (picoseconds, as htsim
reads it: ``c->start = start; // start is in picoseconds already``), ``size`` (bytes), ``id``
(non-zero) and ``prio`` (read, not used). Empty lines and lines starting with ``#`` are skipped;
the number of connections must equal ``Connections``, as htsim checks. Host index i is racc's node
``h{i}`` (a ``fat_tree`` topology's hosts, numbered as htsim numbers them).

Not supported, refused with the line and the reason: trigger-started flows (``trigger``,
``send_done_trigger``, ``recv_done_trigger``, ``addon``, ``trigger`` and ``failure`` lines) and
flows without a ``size`` (htsim runs those forever). Every message names the file, the line and
the reason and quotes nothing of the file (``inputs.py``).
"""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl

from racc.trace import Trace, read_file

#: Attributes of a connection line that take a value.
VALUED = ("start", "size", "id", "prio")
UNSUPPORTED = ("trigger", "send_done_trigger", "recv_done_trigger", "addon")


def _int(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() else None


def read(source: str, key: str, file: str, base: Path, confine: bool = True) -> Trace:
    """Read connection matrix ``file`` for entry ``key`` into a trace's rows (start s, size B,
    src, dst), named by connection number in the engine's messages."""
    _, data, fail = read_file(source, key, file, base, confine, "connection matrix")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None

    def at(n: int, reason: str):
        return fail(f"line {n}: {reason}")

    header: dict[str, int] = {}
    starts: list[float] = []
    sizes: list[float] = []
    srcs: list[str] = []
    dsts: list[str] = []
    for n, line in enumerate(text.split("\n"), start=1):
        tokens = line.split()
        if not tokens or tokens[0].startswith("#"):
            continue
        first = tokens[0]
        if "->" not in first:
            if first in ("Nodes", "Connections", "Triggers", "Failures"):
                if starts:
                    raise at(n, f"`{first}` after the first connection (the header comes first)")
                v = _int(tokens[1]) if len(tokens) == 2 else None
                if v is None:
                    raise at(n, f"`{first}` needs one whole number")
                header[first] = v
                continue
            if first in ("trigger", "failure"):
                raise at(n, f"`{first}` lines are not supported (flows start at their `start` times)")
            raise at(n, "not a header line, a comment or a connection `SRC->DST ...` (content not shown)")
        a, _, b = first.partition("->")
        src, dst = _int(a), _int(b)
        if src is None or dst is None:
            raise at(n, "a connection starts with SRC->DST, two host indices")
        attrs: dict[str, str] = {}
        i = 1
        while i < len(tokens):
            t = tokens[i]
            if t in UNSUPPORTED:
                raise at(n, f"`{t}`: trigger-started flows are not supported")
            if t not in VALUED:
                raise at(n, f"attribute {i + 1} is not one of {', '.join(VALUED)} (not shown)")
            if i + 1 >= len(tokens):
                raise at(n, f"`{t}` needs a value")
            if t in attrs:
                raise at(n, f"`{t}` given twice")
            attrs[t] = tokens[i + 1]
            i += 2
        if "start" not in attrs:
            raise at(n, "no `start` (picoseconds)")
        try:
            start_ps = float(attrs["start"])
        except ValueError:
            raise at(n, "`start` is not a number (value not shown)") from None
        if not math.isfinite(start_ps) or start_ps < 0:
            raise at(n, f"`start` must be a finite time >= 0 ps, got {start_ps}")
        if "size" not in attrs:
            raise at(n, "no `size`: flows without one (htsim runs them forever) are not supported")
        size = _int(attrs["size"])
        if size is None or size < 1:
            raise at(n, "`size` must be a whole number of bytes >= 1")
        if "id" in attrs and not _int(attrs["id"]):
            raise at(n, "`id` must be a whole number >= 1 (htsim refuses flow id 0)")
        if "prio" in attrs and _int(attrs["prio"].lstrip("-")) is None:
            raise at(n, "`prio` must be a whole number")
        nodes = header.get("Nodes")
        if nodes is None:
            raise at(n, "a connection before the `Nodes N` header line")
        for which, h in (("SRC", src), ("DST", dst)):
            if h >= nodes:
                raise at(n, f"{which} {h} is not below Nodes = {nodes}")
        if src == dst:
            raise at(n, f"a host sends to itself ({src}->{dst})")
        starts.append(start_ps * 1e-12)
        sizes.append(float(size))
        srcs.append(f"h{src}")
        dsts.append(f"h{dst}")
    if "Connections" not in header:
        raise fail("no `Connections C` header line")
    if header["Connections"] != len(starts):
        raise fail(f"`Connections` says {header['Connections']}, but the file lists {len(starts)}")
    if not starts:
        raise fail("no connections: a connection matrix needs at least one flow")
    frame = pl.DataFrame(
        {"start": starts, "size": sizes, "src": srcs, "dst": dsts},
        schema={"start": pl.Float64, "size": pl.Float64, "src": pl.Utf8, "dst": pl.Utf8},
    )
    return Trace(file=file, frame=frame, rows="connection")
