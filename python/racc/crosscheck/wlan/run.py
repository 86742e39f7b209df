"""Run one WLAN scenario in ns-2 and in racc and put the two side by side: each direction's
throughput per flow and the mean 1 s Jain's index after ``settle`` seconds (QFCP §III.B's
metric), per seed.
"""

from __future__ import annotations

import math
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomllib

from racc.crosscheck import ns
from racc.crosscheck.wlan import tcl
from racc.summary import jain


@dataclass
class Rates:
    """One run's figures after ``settle`` seconds (b/s per flow, Jain's index)."""

    simulator: str
    seed: int
    per_flow: dict[str, list[float]]  # group -> each flow's mean goodput (payload b/s)
    mean_jain: float

    def group(self, g: str) -> float:
        xs = self.per_flow.get(g, [])
        return sum(xs) / len(xs) if xs else float("nan")

    def total(self) -> float:
        return sum(sum(xs) for xs in self.per_flow.values())


def _apply(data: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """``{"a.0.b": v}`` overrides on the parsed TOML (dotted keys, list indices as numbers)."""
    for key, value in overrides.items():
        node: Any = data
        parts = key.split(".")
        for p in parts[:-1]:
            node = node[int(p)] if isinstance(node, list) else node.setdefault(p, {})
        last = parts[-1]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return data


def load(path: str | Path, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    return _apply(data, dict(overrides or {}))


def _summarise(
    simulator: str, seed: int, rows: list[tuple[float, str, str, float]], nflows: int, settle: float
) -> Rates:
    """``rows``: (interval end s, flow, group, goodput b/s)."""
    per: dict[str, tuple[str, list[float]]] = {}
    by_t: dict[float, list[float]] = {}
    for t, f, g, bps in rows:
        if t > settle + 1e-9:
            per.setdefault(f, (g, []))[1].append(bps)
            by_t.setdefault(round(t, 6), []).append(bps)
    per_flow: dict[str, list[float]] = {}
    for _f, (g, xs) in sorted(per.items()):
        per_flow.setdefault(g, []).append(sum(xs) / len(xs))
    js = [jain(xs + [0.0] * (nflows - len(xs))) for _, xs in sorted(by_t.items())]
    js = [j for j in js if not math.isnan(j)]
    return Rates(simulator, seed, per_flow, sum(js) / len(js) if js else float("nan"))


def run_ns2(
    path: str | Path,
    seed: int,
    overrides: dict[str, Any] | None = None,
    settle: float = 3.0,
    rts: bool = False,
    workdir: Path | None = None,
) -> Rates:
    """ns-2's run of the scenario (raises ``racc.crosscheck.ns.NsMissing`` without ``ns``)."""
    exe = ns.find()
    w = tcl.from_scenario(load(path, overrides))
    script = tcl.write(w, seed, rts=rts)
    with tempfile.TemporaryDirectory() as tmp:
        wd = Path(workdir or tmp)
        wd.mkdir(parents=True, exist_ok=True)
        (wd / "ns2.tcl").write_text(script, encoding="utf-8")
        p = subprocess.run([exe, "ns2.tcl"], cwd=wd, capture_output=True, text=True, check=False)
        counters = wd / tcl.COUNTERS
        if p.returncode != 0 or not counters.exists():
            tail = (p.stdout + p.stderr).strip().splitlines()[-3:]
            raise ns.NsFailed(f"ns-2 failed on {w.name} (exit {p.returncode}): {' | '.join(tail)}")
        text = counters.read_text(encoding="utf-8")
    mss = w.packet_size - tcl.HEADERS
    last: dict[int, int] = {}
    rows = []
    for line in text.splitlines():
        f = line.split()
        if not f or f[0] != "F":
            continue
        k, i, ack = int(f[1]), int(f[2]), int(f[3])
        prev = last.get(i, 0)
        last[i] = max(ack, 0)
        name, group, _, _ = w.flows[i]
        rows.append((k * w.interval_s, name, group, (max(ack, 0) - prev) * mss * 8 / w.interval_s))
    return _summarise("ns-2", seed, rows, len(w.flows), settle)


def run_racc(path: str | Path, seed: int, overrides: dict[str, Any] | None = None, settle: float = 3.0) -> Rates:
    import racc

    res = racc.run(str(path), seed=seed, overrides=dict(overrides or {}))
    group = dict(res.flow_info.select("flow", "group").iter_rows())
    rows = [(t, str(f), group[f], bps) for t, f, bps in res.flows.select("time_s", "flow", "goodput_bps").iter_rows()]
    return _summarise("racc", seed, rows, res.flow_info.height, settle)


def table(runs: list[Rates], groups: tuple[str, ...] = ("down", "up")) -> str:
    """A plain-text table: one row per run."""
    head = f"{'simulator':<10} {'seed':>4} " + " ".join(f"{g + ' Mb/s':>10}" for g in groups)
    head += f" {'total Mb/s':>10} {'Jain (1 s)':>10}"
    lines = [head]
    for r in runs:
        cells = " ".join(f"{r.group(g) / 1e6:>10.3f}" for g in groups)
        lines.append(f"{r.simulator:<10} {r.seed:>4} {cells} {r.total() / 1e6:>10.2f} {r.mean_jain:>10.3f}")
    return "\n".join(lines)


@dataclass
class MacCounts:
    """ns-2's MAC trace of one run, per node name: frames sent (every attempt of TCP data and
    TCP ACKs: 'tcp' and 'ack' packets), frames dropped after the retry limit (RET), interface
    queue drops (IFQ), and frames lost to collisions as seen by receivers (COL)."""

    attempts: dict[str, int]
    retry_drops: dict[str, int]
    ifq_drops: dict[str, int]
    collisions_seen: dict[str, int]


def mac_counts(trace: Path, names: dict[int, str], t0: float = 0.0, t1: float = float("inf")) -> MacCounts:
    """Counts from an ns-2 wireless trace (old format) between ``t0`` and ``t1`` seconds;
    ``names``: ns-2 node id -> node name."""
    att: dict[str, int] = {}
    ret: dict[str, int] = {}
    ifq: dict[str, int] = {}
    col: dict[str, int] = {}
    with open(trace, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            f = line.split()
            if len(f) < 8 or not f[2].startswith("_"):
                continue
            t = float(f[1])
            if t < t0 or t >= t1:
                continue
            node = names.get(int(f[2].strip("_")), f[2])
            ev, layer, why, kind = f[0], f[3], f[4], f[6]
            if ev == "s" and layer == "MAC" and kind in ("tcp", "ack"):
                att[node] = att.get(node, 0) + 1
            elif ev == "D" and layer == "MAC" and why == "RET":
                ret[node] = ret.get(node, 0) + 1
            elif ev == "D" and layer == "MAC" and why == "COL":
                col[node] = col.get(node, 0) + 1
            elif ev == "D" and layer == "IFQ":
                ifq[node] = ifq.get(node, 0) + 1
    return MacCounts(att, ret, ifq, col)
