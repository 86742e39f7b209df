"""racc's BPF programs on the kernel's own TCP (docs/KERNEL-BPF.md): build, check, attach.

The C sources are ``kernel/bpf/`` (the BPF objects) and ``kernel/loader/`` (a small loader linked
with libbpf); they are built on first use into ``target/bpf/`` (``RACC_BPF_BUILD`` overrides it)
against a ``vmlinux.h`` dumped from the running kernel's BTF. Each ``attach_*`` starts one loader
process that holds its BPF links and dies with this process, so nothing outlives a run.

- ``available()``: ``None`` when usable, else the one-line reason.
- ``supported(protocol)``: whether the kernel has this protocol (VCP here; the chain family in
  ``racc.kernel.chains``, the congestion-header family in ``racc.kernel.xcc``).
- ``attach_router(netns, ifname, protocol, params, rate_bps)``: the router module as a TCX egress
  program on ``ifname`` inside ``netns``.
- ``attach_hosts(cgroup_path, protocol, params, host_ifaces=())``: the controller (struct_ops,
  ``.cc_name`` for ``TCP_CONGESTION``, one per protocol and process, shared by every call),
  sockops and the receivers' ingress on a cgroup v2 path; ``host_ifaces`` (or
  ``.attach_iface(netns, ifname)``) are the sending hosts' egresses, where data of ``racc_vcp``
  sockets gets the VCP-capable codepoint 01: without them no code travels.

Every handle has ``counters() -> dict[str, int]`` and ``close()``.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from typing_extensions import Self

CC_NAME = "racc_vcp"
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


def build() -> dict[str, Path]:
    """Build what is stale; the paths of the BPF objects, the loader and the law library."""
    out = build_dir()
    out.mkdir(parents=True, exist_ok=True)
    vmlinux = out / "vmlinux.h"
    if not vmlinux.exists():
        r = subprocess.run(
            ["bpftool", "btf", "dump", "file", str(_BTF), "format", "c"], check=False, capture_output=True, text=True
        )
        if r.returncode != 0:
            raise RuntimeError("bpftool could not dump the kernel's BTF")
        tmp = out / f".vmlinux.h.{os.getpid()}.tmp"
        tmp.write_text(r.stdout)
        os.replace(tmp, vmlinux)
    names = sorted({o for k in _KERNEL.values() for o in (k.host_object, k.router_object) if o})
    paths = {name: build_object(name, vmlinux) for name in names}
    exe, src = out / "racc-bpf-loader", _SOURCES / "loader" / "racc_bpf_loader.c"
    if _stale(exe, [src]):
        _compile(["cc", "-O2", "-Wall", str(src), "-lbpf"], exe)
    paths["loader"] = exe
    paths["laws"] = laws_library()
    return paths


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


def available() -> str | None:
    """None when the kernel programs can run here, else the one-line reason."""
    if os.geteuid() != 0:
        return "not root (BPF programs, namespaces and cgroups need root)"
    if not _BTF.exists():
        return f"no BTF at {_BTF} (the kernel needs CONFIG_DEBUG_INFO_BTF)"
    reason = _tools()
    if reason:
        return reason
    if not (_SOURCES / "bpf").is_dir():
        return "the kernel programs' sources (kernel/) are not beside this racc: install it from a source checkout"
    try:
        paths = build()
    except (RuntimeError, OSError) as e:
        return str(e)
    if "bpf_struct_ops_tcp_congestion_ops" not in (paths["vcp_host"].parent / "vmlinux.h").read_text():
        return "the kernel has no struct_ops for tcp_congestion_ops (CONFIG_BPF_JIT, 5.6 or later)"
    return None


def supported(protocol: str) -> bool:
    return protocol in _KERNEL


def cc_name(protocol: str) -> str:
    """The name ``protocol``'s controller registers (``TCP_CONGESTION``)."""
    return _KERNEL[protocol].cc_name


def _check(protocol: str) -> None:
    if not supported(protocol):
        raise ValueError(f"protocol {protocol!r}: not available in the kernel (have: {', '.join(_KERNEL)})")


_FLOW_KEYS = {"t_p", "h", "mu", "alpha", "beta", "sigma_mi", "sigma_ai", "ai_law", "ai_ns2", "md_hold", "iw"}
_ROUTER_KEYS = {"t_p", "t_q", "k_q", "a", "gamma", "queue_term", "ns2_queue_shift"}


def _q(x: float, shift: int) -> int:
    return round(x * (1 << shift))


def _refuse_unknown(params: dict, keys: set[str], what: str) -> None:
    for k in params:
        if k not in keys:
            raise ValueError(f"{what}.{k}: not supported by the kernel programs (have: {', '.join(sorted(keys))})")


def _racc_checks(what: str, check: str, params: dict, *args: object) -> None:
    """racc-proto's own checks of the table (ranges, types), when the engine is built."""
    try:
        from racc import _core
    except ImportError:
        return
    try:
        getattr(_core, check)(json.dumps(params), *args, [])
    except ValueError as e:
        raise ValueError(f"{what}.{str(e).splitlines()[0]}") from None


def law_config(params: dict | None) -> list[int]:
    """A VCP flow's ``params`` as ``struct vcp_law_params`` (kernel/bpf/vcp_law.h), the constants
    racc-proto's ``VcpParams`` defaults to (docs/VCP-CONSTANTS.md)."""
    p = dict(params or {})
    # What the kernel controller does not do, unless set to its default.
    for key, default in (("initial_slow_start", False), ("pacing_gain", None), ("tcp", {})):
        if key in p and p.pop(key) not in (default, None):
            raise ValueError(f"params.{key}: not supported by the kernel controller (the kernel's TCP does this)")
    _refuse_unknown(p, _FLOW_KEYS, "params")
    _racc_checks("params", "vcp_laws_trace", p, 2.0)
    t_p = float(p.get("t_p", 0.2))
    mu = float(p["mu"]) if p.get("mu") is not None else float(p.get("h", 0.25)) * (1 / 0.8 - 1)
    law = p.get("ai_law", "seed001")
    if law not in ("seed001", "ns2"):
        raise ValueError(f'params.ai_law: must be "seed001" or "ns2", got {law!r}')
    ns2 = {"t_d": 0.1, "rtt_low": 0.02, "rtt_high": 0.5, "w": 1.0, "tick": 0.0, **(p.get("ai_ns2") or {})}
    _refuse_unknown(ns2, {"t_d", "rtt_low", "rtt_high", "w", "tick"}, "params.ai_ns2")
    alpha = float(p.get("alpha", 1.0)) * (float(ns2["w"]) if law == "ns2" else 1.0)
    hold = p.get("md_hold", "t_p")
    kinds = {"t_p": 0, "rtt": 1, "2t_p+rtt": 2}
    if isinstance(hold, (int, float)) and not isinstance(hold, bool):
        hold_kind, hold_us = 3, round(float(hold) * 1e6)
    elif hold in kinds:
        hold_kind, hold_us = kinds[hold], 0
    else:
        raise ValueError(f'params.md_hold: must be "t_p", "rtt", "2t_p+rtt" or a number of seconds, got {hold!r}')
    return [
        round(t_p * 1e6),
        _q(math.log2(1 + mu), 30),
        _q(float(p.get("sigma_mi", 2.5)), 24),
        _q(alpha, 24),
        _q(float(p.get("beta", 0.875)), 24),
        1 if law == "ns2" else 0,
        _q(math.sqrt(float(p.get("sigma_ai", 10.0))), 24),
        round(float(ns2["t_d"]) * 1e6),
        _q(float(ns2["rtt_low"]) / float(ns2["t_d"]), 24),
        _q(float(ns2["rtt_high"]) / float(ns2["t_d"]), 24),
        round(float(ns2["tick"]) * 1e6),
        hold_kind,
        hold_us,
        max(1, int(float(p.get("iw", 2.0)))),
    ]


def router_config(params: dict | None, rate_bps: float) -> list[int]:
    """A VCP router's ``router_params`` as ``struct lf_params`` (kernel/bpf/load_factor.h)."""
    p = dict(params or {})
    _refuse_unknown(p, _ROUTER_KEYS, "router_params")
    _racc_checks("router_params", "vcp_load_factor_trace", p, float(rate_bps))
    term = p.get("queue_term", "a2")
    if term not in ("a2", "ns2"):
        raise ValueError(f'router_params.queue_term: must be "a2" or "ns2", got {term!r}')
    if not rate_bps > 0:
        raise ValueError(f"rate: must be > 0 bit/s, got {rate_bps}")
    t_p = float(p.get("t_p", 0.2))
    gamma = float(p.get("gamma", 0.98))
    return [
        round(t_p * 1e9),
        round(float(p.get("t_q", 0.01)) * 1e9),
        _q(float(p.get("k_q", 0.5)), 16),
        _q(float(p.get("a", 0.875)), 16),
        _q(gamma * rate_bps / 8 * t_p, 8),
        1 if term == "ns2" else 0,
        int(p.get("ns2_queue_shift", 4)),
        round(rate_bps / 8),
    ]


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


def _env(counters: tuple[str, ...] | None) -> dict[str, str] | None:
    return None if counters is None else {**os.environ, "RACC_COUNTERS": ",".join(counters)}


class _Loader:
    """One loader process (kernel/loader/racc_bpf_loader.c): line commands on its stdin, one
    answer line each on its stdout."""

    def __init__(self, args: list[str], what: str, env: dict[str, str] | None = None):
        self.what = what
        self._lock = threading.Lock()
        self._proc = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        line = self._proc.stdout.readline().strip() if self._proc.stdout else ""
        if line != "ready":
            self._proc.wait(timeout=10)
            err = [ln for ln in (self._proc.stderr.read() if self._proc.stderr else "").splitlines() if ln.strip()]
            reason = next((ln for ln in err if ln.startswith("error:")), err[-1] if err else "no output")
            raise RuntimeError(f"{what}: {reason.removeprefix('error: ')}")

    def ask(self, command: str) -> str:
        with self._lock:
            if self._proc.poll() is not None or not self._proc.stdin or not self._proc.stdout:
                raise RuntimeError(f"{self.what}: the loader has exited")
            self._proc.stdin.write(command + "\n")
            self._proc.stdin.flush()
            answer = self._proc.stdout.readline().strip()
        if answer.startswith("error:") or not answer:
            raise RuntimeError(f"{self.what}: {answer.removeprefix('error: ') or 'the loader has exited'}")
        return answer

    def counters(self) -> dict[str, int]:
        return {k: int(v) for k, v in json.loads(self.ask("counters")).items()}

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                if self._proc.stdin:
                    self._proc.stdin.close()
                self._proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()


class Handle:
    """What one ``attach_*`` attached; ``close()`` (or this process's end) detaches it."""

    cc_name: str | None = None

    def __init__(self, loader: _Loader):
        self._loader = loader

    def counters(self) -> dict[str, int]:
        return self._loader.counters()

    def close(self) -> None:
        self._loader.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Controller:
    """The registered controller of a protocol in this process, shared by every host attached
    to it (the socket storage it reads must be the one all their sockops write)."""

    def __init__(self, loader: _Loader, config: list[int]):
        self.loader, self.config, self.users = loader, config, 0


_controllers: dict[str, _Controller] = {}
_controllers_lock = threading.Lock()
_next_id = itertools.count(1)


class HostsHandle(Handle):
    """End hosts on one cgroup, sharing their protocol's controller with every other
    ``attach_hosts`` of this process; ``counters()`` are the controller's (all its hosts)."""

    def __init__(self, protocol: str, controller: _Controller):
        super().__init__(controller.loader)
        self.cc_name = _KERNEL[protocol].cc_name
        self._protocol, self._controller, self._id = protocol, controller, next(_next_id)
        self._closed = False

    def attach_iface(self, netns: str, ifname: str) -> None:
        """The senders' egress (ECN 01 on racc_vcp data) on ``ifname`` in ``netns``; nothing for
        a protocol whose hosts have no such program (the congestion header travels as a TCP
        option that sockops writes)."""
        spec = _KERNEL[self._protocol]
        if not spec.host_iface:
            return
        self._loader.ask(f"iface {self._id} {netns}:{ifname}")
        if spec.gso_off:
            from racc.kernel.machine import offloads_off
            from racc.kernel.network import in_ns

            in_ns(netns, offloads_off, ifname)

    def close(self) -> None:
        with _controllers_lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._loader.ask(f"detach {self._id}")
            except RuntimeError:
                pass
            self._controller.users -= 1
            if self._controller.users == 0:
                _controllers.pop(self._protocol, None)
                self._loader.close()


def attach_sockops(cgroup_path: str, name: str, prog: str) -> Handle:
    """One sockops program `prog` of kernel/bpf/NAME.bpf.c on a cgroup (the tests' echo forger)."""
    paths = build()
    args = [str(paths["loader"]), "sockops", str(build_object(name)), cgroup_path, prog]
    return Handle(_Loader(args, f"{prog} on {cgroup_path}"))


def _csv(values: list[int]) -> str:
    return ",".join(str(v) for v in values)


def attach_router(netns: str, ifname: str, protocol: str, params: dict | None, rate_bps: float) -> Handle:
    """The router module of ``protocol`` at the egress of ``ifname`` in ``netns``, for a port of
    ``rate_bps`` (the virtual queue drains at it; ρ's denominator γ·C·t_p)."""
    _check(protocol)
    spec = _KERNEL[protocol]
    if spec.router_object is None or spec.router_config is None:
        raise ValueError(f"router {protocol!r}: no router module in the kernel")
    cfg = spec.router_config(params, rate_bps)
    paths = build()
    args = [str(paths["loader"]), "router", str(paths[spec.router_object]), netns, ifname, _csv(cfg)]
    return Handle(_Loader(args, f"router on {netns}/{ifname}", _env(spec.router_counters)))


def attach_hosts(
    cgroup_path: str, protocol: str, params: dict | None, host_ifaces: list[tuple[str, str]] | tuple = ()
) -> HostsHandle:
    """The end hosts of ``protocol`` on ``cgroup_path``: sockops (the echo written and parsed)
    and the receivers' ingress; and the senders' egress on each ``(netns, ifname)`` of
    ``host_ifaces`` (or later ``attach_iface``), without which data leaves Not-ECT and no code
    comes back. The controller (``.cc_name``) is registered by this process's first call for the
    protocol and shared by the next ones, which must bring the same parameters; it goes when the
    last handle closes."""
    _check(protocol)
    spec = _KERNEL[protocol]
    cfg = spec.law_config(params)
    with _controllers_lock:
        ctl = _controllers.get(protocol)
        if ctl is not None and ctl.config != cfg:
            raise ValueError(
                f"params: the kernel runs one {protocol} parameter table at a time, "
                "and another one is attached in this process"
            )
        if ctl is None:
            paths = build()
            args = [str(paths["loader"]), "hosts", str(paths[spec.host_object]), _csv(cfg)]
            loader = _Loader(args, f"{protocol} controller", _env(spec.host_counters))
            ctl = _controllers[protocol] = _Controller(loader, cfg)
        ctl.users += 1
        h = HostsHandle(protocol, ctl)
    try:
        h._loader.ask(f"cgroup {h._id} {cgroup_path}")
        for netns, ifname in host_ifaces:
            h.attach_iface(netns, ifname)
    except RuntimeError:
        h.close()
        raise
    return h


register("vcp", KernelProtocol("vcp_host", "vcp_router", CC_NAME, law_config, router_config))

# The chain family and the congestion-header family register themselves (racc.kernel.chains and
# racc.kernel.xcc import this module).
from racc.kernel import chains as _chains  # noqa: F401
from racc.kernel import xcc as _xcc  # noqa: F401
