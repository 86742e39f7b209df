"""The congestion-header family in the kernel (docs/KERNEL-BPF.md, "The congestion header"): each
protocol's configuration for its BPF objects (``kernel/bpf/xcp_*``), registered with
``racc.kernel.bpf`` so that ``racc kernel run`` attaches them like VCP's, and the user-space build
of their law headers for the differential tests (``laws_library()``).

The constants are racc-proto's defaults (``XcpRouterParams::default``); a key the kernel programs
do not implement is refused in one line naming it, unless it holds its default.
"""

from __future__ import annotations

import json
from pathlib import Path

from racc.kernel import bpf

XCP_CC_NAME = "racc_xcp"
XCP_HOST_COUNTERS = (
    "acks",
    "fb_applied",
    "unrouted",
    "echo_malformed",
    "data_malformed",
    "hdr_written",
    "echo_written",
    "echo_parsed",
    "loss_halvings",
)
XCP_ROUTER_COUNTERS = (
    "packets",
    "bytes",
    "xcp_data",
    "fb_written",
    "no_rtt",
    "malformed",
    "intervals",
    "csum_fail",
    "gso",
)

# Keys that must hold their default (what the kernel programs do not implement).
_XCP_FLOW_DEFAULTS = {"desired_rate": None, "form": "window", "tcp": {}}
_XCP_ROUTER_DEFAULTS = {
    "count_ops": False,
    "capacity": "link",
    "form": "window",
    "spare": "capacity",
    "probe_alpha": None,
    "initial_capacity_bps": None,
    "q_target_pkts": None,
    "blind_probe": None,
    "late_intervals": None,
}
_XCP_ROUTER_KEYS = {"alpha", "beta", "gamma", "initial_d", "xcp_budget"}


def _q(x: float, shift: int) -> int:
    return round(float(x) * (1 << shift))


def _keep_defaults(p: dict, defaults: dict, what: str, why: str) -> None:
    """Drop each key of ``defaults`` from ``p``; one holding another value than its default
    (a default of None: any value, as for XCP-b's own keys) is refused."""
    for key, default in defaults.items():
        if key in p and p.pop(key) not in (default, None):
            raise ValueError(f"{what}.{key}: not supported by the kernel programs ({why})")


def xcp_law_config(params: dict | None) -> list[int]:
    """An XCP flow's ``params`` for ``racc_xcp`` (window form, no desired rate)."""
    p = dict(params or {})
    _keep_defaults(p, _XCP_FLOW_DEFAULTS, "params", "the kernel's XCP sender asks for as much as the routers allow")
    for k in p:
        raise ValueError(f"params.{k}: not a key of an XCP flow")
    return [0]


def xcp_router_config(params: dict | None, rate_bps: float) -> list[int]:
    """An XCP router's ``router_params`` as ``struct xcp_router_params`` (kernel/bpf/xcp_law.h)."""
    p = dict(params or {})
    try:
        from racc import _core

        check = getattr(_core, "xcp_router_check", None)
        if check is not None:
            check(json.dumps(p))
    except ImportError:
        pass
    except ValueError as e:
        raise ValueError(f"router_params.{str(e).splitlines()[0]}") from None
    _keep_defaults(p, _XCP_ROUTER_DEFAULTS, "router_params", "XCP-b and the throughput form are not in the kernel")
    for k in p:
        if k not in _XCP_ROUTER_KEYS:
            raise ValueError(f"router_params.{k}: not supported by the kernel programs")
    if not rate_bps > 0:
        raise ValueError(f"rate: must be > 0 bit/s, got {rate_bps}")
    budget = p.get("xcp_budget", "granted")
    if budget not in ("granted", "ns235"):
        raise ValueError(f'router_params.xcp_budget: must be "granted" or "ns235", got {budget!r}')
    return [
        _q(p.get("alpha", 0.4), 24),  # Katabi et al. §3.5
        _q(p.get("beta", 0.226), 24),  # §3.5: α²√2
        _q(p.get("gamma", 0.1), 24),  # §3.5: the shuffled fraction
        round(float(p.get("initial_d", 0.05)) * 1e6),  # ns-2: 50 ms
        round(rate_bps / 8),
        1 if budget == "ns235" else 0,
    ]


def laws_library() -> Path:
    """The congestion-header law headers built as a user-space library (the differential tests);
    needs only a C compiler."""
    out = bpf.build_dir()
    out.mkdir(parents=True, exist_ok=True)
    src = bpf._SOURCES / "laws" / "xcc_laws_lib.c"
    lib = out / "libracc_xcc_laws.so"
    if bpf._stale(lib, [src, *(bpf._SOURCES / "bpf").glob("*.h")]):
        bpf._compile(["cc", "-O2", "-shared", "-fPIC", f"-I{bpf._SOURCES / 'bpf'}", str(src)], lib)
    return lib


bpf.register(
    "xcp",
    bpf.KernelProtocol(
        "xcp_host",
        "xcp_router",
        XCP_CC_NAME,
        xcp_law_config,
        xcp_router_config,
        host_counters=XCP_HOST_COUNTERS,
        router_counters=XCP_ROUTER_COUNTERS,
        host_iface=False,
    ),
)
