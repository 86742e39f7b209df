"""The ground floor of the kernel programs (docs/KERNEL-BPF.md): building an object of
``kernel/bpf/`` with clang against the running kernel's BTF, the user-space law library for the
differential tests, fixed-point conversion, and the entry every protocol family registers
(``KernelProtocol``). ``racc.kernel.bpf`` (attaching) and the families (``vcp_config``,
``chains``, ``xcc``) build on it; it imports none of them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[3]
_SOURCES = _ROOT / "kernel"
_BTF = Path("/sys/kernel/btf/vmlinux")


def build_dir() -> Path:
    return Path(os.environ.get("RACC_BPF_BUILD") or _ROOT / "target" / "bpf")


def _tools() -> str | None:
    for tool in ("clang", "bpftool", "cc"):
        if shutil.which(tool) is None:
            return f"{tool} not found (scripts/setup.sh installs clang, llvm, libbpf-dev and bpftool)"
    if not Path("/usr/include/bpf/libbpf.h").exists():
        return "libbpf headers not found (scripts/setup.sh installs libbpf-dev)"
    return None


def _stale(target: Path, sources: list[Path]) -> bool:
    return not target.exists() or any(s.stat().st_mtime > target.stat().st_mtime for s in sources)


def _compile(cmd: list[str], out: Path) -> None:
    """Run a compiler with ``-o`` a temporary file, then move it to ``out``: two processes
    building at once (pytest's workers) never read a half-written file."""
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    r = subprocess.run([*cmd, "-o", str(tmp)], check=False, capture_output=True, text=True)
    if r.returncode != 0:
        tmp.unlink(missing_ok=True)
        last = (r.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"building {out.name} failed: {last}")
    os.replace(tmp, out)


def build_object(name: str, vmlinux: Path | None = None) -> Path:
    """kernel/bpf/NAME.bpf.c compiled for BPF (if stale) into the build tree."""
    out = build_dir()
    vmlinux = vmlinux or out / "vmlinux.h"
    src, obj = _SOURCES / "bpf" / f"{name}.bpf.c", out / f"{name}.bpf.o"
    if _stale(obj, [src, vmlinux, *(_SOURCES / "bpf").glob("*.h")]):
        _compile(
            ["clang", "-O2", "-g", "-target", "bpf", "-mcpu=v3", "-D__TARGET_ARCH_x86", f"-I{out}", "-c", str(src)], obj
        )
    return obj


def laws_library() -> Path:
    """The user-space build of the very headers the BPF objects use (the differential tests);
    needs only a C compiler, no BTF and no root."""
    out = build_dir()
    out.mkdir(parents=True, exist_ok=True)
    bpf = _SOURCES / "bpf"
    lib, src = out / "libracc_laws.so", _SOURCES / "laws" / "laws_lib.c"
    if _stale(lib, [src, *bpf.glob("*.h")]):
        _compile(["cc", "-O2", "-shared", "-fPIC", f"-I{bpf}", str(src)], lib)
    return lib


def _q(x: float, shift: int) -> int:
    return round(x * (1 << shift))


@dataclass(frozen=True)
class KernelProtocol:
    """What the kernel runs for one protocol: its objects (kernel/bpf/NAME.bpf.c), the name its
    controller registers, the configuration of each, and its counters' names (None: the
    loader's, VCP's)."""

    host_object: str
    router_object: str | None
    cc_name: str
    law_config: Callable[[dict | None], list[int]]
    router_config: Callable[[dict | None, float], list[int]] | None
    host_counters: tuple[str, ...] | None = None
    router_counters: tuple[str, ...] | None = None
    #: The hosts' object has a tc program for the senders' interfaces (VCP's ECN 01).
    host_iface: bool = True
    #: TSO/GSO off on the senders' interfaces: every data segment leaves as its own skb, so that
    #: routers write each its own digit (a GSO skb carries one ECN field for all its segments).
    gso_off: bool = False


_KERNEL: dict[str, KernelProtocol] = {}


def register(protocol: str, spec: KernelProtocol) -> None:
    """Make ``protocol`` runnable in the kernel (each protocol family's module calls this)."""
    _KERNEL[protocol] = spec
