"""VCP in the kernel (docs/KERNEL-BPF.md): a flow's ``params`` and a router's ``router_params``
as the fixed-point structs of ``kernel/bpf/vcp_law.h`` and ``load_factor.h``, registered with the
kernel's protocol table. The chain family (``racc.kernel.chains``) extends both.
"""

from __future__ import annotations

import json
import math

from racc.kernel.bpf_base import KernelProtocol, _q, register

CC_NAME = "racc_vcp"
_FLOW_KEYS = {"t_p", "h", "mu", "alpha", "beta", "sigma_mi", "sigma_ai", "ai_law", "ai_ns2", "md_hold", "iw"}
_ROUTER_KEYS = {"t_p", "t_q", "k_q", "a", "gamma", "queue_term", "ns2_queue_shift"}


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


register("vcp", KernelProtocol("vcp_host", "vcp_router", CC_NAME, law_config, router_config))
