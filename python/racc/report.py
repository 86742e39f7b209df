"""``report.html``: one self-contained page (inline CSS, PNGs as base64) that opens offline."""

from __future__ import annotations

import base64
import html
import json
import os
from pathlib import Path
from typing import Any

from racc import tables

MAX_RESOLVED_CHARS = 300_000  # larger resolved scenarios stay in scenario.resolved.json
PLOT_ORDER = ["throughput.png", "cwnd.png", "queue.png", "utilisation.png", "fct.png"]

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;max-width:1100px;
color:#222;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0;font-size:.92em}
td,th{border:1px solid #ddd;padding:.25em .6em;text-align:right}
td:first-child,th:first-child{text-align:left}th{background:#f4f4f4}
pre{background:#f7f7f7;border:1px solid #ddd;padding:.8em;overflow:auto;font-size:.85em}
img{max-width:100%;border:1px solid #eee;margin:.4em 0}.meta{color:#666;font-size:.9em}
"""


def write(res: Any, path: str | os.PathLike, plots_dir: str | os.PathLike | None = None) -> Path:
    """Write the report for ``res``; embeds every PNG found in ``plots_dir``."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(render(res, plots_dir), encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def render(res: Any, plots_dir: str | os.PathLike | None = None) -> str:
    """The report as an HTML string."""
    s = res.summary
    run = s.get("run", {})
    e = html.escape
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>racc: {e(res.name)}</title><style>{CSS}</style></head><body>",
        f"<h1>racc run: {e(res.name)}</h1>",
        f"<p class='meta'>{e(_meta_line(run))}</p>",
        "<h2>Totals</h2>",
        _table(None, tables.totals_rows(s)),
    ]
    caps = {}
    if res.port_info.height and "capacity_bps" in res.port_info.columns:
        caps = dict(zip(res.port_info.get_column("port").to_list(), res.port_info.get_column("capacity_bps").to_list()))
    header, rows, note = tables.port_rows(s, caps, full=True)
    if rows:
        parts += [
            "<h2>Ports</h2>",
            f"<p class='meta'>{e(tables.PORT_TITLE)}{e(', ' + note if note else '')}</p>",
            _table(header, rows),
        ]
    parts += ["<h2>Flows</h2>", _table(None, tables.flow_rows(s))]
    bins = tables.fct_bin_rows(s)
    if bins:
        parts += [
            "<h3>Flow completion time by size</h3>",
            _table(["flow size", "flows", "mean FCT", "median FCT"], bins),
        ]
    parts += _flow_groups(res)
    imgs = _images(plots_dir)
    if imgs:
        parts.append("<h2>Plots</h2>")
        for name, b64 in imgs:
            parts.append(f"<figure><img alt='{e(name)}' src='data:image/png;base64,{b64}'></figure>")
    if res.scenario_text is not None:
        parts += ["<h2>Scenario</h2>", f"<pre>{e(res.scenario_text)}</pre>"]
    if run.get("overrides"):
        parts += ["<p class='meta'>overrides: " + e(", ".join(run["overrides"])) + "</p>"]
    raw = getattr(res.resolved, "text", None)  # the engine's text, not parsed yet (racc.resolved)
    if raw or res.resolved:
        # A large one is not parsed just to say it is large.
        text = raw if raw is not None and len(raw) > MAX_RESOLVED_CHARS else json.dumps(dict(res.resolved), indent=1)
        if len(text) <= MAX_RESOLVED_CHARS:
            parts += ["<details><summary>Resolved scenario (as run)</summary>", f"<pre>{e(text)}</pre></details>"]
        else:
            parts.append(
                f"<p class='meta'>The resolved scenario ({len(text) // 1000} kB) is in "
                "scenario.resolved.json next to this report.</p>"
            )
    parts.append("</body></html>\n")
    return "\n".join(p for p in parts if p)


def _meta_line(run: dict) -> str:
    bits = [
        f"source {run['source']}" if run.get("source") else "",
        f"seed {run['seed']}" if run.get("seed") is not None else "",
        f"racc {run['racc_version']}" if run.get("racc_version") else "",
        f"started {run['started_utc']}" if run.get("started_utc") else "",
    ]
    return " · ".join(b for b in bits if b)


def _flow_groups(res: Any) -> list[str]:
    info = res.flow_info
    if info.height == 0 or not {"group", "protocol"} <= set(info.columns):
        return []
    import polars as pl

    g = (
        info.group_by("group", "protocol")
        .agg(pl.len().alias("n"), pl.col("rtt_prop_s").mean().alias("rtt"))
        .sort("group", "protocol")
    )
    rows = [
        [str(r["group"]), str(r["protocol"]), tables.fmt_num(r["n"]), tables.fmt_time(r["rtt"])]
        for r in g.iter_rows(named=True)
    ]
    return ["<h3>Flow groups</h3>", _table(["group", "protocol", "flows", "mean propagation RTT"], rows)]


def _images(plots_dir: str | os.PathLike | None) -> list[tuple[str, str]]:
    if plots_dir is None or not Path(plots_dir).is_dir():
        return []
    files = sorted(
        Path(plots_dir).glob("*.png"),
        key=lambda p: (PLOT_ORDER.index(p.name) if p.name in PLOT_ORDER else len(PLOT_ORDER), p.name),
    )
    return [(p.stem, base64.b64encode(p.read_bytes()).decode("ascii")) for p in files]


def _table(header: list[str] | None, rows: list[list[str]]) -> str:
    e = html.escape
    out = ["<table>"]
    if header:
        out.append("<tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr>")
    out += ["<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in r) + "</tr>" for r in rows]
    out.append("</table>")
    return "".join(out)
