"""What ``racc reproduce`` prints (issue 39 item 4): a summary first (the configuration that
reproduces the paper's figures, claims by verdict and the differing ones by cause), then the claims
that differ with their causes, then the consistent ones; the measured rows and those not judged
are left to claims.json and report.html unless every claim is asked for (``--all-claims``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from racc.experiments.claims import CAUSES, Claim, tally

#: verdicts printed by default, in this order (the rest only with --all-claims)
SHOWN = ("differs", "consistent")
VERDICT_STYLE = {"consistent": "green", "differs": "bold red"}


def summary_lines(claims: Sequence[Claim], headline: str = "") -> list[str]:
    """The summary as plain lines: headline, claims by verdict, "differs" by cause."""
    verdicts, causes = tally(claims)
    order = ["consistent", "differs", "measured"] + sorted(set(verdicts) - {"consistent", "differs", "measured"})
    lines = [headline] if headline else []
    lines.append(
        f"{len(claims)} claims: " + ", ".join(f"{verdicts[v]} {v}" for v in order if verdicts.get(v))
        if claims
        else "no claims"
    )
    if causes:
        kinds = [k for k in CAUSES if k in causes] + (["none"] if "none" in causes else [])
        lines.append("differs, by cause: " + ", ".join(f"{k} {causes[k]}" for k in kinds))
    return lines


def rule_shown(c: Claim) -> str:
    """The acceptance rule column (as the claims table has always shown it)."""
    rule = c.rule_text() if c.verdict in ("consistent", "differs") else (c.note or c.rule)
    if c.verdict in ("consistent", "differs") and c.note and c.rule and c.note != c.rule:
        rule += f" — {c.note}"
    return rule


def print_reproduction(rep: Any, console: Any, title: str, all_claims: bool = False) -> None:
    """Print ``rep`` (a :class:`racc.experiments.Reproduction`) on ``console`` (a rich console)."""
    from rich.markup import escape
    from rich.table import Table

    console.print(f"[bold]{escape(title)}[/bold]")
    for i, line in enumerate(summary_lines(rep.claims, rep.headline)):
        console.print(escape(line), style="bold" if i == 0 and rep.headline else None)
    shown = list(rep.claims) if all_claims else [c for v in SHOWN for c in rep.claims if c.verdict == v]
    if shown:
        t = Table(show_lines=True)
        for c in ("the paper says", "paper's number", "racc's number", "acceptance rule (or why not judged)"):
            t.add_column(c, overflow="fold")
        t.add_column("verdict and cause", overflow="fold")
        for c in shown:
            style = VERDICT_STYLE.get(c.verdict)
            v = f"[{style}]{c.verdict}[/{style}]" if style else c.verdict
            if c.cause is not None:
                v += "\n" + escape(c.cause.line())
            t.add_row(*(escape(x) for x in (c.claim, c.paper, c.measured, rule_shown(c))), v)
        console.print(t)
    left = len(rep.claims) - len(shown)
    if left:
        console.print(
            f"{left} more rows (measured, not judged, not run): in claims.json and report.html; --all-claims prints them"
        )
