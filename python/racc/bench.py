"""``racc bench``: the standard benchmark at several flow counts, one fresh process each,
printed as a table (``--json``: JSON; ``--kv``: one ``key=value`` line per run in a fixed key
order, the format of earlier versions)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from typing import Any, TextIO

DEFAULT_FLOWS = (1, 10, 100, 1000)

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
_FIXED = {"util": 4, "goodput_mbps": 3, "wall_s": 3}


class BenchError(RuntimeError):
    """A benchmark worker failed."""


def run_one(flows: int, simtime: float = 60.0, seed: int = 1) -> dict[str, Any]:
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


def main(
    flows: Iterable[int] | None = None,
    simtime: float = 60.0,
    seed: int = 1,
    out: TextIO | None = None,
    style: str = "kv",
) -> list[dict[str, Any]]:
    """Run the benchmark for each flow count. ``style``: "kv" prints each ``key=value`` line as soon
    as it is known; "table" a table at the end (with a line on stderr as each run starts); "json"
    one JSON list at the end. Returns the results."""
    out = out or sys.stdout
    results = []
    for n in flows or DEFAULT_FLOWS:
        if style != "kv":
            print(f"bench: {n} flows, {simtime:g} s simulated ...", file=sys.stderr, flush=True)
        r = run_one(n, simtime, seed)
        r.setdefault("sim", "racc")
        r.setdefault("flows", n)
        r.setdefault("simtime", simtime)
        results.append(r)
        if style == "kv":
            print(format_line(r), file=out, flush=True)
    if style == "json":
        out.write(json.dumps([{k: r.get(k) for k in KEYS} for r in results], indent=2) + "\n")
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
    "peak_rss_kb": "peak RSS kB",
}


def print_table(results: list[dict[str, Any]], out: TextIO | None = None) -> None:
    from rich.table import Table

    from racc.display import console

    t = Table(title="racc bench", title_justify="left")
    for k in KEYS:
        t.add_column(HEADINGS[k], justify="left" if k == "sim" else "right", overflow="fold")
    for r in results:
        t.add_row(*(_fmt(k, r.get(k)) for k in KEYS))
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
