"""One arithmetic, checked (issue 36 item 4; docs/KERNEL-BPF.md): the kernel programs' fixed-point
laws (kernel/bpf/vcp_law.h, load_factor.h, built here as a user-space library from the very
headers the BPF objects include) against racc-proto's floating-point ones (`VcpLaws::on_code`,
`LoadFactor`, through racc._core), on the same input sequences.

Bounds, from the arithmetic (not from a measurement): the window is Q20 packets and every step
truncates at most 2^-20 packet; MI's (1+μ)^x is a 10-term series in Q30 (error < 1e-8 per step);
ratios are Q24. Over 1000 steps the truncations add at most 1000·2^-20 ≈ 0.001 packet and the
relative errors of the steps at most ~1e-6 of the window, so the windows must agree within
0.01 packet + 1e-5 of the window, and every MD must fall on the same step. The estimator's codes
must be identical (its thresholds are compared exactly, in integers, never through the rounded ρ)
except where ρ lies within 1e-6 of 0.8 or 1; the ρ it reports is Q16, so within 2^-16 plus 1e-6
relative; q_l within 0.01 byte. Runs wherever a C compiler is."""

from __future__ import annotations

import ctypes
import json
import random
import shutil

import pytest
from conftest import needs_core

pytestmark = [
    needs_core,
    pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) to build the law headers"),
]

U64 = ctypes.c_uint64
ONE_CWND = 1 << 20


def _struct(name: str, fields: list[str]) -> type:
    return type(name, (ctypes.Structure,), {"_fields_": [(f, U64) for f in fields]})


LawParams = _struct(
    "LawParams",
    ["t_p_us", "log2_1mu_q30", "sigma_mi_q24", "alpha_q24", "beta_q24", "ai_law", "sqrt_sigma_ai_q24",
     "t_d_us", "left_q24", "right_q24", "tick_us", "md_hold", "md_hold_us", "iw"],
)  # fmt: skip
LawState = _struct("LawState", ["cwnd", "hold_until_us", "ai_until_us", "mds"])
LfParams = _struct(
    "LfParams",
    ["t_p_ns", "t_q_ns", "k_q_q16", "a_q16", "interval_bytes_q8", "queue_term", "ns2_queue_shift", "rate_Bps"],
)
LfState = _struct(
    "LfState",
    ["lambda_", "q_l", "q_sum", "q_samples", "next_q_ns", "next_p_ns", "opened", "rho_q16", "code", "estimates",
     "num_q16"],
)  # fmt: skip


@pytest.fixture(scope="module")
def lib():
    from racc.kernel import bpf

    so = ctypes.CDLL(str(bpf.laws_library()))
    so.racc_vcp_on_code.argtypes = [ctypes.POINTER(LawState), ctypes.POINTER(LawParams), ctypes.c_uint32, U64, U64, U64]
    so.racc_lf_event.argtypes = [ctypes.POINTER(LfState), ctypes.POINTER(LfParams), U64, U64, U64]
    return so


def kernel_trace(lib, params: dict, cwnd0: float, steps: list[tuple[int, int, int, int]]) -> list[tuple[float, int]]:
    from racc.kernel import bpf

    p = LawParams(*bpf.law_config(params))
    s = LawState(int(cwnd0 * ONE_CWND), 0, 0, 0)
    out = []
    for code, k, rtt_us, now_us in steps:
        lib.racc_vcp_on_code(ctypes.byref(s), ctypes.byref(p), code, k, rtt_us, now_us)
        out.append((s.cwnd / ONE_CWND, s.mds))
    return out


def racc_trace(params: dict, cwnd0: float, steps: list[tuple[int, int, int, int]]) -> list[tuple[float, int]]:
    from racc import _core

    # The kernel controller puts the RTT through the "ns2" tick clock before the laws, as
    # `VcpWindow::rtt_s` does before `VcpLaws::on_code`; the trace does the same here.
    tick = (params.get("ai_ns2") or {}).get("tick", 0.0) if params.get("ai_law") == "ns2" else 0.0
    conv = []
    for code, k, rtt_us, now_us in steps:
        rtt = rtt_us / 1e6
        if tick > 0:
            rtt = max((rtt_us // round(tick * 1e6)) * tick, tick)
        conv.append((code, float(k), rtt, now_us * 1000))
    return _core.vcp_laws_trace(json.dumps(params), cwnd0, conv)


def steps_for(seed: int, codes: list[int], weights: list[float], n: int = 1000) -> list[tuple[int, int, int, int]]:
    rng = random.Random(seed)
    now, out = 1_000_000, []
    for _ in range(n):
        now += rng.randrange(200, 5000)
        out.append((rng.choices(codes, weights)[0], rng.choice([1, 1, 2, 3]), rng.randrange(2_000, 900_000), now))
    return out


def deviation(params: dict, cwnd0: float, steps, lib) -> float:
    k = kernel_trace(lib, params, cwnd0, steps)
    r = racc_trace(params, cwnd0, steps)
    worst = 0.0
    for i, ((kc, kmd), (rc, rmd)) in enumerate(zip(k, r)):
        assert kmd == rmd, f"step {i}: MD count {kmd} (kernel) vs {rmd} (racc-proto)"
        dev = abs(kc - rc)
        assert dev <= 0.01 + 1e-5 * rc, f"step {i}: cwnd {kc} (kernel) vs {rc} (racc-proto)"
        worst = max(worst, dev)
    print(f"largest deviation over {len(steps)} steps: {worst:.3g} packets (final cwnd {r[-1][0]:.1f})")
    return worst


LAWS = {
    "seed001": {},
    "ns2": {"ai_law": "ns2"},
    "ns2-tick": {"ai_law": "ns2", "ai_ns2": {"tick": 0.01}},
}


@pytest.mark.parametrize("law", ["seed001", "ns2"])
def test_mi_a3(lib, law):
    """MI alone (code 01) at RTTs from 2 to 900 ms, past σ_MI's cap at 500 ms."""
    deviation(LAWS[law], 2.0, steps_for(1, [1], [1.0]), lib)


@pytest.mark.parametrize("law", ["seed001", "ns2", "ns2-tick"])
def test_ai_a4(lib, law):
    """AI alone (code 10) under both laws, in all three of the ns2 law's RTT regimes."""
    deviation(LAWS[law], 20.0, steps_for(2, [2], [1.0]), lib)


@pytest.mark.parametrize("law", ["seed001", "ns2"])
def test_md_a5_with_its_hold(lib, law):
    """Overload codes between MI steps: MD by β, the hold and AI-for-one-rtt, with the same
    MD on the same step."""
    steps = steps_for(3, [1, 3], [0.9, 0.1])
    deviation(LAWS[law], 50.0, steps, lib)
    assert racc_trace(LAWS[law], 50.0, steps)[-1][1] >= 5, "the sequence must exercise MD"


@pytest.mark.parametrize("law", ["seed001", "ns2", "ns2-tick"])
@pytest.mark.parametrize("md_hold", ["t_p", "rtt", "2t_p+rtt", 0.05])
def test_all_codes_mixed(lib, law, md_hold):
    """Every code, 00 (bleached) included, in random order: 1000 ACKs."""
    params = {**LAWS[law], "md_hold": md_hold}
    deviation(params, 10.0, steps_for(4, [0, 1, 2, 3], [0.05, 0.6, 0.25, 0.1]), lib)


def test_other_constants(lib):
    """μ, α, β, σ caps and the ns2 joints other than the defaults travel the same way."""
    params = {"mu": 0.1, "alpha": 2.0, "beta": 0.7, "sigma_mi": 1.5, "sigma_ai": 4.0, "t_p": 0.1}
    deviation(params, 10.0, steps_for(5, [1, 2, 3], [0.5, 0.4, 0.1]), lib)
    params = {"ai_law": "ns2", "ai_ns2": {"t_d": 0.2, "rtt_low": 0.05, "rtt_high": 0.3, "w": 0.5}}
    deviation(params, 10.0, steps_for(6, [1, 2, 3], [0.5, 0.4, 0.1]), lib)


def lf_kernel(lib, params: dict, rate_bps: float, events):
    from racc.kernel import bpf

    p = LfParams(*bpf.router_config(params, rate_bps))
    s = LfState(code=1)
    out = []
    for now, queue, size in events:
        lib.racc_lf_event(ctypes.byref(s), ctypes.byref(p), now, queue, size)
        out.append((s.rho_q16 / 65536, s.code, s.q_l / 65536))
    return out


@pytest.mark.parametrize("queue_term", ["a2", "ns2"])
def test_load_factor_a1_a2(lib, queue_term):
    """The estimator on 6 s of random arrivals and queues at 10 Mb/s: load swinging through
    the three codes (ρ from 0.3 to 1.4)."""
    from racc import _core

    rate, params = 10e6, {"queue_term": queue_term}
    rng = random.Random(7)
    events, now = [], 0
    while now < 6_000_000_000:
        load = 0.3 + 1.1 * ((now // 700_000_000) % 3) / 2  # 0.3, 0.85, 1.4 in turns
        size = 1514
        now += int(size * 8 / (rate * load) * 1e9 * rng.uniform(0.5, 1.5))
        events.append((now, rng.randrange(0, 60_000), size))
    k = lf_kernel(lib, params, rate, events)
    r = _core.vcp_load_factor_trace(json.dumps(params), rate, events)
    worst_rho = worst_q = 0.0
    codes = {1: 0, 2: 0, 3: 0}
    for i, ((krho, kcode, kq), (rrho, rcode, rq)) in enumerate(zip(k, r)):
        near = min(abs(rrho - 0.8), abs(rrho - 1.0)) < 1e-6
        assert kcode == rcode or near, f"event {i}: code {kcode} (kernel) vs {rcode} (racc-proto), ρ {rrho}"
        assert abs(krho - rrho) <= 2**-16 + 1e-6 * rrho, f"event {i}: ρ {krho} vs {rrho}"
        assert abs(kq - rq) <= 0.01, f"event {i}: q_l {kq} vs {rq}"
        worst_rho, worst_q = max(worst_rho, abs(krho - rrho)), max(worst_q, abs(kq - rq))
        codes[rcode] += 1
    assert all(codes.values()), f"the trace must visit every code: {codes}"
    print(f"largest deviation over {len(events)} arrivals: ρ {worst_rho:.3g}, q_l {worst_q:.3g} B")
