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
import os
import subprocess
import threading
from pathlib import Path

from typing_extensions import Self

# The families register themselves in the protocol table when imported: VCP, the chain family and
# the congestion-header family. The names below are re-exported for the callers of this module.
from racc.kernel import chains as _chains  # noqa: F401
from racc.kernel import xcc as _xcc  # noqa: F401
from racc.kernel.bpf_base import (  # noqa: F401
    _BTF,
    _KERNEL,
    _SOURCES,
    KernelProtocol,
    _compile,
    _q,
    _stale,
    _tools,
    build_dir,
    build_object,
    laws_library,
    register,
)
from racc.kernel.vcp_config import CC_NAME, law_config, router_config  # noqa: F401


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
