"""racc's CUBIC and BBR against Linux's own (``racc kernel run --cc cubic|bbr``, issue 41 item 2),
at reduced scale: ``baselines.quick()``'s CUBIC and BBR cases (10 Mb/s, one flow at 20 ms and four
over 20-80 ms, 20 s), seeds 1-2 in both (each kernel run is 20 s of real time). Linux's DCTCP is
not here: this kernel has no tcp_dctcp and no step-marking qdisc (``linux_kernel.supports``).

The bounds are ``baselines_run``'s, fixed before the first measurement: goodput and Jain's
index within max(Linux's seed range, 0.05), mean queue within max(Linux's seed range, 0.2 x the
buffer, 2 packets), retransmissions per 1000 segments of the same order (both under 2, or
within 3x), BBR's pacing rate within max(range, 0.10) of the link and its PROBE_RTT episodes
per flow within max(range, 1). Where racc and Linux differ beyond them for a reason found and
documented (docs/CROSSCHECK-BASELINES.md), ``KNOWN`` holds the case and metric and the test
asserts the documented direction instead, so that the difference cannot silently grow or flip.

Needs root, iproute2 and cgroup v2 (the kernel runtime); skipped with the reason printed otherwise.
Names carry ``$RACC_KERNEL_TAG`` (default ``pytest``).
"""

from __future__ import annotations

import os
import statistics

import pytest
from racc.crosscheck import baselines, baselines_run, linux_kernel

os.environ.setdefault("RACC_KERNEL_TAG", "pytest")

pytestmark = pytest.mark.skipif(linux_kernel.available() is not None, reason=f"{linux_kernel.available()}")

SEEDS = [1, 2]
CASES = [c for c in baselines.quick() if linux_kernel.supports(c.protocol) is None]

#: (case name, metric) -> (direction racc takes against Linux: "above" or "below", why).
KNOWN: dict[tuple[str, str], tuple[str, str]] = {
    # BBR's standing queue: racc 4.6, Linux 8.7 [7.5-10.4] packets with the same goodput and
    # pacing rate; not separated, docs/CROSSCHECK-BASELINES.md.
    ("bbr-10M-20ms-1f", "queue_pkts"): ("below", "racc's BBR holds a smaller queue than Linux's"),
}

#: (case name, metric) -> why the comparison is not judged yet. Four CUBIC flows' Jain index over
#: 20 s: Linux gave 0.487-0.803 over seeds 1-3 in one session and 0.387 and 0.522 on seeds 1-2 in
#: the next, so two seeds do not estimate its spread; racc's moved from 0.650 [0.497-0.794] to
#: 0.853 and 0.730 when CUBIC took Linux's transport defaults (partial ACKs restart the RTO). Next:
#: more seeds on both sides before a verdict.
UNSETTLED: dict[tuple[str, str], str] = {
    ("cubic-10M-20-80ms-4f", "jain"): "Linux's own Jain index over two seeds spans 0.39-0.80 between runs",
}

#: Not compared yet (see test_crosscheck_ns3.HANGS).
HANGS = {"bbr-10M-20-80ms-4f"}


@pytest.fixture(scope="module")
def rows():
    got = baselines_run.run_cases([c for c in CASES if c.name not in HANGS], ["racc", "linux"], SEEDS)
    print("\n" + baselines_run.table(got, ["racc", "linux"]))
    return {r.case.name: r for r in got}


def _applies(case: baselines.Case, metric: str) -> bool:
    if metric in ("pacing", "probe_rtt"):
        return case.protocol == "bbr"
    return not (metric == "jain" and case.flows == 1)


PARAMS = [(c.name, m) for c in CASES for m in baselines_run.METRICS if _applies(c, m)]


#: The comparison runs only when asked: Linux's side runs in real time through a user-space delay
#: line, and on a loaded 2-core CI machine its own figures move between runs beyond what two seeds
#: estimate (one BBR flow's retransmissions per 1000: 0.3 in one session, 5.9 and 3.4 in the next;
#: four CUBIC flows' Jain index 0.39-0.80). A comparison that fails by the machine's load says
#: nothing of racc, so CI leaves it to `RACC_CROSSCHECK_LINUX=1` and `racc crosscheck linux`.
OPT_IN = "RACC_CROSSCHECK_LINUX"


@pytest.mark.skipif(
    not os.environ.get(OPT_IN),
    reason=f"{OPT_IN} is not set: the Linux comparison is real-time and load-sensitive (see OPT_IN)",
)
@pytest.mark.parametrize(("name", "metric"), PARAMS)
def test_racc_agrees_with_linux(rows, name, metric):
    if name in HANGS:  # not run yet (HANGS)
        pytest.xfail(f"{name}: racc's multi-flow BBR is not compared yet (HANGS)")
    if (name, metric) in UNSETTLED:
        pytest.xfail(f"{name} {metric}: {UNSETTLED[(name, metric)]}")
    row = rows[name]
    assert "racc" in row.runs and "linux" in row.runs, row.missing
    ours = baselines_run.values(row.runs["racc"], metric)
    ref = baselines_run.values(row.runs["linux"], metric)
    if (name, metric) in KNOWN:
        direction, why = KNOWN[(name, metric)]
        a, b = statistics.fmean(ours), statistics.fmean(ref)
        assert (a > b) if direction == "above" else (a < b), f"{name} {metric}: racc {a:.3f} Linux {b:.3f} ({why})"
        return
    assert baselines_run.agrees(row.case, metric, ours, ref), (
        f"{name} {metric}: racc {ours} Linux {ref} (bound {baselines_run.bound(row.case, metric, ref) if metric != 'retrans_per_k' else 'same order'})"
    )


def test_linux_dctcp_is_refused_with_its_reason():
    why = linux_kernel.supports("dctcp")
    assert why and "tcp_dctcp" in why and "not be Linux's own" in why
