"""VCP-DCCP's fluid-model equilibrium of DCCP/VCP (§3, Eqs. 7-9), for the experiments' summaries.

The twin of ``racc_proto::dccp::fluid`` (the Rust one is tested against the paper's number in
racc-proto and drives the engine tests in ``crates/racc-sim/tests/dccp.rs``); it lives here too
because the bindings name no protocol. Keep the two identical.

    R    = R_p + R_q + s/C
    w_i* = γ(2C(R_p + R_q) + (ζ+1)s)/(2N) + α/h          (Eq. 8, bits)
    r_i* = w_i*/R = γC/N + (ζ-1)sγ/(2NR) + α/(hR)        (Eq. 9, b/s)

Units of the last term: the window is in bits (Eq. 5 divides it by R' and γC), so α is read as
1 *bit*, the reading that gives the paper's r* = 220.8 kb/s for the T3 setting (α/(hR) = 49.9
b/s). Read as VCP's α = 1 packet the term would be 409 kb/s and N·r* would exceed C.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Equilibrium:
    rtt_s: float
    window_bits: float
    window_pkts: float
    rate_bps: float


def equilibrium(
    flows: float,
    capacity_bps: float,
    rtpd_s: float,
    queue_delay_s: float = 0.0,
    gamma: float = 0.98,
    alpha_bits: float = 1.0,
    h: float = 0.25,
    ack_ratio: float = 2.0,
    packet_bits: float = 8.0 * 1024,
) -> Equilibrium:
    """Eqs. 7-9 with VCP-DCCP §4's defaults (γ 0.98, α 1, h 0.25, ζ 2, 1024-byte packets)."""
    c, s, n = capacity_bps, packet_bits, flows
    rtt = rtpd_s + queue_delay_s + s / c
    total = gamma * (2 * c * (rtpd_s + queue_delay_s) + (ack_ratio + 1) * s) / 2 + n * alpha_bits / h
    w = total / n
    return Equilibrium(rtt_s=rtt, window_bits=w, window_pkts=w / s, rate_bps=w / rtt)
