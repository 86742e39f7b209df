"""VCP-DCCP Eq. 9 (``racc.experiments.dccp_fluid``), the twin of racc-proto's dccp::fluid."""

from __future__ import annotations

import pytest
from racc.experiments.dccp_fluid import equilibrium


def test_eq9_gives_the_papers_rate_for_the_t3_setting():
    # VCP-DCCP §4: N 200, C 45 Mb/s, RTPD 60 ms, R_q ≈ 20 ms, ζ 2, 1024-byte packets → 220.8 kb/s.
    # By hand: 220 500 + 250.31 + 49.89 b/s (the same vector as the Rust test).
    e = equilibrium(200, 45e6, 0.060, queue_delay_s=0.020)
    assert e.rtt_s == pytest.approx(0.08018204, abs=1e-8)
    assert e.rate_bps == pytest.approx(220_500 + 250.31 + 49.89, abs=0.05)
    assert round(e.rate_bps / 1e3, 1) == 220.8
    assert e.window_bits == pytest.approx(17_704.211, abs=1e-3)
