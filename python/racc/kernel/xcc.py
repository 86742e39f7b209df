"""The congestion-header family in the kernel (docs/KERNEL-BPF.md, "The congestion header"): each
protocol's configuration for its BPF objects (``kernel/bpf/xcp_*``, ``rcp_*``), registered with
the kernel's protocol table (``racc.kernel.bpf_base``) so that ``racc kernel run`` attaches them like VCP's, and the user-space build
of their law headers for the differential tests (``laws_library()``).

The constants are racc-proto's defaults (``XcpRouterParams::default``, ``RcpRouterParams::default``); a key the kernel programs
do not implement is refused in one line naming it, unless it holds its default.
"""

from __future__ import annotations

import json
from pathlib import Path

from racc.kernel import bpf_base

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


def _core_check(name: str, params: dict, what: str) -> None:
    """racc-proto's own check of a parameter table (through racc._core, where built), its error
    as one line naming ``what``.KEY."""
    try:
        from racc import _core

        check = getattr(_core, name, None)
        if check is not None:
            check(json.dumps(params))
    except ImportError:
        pass
    except ValueError as e:
        raise ValueError(f"{what}.{str(e).splitlines()[0]}") from None


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
    _core_check("xcp_router_check", p, "router_params")
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


RCP_CC_NAME = "racc_rcp"
RCP_HOST_COUNTERS = (
    "acks",
    "rate_updates",
    "unrouted",
    "echo_malformed",
    "data_malformed",
    "hdr_written",
    "echo_written",
    "echo_parsed",
    "loss_kept",
)
RCP_ROUTER_COUNTERS = (
    "packets",
    "bytes",
    "rcp_data",
    "stamped",
    "no_rtt",
    "malformed",
    "intervals",
    "csum_fail",
    "gso",
)
#: R_min's packet size (racc's `r_min` takes the port's; 1000 B where it has none).
RCP_PKT_BYTES = 1000
_RCP_ROUTER_KEYS = {"t_slot", "d0", "alpha", "beta", "initial_rate", "r_min_pkts", "rcp_d0_gain", "stamp"}


def rcp_law_config(params: dict | None) -> list[int]:
    """An RCP flow's ``params`` for ``racc_rcp`` (RCP's sender has none; the TCP knobs are the
    kernel's)."""
    p = dict(params or {})
    _keep_defaults(p, {"tcp": {}}, "params", "the kernel's TCP does this")
    for k in p:
        raise ValueError(f"params.{k}: not a key of an RCP flow")
    return [0]


def _rate_router_table(p: dict, rate_bps: float, keys: set, interval: float, alpha: int, beta: int) -> list[int]:
    """``struct rcp_router_params`` (kernel/bpf/rcp_law.h), which RCP's and PIQI-RCP's routers
    share, from a parameter table already checked by racc-proto: keys outside ``keys`` refused,
    the interval (s) and α, β (Q24) given by the protocol."""
    _keep_defaults(p, {"count_ops": False}, "router_params", "the kernel programs do not count operations")
    for k in p:
        if k not in keys:
            raise ValueError(f"router_params.{k}: not supported by the kernel programs")
    if not rate_bps > 0:
        raise ValueError(f"rate: must be > 0 bit/s, got {rate_bps}")
    gain = p.get("rcp_d0_gain", "symmetric")
    if gain not in ("symmetric", "ns2"):
        raise ValueError(f'router_params.rcp_d0_gain: must be "symmetric" or "ns2", got {gain!r}')
    return [
        round(float(interval) * 1e9),
        round(float(p.get("d0", 0.2)) * 1e9),  # docs/PROTOCOLS.md §6: d0 200 ms before a sample
        alpha,
        beta,
        _q(p.get("initial_rate", 0.05), 24),  # §6: R starts at 0.05·C
        _q(p.get("r_min_pkts", 0.01), 24),  # §6: R_min 0.01 packets per d0
        round(rate_bps / 8),
        1 if gain == "ns2" else 0,
        RCP_PKT_BYTES,
    ]


def rcp_router_config(params: dict | None, rate_bps: float) -> list[int]:
    """An RCP router's ``router_params`` as ``struct rcp_router_params`` (kernel/bpf/rcp_law.h).
    ``stamp`` is accepted either way: the tc egress hook runs before the qdisc, so the kernel
    always stamps at arrival (docs/KERNEL-BPF.md)."""
    p = dict(params or {})
    _core_check("rcp_router_check", p, "router_params")
    t_slot = p.get("t_slot", 0.01)  # docs/PROTOCOLS.md §6: T_slot 10 ms
    alpha, beta = _q(p.get("alpha", 0.1), 24), _q(p.get("beta", 1.0), 24)  # §6: α 0.1, β 1
    return _rate_router_table(p, rate_bps, _RCP_ROUTER_KEYS, t_slot, alpha, beta)


PIQI_ROUTER_COUNTERS = RCP_ROUTER_COUNTERS
_PIQI_ROUTER_KEYS = {
    "delta",
    "gamma",
    "k_i",
    "k_p",
    "d0",
    "rcp_d0_gain",
    "initial_rate",
    "r_min_pkts",
    "smoothed_count",
}
# With count_newcomers off, racc-proto's admission on traffic and due cut never act (J = 0).
_PIQI_INERT = {"admit_on_traffic", "due_cut", "due_lead", "due_window"}


def piqi_router_config(params: dict | None, rate_bps: float) -> list[int]:
    """A PIQI-RCP router's ``router_params`` as ``struct piqi_router_params``
    (kernel/bpf/piqi_law.h): RCP's table (t_slot = Δ, α and β unused) and PIQI's gains.
    ``count_newcomers`` must be false: the kernel's first request is a data segment that
    carries an RTT, so no router can tell a newcomer (docs/KERNEL-BPF.md)."""
    p = dict(params or {})
    _core_check("piqi_router_check", p, "router_params")
    if p.pop("count_newcomers", True) is not False:
        raise ValueError(
            "router_params.count_newcomers: must be false in the kernel (a flow's first request is a data "
            "segment with an RTT, so no router can tell a newcomer)"
        )
    for k in _PIQI_INERT:
        p.pop(k, None)
    # RCP's table: Δ as its interval (§8: 10 ms, fixed), α and β unused (no queue term).
    return _rate_router_table(p, rate_bps, _PIQI_ROUTER_KEYS, p.get("delta", 0.01), 0, 0) + [
        _q(p.get("gamma", 0.95), 24),  # §8: target utilisation γ 0.95
        _q(p.get("k_i", 0.5), 24),  # §8: K_i 0.5 per d0
        _q(p.get("k_p", 0.0), 24),  # §8: K_p 0
        1 if p.get("smoothed_count", True) else 0,  # N̂ from R̄
    ]


JETMAX_CC_NAME = "racc_jetmax"
JETMAX_HOST_COUNTERS = (
    "acks",
    "updates",
    "unconstrained_updates",
    "echo_malformed",
    "data_malformed",
    "hdr_written",
    "echo_written",
    "echo_parsed",
    "loss_kept",
)
JETMAX_ROUTER_COUNTERS = (
    "packets",
    "bytes",
    "jetmax_data",
    "stamped",
    "no_rtt",
    "malformed",
    "intervals",
    "csum_fail",
    "gso",
)
#: The kernel's ring of past intervals (kernel/bpf/jetmax_law.h, JETMAX_RING).
JETMAX_RING = 256
_jetmax_ids = iter(range(1, 65536))


def jetmax_law_config(params: dict | None) -> list[int]:
    """A JetMax flow's ``params`` as ``struct jetmax_host_params`` (kernel/bpf/jetmax_host.bpf.c)."""
    p = dict(params or {})
    _core_check("jetmax_flow_check", p, "params")
    _keep_defaults(p, {"tcp": {}}, "params", "the kernel's TCP does this")
    for k in p:
        if k not in ("tau", "delta", "initial_rtt", "ipt"):
            raise ValueError(f"params.{k}: not a key of a JetMax flow")
    ipt = p.get("ipt", "presence")
    if ipt not in ("presence", "gap"):
        raise ValueError(f'params.ipt: must be "presence" or "gap", got {ipt!r}')
    return [
        _q(p.get("tau", 0.55), 24),  # docs/PROTOCOLS.md §7: τ 0.55
        round(float(p.get("delta", 0.01)) * 1e9),  # §7: the routers' Δ, 10 ms
        round(float(p.get("initial_rtt", 0.1)) * 1e9),  # §7: 100 ms before a sample
        1 if ipt == "gap" else 0,
    ]


def jetmax_router_config(params: dict | None, rate_bps: float) -> list[int]:
    """A JetMax router's ``router_params`` as ``struct jetmax_router_params``
    (kernel/bpf/jetmax_law.h). Each call numbers a port (1, 2, ...: unique in this process, as
    racc's port ids are in a run)."""
    p = dict(params or {})
    _core_check("jetmax_router_check", p, "router_params")
    _keep_defaults(p, {"count_ops": False}, "router_params", "the kernel programs do not count operations")
    for k in p:
        if k not in ("gamma", "delta", "f_min", "window", "max_window"):
            raise ValueError(f"router_params.{k}: not supported by the kernel programs")
    if not rate_bps > 0:
        raise ValueError(f"rate: must be > 0 bit/s, got {rate_bps}")
    delta_ns = max(1, round(float(p.get("delta", 0.01)) * 1e9))
    window = p.get("window", "ipt")
    if window not in ("ipt", "delta"):
        raise ValueError(f'router_params.window: must be "ipt" or "delta", got {window!r}')
    ring = max(1, round(float(p.get("max_window", 2.0)) * 1e9) // delta_ns) if window == "ipt" else 1
    if ring > JETMAX_RING:
        raise ValueError(
            f"router_params.max_window: at most {JETMAX_RING} intervals of delta in the kernel, got {ring}"
        )
    return [
        next(_jetmax_ids),
        _q(p.get("gamma", 0.95), 24),  # §7: γ 0.95
        delta_ns,  # §7: Δ 10 ms
        round(float(p.get("f_min", 1.0)) * RCP_PKT_BYTES),  # §7: 1 packet/s of the port's size
        ring,
        min(delta_ns, 0xFFFFFFFF) if window == "ipt" else 0xFFFFFFFF,
        round(rate_bps / 8),
    ]


def laws_library() -> Path:
    """The congestion-header law headers built as a user-space library (the differential tests);
    needs only a C compiler."""
    out = bpf_base.build_dir()
    out.mkdir(parents=True, exist_ok=True)
    src = bpf_base._SOURCES / "laws" / "xcc_laws_lib.c"
    lib = out / "libracc_xcc_laws.so"
    if bpf_base._stale(lib, [src, *(bpf_base._SOURCES / "bpf").glob("*.h")]):
        bpf_base._compile(["cc", "-O2", "-shared", "-fPIC", f"-I{bpf_base._SOURCES / 'bpf'}", str(src)], lib)
    return lib


bpf_base.register(
    "xcp",
    bpf_base.KernelProtocol(
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

bpf_base.register(
    "rcp",
    bpf_base.KernelProtocol(
        "rcp_host",
        "rcp_router",
        RCP_CC_NAME,
        rcp_law_config,
        rcp_router_config,
        host_counters=RCP_HOST_COUNTERS,
        router_counters=RCP_ROUTER_COUNTERS,
        host_iface=False,
    ),
)

# PIQI-RCP's flows are RCP's (racc-proto: RCP's sender and receiver); only the router differs.
bpf_base.register(
    "piqi-rcp",
    bpf_base.KernelProtocol(
        "rcp_host",
        "piqi_router",
        RCP_CC_NAME,
        rcp_law_config,
        piqi_router_config,
        host_counters=RCP_HOST_COUNTERS,
        router_counters=PIQI_ROUTER_COUNTERS,
        host_iface=False,
    ),
)

bpf_base.register(
    "jetmax",
    bpf_base.KernelProtocol(
        "jetmax_host",
        "jetmax_router",
        JETMAX_CC_NAME,
        jetmax_law_config,
        jetmax_router_config,
        host_counters=JETMAX_HOST_COUNTERS,
        router_counters=JETMAX_ROUTER_COUNTERS,
        host_iface=False,
        # Each data segment its own skb, so that each carries its own ipt (a GSO skb's option is
        # copied to all its segments, and the router passes GSO skbs uncounted).
        gso_off=True,
    ),
)
