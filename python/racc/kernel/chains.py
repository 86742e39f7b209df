"""The chain family in the kernel (docs/KERNEL-BPF.md): DPCP and TPCP (MPCP §3, §5) and DCP-EW
(pairs by the IP ID, DCP-EW §III): each protocol's configuration for its BPF objects
(``kernel/bpf/dpcp_*``, ``tpcp_host``, ``dcpew_*``), registered in the kernel's protocol table (``racc.kernel.bpf_base``) so that
``racc kernel run`` attaches them like VCP's. Their window laws are VCP's (``vcp_config.law_config``)
followed by the decoder's knobs; the router's estimator is VCP's followed by the chain's.
"""

from __future__ import annotations

import functools
import json
import math

from racc.kernel import bpf_base, vcp_config

#: Each protocol's controller (struct_ops name).
CC_NAMES = {"dpcp": "racc_dpcp", "tpcp": "racc_tpcp", "dcpew": "racc_dcpew"}
#: Chain lengths of the chain family (MPCP §3: DPCP 2, §5: TPCP 3; DCP-EW §III: pairs).
CHAINS = {"dpcp": 2, "tpcp": 3, "dcpew": 2}
#: The counter slots of the chain family's objects (kernel/bpf/dpcp_common.h, in order).
DPCP_ROUTER_COUNTERS = ("packets", "bytes", "marked", "lowered", "msp", "later", "over", "not_ect", "gso",
                        "flows_evicted")  # fmt: skip
DPCP_HOST_COUNTERS = ("acks", "grow", "ai", "md_events", "md_held", "bleached", "echo_absent", "echo_malformed",
                      "echo_written", "data_coded", "sent_ect1", "loss_halvings", "exceptions", "fallbacks",
                      "resumes", "refinements", "echo_lsp", "congestion_losses", "error_losses",
                      "loss_mds")  # fmt: skip


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
        xis.append(bpf_base._q(math.log2(1 + xi), 30))
    md = [float(x) for x in own.get("md_factors", _MD_FACTORS)]
    return [
        *vcp_config.law_config(p),
        n,
        int(own.get("exception_limit", 3)),
        bpf_base._q(float(own.get("resume_after", 8.0)), 8),
        int(own.get("max_resumes", 3)),
        1 if own.get("md_on_msp_only", False) else 0,
        1 if growth == "vcp-like" else 0,
        *(bpf_base._q(b, 24) for b in md),
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
    return [*vcp_config.router_config(p, rate_bps), n, round(evict * 1e9), int(latch), int(by_ip_id)]


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


for _name, _host in (("dpcp", "dpcp_host"), ("tpcp", "tpcp_host"), ("dcpew", "dcpew_host")):
    _n = CHAINS[_name]
    bpf_base.register(
        _name,
        bpf_base.KernelProtocol(
            _host,
            "dpcp_router",
            CC_NAMES[_name],
            dcpew_config if _name == "dcpew" else functools.partial(dpcp_config, chain=_n),
            functools.partial(dpcp_router_config, chain=_n, by_ip_id=_name == "dcpew"),
            host_counters=DPCP_HOST_COUNTERS,
            router_counters=DPCP_ROUTER_COUNTERS,
            gso_off=True,
        ),
    )
