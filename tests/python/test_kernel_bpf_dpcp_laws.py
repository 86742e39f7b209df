"""One arithmetic, checked, for DPCP and TPCP (issue 36 item 4; docs/KERNEL-BPF.md): the kernel
programs' fixed-point levels, Alg. 2, decoder and window laws (kernel/bpf/dpcp_law.h,
dpcp_encode.h, built as a user-space library from the very headers the BPF objects include)
against racc-proto's (`Lf::from_rho`, `dpcp::encode`, `DpcpWindow`, through racc._core) on the
same inputs.

Bounds, from the arithmetic (not from a measurement): levels are decided exactly in integers
(ρ = a/b, Table 1's thresholds in twentieths, TPCP's in sixtieths), so they must be identical
except within 1e-9 of a threshold, where racc-proto's floats round; Alg. 2 is integer logic and
must agree on every input. The window is Q20 packets: every step truncates at most 2^-20 packet,
MI's (1+ξ)^x is a 10-term series in Q30 (< 1e-8 per step), ratios are Q24, the MD factors Q24
(relative 6e-8). Over 1000 ACKs that is at most 0.001 packet plus ~1e-6 of the window, so windows
must agree within 0.01 packet + 1e-5 of the window, and the decoder's counts (MDs, exceptions,
fallbacks, refinements) exactly, step by step. Runs wherever a C compiler is."""

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

U64, U32, U8 = ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint8
ONE_CWND = 1 << 20


class Params(ctypes.Structure):
    _fields_ = [("v", U64 * 50)]  # struct dpcp_params: 14 + 9 + 27 integers


class Decoder(ctypes.Structure):
    _fields_ = [
        ("hold_until", U64), ("ai_until", U64), ("cwnd_pre", U64), ("resume_at", U64), ("resumed_at", U64),
        ("run", U32), ("failed_retries", U32),
        ("lf", U8), ("last", U8), ("skipped", U8), ("mode", U8), ("warmup", U8), ("refine_next", U8),
        ("has_resumed_at", U8), ("pad", U8),
    ]  # fmt: skip


class State(ctypes.Structure):
    _fields_ = [
        ("cwnd", U64), ("d", Decoder), ("mds", U32), ("exceptions", U32), ("fallbacks", U32), ("resumes", U32),
        ("refinements", U32), ("pad", U32),
    ]  # fmt: skip


class Echo(ctypes.Structure):
    _fields_ = [
        (name, U8)
        for name in ("n", "last_code", "last_pos", "newest_len", "n0", "n1", "n2", "newest_echoed", "echoing_len",
                     "e0", "e1", "e2", "tracking", "next", "msp_max")
    ]  # fmt: skip


@pytest.fixture(scope="module")
def lib():
    from racc.kernel import bpf

    so = ctypes.CDLL(str(bpf.laws_library()))
    so.racc_dpcp_init.argtypes = [ctypes.POINTER(State), ctypes.POINTER(Params), U64]
    so.racc_dpcp_on_ack.argtypes = [ctypes.POINTER(State), ctypes.POINTER(Params), U32, U64, U64, U64]
    so.racc_dpcp_on_ack.restype = U32
    so.racc_dpcp_level.argtypes = [U64, U64, U32]
    so.racc_dpcp_level.restype = U32
    so.racc_dpcp_encode.argtypes = [U32, U32, U32, U32, ctypes.POINTER(U8)]
    so.racc_dpcp_encode.restype = U32
    so.racc_dpcp_position.argtypes = [U32, U32, U32]
    so.racc_dpcp_position.restype = U32
    so.racc_dpcp_echo_init.argtypes = [ctypes.POINTER(Echo), U32]
    so.racc_dpcp_echo_on_data.argtypes = [ctypes.POINTER(Echo), U32, U32]
    so.racc_dpcp_echo_take.argtypes = [ctypes.POINTER(Echo)]
    so.racc_dpcp_echo_take.restype = U32
    return so


def _params(params: dict, chain: int) -> Params:
    from racc.kernel import chains

    cfg = chains.dpcp_config(params, chain)
    assert len(cfg) == 50
    p = Params()
    for i, v in enumerate(cfg):
        p.v[i] = v
    return p


Step = tuple[int, int, int, float, int]  # code, position, k, rtt_s, now_ns


def kernel_trace(lib, params: dict, chain: int, steps: list[Step]) -> list[tuple[float, int, int, int, int]]:
    p = _params(params, chain)
    s = State()
    lib.racc_dpcp_init(ctypes.byref(s), ctypes.byref(p), round(float(params.get("iw", 2.0)) * ONE_CWND))
    out = []
    for code, pos, k, rtt_s, now_ns in steps:
        lib.racc_dpcp_on_ack(ctypes.byref(s), ctypes.byref(p), code | pos << 2, k, round(rtt_s * 1e6), now_ns // 1000)
        out.append((s.cwnd / ONE_CWND, s.mds, s.exceptions, s.fallbacks, s.refinements))
    return out


def racc_trace(params: dict, chain: int, steps: list[Step]) -> list[tuple[float, int, int, int, int]]:
    from racc import _core

    return _core.dpcp_window_trace(
        json.dumps({**params, "chain": chain}), [(c, p, float(k), r, t) for c, p, k, r, t in steps]
    )


def compare(lib, params: dict, chain: int, steps: list[Step]) -> float:
    """Largest window deviation (packets) over the trace; asserts the bounds."""
    worst = 0.0
    got, want = kernel_trace(lib, params, chain, steps), racc_trace(params, chain, steps)
    for i, ((wk, *ck), (wr, *cr)) in enumerate(zip(got, want)):
        assert ck == list(cr), f"step {i} {steps[i]}: kernel counts {ck}, racc-proto {cr}"
        dev = abs(wk - wr)
        assert dev <= 0.01 + 1e-5 * wr, f"step {i} {steps[i]}: kernel {wk:.6f}, racc-proto {wr:.6f}"
        worst = max(worst, dev)
    return worst


def chains(
    rng: random.Random, n: int, count: int, codes: list[int], rtt: float, gap_ns: int, t0: int = 0
) -> list[Step]:
    """In-sequence chains: position 0, 1, …, n−1, each digit drawn from `codes`, one ACK each."""
    out, t = [], t0
    for _ in range(count):
        for pos in range(n):
            out.append((rng.choice(codes), pos, 1, rtt, t))
            t += gap_ns
    return out


def disorder(seed: int, chain: int) -> list[Step]:
    """Mostly in-sequence echoes, 10 % at a random position (exceptions, VCP mode, resumes),
    5 % bleached, k of 1-3 packets, the RTT changing."""
    r = random.Random(seed)
    t, steps = 0, []
    for i in range(1500):
        t += r.randint(1, 8) * 1_000_000
        pos = i % chain if r.random() < 0.9 else r.randrange(chain)
        code = r.choice([1, 1, 2, 2, 3, 3]) if r.random() < 0.95 else 0
        steps.append((code, pos, r.choice([1, 1, 2, 3]), r.choice([0.02, 0.04, 0.1]), t))
    return steps


@pytest.mark.parametrize("chain", [2, 3])
def test_levels_are_table_1_exactly(lib, chain):
    from racc import _core

    rng = random.Random(7)
    den = 1_000_000 << 8
    rhos = [i / 2000 for i in range(5000)] + [rng.uniform(0, 2.5) for _ in range(3000)]
    nums = [round(r * den) for r in rhos]
    exact = [a / den for a in nums]
    want = _core.dpcp_levels(exact, chain)
    thresholds = [0.2, 0.4, 0.8, 0.85, 0.95, 1.0, 1.05, 1.4, 2.0]
    bounds = thresholds + [lo + (hi - lo) * d / 3 for lo, hi in zip([0.0, *thresholds], thresholds) for d in (1, 2)]
    for a, r, w in zip(nums, exact, want):
        got = lib.racc_dpcp_level(a, den, chain)
        if any(abs(r - b) < 1e-9 for b in bounds):
            continue
        assert got == w, f"rho {r}: kernel {got:#b}, racc-proto {w:#b}"


@pytest.mark.parametrize("chain", [2, 3])
def test_alg2_agrees_on_every_input(lib, chain):
    from racc import _core

    ports = []
    for idx in range(3**chain):
        digits = [idx // 3 ** (chain - 1 - i) % 3 + 1 for i in range(chain)]
        ports.append(sum(d << 2 * (chain - 1 - i) for i, d in enumerate(digits)))
    cases = [(port, x2, pos, f) for port in ports for x2 in range(4) for pos in range(chain + 1) for f in range(3)]
    want = _core.dpcp_encode_cases(chain, cases)
    for (port, x2, pos, f), (wb, wf) in zip(cases, want):
        flag = U8(f)
        got = lib.racc_dpcp_encode(port, chain, x2, pos, ctypes.byref(flag))
        assert (got, flag.value) == (wb, wf), f"port {port:#b} x2 {x2} pos {pos} flag {f}"


@pytest.mark.parametrize("chain", [2, 3])
def test_windows_agree_with_racc_proto(lib, chain):
    rng = random.Random(36 + chain)
    ms = 1_000_000
    worst = {}
    # Growth in the low and high zones, both growth laws, a ξ cap, other constants.
    for name, params, codes in [
        ("low", {"iw": 4.0}, [1]),
        ("low+high", {"iw": 10.0}, [1, 2]),
        ("high", {"iw": 30.0}, [2]),
        ("vcp-like", {"iw": 10.0, "dpcp_growth": "vcp-like"}, [1, 2]),
        ("xi-cap", {"iw": 8.0, "xi_cap": 0.1, "alpha": 2.0, "sigma_mi": 1.5}, [1, 2]),
        ("ns2-ai", {"iw": 20.0, "ai_law": "ns2"}, [2]),
    ]:
        steps = chains(rng, chain, 1000 // chain, codes, 0.04, 2 * ms)
        worst[name] = compare(lib, params, chain, steps)
    # Overload: MDs by Table 1, refinements by the later digits, holds, AI after the hold, with
    # each md_hold; MD only on MSPs.
    for hold in ["t_p", "rtt", "2t_p+rtt", 0.05]:
        steps = chains(rng, chain, 1200 // chain, [1, 2, 3, 3], 0.06, 3 * ms)
        worst[f"overload {hold}"] = compare(lib, {"iw": 40.0, "md_hold": hold}, chain, steps)
    steps = chains(rng, chain, 1200 // chain, [2, 3, 3], 0.05, 4 * ms)
    worst["md_on_msp_only"] = compare(lib, {"iw": 40.0, "md_on_msp_only": True}, chain, steps)
    steps = chains(rng, chain, 900 // chain, [3], 0.05, 5 * ms)
    worst["md_factors"] = compare(lib, {"iw": 60.0, "md_factors": [0.9, 0.7, 0.5]}, chain, steps)
    # Disorder: random positions (exceptions, VCP mode, resumes, failed retries), lost echoes,
    # bleached echoes (00), k of several packets, RTT changes.
    for seed in range(4):
        steps = disorder(seed, chain)
        worst[f"disorder {seed}"] = compare(lib, {"iw": 15.0}, chain, steps)
    print(f"chain {chain}: largest window deviation (packets) " + ", ".join(f"{k} {v:.2e}" for k, v in worst.items()))
    assert max(worst.values()) < 0.01


@pytest.mark.parametrize("chain", [2, 3])
def test_disorder_exercises_the_decoder(lib, chain):
    """The disorder traces above must reach the decoder's exceptional paths, or they test nothing."""
    for seed in range(4):
        *_, (_, mds, exc, fb, ref) = kernel_trace(lib, {"iw": 15.0}, chain, disorder(seed, chain))
        assert mds >= 10 and exc >= 10 and fb >= 3 and ref >= 1, (seed, mds, exc, fb, ref)


def test_position_is_the_segment_index(lib):
    # Consecutive full segments from any start take consecutive positions; a retransmission its own.
    for n in (2, 3):
        for s0 in (0, 1, 1447, 123456789, 2**32 - 1448 * 5):
            got = [lib.racc_dpcp_position((s0 + k * 1448) % 2**32, 1448, n) for k in range(4)]
            first = got[0]
            assert got == [(first + k) % n for k in range(4)], (n, s0, got)


def test_echo_walks_one_chain_at_a_time(lib):
    """`DpcpEcho`'s rules (racc-proto dpcp/echo.rs): one ACK per packet echoes the last packet;
    delayed ACKs over M L | M L echo M1 L1 M3 L3, the LSP one ACK late."""
    e = Echo()
    lib.racc_dpcp_echo_init(ctypes.byref(e), 2)
    seen = []
    for code, pos in [(1, 0), (2, 1), (3, 0), (1, 1)]:
        lib.racc_dpcp_echo_on_data(ctypes.byref(e), code, pos)
        seen.append(lib.racc_dpcp_echo_take(ctypes.byref(e)))
    assert seen == [1, 2 | 4, 3, 1 | 4]
    lib.racc_dpcp_echo_init(ctypes.byref(e), 2)
    seen = []
    for chain in [(1, 2), (3, 3), (2, 1), (1, 1)]:
        for pos, code in enumerate(chain):
            lib.racc_dpcp_echo_on_data(ctypes.byref(e), code, pos)
        seen.append(lib.racc_dpcp_echo_take(ctypes.byref(e)))
    # chain 1's MSP, then its LSP (held), then chain 3's MSP, then its LSP
    assert seen == [1, 2 | 4, 2, 1 | 4]


# ---- DCP-EW: DPCP's laws plus the loss differentiation (kernel/bpf/dcpew_law.h) ------------


class DcpewParams(ctypes.Structure):
    _fields_ = [("v", U64 * 53)]  # struct dcpew_params: dpcp_params + bm_keep, bm_t_mask, loss_md


class DcpewState(ctypes.Structure):
    _fields_ = [("st", State), ("bm", U64)]


def dcpew_kernel_trace(lib, params: dict, steps: list) -> list[tuple]:
    from racc.kernel import chains

    cfg = chains.dcpew_config(params)
    p = DcpewParams()
    for i, v in enumerate(cfg):
        p.v[i] = v
    s = DcpewState()
    dp = ctypes.cast(ctypes.byref(p), ctypes.POINTER(Params))
    lib.racc_dpcp_init(ctypes.byref(s.st), dp, round(float(params.get("iw", 2.0)) * ONE_CWND))
    lib.racc_dcpew_on_ack.argtypes = [ctypes.POINTER(DcpewState), ctypes.POINTER(DcpewParams), U32, U64, U64, U64]
    lib.racc_dcpew_on_loss.argtypes = [ctypes.POINTER(DcpewState), ctypes.POINTER(DcpewParams), U64, U64]
    lib.racc_dcpew_on_loss.restype = U32
    out, losses = [], [0, 0, 0]  # congestion, error, loss MDs
    for loss, code, pos, k, rtt_s, now_ns in steps:
        if loss:
            what = lib.racc_dcpew_on_loss(ctypes.byref(s), ctypes.byref(p), now_ns // 1000, round(rtt_s * 1e6))
            losses[1 if what == 0 else 0] += 1
            losses[2] += what == 2
        else:
            lib.racc_dcpew_on_ack(
                ctypes.byref(s), ctypes.byref(p), code | pos << 2, k, round(rtt_s * 1e6), now_ns // 1000
            )
        st = s.st
        out.append((st.cwnd / ONE_CWND, st.mds, st.exceptions, st.fallbacks, st.refinements, *losses))
    return out


def dcpew_trace(seed: int, p_over: float, p_loss: float) -> list:
    """Pairs in sequence with overload at rate `p_over`, fast retransmits at rate `p_loss`."""
    r = random.Random(seed)
    t, steps = 0, []
    for i in range(1500):
        t += r.randint(1, 6) * 1_000_000
        if r.random() < p_loss:
            steps.append((1, 0, 0, 0, 0.04, t))
            continue
        code = 3 if r.random() < p_over else r.choice([1, 2])
        steps.append((0, code, i % 2, r.choice([1, 1, 2]), r.choice([0.03, 0.05]), t))
    return steps


LOSS_MD_CASE = {"iw": 20.0, "md_on_msp_only": True, "bm_bits": 4, "bm_threshold": 2}


@pytest.mark.parametrize(
    ("params", "p_over", "p_loss"),
    [({"iw": 20.0}, 0.1, 0.02), ({"iw": 20.0}, 0.9, 0.02), ({"iw": 20.0, "ew_loss_md": "half"}, 0.9, 0.02),
     ({"iw": 20.0, "bm_bits": 8, "bm_threshold": 4}, 0.6, 0.02), ({"iw": 20.0, "exception_limit": 0}, 0.5, 0.02),
     (LOSS_MD_CASE, 0.7, 0.05), ({**LOSS_MD_CASE, "ew_loss_md": "half"}, 0.5, 0.05)],
)  # fmt: skip
def test_dcpew_windows_and_loss_differentiation_agree_with_racc_proto(lib, params, p_over, p_loss):
    from racc import _core

    worst, loss_mds = 0.0, 0
    for seed in range(3):
        steps = dcpew_trace(seed, p_over, p_loss)
        got = dcpew_kernel_trace(lib, params, steps)
        want = _core.dcpew_window_trace(json.dumps(params), [(a, b, c, float(k), r, t) for a, b, c, k, r, t in steps])
        for i, ((wk, *ck), (wr, *cr)) in enumerate(zip(got, want)):
            assert ck == list(cr), f"step {i} {steps[i]}: kernel counts {ck}, racc-proto {cr}"
            assert abs(wk - wr) <= 0.01 + 1e-5 * wr, f"step {i} {steps[i]}: kernel {wk:.6f}, racc-proto {wr:.6f}"
            worst = max(worst, abs(wk - wr))
        congestion, error = got[-1][5], got[-1][6]
        assert congestion + error > 10, "the traces must lose packets"
        if p_over < 0.2:
            assert error > 0 and got[-1][7] == 0, "rare overload: losses are the wireless link's, cwnd kept"
        if p_over > 0.8:
            assert congestion > 0, "overload runs: congestion losses"
        loss_mds += got[-1][7]
    if params.get("md_on_msp_only"):
        assert loss_mds >= 2, "overload outside any echo's MD episode: losses cut the window"
    print(f"DCP-EW {params} overload {p_over}: largest window deviation {worst:.2e} packet")
