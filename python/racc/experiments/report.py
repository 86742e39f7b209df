"""An experiment folder's ``report.html``: one self-contained page (inline CSS, figures as base64
PNGs) with the claims table, the paper-style figures and a link to each case's own report."""

from __future__ import annotations

import base64
import html
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from racc.experiments.papers import title
from racc.experiments.printout import summary_lines
from racc.report import CSS

VERDICT_CSS = """
td.v-consistent{color:#176f2c;font-weight:600}td.v-differs{color:#b00020;font-weight:600}
td.v-not-judged-at---quick-scale,td.v-not-run{color:#8a6d00}
td.cause{font-size:90%}p.headline{font-weight:600}
table.claims td,table.claims th{text-align:left;vertical-align:top}
"""


def write(out: Path, payload: Mapping[str, Any], claims: Sequence[Any], figures: Sequence[Path]) -> Path:
    """Write ``out/report.html`` (atomically) from claims.json's ``payload``."""
    path = out / "report.html"
    tmp = out / f".report.html.tmp-{os.getpid()}"
    try:
        tmp.write_text(render(out, payload, claims, figures), encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def render(out: Path, payload: Mapping[str, Any], claims: Sequence[Any], figures: Sequence[Path]) -> str:
    e = html.escape
    name = payload["experiment"]
    scale = "reduced scale (--quick): compare with the paper qualitatively" if payload.get("quick") else "full scale"
    seed = payload.get("seed")
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<link rel='icon' href='data:,'>",  # no favicon request (a console error in browsers)
        f"<title>racc: {e(name)}</title><style>{CSS}{VERDICT_CSS}</style></head><body>",
        f"<h1>racc reproduce {e(name)}</h1>",
        f"<p>{e(payload.get('description', ''))}</p>",
        f"<p class='meta'>{e(payload.get('source', ''))}"
        + (f" — <i>{e(title(payload.get('source', '')))}</i>" if title(payload.get("source", "")) else "")
        + f" · {e(scale)}"
        + (f" · every case with seed {e(str(seed))}" if seed is not None else "")
        + "</p>",
        "<h2>Claims</h2>",
    ]
    for i, line in enumerate(summary_lines(claims, payload.get("headline", ""))):
        parts.append(f"<p class='{'headline' if i == 0 and payload.get('headline') else 'meta'}'>{e(line)}</p>")
    parts.append(
        "<table class='claims'><thead><tr><th>the paper says</th><th>paper's number</th><th>racc's number</th>"
        "<th>acceptance rule (or why not judged)</th><th>verdict</th><th>cause of a difference</th></tr></thead><tbody>"
    )
    for c in claims:
        rule = c.rule_text() if c.verdict in ("consistent", "differs") else (c.note or c.rule)
        if c.verdict in ("consistent", "differs") and c.note and c.rule and c.note != c.rule:
            rule += f" — {c.note}"
        cls = "v-" + "".join(ch if ch.isalnum() else "-" for ch in c.verdict)
        parts.append(
            f"<tr class='claim'><td>{e(c.claim)}</td><td>{e(c.paper)}</td><td>{e(c.measured)}</td>"
            f"<td>{e(rule)}</td><td class='{cls}'>{e(c.verdict)}</td>"
            + (
                f"<td class='cause'><b>{e(c.cause.kind)}</b>: {e(c.cause.text)}<br><i>evidence:</i> {e(c.cause.evidence)}</td>"
                if c.cause is not None
                else "<td></td>"
            )
            + "</tr>"
        )
    parts.append("</tbody></table>")
    if figures:
        parts.append("<h2>Figures</h2>")
        for f in figures:
            data = base64.b64encode(f.read_bytes()).decode("ascii")
            parts.append(f"<figure><img alt='{e(f.stem)}' src='data:image/png;base64,{data}'>")
            parts.append(f"<figcaption class='meta'>{e(f.name)}</figcaption></figure>")
    cases = list(payload.get("cases_run", []))
    parts.append("<h2>Cases</h2><ul>")
    for case in cases:
        own = out / case / "report.html"
        link = f"<a href='{e(case)}/report.html'>{e(case)}</a>" if own.exists() else e(case)
        parts.append(f"<li>{link} <span class='meta'>(data: {e(case)}/*.parquet, summary.json)</span></li>")
    for case, why in (payload.get("cases_skipped") or {}).items():
        parts.append(f"<li>{e(case)} <span class='meta'>not run: {e(why)}</span></li>")
    parts.append("</ul></body></html>")
    return "\n".join(parts)
