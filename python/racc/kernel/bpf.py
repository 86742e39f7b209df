"""racc's BPF programs on the kernel's own TCP (docs/KERNEL-BPF.md): build, check, attach.

The C sources are ``kernel/bpf/`` (the BPF objects) and ``kernel/loader/`` (a small loader linked
with libbpf); they are built on first use into ``target/bpf/`` (``RACC_BPF_BUILD`` overrides it)
against a ``vmlinux.h`` dumped from the running kernel's BTF. Each ``attach_*`` starts one loader
process that holds its BPF links and dies with this process, so nothing outlives a run.

- ``available()``: ``None`` when usable, else the one-line reason.
- ``supported(protocol)``: whether the kernel has this protocol (``"vcp"``, ``"dpcp"``, ``"tpcp"``,
  ``"dcpew"``).
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
from pathlib import Path

from typing_extensions import Self

CC_NAME = "racc_vcp"
_PROTOCOLS = ("vcp", "dpcp", "tpcp", "dcpew")
#: Each protocol's controller (struct_ops name), host object and router object.
CC_NAMES = {"vcp": CC_NAME, "dpcp": "racc_dpcp", "tpcp": "racc_tpcp", "dcpew": "racc_dcpew"}
_HOST_OBJECTS = {"vcp": "vcp_host", "dpcp": "dpcp_host", "tpcp": "tpcp_host", "dcpew": "dcpew_host"}
_ROUTER_OBJECTS = {"vcp": "vcp_router", "dpcp": "dpcp_router", "tpcp": "dpcp_router", "dcpew": "dpcp_router"}
#: Chain lengths of the chain family (MPCP §3: DPCP 2, §5: TPCP 3; DCP-EW §III: pairs).
CHAINS = {"dpcp": 2, "tpcp": 3, "dcpew": 2}
#: The counter slots of the chain family's objects (kernel/bpf/dpcp_common.h, in order).
DPCP_ROUTER_COUNTERS = ("packets", "bytes", "marked", "lowered", "msp", "later", "over", "not_ect", "gso",
                        "flows_evicted")  # fmt: skip
DPCP_HOST_COUNTERS = ("acks", "grow", "ai", "md_events", "md_held", "bleached", "echo_absent", "echo_malformed",
                      "echo_written", "data_coded", "sent_ect1", "loss_halvings", "exceptions", "fallbacks",
                      "resumes", "refinements", "echo_lsp", "congestion_losses", "error_losses",
                      "loss_mds")  # fmt: skip
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
    paths = {
        name: build_object(name, vmlinux)
        for name in ("vcp_host", "vcp_router", "dpcp_host", "tpcp_host", "dcpew_host", "dpcp_router")
    }
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
    return protocol in _PROTOCOLS


def _check(protocol: str) -> None:
    if not supported(protocol):
        raise ValueError(f"protocol {protocol!r}: not available in the kernel (have: {', '.join(_PROTOCOLS)})")


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


#: DPCP's own flow keys (racc-proto `dpcp/params.rs`); the rest are VCP's window laws.
_DPCP_KEYS = {"chain", "xi_cap", "md_on_msp_only", "md_factors", "dpcp_growth", "exception_limit", "resume_after",
              "max_resumes"}  # fmt: skip
#: MPCP Table 1's thresholds (racc-proto `dpcp::levels::THRESHOLDS`) and MD factors.
_THRESHOLDS = (0.20, 0.40, 0.80, 0.85, 0.95, 1.00, 1.05, 1.40, 2.00)
_MD_FACTORS = (0.875, 0.6, 0.43)


def _level_upper(digits: tuple[int, ...]) -> float:
    """The upper bound of a level's ρ interval (`Lf::rho_bounds`), the same float arithmetic."""
    j = (digits[0] - 1) * 3 + (digits[1] - 1)
    lo, hi = (0.0 if j == 0 else _THRESHOLDS[j - 1]), _THRESHOLDS[j]
    for d in digits[2:]:
        split = [lo, lo + (hi - lo) * 1 / 3.0, lo + (hi - lo) * 2 / 3.0, hi]
        lo, hi = split[d - 1], split[d]
    return hi


def dpcp_config(params: dict | None, chain: int) -> list[int]:
    """A DPCP/TPCP flow's ``params`` as ``struct dpcp_params`` (kernel/bpf/dpcp_law.h): VCP's window
    laws (``law_config``), then the decoder's knobs and log2(1 + ξ) per level, ξ = h(1/max(ρ_ub, 0.2)
    − 1) at most ``xi_cap`` (racc-proto `Lf::xi`, `ChainLaws::xi`)."""
    p = dict(params or {})
    own = {k: p.pop(k) for k in list(p) if k in _DPCP_KEYS}
    n = int(own.get("chain", chain))
    if n not in (2, 3):
        raise ValueError(f"params.chain: the kernel programs run chains of 2 (DPCP) or 3 (TPCP), got {n}")
    try:
        from racc import _core

        _core.dpcp_window_trace(json.dumps({**p, **own, "chain": n}), [])
    except ImportError:
        pass
    except ValueError as e:
        raise ValueError(f"params.{str(e).splitlines()[0]}") from None
    growth = own.get("dpcp_growth", "mi+ai")
    if growth not in ("mi+ai", "vcp-like"):
        raise ValueError(f'params.dpcp_growth: must be "mi+ai" or "vcp-like", got {growth!r}')
    h = float(p.get("h", 0.25))
    cap = own.get("xi_cap")
    xis = []
    for idx in range(27):
        digits = tuple(idx // 3 ** (n - 1 - i) % 3 + 1 for i in range(n)) if idx < 3**n else (1,) * n
        xi = 0.0 if digits[0] == 3 else h * (1.0 / max(_level_upper(digits), _THRESHOLDS[0]) - 1.0)
        if cap is not None:
            xi = min(xi, float(cap))
        xis.append(_q(math.log2(1 + xi), 30))
    md = [float(x) for x in own.get("md_factors", _MD_FACTORS)]
    return [
        *law_config(p),
        n,
        int(own.get("exception_limit", 3)),
        _q(float(own.get("resume_after", 8.0)), 8),
        int(own.get("max_resumes", 3)),
        1 if own.get("md_on_msp_only", False) else 0,
        1 if growth == "vcp-like" else 0,
        *(_q(b, 24) for b in md),
        *xis,
    ]


def dpcp_router_config(params: dict | None, rate_bps: float, chain: int, by_ip_id: bool = False) -> list[int]:
    """A DPCP/TPCP/DCP-EW router's ``router_params`` as ``struct dpcp_router_params``
    (kernel/bpf/dpcp_router.bpf.c): VCP's estimator, the chain, the eviction time, latch_lsp, and
    whether the position is the IP ID's LSB (DCP-EW)."""
    p = dict(params or {})
    if by_ip_id:
        if p.pop("per_inner_flow", False) not in (False, None):
            raise ValueError("router_params.per_inner_flow: the kernel runtime has no tunnels (one flow per 4-tuple)")
        if "chain" in p:
            raise ValueError("router_params.chain: not a DCP-EW key (DCP-EW's chains are pairs)")
    n = int(p.pop("chain", chain))
    if n not in (2, 3):
        raise ValueError(f"router_params.chain: the kernel programs run chains of 2 (DPCP) or 3 (TPCP), got {n}")
    evict = float(p.pop("evict_after", 10.0))
    if not evict > 0:
        raise ValueError(f"router_params.evict_after: must be > 0 s, got {evict}")
    latch = p.pop("latch_lsp", False)
    if latch is not True and latch is not False:
        raise ValueError(f"router_params.latch_lsp: must be true or false, got {latch!r}")
    return [*router_config(p, rate_bps), n, round(evict * 1e9), int(latch), int(by_ip_id)]


#: DCP-EW's own flow keys (racc-proto `dcpew/params.rs`) beyond DPCP's.
_DCPEW_KEYS = {"ip_id", "ip_id_seed", "bm_bits", "bm_threshold", "ew_loss_md", "ew_apply_to_rto", "exception_limit"}


def dcpew_config(params: dict | None) -> list[int]:
    """A DCP-EW flow's ``params`` as ``struct dcpew_params`` (kernel/bpf/dcpew_law.h): DPCP's
    (``dpcp_config``, pairs), then the bit map's masks and the loss MD (DCP-EW §III.D)."""
    p = dict(params or {})
    if "chain" in p:
        raise ValueError("params.chain: not a DCP-EW key (DCP-EW's chains are pairs)")
    own = {k: p.pop(k) for k in list(p) if k in _DCPEW_KEYS}
    try:
        from racc import _core

        _core.dcpew_window_trace(json.dumps({**p, **own}), [])
    except ImportError:
        pass
    except ValueError as e:
        raise ValueError(f"params.{str(e).splitlines()[0]}") from None
    if own.get("ip_id", "increment") != "increment":
        raise ValueError(
            'params.ip_id: the kernel runtime reads Linux\'s own IP IDs, which increment per segment: only "increment"'
        )
    if own.get("ew_apply_to_rto", False):
        raise ValueError("params.ew_apply_to_rto: not supported by the kernel controller (an RTO is the kernel's)")
    loss_md = own.get("ew_loss_md", "level")
    kinds = {"level": 0, "half": 1, "none": 2}
    if loss_md not in kinds:
        raise ValueError(f'params.ew_loss_md: must be "level", "half" or "none", got {loss_md!r}')
    limit = own.get("exception_limit")
    cfg = dpcp_config(p, 2)
    cfg[15] = 2**32 - 1 if limit == 0 else int(limit if limit is not None else 3)  # 0: exceptions off
    bits, t = int(own.get("bm_bits", 32)), int(own.get("bm_threshold", 16))
    return [*cfg, (1 << bits) - 1, (1 << t) - 1, kinds[loss_md]]


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


class _Loader:
    """One loader process (kernel/loader/racc_bpf_loader.c): line commands on its stdin, one
    answer line each on its stdout."""

    def __init__(self, args: list[str], what: str):
        self.what = what
        self._lock = threading.Lock()
        self._proc = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
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
        self.cc_name = CC_NAMES[protocol]
        self._protocol, self._controller, self._id = protocol, controller, next(_next_id)
        self._closed = False

    def attach_iface(self, netns: str, ifname: str) -> None:
        """The senders' egress (ECN 01 on this controller's data) on ``ifname`` in ``netns``. For
        the chain family also TSO/GSO off there: every data segment leaves as its own skb, so that
        routers write each its own digit (a GSO skb would carry one code for all its segments)."""
        self._loader.ask(f"iface {self._id} {netns}:{ifname}")
        if self._protocol in CHAINS:
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
    paths = build()
    if protocol in CHAINS:
        cfg = dpcp_router_config(params, rate_bps, CHAINS[protocol], by_ip_id=protocol == "dcpew")
        names = [",".join(DPCP_ROUTER_COUNTERS)]
    else:
        cfg, names = router_config(params, rate_bps), []
    obj = paths[_ROUTER_OBJECTS[protocol]]
    args = [str(paths["loader"]), "router", str(obj), netns, ifname, _csv(cfg), *names]
    return Handle(_Loader(args, f"router on {netns}/{ifname}"))


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
    if protocol == "dcpew":
        cfg = dcpew_config(params)
    elif protocol in CHAINS:
        cfg = dpcp_config(params, CHAINS[protocol])
    else:
        cfg = law_config(params)
    with _controllers_lock:
        ctl = _controllers.get(protocol)
        if ctl is not None and ctl.config != cfg:
            raise ValueError(
                f"params: the kernel runs one {protocol} parameter table at a time, "
                "and another one is attached in this process"
            )
        if ctl is None:
            paths = build()
            names = [",".join(DPCP_HOST_COUNTERS)] if protocol in CHAINS else []
            args = [str(paths["loader"]), "hosts", str(paths[_HOST_OBJECTS[protocol]]), _csv(cfg), *names]
            ctl = _controllers[protocol] = _Controller(_Loader(args, f"{protocol} controller"), cfg)
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
