"""``racc crosscheck linux|ns3|baselines``: today's baselines in racc beside Linux's and ns-3's.

For each case (``baselines.Case``) and seed, racc runs the case's scenario in a child process, Linux
runs it through ``racc kernel run --cc`` (``linux_kernel``), ns-3 through its wheel
(``ns3_dumbbell``); every engine's samples become one ``Measure`` (``baselines_measure``). The
table shows each metric as racc's mean beside each reference's mean and seed range, and a
verdict per metric by the bounds below, fixed before any measurement (issue 41 item 2):

* goodput (fraction of the link) and Jain's index: within max(the reference's seed range, 0.05);
* mean queue: within max(the reference's seed range, 0.2 x the buffer, 2 packets);
* retransmissions per 1000 segments: "same order": both under 2 per 1000, or within a factor 3;
* BBR's pacing rate (fraction of the link): within max(the reference's seed range, 0.10);
* BBR's PROBE_RTT episodes per flow in the window: within max(the reference's seed range, 1).

A reference whose runs all failed, or that cannot run a case (Linux has no DCTCP here), shows
``-`` with the reason below the table.
"""

from __future__ import annotations

import math
import statistics
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from racc.crosscheck.baselines import Case
from racc.crosscheck.baselines_measure import Measure, Series, measure

ENGINES = ("racc", "linux", "ns-3")
METRICS = ("goodput", "jain", "queue_pkts", "retrans_per_k", "pacing", "probe_rtt")


def racc_timeout_s(case: Case) -> float:
    """racc runs in a child process with this limit, 20-50x what a case takes here: a BBR case
    hung racc's engine (a timer that fires at the same instant forever; docs/CROSSCHECK-BASELINES.md),
    and one hung case must not stop the table."""
    return min(900.0, 60 + case.duration_s * case.rate_mbps * case.flows / 50)


def racc_series(case: Case, seed: int, timeout_s: float | None = None) -> Series:
    """racc's run of ``case`` in a child process (``racc_timeout_s`` unless ``timeout_s``)."""
    limit = timeout_s or racc_timeout_s(case)
    import json
    import subprocess

    cmd = [sys.executable, "-m", "racc.crosscheck.baselines_run", f"{case.name}@{case.duration_s:g}", str(seed)]
    try:
        p = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"racc did not finish in {limit:.0f} s (seed {seed})") from None
    if p.returncode != 0:
        tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise RuntimeError(f"racc exited {p.returncode}: {tail}")
    return Series(**json.loads(p.stdout))


def racc_series_here(case: Case, seed: int) -> Series:
    """racc's own run of ``case`` in this process: its flows and bottleneck samples."""
    import polars as pl

    from racc.runner import run

    res = run(case.scenario(seed))
    f = res.flows.sort("time_s")
    links = res.links.filter(pl.col("name") == "r0->r1").sort("time_s")
    w0, w1 = case.window
    inside = links.filter((pl.col("time_s") > w0) & (pl.col("time_s") <= w1 + 1e-9))
    return Series(
        f["time_s"].to_list(),
        f["flow"].to_list(),
        f["acked_bytes"].cast(pl.Float64).to_list(),
        f["cwnd_bytes"].to_list(),
        f["rate_bps"].to_list(),
        f["retransmits"].cast(pl.Float64).to_list(),
        links["time_s"].to_list(),
        links["queue_pkts"].cast(pl.Float64).to_list(),
        float(inside["drops"].sum()),
    )


def ns3_series(case: Case, seed: int) -> Series:
    from racc.crosscheck import ns3_dumbbell

    r = ns3_dumbbell.run(case, seed)
    w0, w1 = case.window
    # ns-3 reports drops for the whole run only; scaled to the window (steady state).
    return Series(
        r.time_s,
        r.flow,
        r.rx_bytes,
        r.cwnd_bytes,
        r.pacing_bps,
        r.retrans,
        r.queue_t,
        [float(x) for x in r.queue_pkts],
        r.drops * (w1 - w0) / case.duration_s,
    )


def linux_series(case: Case, seed: int) -> Series:
    from racc.crosscheck import linux_kernel

    return linux_kernel.run(case, seed)[0]


RUNNERS: dict[str, Callable[[Case, int], Series]] = {"racc": racc_series, "linux": linux_series, "ns-3": ns3_series}


def unavailable(engine: str, case: Case) -> str | None:
    """Why ``engine`` cannot run ``case`` here (None if it can)."""
    if engine == "linux":
        from racc.crosscheck import linux_kernel

        return linux_kernel.available() or linux_kernel.supports(case.protocol)
    if engine == "ns-3":
        from racc.crosscheck import ns3_dumbbell

        return ns3_dumbbell.available()
    return None


@dataclass
class Row:
    """One case: each engine's measures by seed, and why an engine did not run."""

    case: Case
    runs: dict[str, list[Measure]] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)


def run_cases(
    cases: Iterable[Case],
    engines: Iterable[str],
    seeds: list[int],
    log: Callable[[str], None] | None = None,
    done: Callable[[list[Row]], None] | None = None,
) -> list[Row]:
    """Every case on every engine and seed; ``done`` gets the rows so far after each case."""
    say = log or (lambda _m: None)
    rows = []
    for case in cases:
        row = Row(case)
        for e in engines:
            why = unavailable(e, case)
            if why:
                row.missing[e] = why
                continue
            row.runs[e] = []
            for s in seeds:
                try:
                    row.runs[e].append(measure(case, s, RUNNERS[e](case, s)))
                    say(f"{case.name} {e} seed {s}: done")
                except RuntimeError as exc:  # one seed's failure (racc's hang, a kernel run's error)
                    row.missing[e] = "; ".join(filter(None, [row.missing.get(e), f"seed {s}: {exc}"]))
                    say(f"{case.name} {e} seed {s}: {exc}")
            if not row.runs[e]:
                del row.runs[e]
        rows.append(row)
        if done:
            done(rows)
    return rows


def values(ms: list[Measure], metric: str) -> list[float]:
    return [v for v in (getattr(m, metric) for m in ms) if not math.isnan(v)]


def bound(case: Case, metric: str, ref: list[float]) -> float:
    """The agreement bound of the module doc for ``metric`` against the reference's values."""
    spread = (max(ref) - min(ref)) if ref else 0.0
    floor = {
        "goodput": 0.05,
        "jain": 0.05,
        "queue_pkts": max(0.2 * case.buffer_pkts, 2.0),
        "pacing": 0.10,
        "probe_rtt": 1.0,
    }[metric]
    return max(spread, floor)


def agrees(case: Case, metric: str, ours: list[float], ref: list[float]) -> bool | None:
    """Whether racc's mean agrees with the reference by the module doc's bound (None: no data)."""
    if not ours or not ref:
        return None
    a, b = statistics.fmean(ours), statistics.fmean(ref)
    if metric == "retrans_per_k":
        if max(a, b) < 2.0:
            return True
        lo, hi = sorted((a, b))
        return lo > 0 and hi / lo <= 3.0
    return abs(a - b) <= bound(case, metric, ref)


def fmt(vals: list[float], metric: str) -> str:
    if not vals:
        return "-"
    digits = 1 if metric in ("queue_pkts", "retrans_per_k", "probe_rtt") else 3
    m = statistics.fmean(vals)
    if len(vals) == 1:
        return f"{m:.{digits}f}"
    return f"{m:.{digits}f} [{min(vals):.{digits}f}-{max(vals):.{digits}f}]"


def table(rows: list[Row], engines: list[str]) -> str:
    """A Markdown table: one line per case and metric, racc then each reference, and verdicts."""
    refs = [e for e in engines if e != "racc"]
    head = ["case", "metric"] + engines + [f"racc vs {e}" for e in refs]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    notes = []
    for row in rows:
        for metric in METRICS:
            if metric in ("pacing", "probe_rtt") and row.case.protocol != "bbr":
                continue
            if metric == "jain" and row.case.flows == 1:
                continue
            cells = [row.case.name, metric]
            cells += [fmt(values(row.runs.get(e, []), metric), metric) for e in engines]
            for e in refs:
                ok = agrees(
                    row.case, metric, values(row.runs.get("racc", []), metric), values(row.runs.get(e, []), metric)
                )
                cells.append("-" if ok is None else "yes" if ok else "**no**")
            out.append("| " + " | ".join(cells) + " |")
        for e, why in row.missing.items():
            notes.append(f"{row.case.name}: {e}: {why}")
    return "\n".join(out + ([""] + [f"- {n}" for n in dict.fromkeys(notes)] if notes else []))


def to_json(rows: list[Row]) -> list[dict[str, Any]]:
    return [
        {
            "case": f"{r.case.name}@{r.case.duration_s:g}",
            "runs": {e: [m.__dict__ for m in ms] for e, ms in r.runs.items()},
            "missing": r.missing,
        }
        for r in rows
    ]


def rows_from_json(data: list[dict[str, Any]]) -> list[Row]:
    """``to_json``'s rows back (a saved ``--out`` file, whole or written part-way)."""
    from racc.crosscheck.baselines import parse

    rows = []
    for d in data:
        row = Row(parse(d["case"]), missing=dict(d.get("missing") or {}))
        row.runs = {e: [Measure(**m) for m in ms] for e, ms in d["runs"].items()}
        rows.append(row)
    return rows


def progress_log() -> Callable[[str], None]:
    return lambda m: print(m, file=sys.stderr, flush=True)


if __name__ == "__main__":  # the child of racc_series: CASE@SECONDS SEED -> the Series as JSON
    import json

    from racc.crosscheck.baselines import parse

    _s = racc_series_here(parse(sys.argv[1]), int(sys.argv[2]))
    print(json.dumps({k: list(v) if isinstance(v, (list, tuple)) else v for k, v in _s.__dict__.items()}))
