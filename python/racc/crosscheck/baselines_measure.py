"""What the baselines cross-check compares, computed the same way from every engine's samples.

Over the case's window (``Case.window``): aggregate goodput as a fraction of the bottleneck's
rate, Jain's index of the flows' goodputs, the bottleneck's mean queue in packets (time average
of the sampled queue), retransmitted segments per 1000 delivered, and for BBR the flows' summed
pacing rate as a fraction of the link and the PROBE_RTT episodes per flow (cwnd entering 4
segments or fewer after the flow's first second: Linux's ``bbr_cwnd_min_target``, the window
PROBE_RTT holds, tcp_bbr.c ``bbr_set_cwnd``). One ``Measure`` per engine, case and seed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, fields

from racc.crosscheck.baselines import HEADERS, PACKET, Case

MSS = PACKET - HEADERS
PROBE_RTT_CWND = 4  # segments (tcp_bbr.c bbr_cwnd_min_target)


@dataclass
class Measure:
    """One engine's numbers for one case and seed (fractions, packets, counts)."""

    goodput: float  # aggregate goodput / bottleneck rate
    jain: float
    queue_pkts: float
    drops: float  # bottleneck drops in the window
    retrans_per_k: float  # retransmitted segments per 1000 delivered, in the window
    pacing: float  # summed pacing rate / bottleneck rate (BBR; NaN otherwise)
    probe_rtt: float  # PROBE_RTT episodes per flow in the window (BBR; NaN otherwise)

    @staticmethod
    def names() -> list[str]:
        return [f.name for f in fields(Measure)]


@dataclass
class Series:
    """Per-flow samples (time, flow, cumulative bytes delivered, cwnd bytes, pacing bps, cumulative
    retransmitted segments) and the bottleneck's queue samples and drops, from one engine."""

    time_s: Sequence[float]
    flow: Sequence[int]
    delivered_bytes: Sequence[float]
    cwnd_bytes: Sequence[float]
    pacing_bps: Sequence[float]
    retrans: Sequence[float]
    queue_t: Sequence[float]
    queue_pkts: Sequence[float]
    drops_in_window: float


def _at(samples: list[tuple[float, float]], t: float) -> float:
    """The last sampled value at or before ``t`` (0 before the first)."""
    v = 0.0
    for ts, x in samples:
        if ts > t + 1e-9:
            break
        v = x
    return v


def measure(case: Case, seed: int, s: Series) -> Measure:
    w0, w1 = case.window
    span = w1 - w0
    per: dict[int, dict[str, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
    for i, t in enumerate(s.time_s):
        f = int(s.flow[i])
        per[f]["bytes"].append((t, float(s.delivered_bytes[i])))
        per[f]["cwnd"].append((t, float(s.cwnd_bytes[i])))
        per[f]["pacing"].append((t, float(s.pacing_bps[i])))
        per[f]["retrans"].append((t, float(s.retrans[i])))
    rates, retrans, delivered, pacing, probes = [], 0.0, 0.0, 0.0, []
    starts = case.starts(seed)
    for f in range(case.flows):
        d = per.get(f)
        if not d:
            rates.append(0.0)
            continue
        got = _at(d["bytes"], w1) - _at(d["bytes"], w0)
        rates.append(got * 8 / span)
        delivered += got / MSS
        retrans += _at(d["retrans"], w1) - _at(d["retrans"], w0)
        inside = [x for t, x in d["pacing"] if w0 < t <= w1 + 1e-9]
        pacing += sum(inside) / len(inside) if inside else 0.0
        probes.append(probe_rtt_entries([(t, x) for t, x in d["cwnd"] if w0 < t <= w1 + 1e-9], starts[f] + 1.0))
    cap = case.rate_mbps * 1e6
    total = sum(rates)
    jain = total**2 / (len(rates) * sum(r * r for r in rates)) if total > 0 else 0.0
    q = [x for t, x in zip(s.queue_t, s.queue_pkts) if w0 < t <= w1 + 1e-9]
    bbr = case.protocol == "bbr"
    return Measure(
        goodput=total / cap,
        jain=jain,
        queue_pkts=sum(q) / len(q) if q else 0.0,
        drops=float(s.drops_in_window),
        retrans_per_k=1000 * retrans / delivered if delivered > 0 else 0.0,
        pacing=pacing / cap if bbr else float("nan"),
        probe_rtt=sum(probes) / len(probes) if bbr and probes else float("nan"),
    )


def probe_rtt_entries(cwnd: list[tuple[float, float]], after_s: float) -> int:
    """Times cwnd enters PROBE_RTT's 4 segments (from above) after ``after_s``."""
    n, low = 0, True
    for t, c in cwnd:
        is_low = c <= (PROBE_RTT_CWND + 0.5) * MSS  # half a segment: engines round cwnd differently
        if is_low and not low and t > after_s:
            n += 1
        low = is_low
    return n
