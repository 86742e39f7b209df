"""One arithmetic, checked, for the congestion-header family (issue 36 item 4; docs/KERNEL-BPF.md):
the kernel programs' fixed-point XCP (kernel/bpf/xcp_law.h, built here as a user-space library
from the very header the BPF objects include) against racc-proto's floating-point `xcp::control`,
`arrival_xcp`, `departure` and `XcpWindow::apply_feedback` (through racc._core), on the same
input sequences.

Bounds, from the arithmetic (not from a measurement):
- d = Σb/Σa is whole µs, and each packet's weight a is Q8 µs (relative error below
  1/(256·25 µs) = 1.6e-4, see below), so d within 1 µs + 1.6e-4 of d; y whole B/s, α, β, γ Q24 (2^-25 relative), φ and the budgets
  Q8 bytes: φ = α·d·(C − y) − β·Q within α·(1 µs)·|C − y| + 1 byte.
- A packet's share pos = ξ_p·b, neg = ξ_n·u: a = rtt·s/cwnd is Q8 µs, so with a ≥ 25 µs (these
  sequences: rtt ≥ 5 ms, cwnd ≤ 200 packets) its relative error is below 1/(256·25) = 1.6e-4, and b
  = a·rtt inherits it; ξ carries 24 bits (2^-23) and d's 1 µs in ≥ 1000 µs (1e-3 at d = 1 ms).
  So a feedback within 2e-3 of the interval's larger budget + 0.02 byte (the budgets' running
  remainders carry the same relative error to the packets that hit them).
- The window law on Q8 feedback: exact.
Runs wherever a C compiler is."""

from __future__ import annotations

import ctypes
import json
import math
import random
import shutil

import pytest
from conftest import needs_core

pytestmark = [
    needs_core,
    pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) to build the law headers"),
]

U64, S64 = ctypes.c_uint64, ctypes.c_int64
INF = 0x7FFFFFFF


class Fxq(ctypes.Structure):
    _fields_ = [("m", U64), ("e", S64)]


class RouterParams(ctypes.Structure):
    _fields_ = [(f, U64) for f in ("alpha_q24", "beta_q24", "gamma_q24", "initial_d_us", "capacity_Bps", "budget_rule")]


class RouterLaw(ctypes.Structure):
    _fields_ = [
        ("in_bytes", U64),
        ("other_bytes", U64),
        ("sum_a_q8", U64),
        ("sum_b", U64),
        ("d_us", U64),
        ("phi_q8", S64),
        ("y_Bps", U64),
        ("k_p", Fxq),
        ("k_n", Fxq),
        ("res_pos_q8", S64),
        ("res_neg_q8", S64),
    ]


@pytest.fixture(scope="module")
def lib():
    from racc.kernel import xcc

    so = ctypes.CDLL(str(xcc.laws_library()))
    law, par = ctypes.POINTER(RouterLaw), ctypes.POINTER(RouterParams)
    so.racc_xcp_packet.argtypes = [law, par, U64, U64, U64, S64]
    so.racc_xcp_packet.restype = S64
    so.racc_xcp_other.argtypes = [law, U64]
    so.racc_xcp_control.argtypes = [law, par, U64, U64]
    so.racc_xcp_apply_feedback.argtypes = [U64, S64, U64]
    so.racc_xcp_apply_feedback.restype = U64
    return so


def events_for(seed: int, intervals: int = 60, load: float = 1.0, capacity_bps: float = 100e6):
    """Intervals of packets from a few flows at about `load` of C, each interval's end with
    its elapsed time and a persistent queue. Headers: +inf mostly, a lower one at times."""
    rng = random.Random(seed)
    flows = [(rng.randrange(5_000, 200_000), rng.choice([1500, 1040, 576])) for _ in range(8)]
    cw = {i: rng.randrange(1, 200) * s for i, (_, s) in enumerate(flows)}
    d = 0.05
    out = []
    for _ in range(intervals):
        nbytes = 0.0
        while nbytes < load * capacity_bps / 8 * d:
            i = rng.randrange(len(flows))
            rtt, s = flows[i]
            rtt = max(5_000, rtt + rng.randrange(-2_000, 2_000))
            if rng.random() < 0.05:
                out.append((2, s, 0, 0, 0))
            else:
                header = INF if rng.random() < 0.9 else rng.randrange(-3000 * 256, 3000 * 256)
                out.append((0, rtt, s, cw[i], header))
                cw[i] = max(s, min(200 * s, cw[i] + rng.randrange(-s, s)))
            nbytes += s
        elapsed = d * rng.uniform(0.95, 1.05)
        out.append((1, elapsed, rng.randrange(0, 100_000), 0, 0))
        d = min(1.0, max(0.001, sum(e[1] * e[2] / e[3] * e[1] for e in out[-200:] if e[0] == 0) /
                         max(1.0, sum(e[1] * e[2] / e[3] for e in out[-200:] if e[0] == 0)) / 1e6))  # fmt: skip
    return out


def run_both(lib, params: dict, capacity_bps: float, events):
    from racc import _core
    from racc.kernel import xcc

    p = RouterParams(*xcc.xcp_router_config(params, capacity_bps))
    law = RouterLaw()
    law.d_us = p.initial_d_us
    kernel = []
    for kind, a, b, c, h in events:
        if kind == 0:
            fb = lib.racc_xcp_packet(ctypes.byref(law), ctypes.byref(p), a, b, c, h)
            kernel.append((fb / 256, law.res_pos_q8 / 256, law.res_neg_q8 / 256))
        elif kind == 1:
            lib.racc_xcp_control(ctypes.byref(law), ctypes.byref(p), round(a * 1e9), b)
            pos = law.res_pos_q8 / 256
            kernel.append((law.d_us / 1e6, law.phi_q8 / 256, pos))
        else:
            lib.racc_xcp_other(ctypes.byref(law), a)
            kernel.append((0.0, 0.0, 0.0))
    conv = [
        (k, float(a), float(b), float(c), (math.inf if h == INF else h / 256) if k == 0 else 0.0)
        for k, a, b, c, h in events
    ]
    racc = _core.xcp_router_trace(json.dumps(params), capacity_bps, conv)
    return kernel, racc


def deviation(lib, params: dict, capacity_bps: float, events) -> tuple[float, float]:
    kernel, racc = run_both(lib, params, capacity_bps, events)
    worst_fb = worst_phi = worst_d = 0.0
    budget, arrived, alpha = 1.0, 0.0, params.get("alpha", 0.4)
    for i, (ev, k, r) in enumerate(zip(events, kernel, racc)):
        if ev[0] != 1:
            arrived += ev[2] if ev[0] == 0 else ev[1]
        if ev[0] == 1:
            assert abs(k[0] - r[0]) <= 1e-6 + 1.6e-4 * r[0], f"event {i}: d {k[0]} (kernel) vs {r[0]} (racc-proto)"
            dev = abs(k[1] - r[1])
            spare = abs(capacity_bps / 8 - arrived / ev[1])
            arrived = 0.0
            assert dev <= alpha * 1e-6 * spare + 1.0, f"event {i}: φ {k[1]} (kernel) vs {r[1]} (racc-proto)"
            worst_phi = max(worst_phi, dev)
            worst_d = max(worst_d, abs(k[0] - r[0]))
            budget = max(r[2], abs(r[1]) + r[2], 1.0)
        elif ev[0] == 0:
            dev = abs(k[0] - r[0])
            assert dev <= 2e-3 * budget + 0.02, f"event {i}: feedback {k[0]} (kernel) vs {r[0]} (racc-proto)"
            worst_fb = max(worst_fb, dev / budget)
    n = sum(1 for e in events if e[0] == 0)
    print(
        f"{n} packets: largest feedback deviation {worst_fb:.2e} of the interval's budget; "
        f"φ within {worst_phi:.3f} B; d within {worst_d * 1e6:.2f} µs"
    )
    return worst_fb, worst_phi


@pytest.mark.parametrize("load", [0.5, 1.0, 1.3])
def test_xcp_router_control_and_feedback(lib, load):
    """Under-, fully and over-loaded ports (φ positive, near 0, negative)."""
    deviation(lib, {}, 100e6, events_for(int(load * 10), load=load))


def test_xcp_router_ns235_budget_and_other_gains(lib):
    deviation(
        lib,
        {"xcp_budget": "ns235", "alpha": 0.3, "beta": 0.1, "gamma": 0.2},
        20e6,
        events_for(7, load=0.9, capacity_bps=20e6),
    )


def test_xcp_window_law_is_exact(lib):
    from racc import _core

    rng = random.Random(5)
    fbs = [rng.randrange(-4000 * 256, 4000 * 256) for _ in range(2000)] + [INF, -(10**8)]
    cw, kernel = 1500 << 8, []
    for fb in fbs:
        cw = lib.racc_xcp_apply_feedback(cw, fb, 1500)
        kernel.append(cw / 256)
    racc = _core.xcp_window_trace("{}", 1500, 1, [math.inf if fb == INF else fb / 256 for fb in fbs])
    assert kernel == racc
    assert min(racc) == 1500.0, "the floor of one packet must be reached"


# ---- RCP (kernel/bpf/rcp_law.h against racc-proto's RateCore and rcp_rate) ---------------------
#
# Bounds, from the arithmetic: R is Q8 B/s and each interval's factor (T/d0)·(α(C − y) −
# β·q/d0)/C is Q24 with α, β Q24 and y whole B/s, so one interval adds at most ~2^-23 of R plus
# 1/256 B/s; the law contracts towards its fixed point, so over 600 intervals R stays within 1e-3
# of racc-proto's R + 1 B/s; d0 (whole ns, the gain Q24) within 1 µs + 1e-5 of d0; a stamped
# rate is ⌊R⌋ in both, so within the same bound + 1 B/s.


class RcpParams(ctypes.Structure):
    _fields_ = [
        (f, U64)
        for f in ("t_slot_ns", "d0_ns", "alpha_q24", "beta_q24", "initial_rate_q24", "r_min_pkts_q24",
                  "capacity_Bps", "gain", "pkt_bytes")
    ]  # fmt: skip


class RcpLaw(ctypes.Structure):
    _fields_ = [(f, U64) for f in ("rate_q8", "d0_ns", "in_bytes", "rtt_w", "no_rtt_bytes")]


def rcp_events(seed: int, capacity_bps: float, intervals: int = 600):
    """Intervals of about 10 ms with the offered load swinging between 0.3 and 1.3 of C (so R
    rises and falls), RTTs 5-300 ms, a tenth of the packets without one."""
    rng = random.Random(seed)
    out = []
    for k in range(intervals):
        t = 0.01 * rng.uniform(0.9, 1.1)
        load = 0.8 + 0.5 * math.sin(k / 40)
        nbytes = 0.0
        while nbytes < load * capacity_bps / 8 * t:
            s = rng.choice([1500, 1040, 576])
            rtt = 0 if rng.random() < 0.1 else rng.randrange(5_000, 300_000)
            out.append((0, s, rtt))
            nbytes += s
        out.append((1, t, rng.randrange(0, 60_000) if load > 1 else 0))
    return out


def rcp_deviation(lib, params: dict, capacity_bps: float, events, law_of: str = "rcp") -> tuple[float, float]:
    """The rate routers' laws (``law_of``: "rcp", or "piqi" for PIQI-RCP's) on ``events``
    against racc-proto's trace, within the bounds stated above for each."""
    from racc import _core
    from racc.kernel import xcc

    law_t, par_t, config, trace, slack = {
        "rcp": (RcpLaw, RcpParams, xcc.rcp_router_config, _core.rcp_router_trace, 1),
        "piqi": (PiqiLaw, PiqiParams, xcc.piqi_router_config, _core.piqi_router_trace, 2),
    }[law_of]
    init, packet, control = (getattr(lib, f"racc_{law_of}_{f}") for f in ("init", "packet", "control"))
    init.argtypes = [ctypes.POINTER(law_t), ctypes.POINTER(par_t)]
    packet.argtypes = [ctypes.POINTER(law_t), U64, U64]
    packet.restype = ctypes.c_uint32
    control.argtypes = [ctypes.POINTER(law_t), ctypes.POINTER(par_t), U64, U64]
    p = par_t(*config(params, capacity_bps))
    law = law_t()
    core = law if law_of == "rcp" else law.rcp
    init(ctypes.byref(law), ctypes.byref(p))
    racc = trace(json.dumps(params), capacity_bps, float(xcc.RCP_PKT_BYTES), events)
    worst_r = worst_d0 = 0.0
    lo, hi = math.inf, 0.0
    for i, ((kind, a, b), r) in enumerate(zip(events, racc)):
        if kind == 0:
            stamped = packet(ctypes.byref(law), a, b)
            assert abs(stamped - r[0]) <= 1e-3 * r[0] + 2, f"event {i}: stamped {stamped} (kernel) vs {r[0]} (racc-proto)"
        else:
            control(ctypes.byref(law), ctypes.byref(p), round(a * 1e9), b)
            rate, d0 = core.rate_q8 / 256, core.d0_ns / 1e9
            assert abs(rate - r[0]) <= 1e-3 * r[0] + slack, f"event {i}: R {rate} (kernel) vs {r[0]} (racc-proto)"
            assert abs(d0 - r[1]) <= 1e-6 + 1e-5 * r[1], f"event {i}: d0 {d0} (kernel) vs {r[1]} (racc-proto)"
            worst_r = max(worst_r, abs(rate - r[0]) / r[0])
            worst_d0 = max(worst_d0, abs(d0 - r[1]))
            lo, hi = min(lo, r[0]), max(hi, r[0])
    print(f"R from {lo:.0f} to {hi:.0f} B/s: largest deviation {worst_r:.2e} of R; d0 within {worst_d0 * 1e6:.3f} µs")
    assert hi / lo > 1.5, "the sequence must move R"
    return worst_r, worst_d0


@pytest.mark.parametrize("gain", ["symmetric", "ns2"])
def test_rcp_router_rate_and_d0(lib, gain):
    rcp_deviation(lib, {"rcp_d0_gain": gain, "initial_rate": 0.5}, 100e6, rcp_events(3, 100e6))


def test_rcp_router_other_gains_and_a_slow_port(lib):
    rcp_deviation(lib, {"alpha": 0.3, "beta": 0.5, "t_slot": 0.02, "initial_rate": 0.5}, 10e6, rcp_events(4, 10e6))


# ---- PIQI-RCP (kernel/bpf/piqi_law.h against racc-proto's `pi_step` in `PiqiRouter::interval`) ----
#
# Bounds, from the arithmetic (stated before measuring): the kernel's y is whole B/s (floored),
# N̂, γ, K_i, K_p and g 24 bits, R and R̄ Q8 B/s. An interval's increment K_i·g·e then differs by
# at most K_i·g·(1 B/s)/N̂ + 2^-7 B/s + 2^-22 of itself; K_i·g ≤ 0.5 here (g = Δ/d0 ≤ 1), so over
# the 600 intervals of these sequences the integrator gathers at most ~300 B/s of floor error in
# the worst case (all of one sign), and 2^-21 relative: within 1e-3 of R + 2 B/s for the R these
# sequences reach (≥ 2e5 B/s once moved; R_min is computed alike on both sides). A stamp is ⌊R⌋ on
# both sides: the same bound. d0 is RCP's update (rcp_law.h): within 1 µs + 1e-5 of d0.


class PiqiParams(ctypes.Structure):
    _fields_ = [*RcpParams._fields_, *((f, U64) for f in ("gamma_q24", "k_i_q24", "k_p_q24", "smoothed"))]


class PiqiLaw(ctypes.Structure):
    _fields_ = [("rcp", RcpLaw), ("r_bar_q8", U64), ("n_hat_q24", U64), ("e_prev_q8", S64)]


@pytest.mark.parametrize("gain", ["symmetric", "ns2"])
def test_piqi_router_pi_law_and_d0(lib, gain):
    rcp_deviation(lib, {"rcp_d0_gain": gain, "count_newcomers": False}, 100e6, rcp_events(5, 100e6), "piqi")


def test_piqi_router_other_gains_unsmoothed_and_a_slow_port(lib):
    params = {"k_i": 1.2, "k_p": 0.3, "gamma": 0.9, "delta": 0.02, "smoothed_count": False, "initial_rate": 0.5}
    rcp_deviation(lib, {**params, "count_newcomers": False}, 10e6, rcp_events(6, 10e6), "piqi")


def test_piqi_router_config_refuses_what_the_kernel_cannot_run():
    from racc.kernel import xcc

    with pytest.raises(ValueError, match=r"^router_params\.count_newcomers: must be false"):
        xcc.piqi_router_config({}, 10e6)
    with pytest.raises(ValueError, match=r"^router_params\.count_ops"):
        xcc.piqi_router_config({"count_newcomers": False, "count_ops": True}, 10e6)
    with pytest.raises(ValueError, match=r"^router_params\.k_i"):
        xcc.piqi_router_config({"count_newcomers": False, "k_i": 2.0}, 10e6)  # racc-proto's check: K_i < π/2
    assert len(xcc.piqi_router_config({"count_newcomers": False}, 10e6)) == len(PiqiParams._fields_)


# ---- JetMax (kernel/bpf/jetmax_law.h against racc-proto's JetMaxRouter) -------------------------
#
# Bounds, from the arithmetic (stated before measuring): Y, S, Ninv and the slow sums are whole
# bytes and ns on both sides (racc's f64 holds them exactly), and the slow window's reach m is an
# integer decision on them, so the same m and D. u and b are Q8 B/s (each floor < 2^-8 B/s), N
# Q24 (two floors, < 2^-23), γ Q24 (2^-25 of γC): F = (γC − u)/max(N, 1) within 1e-6 of F +
# 2^-7 B/s before rounding, so the header field (rounded on both sides) within 1e-5 of F + 2 B/s;
# N within 1e-6; a stamp is that field and this router's id, or nothing, on both.


class JetMaxParams(ctypes.Structure):
    _fields_ = [
        (f, U64)
        for f in ("id", "gamma_q24", "delta_ns", "f_min_Bps", "ring_len", "slow_above_ns", "capacity_Bps")
    ]


class JetMaxInterval(ctypes.Structure):
    _fields_ = [(f, U64) for f in ("s_slow", "ninv_slow", "max_ipt")]


class JetMaxLaw(ctypes.Structure):
    _fields_ = [
        ("y_bytes", U64),
        ("s_bytes", U64),
        ("ninv_ns", U64),
        ("cur", JetMaxInterval),
        ("ring", JetMaxInterval * 256),
        ("head", U64),
        ("filled", U64),
        ("f_q8", U64),
        ("f_wire", ctypes.c_uint32),
        ("pad", ctypes.c_uint32),
        *((f, U64) for f in ("n_q24", "window_ns", "last_t_ns", "last_y", "last_s", "last_ninv", "last_s_slow")),
        *((f, U64) for f in ("walk_s", "walk_n", "walk_max", "win_m", "win_s", "win_n", "win_max")),
    ]


def jetmax_events(seed: int, capacity_bps: float, intervals: int = 400, delta: float = 0.01):
    """Intervals of Δ with flows bottlenecked here (ipt about Δ·s/rate, fast), slow ones (ipt 15
    ms to 1.5 s, one packet now and then), and flows naming another router (cur_id 3); the load
    swings between 0.2 and 1.2 of C. A stretch of 20 intervals with only the last kind (F = +inf
    where no slow packet still reaches it)."""
    rng = random.Random(seed)
    c = capacity_bps / 8
    out = []
    for k in range(intervals):
        load = 0.7 + 0.5 * math.sin(k / 25)
        if 200 <= k < 220:
            for _ in range(round(0.3 * c * delta / 1000)):
                out.append((0, 1000, rng.randrange(100_000, 5_000_000), 3))
            out.append((1, round((k + 1) * delta, 9), 0, 0))
            continue
        fast = rng.randrange(1, 6)
        for _ in range(fast):
            rate = load * c / (fast + 1) * rng.uniform(0.5, 1.5)
            n = max(1, round(rate * delta / 1000))
            for _ in range(n):
                out.append((0, 1000, round(1000 / rate * 1e9), rng.choice([7, 0])))
        for _ in range(rng.randrange(0, 3)):
            out.append((0, rng.choice([1000, 576]), rng.randrange(15_000_000, 1_500_000_000), rng.choice([7, 0])))
        for _ in range(round(load * c * delta / 4000)):
            out.append((0, 1000, rng.randrange(100_000, 5_000_000), 3))
        out.append((1, round((k + 1) * delta, 9), 0, 0))
    return out


def jetmax_deviation(lib, params: dict, capacity_bps: float, events) -> float:
    from racc import _core
    from racc.kernel import xcc

    lib.racc_jetmax_init.argtypes = [ctypes.POINTER(JetMaxLaw)]
    lib.racc_jetmax_packet.argtypes = [ctypes.POINTER(JetMaxLaw), ctypes.POINTER(JetMaxParams), U64, U64, U64]
    lib.racc_jetmax_packet.restype = U64
    lib.racc_jetmax_control.argtypes = [ctypes.POINTER(JetMaxLaw), ctypes.POINTER(JetMaxParams), U64]
    cfg = xcc.jetmax_router_config(params, capacity_bps)
    cfg[0] = 7  # racc's trace port
    p = JetMaxParams(*cfg)
    law = JetMaxLaw()
    lib.racc_jetmax_init(ctypes.byref(law))
    racc = _core.jetmax_router_trace(json.dumps(params), capacity_bps, xcc.RCP_PKT_BYTES, events)
    worst, finite, infinite, slow = 0.0, 0, 0, 0
    lo, hi = math.inf, 0.0
    for i, ((kind, a, b, c), r) in enumerate(zip(events, racc)):
        if kind == 0:
            v = lib.racc_jetmax_packet(ctypes.byref(law), ctypes.byref(p), a, b, c)
            fb, fb_id = v & 0xFFFFFFFF, v >> 32
            assert fb_id == r[1], f"event {i}: fb_id {fb_id} (kernel) vs {r[1]} (racc-proto)"
            assert abs(fb - r[0]) <= 1e-5 * r[0] + 2, f"event {i}: stamped {fb} (kernel) vs {r[0]} (racc-proto)"
        else:
            lib.racc_jetmax_control(ctypes.byref(law), ctypes.byref(p), p.delta_ns)
            f, n = law.f_wire, law.n_q24 / 2**24
            assert (f == 0xFFFFFFFF) == (r[0] == 0xFFFFFFFF), f"event {i}: F {f} (kernel) vs {r[0]} (racc-proto)"
            assert abs(f - r[0]) <= 1e-5 * r[0] + 2, f"event {i}: F {f} (kernel) vs {r[0]} (racc-proto)"
            assert abs(n - r[1]) <= 1e-6, f"event {i}: N {n} (kernel) vs {r[1]} (racc-proto)"
            slow += law.window_ns > p.delta_ns
            if f == 0xFFFFFFFF:
                infinite += 1
            else:
                finite += 1
                worst = max(worst, abs(f - r[0]) / r[0])
                lo, hi = min(lo, r[0]), max(hi, r[0])
    print(
        f"{finite} finite F ({lo:.0f} to {hi:.0f} B/s), {infinite} +inf, {slow} slow windows beyond Δ; "
        f"largest deviation {worst:.2e} of F"
    )
    assert finite > 100 and hi / lo > 1.5, "the sequence must move F"
    if params.get("window", "ipt") == "ipt":
        assert slow > 10, "the sequence must reach back for slow flows"
    else:  # (with "ipt" the slow packets' reach, up to 1.5 s, outlasts the quiet stretch)
        assert infinite > 0, "the quiet stretch must free the link (F = +inf)"
    return worst


def test_jetmax_router_fair_share_and_slow_window(lib):
    jetmax_deviation(lib, {}, 100e6, jetmax_events(7, 100e6))


def test_jetmax_router_literal_delta_window_and_other_gains(lib):
    params = {"window": "delta", "gamma": 0.8, "f_min": 5.0}
    jetmax_deviation(lib, params, 10e6, jetmax_events(8, 10e6))
    params = {"gamma": 0.9, "delta": 0.02, "max_window": 1.0}
    jetmax_deviation(lib, params, 10e6, jetmax_events(9, 10e6, delta=0.02))


def test_jetmax_sender_step_against_the_law():
    """x += τ(F − x) in whole B/s (Q24 τ): within 1 B/s + 2^-23 of |F − x| of the real step."""
    from racc.kernel import xcc

    so = ctypes.CDLL(str(xcc.laws_library()))
    so.racc_jetmax_rate_step.argtypes = [U64, U64, U64]
    so.racc_jetmax_rate_step.restype = U64
    rng = random.Random(10)
    for _ in range(2000):
        x, f, tau = rng.randrange(1, 10**10), rng.randrange(1, 10**10), rng.uniform(0.01, 1.0)
        k = so.racc_jetmax_rate_step(x, f, round(tau * 2**24))
        assert abs(k - (x + tau * (f - x))) <= 1 + 2**-23 * abs(f - x) + 2**-25 * abs(f - x), (x, f, tau, k)
