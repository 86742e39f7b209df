"""racc's CUBIC, BBR and DCTCP against ns-3's TcpCubic, TcpBbr and TcpDctcp (issue 41 item 2),
at reduced scale: ``baselines.quick()`` (10 Mb/s, one flow at 20 ms and four over 20-80 ms, 20 s),
seeds 1-3 in both.

The bounds are ``baselines_run``'s, fixed before the first measurement: goodput and Jain's
index within max(ns-3's seed range, 0.05), mean queue within max(ns-3's seed range, 0.2 x the
buffer, 2 packets), retransmissions per 1000 segments of the same order (both under 2, or
within 3x), BBR's pacing rate within max(range, 0.10) of the link and its PROBE_RTT episodes
per flow within max(range, 1). Where racc and ns-3 differ beyond them for a reason found and
documented (docs/CROSSCHECK-BASELINES.md), ``KNOWN`` holds the case and metric and the test
asserts the documented direction instead, so that the difference cannot silently grow or flip.

Skipped, with the reason printed, where the ``ns3`` wheel is not installed (``pip install ns3``;
its import alone takes 1-2 minutes on a loaded 2-core machine, so CI installs it only where
setup.sh is asked to: see docs/CROSSCHECK-BASELINES.md).
"""

from __future__ import annotations

import statistics

import pytest
from racc.crosscheck import baselines, baselines_run, ns3_dumbbell

pytestmark = pytest.mark.skipif(ns3_dumbbell.available() is not None, reason=f"{ns3_dumbbell.available()}")

SEEDS = [1, 2, 3]

#: (case name, metric) -> (direction racc takes against ns-3: "above" or "below", why).
KNOWN: dict[tuple[str, str], tuple[str, str]] = {
    # ns-3's TcpCubic drops about 4x as many packets per epoch as racc and Linux (racc 1.5, Linux
    # 1.6, ns-3 8.9 per 1000): ns-3 is the outlier; docs/CROSSCHECK-BASELINES.md.
    ("cubic-10M-20ms-1f", "retrans_per_k"): ("below", "ns-3's CUBIC loses more per epoch than racc's and Linux's"),
    # BBR's standing queue: racc 4.6, Linux 8.7, ns-3 11.5 packets (ns-3 with losses, 17-packet
    # buffer); not separated, docs/CROSSCHECK-BASELINES.md.
    ("bbr-10M-20ms-1f", "queue_pkts"): ("below", "racc's BBR holds the smallest queue of the three"),
    ("bbr-10M-20ms-1f", "retrans_per_k"): ("below", "ns-3's BBR overflows the one-BDP buffer, racc's does not"),
    # DCTCP with RTTs 20-80 ms: racc's flows share less evenly than ns-3's (0.82 against 0.89).
    ("dctcp-10M-20-80ms-4f", "jain"): ("below", "racc's DCTCP is less fair across RTTs than ns-3's"),
}

#: racc's engine used to spin on this case (a pacing wake-up due at the same instant for ever in a
#: SACK recovery, from 3.89 s on seed 1). It is fixed and racc now finishes it (seeds 1-2: goodput
#: 0.943, 80 retransmissions per 1000 against Linux's 0.970 and 142, ns-3's 0.925 and 141), but
#: its bounds against the references are not measured yet: it stays out until they are.
HANGS = {"bbr-10M-20-80ms-4f"}


@pytest.fixture(scope="module")
def rows():
    got = baselines_run.run_cases([c for c in baselines.quick() if c.name not in HANGS], ["racc", "ns-3"], SEEDS)
    print("\n" + baselines_run.table(got, ["racc", "ns-3"]))
    return {r.case.name: r for r in got}


def _applies(case: baselines.Case, metric: str) -> bool:
    if metric in ("pacing", "probe_rtt"):
        return case.protocol == "bbr"
    return not (metric == "jain" and case.flows == 1)


PARAMS = [(c.name, m) for c in baselines.quick() for m in baselines_run.METRICS if _applies(c, m)]


@pytest.mark.parametrize(("name", "metric"), PARAMS)
def test_racc_agrees_with_ns3(rows, name, metric):
    if name in HANGS:  # not run yet (HANGS)
        pytest.xfail(f"{name}: racc's multi-flow BBR is not compared yet (HANGS)")
    row = rows[name]
    assert "racc" in row.runs and "ns-3" in row.runs, row.missing
    ours = baselines_run.values(row.runs["racc"], metric)
    ref = baselines_run.values(row.runs["ns-3"], metric)
    if (name, metric) in KNOWN:
        direction, why = KNOWN[(name, metric)]
        a, b = statistics.fmean(ours), statistics.fmean(ref)
        assert (a > b) if direction == "above" else (a < b), f"{name} {metric}: racc {a:.3f} ns-3 {b:.3f} ({why})"
        return
    assert baselines_run.agrees(row.case, metric, ours, ref), (
        f"{name} {metric}: racc {ours} ns-3 {ref} (bound {baselines_run.bound(row.case, metric, ref) if metric != 'retrans_per_k' else 'same order'})"
    )
