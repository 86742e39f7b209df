"""What every ``racc`` command shares: the parser class, exit statuses, the scenario options
(``--set``, ``--seed``, ``--allow-path``), finding a scenario by path or name, and writing a file
that must not overwrite anything without ``--force``."""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

EXIT_INPUT = 2
EXIT_ENV = 1
EXIT_INTERRUPT = 130


class Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one ``error:`` line like every other input error."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(EXIT_INPUT, f"error: {self.prog}: {message} (see `{self.prog} --help`)\n")


def add_scenario_options(p: argparse.ArgumentParser, *, seed: bool = True, help_set: str = "override a value") -> None:
    """``--set``, ``--seed`` and ``--allow-path``: the options of every command that reads a scenario."""
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE", help=help_set)
    if seed:
        p.add_argument("--seed", type=int, help="set the scenario's top-level seed")
    p.add_argument(
        "--allow-path",
        dest="allow_paths",
        action="append",
        default=[],
        metavar="DIR",
        help="also read trace files under DIR (by default only under the scenario file's folder; repeatable)",
    )


def apply_allow(args: argparse.Namespace) -> None:
    """Pass ``--allow-path`` on (through the environment, so that local workers see it too)."""
    dirs = getattr(args, "allow_paths", None)
    if dirs:
        from racc import inputs

        for d in dirs:
            if not Path(d).is_dir():
                from racc.errors import ScenarioError

                raise ScenarioError(f"--allow-path {inputs.escape(d)}: not a folder")
        inputs.allow(dirs)


def fail(msg: str, status: int) -> int:
    """One ``error:`` line on stderr (control characters escaped); the exit status."""
    from racc.inputs import escape

    print(f"error: {escape(msg, 2000)}", file=sys.stderr)
    return status


def scenario_path(name: str) -> Path:
    """A scenario file by path, or by its name (under a ``scenarios/`` folder here or above, then
    among the shipped ones); ``scenarios/NAME.toml`` of a shipped scenario works from any folder.
    A name is never read as TOML text, whatever characters (``=``) it holds."""
    from racc import catalog
    from racc.errors import ScenarioError
    from racc.inputs import escape

    path = Path(name)
    if not path.exists() and path.suffix == "" and len(path.parts) == 1 and "=" not in name:
        path = catalog.resolve(name) or path
    if not path.exists() and path.suffix == ".toml" and path.parent.as_posix() in (".", "scenarios"):
        path = catalog.shipped(path.stem) or path
    if not path.exists():
        raise ScenarioError(f"{escape(name, 160)}: file not found (shipped scenarios: `racc scenario list`)")
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):  # for every command, whichever reader comes next: a FIFO never blocks
        from racc.inputs import kind

        raise ScenarioError(f"{escape(name, 160)}: is {kind(mode)}, not a regular file; only regular files are read")
    return path


def check_new_file(dest: Path, force: bool, option: str) -> None:
    """Refuse, before any work, to write ``dest`` (the file ``option`` names) over something:
    an existing file needs ``force``; a directory, device, FIFO or symlink is never replaced; the
    folder it goes in must be writable."""
    from racc.errors import ResultsError
    from racc.inputs import kind

    try:
        st = os.lstat(dest)
    except FileNotFoundError:
        st = None
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            raise ResultsError(f"{option} {dest}: is a symbolic link; refusing to replace it")
        if not stat.S_ISREG(st.st_mode):
            raise ResultsError(f"{option} {dest}: is {kind(st.st_mode)}, not a regular file; refusing to replace it")
        if not force:
            raise ResultsError(f"{option} {dest}: exists; pass --force to replace it")
    check_writable_folder(dest.parent, option, dest)


def check_writable_folder(folder: Path, option: str, dest: Path) -> None:
    """Refuse ``dest`` when the nearest existing folder on its way cannot be written."""
    from racc.errors import ResultsError

    here = folder if str(folder) else Path(".")
    while not here.exists() and here != here.parent:
        here = here.parent
    if here.exists() and not here.is_dir():
        raise ResultsError(f"{option} {dest}: {here} is not a folder")
    if not os.access(here, os.W_OK | os.X_OK):
        raise ResultsError(f"{option} {dest}: cannot write in {here} (read-only or no permission)")


@contextlib.contextmanager
def new_file(dest: Path) -> Iterator[Path]:
    """A temporary sibling of ``dest`` to write, renamed to ``dest`` only when the block ends
    without error (an interrupted write leaves nothing that looks finished)."""
    import secrets

    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / f".{dest.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        yield tmp
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def version() -> str:
    import racc

    return racc.__version__


def cell(v: object) -> str:
    if isinstance(v, (list, tuple)):
        return ", ".join(map(str, v))
    return "" if v is None else str(v)


def rel(p: Path) -> str:
    try:
        return str(p.relative_to(Path.cwd()))
    except ValueError:
        return str(p)


def fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "" if v is None else str(v)


def check_out(out: Path, force: bool) -> None:
    """Refuse ``--out`` before the run: not racc's own folder, racc's own without ``--force``,
    a mount point (replaced by renaming, which a mount point refuses), or not writable."""
    from racc.errors import ResultsError
    from racc.results import check_replaceable

    check_replaceable(out, force)
    if out.is_dir() and os.path.ismount(out):
        raise ResultsError(
            f"--out {out}: is a mount point; racc replaces a results folder by renaming it, "
            "which a mount point refuses: name a folder inside it"
        )
    check_writable_folder(out.parent, "--out", out)
