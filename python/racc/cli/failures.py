"""The one place where an error escaping a ``racc`` command becomes one ``error:`` line: the
file or argument and the reason, never a traceback and never a file's content."""

from __future__ import annotations

import argparse
import errno
import os
import re
import sys
from pathlib import Path

from racc.cli.common import EXIT_ENV, EXIT_INPUT, EXIT_INTERRUPT, fail

#: racc's temporary siblings (`.NAME.tmp-PID-HEX`, `.NAME.old-...`): named as the file they become.
_TEMP = re.compile(r"^\.(?P<name>.+)\.(?:tmp|old)-\d+-[0-9a-f]+$")

_REASONS = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EBUSY: "busy (a mount point or a file in use cannot be replaced)",
    errno.EISDIR: "is a directory",
    errno.ENOTDIR: "a part of the path is not a directory",
    errno.EXDEV: "on another file system than its folder",
}


def shown_path(name: object) -> str:
    """A file name for a message: a temporary sibling is called by the file it was to become."""
    from racc.inputs import escape

    p = Path(os.fsdecode(name)) if isinstance(name, (str, bytes, os.PathLike)) else Path(str(name))
    m = _TEMP.match(p.name)
    if m:
        p = p.with_name(m.group("name"))
    return escape(str(p), 200)


def os_error(exc: OSError, args: argparse.Namespace) -> str:
    """``FILE: reason`` for an OS error, or the argument it concerns."""
    reason = _REASONS.get(exc.errno or -1) or (exc.strerror or type(exc).__name__).lower()
    if exc.filename is not None:
        return f"{shown_path(exc.filename)}: {reason}"
    sched = getattr(args, "scheduler", None)
    if sched:
        return f"--scheduler {sched}: cannot reach the Dask scheduler ({_first_line(exc) or reason})"
    return f"{reason} ({_first_line(exc)})" if _first_line(exc) else reason


def _first_line(exc: BaseException) -> str:
    from racc.inputs import escape

    text = str(exc).strip().splitlines()
    return escape(text[0], 200) if text else ""


def handle(exc: BaseException, args: argparse.Namespace) -> int:
    """The exit status for ``exc`` after its one line on stderr; re-raises what is not an error
    of input or environment (a bug keeps its traceback)."""
    from racc.errors import CoreUnavailable, Interrupted, ResultsError, ScenarioError

    if isinstance(exc, (ScenarioError, ResultsError)):
        return fail(str(exc), EXIT_INPUT)
    if isinstance(exc, CoreUnavailable):
        return fail(str(exc), EXIT_ENV)
    if isinstance(exc, KeyboardInterrupt):
        msg = exc.message if isinstance(exc, Interrupted) else "interrupted; no results were written"
        return fail(msg, EXIT_INTERRUPT)
    if isinstance(exc, BrokenPipeError):  # `racc ... | head`: the reader has gone, nothing left to say
        sys.stderr.close()
        return 0
    if isinstance(exc, (TimeoutError, OSError)):
        return fail(os_error(exc, args) if isinstance(exc, OSError) else str(exc), EXIT_ENV)
    if isinstance(exc, RecursionError):
        return fail("input nested too deeply to read", EXIT_INPUT)
    polars = sys.modules.get("polars")
    if polars is not None and isinstance(exc, polars.exceptions.PolarsError):  # writing a table
        return fail(f"{type(exc).__name__}: {_first_line(exc)}", EXIT_ENV)
    raise exc
