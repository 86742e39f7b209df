"""The side-by-side table, on the console (rich, like the rest of the CLI) and as ``report.html``."""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

from racc.report import CSS
from racc.tables import fmt_time

RULE = (
    "agree: the seed means differ by no more than the larger seed range (max − min over seeds); "
    "– with fewer than two seeds"
)
NOTES = [
    (
        "Both sides run racc's resolved scenario: ns-2 gets racc's start times, flow sizes, Poisson arrival "
        "lists, buffer limits and routes; only the random draws of RED and of loss cannot be shared."
    ),
    (
        "ns-2 marks are CE-marked departures (QueueMonitor pmarks_), counted only at ports that can mark "
        "(RED with action = mark); a marking port after another also counts what the first marked."
    ),
    (
        "A flow's retransmissions and timeouts are read at the samples taken while it runs, on both sides: "
        "what a finite flow does after its last sample is not counted."
    ),
    "SACK flows run ns-2's Sack1 agent, whose loss recovery is not RFC 6675's.",
    "The matching of every setting is listed in the racc.crosscheck module docstring and in docs/CROSSCHECK.md.",
]


def cell(kind: str, mean: Any, lo: Any, hi: Any, seeds: int) -> str:
    """``mean [min–max]`` in the metric's own format; the range only over two seeds or more."""
    if mean is None:
        return "–"
    m = _fmt(kind, mean)
    if seeds < 2:
        return m
    return f"{m} [{_fmt(kind, lo)}–{_fmt(kind, hi)}]"


def _fmt(kind: str, x: float) -> str:
    if kind == "util":
        return f"{x:.3f}"
    if kind == "index":
        return f"{x:.4f}"
    if kind == "queue":
        return f"{x:.1f}"
    if kind == "count":
        return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"
    if kind == "time":
        return fmt_time(x)
    return f"{x:.4g}"


def rows(cc: Any) -> list[list[str]]:
    """[section, metric, racc, ns-2, agree] per comparison row; the section only where it starts."""
    out, last = [], None
    for r in cc.comparison.iter_rows(named=True):
        sec = r["section"] if r["section"] != last else ""
        last = r["section"]
        agree = "–" if r["agree"] is None else ("yes" if r["agree"] else "no")
        out.append(
            [
                sec,
                r["metric"],
                cell(r["kind"], r["racc_mean"], r["racc_min"], r["racc_max"], r["racc_n"]),
                cell(r["kind"], r["ns2_mean"], r["ns2_min"], r["ns2_max"], r["ns2_n"]),
                agree,
            ]
        )
    return out


def title(cc: Any) -> str:
    w0, w1 = cc.window
    seeds = ", ".join(map(str, cc.seeds))
    return f"{cc.scenario}: racc vs ns-{cc.ns_version}, seeds {seeds}, window ({w0:g}, {w1:g}] s"


def header(cc: Any) -> list[str]:
    return ["", "metric", "racc mean [range]", f"ns-{cc.ns_version} mean [range]", "agree"]


def print_table(cc: Any, console: Any = None) -> None:
    """The comparison on the console."""
    from rich import box
    from rich.table import Table

    from racc.display import console as make_console

    console = console or make_console()
    t = Table(title=title(cc), title_justify="left", box=box.SIMPLE_HEAD)
    for i, h in enumerate(header(cc)):
        t.add_column(h, justify="right" if i in (2, 3) else "left", style="bold" if i == 0 else None, no_wrap=i != 1)
    for r in rows(cc):
        if r[0] and t.row_count:
            t.add_section()
        t.add_row(*r, style="yellow" if r[4] == "no" else None)
    console.print(t)
    console.print(f"[dim]{RULE}[/dim]")


def write_html(cc: Any, path: Path, racc_version: str) -> Path:
    """``report.html``: the table, what was matched, per-seed values, the ns-2 script."""
    e = html.escape
    w0, w1 = cc.window
    meta = (
        f"source {cc.source} · seeds {', '.join(map(str, cc.seeds))} · window ({w0:g}, {w1:g}] s · "
        f"samples every {cc.interval_s:g} s · racc {racc_version} · ns-{cc.ns_version}"
    )
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>racc vs ns-2: {e(cc.scenario)}</title><style>{CSS}</style></head><body>",
        f"<h1>racc vs ns-{e(cc.ns_version)}: {e(cc.scenario)}</h1>",
        f"<p class='meta'>{e(meta)}</p>",
        "<h2>Side by side</h2>",
        _table(header(cc), rows(cc)),
        f"<p class='meta'>{e(RULE)}</p>",
        "<h2>How the two are matched</h2><ul>" + "".join(f"<li>{e(n)}</li>" for n in NOTES) + "</ul>",
        "<h2>Every seed</h2>",
        _per_seed(cc),
        "<p class='meta'>Each seed's tables: "
        + ", ".join(
            f"<a href='seed-{s}/racc/'>seed-{s}/racc</a>, <a href='seed-{s}/ns2/'>seed-{s}/ns2</a>" for s in cc.seeds
        )
        + " (racc's results-folder format; <code>racc plot</code> draws either).</p>",
    ]
    first = cc.seeds[0]
    parts += [
        f"<details><summary>ns-2 script, seed {first}</summary><pre>{e(cc.scripts[first])}</pre></details>",
        "</body></html>\n",
    ]
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text("\n".join(parts), encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _per_seed(cc: Any) -> str:
    v = cc.values
    cols = [(s, eng) for s in cc.seeds for eng in ("racc", "ns-2")]
    keys = cc.comparison.select("section", "metric", "kind").rows()
    look = {(r["seed"], r["engine"], r["section"], r["metric"]): r["value"] for r in v.iter_rows(named=True)}
    body = [
        [sec, met, *(_fmt(kind, look[(s, eng, sec, met)]) if (s, eng, sec, met) in look else "–" for s, eng in cols)]
        for sec, met, kind in keys
    ]
    return _table(["", "metric", *(f"{eng} {s}" for s, eng in cols)], body)


def _table(head: list[str], body: list[list[str]]) -> str:
    e = html.escape
    out = ["<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in head) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in r) + "</tr>" for r in body]
    return "".join(out) + "</table>"
