"""The ``racc`` command: run, list, plot, reproduce, sweep, crosscheck, bench.

Each group of subcommands lives in its own module (``run_cmds``: run, arrivals, live;
``catalog_cmds``: list, scenario; ``kernel_cmds``: kernel run; ``reproduce_cmds``: reproduce, plot; ``batch_cmds``: sweep,
crosscheck, bench). Bad input (scenario errors, a missing file, a bad ``--set``, a results folder
that must not be overwritten) prints one ``error: ...`` line on stderr and exits with status 2;
an environment failure (a full disk, a read-only folder, an unreachable scheduler) one line and
status 1 (:mod:`racc.cli.failures`).
"""

from __future__ import annotations

import argparse
import sys

from racc.cli import batch_cmds, catalog_cmds, kernel_cmds, reproduce_cmds, run_cmds
from racc.cli.batch_cmds import parse_seeds
from racc.cli.common import EXIT_ENV, EXIT_INPUT, EXIT_INTERRUPT, Parser, apply_allow, version

__all__ = ["EXIT_ENV", "EXIT_INPUT", "EXIT_INTERRUPT", "build_parser", "main", "parse_seeds"]

#: Seconds to wait for a ``--scheduler`` before saying it cannot be reached (dask's default is 30).
SCHEDULER_TIMEOUT = "5s"


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="racc", description="Router-assisted congestion control: packet-level simulator.")
    p.add_argument("--version", action="version", version=f"racc {version()}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    run_cmds.add(sub)
    catalog_cmds.add(sub)
    reproduce_cmds.add(sub)
    batch_cmds.add(sub)
    kernel_cmds.add(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    import warnings

    from racc.cli import failures
    from racc.scenario import OverrideHint, ScenarioWarning

    def note(message, category, *_args, **_kw):
        if issubclass(category, OverrideHint):
            print(f"note: {message}", file=sys.stderr)
        elif issubclass(category, ScenarioWarning):
            print(f"warning: {message}", file=sys.stderr)
        else:
            sys.stderr.write(warnings.formatwarning(message, category, *_args[:2]))

    warnings.showwarning = note
    if getattr(args, "scheduler", None):
        import os

        os.environ.setdefault("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT", SCHEDULER_TIMEOUT)
    try:
        apply_allow(args)
        return args.func(args)
    except BaseException as exc:
        if isinstance(exc, SystemExit):
            raise
        return failures.handle(exc, args)


if __name__ == "__main__":
    sys.exit(main())
