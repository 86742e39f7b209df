"""Running ns-2: find the ``ns`` binary, run a script in its own folder, report failures.

Only ``racc crosscheck ns2`` needs ns-2; nothing else in racc looks for it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import IO

INSTALL_HINT = "install ns-2.35 with `apt-get install ns2` (the Debian/Ubuntu package ns2)"
VCP_HINT = (
    "build ns-2.35 with the VCP authors' code as docs/PROTOCOLS.md says (\"VCP against its authors' "
    'ns-2 code") and give its `ns` with --ns PATH or RACC_NS2_VCP'
)


class NsMissing(Exception):
    """``ns`` is not on PATH."""


class NsFailed(Exception):
    """``ns`` ran but did not finish the script."""


def find(path: str | None = None) -> str:
    """Path of the ``ns`` binary (``path``, else ``RACC_NS``, else PATH), or :class:`NsMissing`."""
    exe = path or os.environ.get("RACC_NS") or shutil.which("ns")
    if not exe or not os.access(exe, os.X_OK):
        raise NsMissing(f"ns-2 (`ns`) is not installed or not on PATH: {INSTALL_HINT}")
    return exe


def find_vcp(path: str | None = None) -> str:
    """Path of an ``ns`` built with the VCP authors' code (``--ns``, else ``RACC_NS2_VCP``), or
    :class:`NsMissing` saying how to build one."""
    exe = path or os.environ.get("RACC_NS2_VCP")
    if not exe:
        raise NsMissing(f"ns-2 with the VCP authors' code is not given: {VCP_HINT}")
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        raise NsMissing(f"--ns {exe}: not an executable file; {VCP_HINT}")
    script = "puts [expr {[catch {Agent/TCP/Reno/VcpSrc info superclass}] ? 0 : 1}]; exit 0\n"
    p = subprocess.run([exe], input=script, capture_output=True, text=True, timeout=60, check=False)
    if not p.stdout.strip().endswith("1"):
        raise NsMissing(f"--ns {exe}: this ns has no VCP classes (Agent/TCP/Reno/VcpSrc); {VCP_HINT}")
    return exe


def version(exe: str) -> str:
    """ns-2's version string (``ns-version``), e.g. ``2.35``."""
    script = "puts [ns-version]; exit 0\n"
    p = subprocess.run([exe], input=script, capture_output=True, text=True, timeout=60, check=False)
    return p.stdout.strip().splitlines()[-1] if p.returncode == 0 and p.stdout.strip() else "unknown"


@dataclass
class NsRun:
    """One ns process working in ``workdir`` (``ns2.tcl`` in, ``counters.txt`` and ``ns.log`` out)."""

    proc: subprocess.Popen
    workdir: Path
    log: IO[str]

    def running(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.running():
            self.proc.kill()
        self.proc.wait()
        self.log.close()


def start(exe: str, script: str, workdir: Path) -> NsRun:
    """Write ``script`` to ``workdir/ns2.tcl`` and start ns there."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "ns2.tcl").write_text(script, encoding="utf-8")
    log = open(workdir / "ns.log", "w", encoding="utf-8")  # noqa: SIM115 - closed by finish() or kill()
    proc = subprocess.Popen([exe, "ns2.tcl"], cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
    return NsRun(proc, workdir, log)


def finish(run: NsRun, what: str) -> Path:
    """Wait for ``run``; its counters file, or :class:`NsFailed` with the end of ns's output."""
    rc = run.proc.wait()
    run.log.close()
    counters = run.workdir / "counters.txt"
    if rc != 0 or not counters.exists():
        text = (run.workdir / "ns.log").read_text(encoding="utf-8", errors="replace")
        tail = text.strip().splitlines()[-3:]
        raise NsFailed(f"ns-2 failed on {what} (exit {rc}): {' | '.join(tail) or 'no output'}")
    return counters
