"""Rich console rendering of a run's summary (what ``racc run`` prints)."""

from __future__ import annotations

import os
from typing import Any

from racc import tables

#: Width of output written to a pipe or a log: wide enough that no table cell is cut or folded
#: (rich would use 80 columns and print "uti…" for "utilisation"; issue 39 item 4). Tables are
#: as wide as their content, so lines are only as long as the words they hold.
PIPE_WIDTH = 10_000


def console(stderr: bool = False, file: Any = None) -> Any:
    """A rich console as wide as the terminal; for pipes and logs (or ``file``) :data:`PIPE_WIDTH`
    columns, so every word of every table is kept (``COLUMNS``, if set, wins)."""
    import sys

    from rich.console import Console

    # Whether the stream itself is a terminal, not rich's view of it: FORCE_COLOR or
    # TTY_COMPATIBLE make rich call a pipe a terminal, and it then cuts to 80 columns.
    stream = file if file is not None else (sys.stderr if stderr else sys.stdout)
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    width = PIPE_WIDTH if not tty and "COLUMNS" not in os.environ else None
    return Console(stderr=stderr, file=file, width=width)


def print_json(obj: Any) -> None:
    """``--json``: one JSON document on stdout (NaN and infinities as null)."""
    import json
    import sys

    from racc.results import _clean

    sys.stdout.write(json.dumps(_clean(obj), indent=2, default=str) + "\n")


def print_summary(res: Any, console: Any = None) -> None:
    """Print totals, per-port and per-flow tables for ``res`` (a :class:`racc.Results`)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    s = res.summary
    caps = _capacities(res)

    t = Table(title=f"{res.name}", show_header=False, title_justify="left", box=box.SIMPLE)
    t.add_column(style="bold")
    t.add_column(justify="right")
    for row in tables.totals_rows(s):
        t.add_row(*row)
    console.print(t)

    header, rows, note = tables.port_rows(s, caps)
    if rows:
        pt = Table(title=tables.PORT_TITLE + (f", {note}" if note else ""), title_justify="left", box=box.SIMPLE_HEAD)
        for i, h in enumerate(header):
            pt.add_column(h, justify="left" if i == 0 else "right")
        for r in rows:
            pt.add_row(*r)
        console.print(pt)

    ft = Table(title="flows", show_header=False, title_justify="left", box=box.SIMPLE)
    ft.add_column(style="bold")
    ft.add_column(justify="right")
    for r in tables.flow_rows(s):
        ft.add_row(*r)
    console.print(ft)


def _capacities(res: Any) -> dict[int, float]:
    pi = res.port_info
    if pi.height == 0 or "capacity_bps" not in pi.columns:
        return {}
    return dict(zip(pi.get_column("port").to_list(), pi.get_column("capacity_bps").to_list()))
