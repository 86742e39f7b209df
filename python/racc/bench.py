"""``racc bench``: the standard benchmark at several flow counts, one fresh process each,
printed as a table (``--json``: JSON; ``--kv``: one ``key=value`` line per run in a fixed key
order, the format of earlier versions).

Without ``--flows`` it runs the standard set (issue 19): N = 1, 10, 100 and 1000 on the 100 Mb/s
bottleneck with 1 Gb/s access links for 60 simulated seconds, then N = 10,000 on a 4 Gb/s
bottleneck with 10 Gb/s access links for 10 simulated seconds (about five packets of BDP per
flow). The table gives what speed at scale is judged by: packet-hops, CPU seconds of set-up and
run, M packet-hops per CPU-second, ns per hop, events per hop, peak memory, peak memory above
the bare process per flow, set-up time (CPU) and bottleneck utilisation."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TextIO

DEFAULT_FLOWS = (1, 10, 100, 1000)


@dataclass(frozen=True)
class Form:
    """One benchmark configuration: flows, simulated seconds, bottleneck and access rates."""

    flows: int
    simtime: float = 60.0
    bottleneck_mbps: float = 100.0
    access_mbps: float = 1000.0


#: The standard set: the four flow counts of issue 2 and issue 19's 10,000 flows at scale.
STANDARD = (*(Form(n) for n in DEFAULT_FLOWS), Form(10_000, 10.0, 4000.0, 10_000.0))

KEYS = (
    "sim",
    "flows",
    "simtime",
    "events",
    "bottleneck_tx_pkts",
    "bottleneck_drops",
    "util",
    "goodput_mbps",
    "delivered_pkts",
    "link_tx_pkts",
    "wall_s",
    "events_per_s",
    "pkthops_per_s",
    "peak_rss_kb",
)

_INT = {
    "flows",
    "events",
    "bottleneck_tx_pkts",
    "bottleneck_drops",
    "delivered_pkts",
    "link_tx_pkts",
    "events_per_s",
    "pkthops_per_s",
    "peak_rss_kb",
}
#: The table's columns (issue 19), also first in ``--json``.
TABLE_KEYS = (
    "flows",
    "bottleneck_mbps",
    "access_mbps",
    "simtime",
    "packet_hops",
    "cpu_s",
    "mhops_per_cpu_s",
    "ns_per_hop",
    "events_per_hop",
    "peak_rss_kb",
    "bytes_per_flow",
    "setup_s",
    "util",
)

#: Every key of ``--json``: the table's, then the rest of the ``--kv`` line's.
JSON_KEYS = (*TABLE_KEYS, *(k for k in KEYS if k not in TABLE_KEYS))

_INT |= {"packet_hops", "bytes_per_flow"}
_FIXED = {
    "util": 4,
    "goodput_mbps": 3,
    "wall_s": 3,
    "cpu_s": 3,
    "setup_s": 4,
    "mhops_per_cpu_s": 2,
    "ns_per_hop": 1,
    "events_per_hop": 3,
}


class BenchError(RuntimeError):
    """A benchmark worker failed."""


def run_one(
    flows: int, simtime: float = 60.0, seed: int = 1, bottleneck_mbps: float = 100.0, access_mbps: float = 1000.0
) -> dict[str, Any]:
    """Run one benchmark in a fresh interpreter and return its figures (with ``peak_rss_kb``)."""
    env = dict(os.environ)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # no symlink resolution
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_parent, env.get("PYTHONPATH")) if p)
    cmd = [
        sys.executable,
        "-m",
        "racc._bench_child",
        "--flows",
        str(flows),
        "--simtime",
        repr(float(simtime)),
        "--seed",
        str(seed),
        "--bottleneck-mbps",
        repr(float(bottleneck_mbps)),
        "--access-mbps",
        repr(float(access_mbps)),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise BenchError(f"benchmark with {flows} flows failed (exit {proc.returncode}): {tail}")
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError) as exc:
        raise BenchError(f"benchmark with {flows} flows printed no result: {exc}") from None


def format_line(r: dict[str, Any]) -> str:
    """``sim=racc flows=N simtime=60 ... peak_rss_kb=...`` in the fixed key order."""
    return " ".join(f"{k}={_fmt(k, r.get(k))}" for k in KEYS)


def check_form(f: Form) -> None:
    """Refuse values the benchmark cannot run, naming the option (ValueError)."""
    if f.flows < 1:
        raise ValueError(f"--flows must be a positive integer, got {f.flows}")
    if not (math.isfinite(f.simtime) and f.simtime > 0):
        raise ValueError(f"--simtime must be a positive number of seconds, got {f.simtime:g}")
    for opt, v in (("--bottleneck-mbps", f.bottleneck_mbps), ("--access-mbps", f.access_mbps)):
        if not (math.isfinite(v) and v >= 1):
            raise ValueError(f"{opt} must be a number of Mb/s of at least 1, got {v:g}")


def main(
    flows: Iterable[int] | Iterable[Form] | None = None,
    simtime: float | None = None,
    seed: int = 1,
    out: TextIO | None = None,
    style: str = "kv",
    bottleneck_mbps: float = 100.0,
    access_mbps: float = 1000.0,
) -> list[dict[str, Any]]:
    """Run the benchmark for each flow count (or :class:`Form`); without any, the standard set
    (:data:`STANDARD`; ``simtime``, when given, replaces each form's). ``style``: "kv" prints each
    ``key=value`` line as soon as it is known; "table" a table at the end (with a line on stderr as
    each run starts); "json" one JSON list at the end. Returns the results."""
    out = out or sys.stdout
    if flows is None:
        forms = [Form(f.flows, simtime or f.simtime, f.bottleneck_mbps, f.access_mbps) for f in STANDARD]
    else:
        forms = [
            f if isinstance(f, Form) else Form(f, 60.0 if simtime is None else simtime, bottleneck_mbps, access_mbps)
            for f in flows
        ]
    for f in forms:
        check_form(f)
    results = []
    for f in forms:
        if style != "kv":
            print(
                f"bench: {f.flows} flows, {f.bottleneck_mbps:g}/{f.access_mbps:g} Mb/s, {f.simtime:g} s simulated ...",
                file=sys.stderr,
                flush=True,
            )
        r = run_one(f.flows, f.simtime, seed, f.bottleneck_mbps, f.access_mbps)
        r.setdefault("sim", "racc")
        r.setdefault("flows", f.flows)
        r.setdefault("simtime", f.simtime)
        results.append(r)
        if style == "kv":
            print(format_line(r), file=out, flush=True)
    if style == "json":
        out.write(json.dumps([{k: r.get(k) for k in JSON_KEYS} for r in results], indent=2) + "\n")
    elif style == "table":
        print_table(results, out)
    return results


#: Column headings of the table (unit in the heading, not in each cell).
HEADINGS = {
    "sim": "sim",
    "flows": "flows",
    "simtime": "sim s",
    "events": "events",
    "bottleneck_tx_pkts": "bottleneck pkts",
    "bottleneck_drops": "drops",
    "util": "util",
    "goodput_mbps": "goodput Mb/s",
    "delivered_pkts": "delivered pkts",
    "link_tx_pkts": "link pkts",
    "wall_s": "wall s",
    "events_per_s": "events/s",
    "pkthops_per_s": "pkt-hops/s",
    "peak_rss_kb": "peak memory kB",
    "bottleneck_mbps": "bottleneck Mb/s",
    "access_mbps": "access Mb/s",
    "packet_hops": "packet-hops",
    "cpu_s": "CPU s",
    "mhops_per_cpu_s": "M hops/CPU-s",
    "ns_per_hop": "ns/hop",
    "events_per_hop": "events/hop",
    "bytes_per_flow": "bytes/flow",
    "setup_s": "set-up CPU s",
}


def print_table(results: list[dict[str, Any]], out: TextIO | None = None) -> None:
    from rich.table import Table

    from racc.display import console

    t = Table(title="racc bench", title_justify="left")
    for k in TABLE_KEYS:
        t.add_column(HEADINGS[k], justify="right", overflow="fold")
    for r in results:
        t.add_row(*(_fmt(k, r.get(k)) for k in TABLE_KEYS))
    c = console()
    if out is not None and out is not sys.stdout:
        from rich.console import Console

        c = Console(file=out, width=200)
    c.print(t)


def _fmt(key: str, v: Any) -> str:
    if v is None:
        return "NA"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if key in _INT:
        return str(round(v))
    if key in _FIXED:
        return f"{v:.{_FIXED[key]}f}"
    return f"{v:g}"
