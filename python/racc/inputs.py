"""Reading the files a user names (scenarios, traces): regular files only, bounded in size, a
trace kept inside its scenario's folder, and nothing of their content in an error message.

A FIFO, a device or a directory is refused before a byte is read (``open`` with ``O_NONBLOCK``,
then ``fstat`` of the open file, so the check and the read are of the same file). A file larger
than the documented bound is refused from its size, and the read stops at the bound whatever the
size said. A trace file that resolves (after symlinks and ``..``) outside the folder of the
scenario file naming it is refused unless a folder holding it is allowed: ``--allow-path DIR``
on the command line, or :data:`ALLOW_ENV` (folders separated by ``os.pathsep``) for the API.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from racc.errors import ScenarioError

#: A scenario file larger than this is refused (the largest shipped one is a few kB).
MAX_SCENARIO_BYTES = 4 * 2**20
#: A trace file larger than this is refused (10 million rows of CSV take about 400 MB).
MAX_TRACE_BYTES = 512 * 2**20
#: Folders (``os.pathsep``-separated) from which trace files outside their scenario's folder may be read.
ALLOW_ENV = "RACC_ALLOW_PATH"

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def size_text(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("kiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


def read_bytes(path: Path, name: str, limit: int, what: str) -> bytes:
    """The bytes of regular file ``path`` (``name`` is how messages call it), at most ``limit``.

    Raises :class:`ScenarioError` naming ``name`` and the reason, never the content.
    """

    def fail(reason: str) -> ScenarioError:
        return ScenarioError(f"{name}: {reason}")

    try:
        st = os.stat(path)  # no open yet: opening some devices acts on them
    except FileNotFoundError:
        raise fail("file not found") from None
    except OSError as exc:
        raise fail(f"cannot read ({exc.strerror or type(exc).__name__})") from None
    if not stat.S_ISREG(st.st_mode):
        raise fail(f"is {kind(st.st_mode)}, not a regular file; only regular files are read as a {what}")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise fail(f"cannot read ({exc.strerror or type(exc).__name__})") from None
    try:
        st = os.fstat(fd)  # the file opened, which may not be the one stat saw
        if not stat.S_ISREG(st.st_mode):
            raise fail(f"is {kind(st.st_mode)}, not a regular file; only regular files are read as a {what}")
        if st.st_size > limit:
            raise fail(f"{size_text(st.st_size)} is more than a {what} may hold ({size_text(limit)})")
        chunks: list[bytes] = []
        n = 0
        while True:
            b = os.read(fd, min(1 << 20, limit + 1 - n))
            if not b:
                break
            chunks.append(b)
            n += len(b)
            if n > limit:
                raise fail(f"more than a {what} may hold ({size_text(limit)})")
        return b"".join(chunks)
    except OSError as exc:
        raise fail(f"cannot read ({exc.strerror or type(exc).__name__})") from None
    finally:
        os.close(fd)


def read_text(path: Path, name: str, limit: int, what: str) -> str:
    """:func:`read_bytes` decoded as UTF-8; a decoding error names the byte offset only."""
    data = read_bytes(path, name, limit, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def allowed_dirs() -> list[str]:
    """The folders :data:`ALLOW_ENV` allows, resolved."""
    return [os.path.realpath(d) for d in os.environ.get(ALLOW_ENV, "").split(os.pathsep) if d]


def allow(dirs: list[str]) -> None:
    """Allow reading trace files under ``dirs`` in this process and the ones it starts."""
    known = [d for d in os.environ.get(ALLOW_ENV, "").split(os.pathsep) if d]
    os.environ[ALLOW_ENV] = os.pathsep.join(known + [str(Path(d)) for d in dirs])


def inside(path: Path, folder: Path | str) -> bool:
    """Whether ``path`` resolves (symlinks, ``..``) to ``folder`` or below it."""
    real, top = os.path.realpath(path), os.path.realpath(folder)
    try:
        return os.path.commonpath([real, top]) == top
    except ValueError:  # different drives
        return False


def confined(path: Path, base: Path) -> bool:
    """Whether ``path`` may be read for a scenario whose folder is ``base``."""
    return inside(path, base) or any(inside(path, d) for d in allowed_dirs())


def escape(text: str, limit: int = 60) -> str:
    """``text`` with control characters escaped (an ESC or a newline never reaches the terminal
    raw) and cut to ``limit`` characters."""
    out = []
    for ch in text:
        if ch.isprintable() or ch == " ":
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    s = "".join(out)
    return s if len(s) <= limit else s[: limit - 1] + "…"
