"""``racc crosscheck ns2 SCENARIO``: the command-line glue (cli.py hands its arguments here).

Exit codes as the rest of the CLI: 2 for bad input and for a missing ``ns`` (one ``error:`` line
that says how to install it), 1 when ns-2 fails on a script.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_INPUT = 2
EXIT_ENV = 1


def main(args: argparse.Namespace, path: Path) -> int:
    """Run the cross-check, print the table, save the folder; the exit status."""
    from racc.crosscheck import ns, report, run, save

    out = Path(args.out) if args.out else Path("results") / f"{path.stem}-ns2"
    save.check_replaceable(out)  # refuse before spending time on the runs
    try:
        cc = run.crosscheck_ns2(
            str(path), seeds=args.seeds, window=args.window, overrides=args.overrides, log=run.progress_log()
        )
    except ns.NsMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except ns.NsFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ENV
    save.save(cc, out)
    from rich.console import Console

    console = Console()
    report.print_table(cc, console)
    console.print(f"results: [bold]{out}[/bold]  report: {out / 'report.html'}")
    return 0
