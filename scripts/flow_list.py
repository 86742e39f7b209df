#!/usr/bin/env python3
"""Write an explicit flow list for memory benchmarks (issue 21): N flows arriving as a Poisson
process with Pareto sizes (mean 30 packets, shape 1.2, as qfcp-fct) on a 150 Mb/s dumbbell,
either as N `[[flows]]` entries (what a user pasting another simulator's list writes) or as a
trace file plus a scenario with one `[[traffic]] kind = "trace"` entry.

    python scripts/flow_list.py --flows 10000 --interval 1s --out /tmp/list10k.toml
    python scripts/flow_list.py --flows 60000 --trace --out /tmp/list60k.toml   # + list60k.csv

The list is drawn here (Python's own seeded generator), not by racc, so it stands for a list
taken from elsewhere.
"""

from __future__ import annotations

import argparse
import math
import random
from pathlib import Path

HEADER = """# {n} flows, Poisson arrivals at {rate}/s with Pareto sizes (mean 30 pkts, shape 1.2), written by
# scripts/flow_list.py
name = "{name}"
duration = "{duration}s"
seed = 1
packet_size = 1000

[topology]
kind = "dumbbell"
pairs = 1
bottleneck = {{ capacity = "150Mbps", delay = "48ms", buffer = "1bdp" }}
access = {{ capacity = "10Gbps", delay = "1ms" }}

[record]
interval = "{interval}"
flows = false
"""


def draw(n: int, rate: float, seed: int) -> list[tuple[float, int]]:
    """(start s, size bytes) of n flows: exponential gaps, Pareto packets of 960 payload bytes."""
    rng = random.Random(seed)
    shape, mean = 1.2, 30.0
    xm = mean * (shape - 1) / shape
    t, out = 0.0, []
    for _ in range(n):
        t += rng.expovariate(rate)
        pkts = max(1, math.ceil(xm * (1.0 - rng.random()) ** (-1.0 / shape)))
        out.append((round(t, 9), min(pkts, 1 << 30) * 960))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--flows", type=int, default=10_000)
    p.add_argument("--rate", type=float, default=625.0, help="arrivals per second")
    p.add_argument("--interval", default="1s", help="record.interval")
    p.add_argument("--tail", type=float, default=4.0, help="seconds of run after the last arrival")
    p.add_argument("--trace", action="store_true", help="a trace file and one [[traffic]] entry")
    p.add_argument("--seed", type=int, default=21)
    p.add_argument("--out", required=True, help="scenario file to write")
    a = p.parse_args()
    flows = draw(a.flows, a.rate, a.seed)
    out = Path(a.out)
    duration = math.ceil(flows[-1][0] + a.tail)
    lines = [HEADER.format(n=a.flows, rate=a.rate, name=out.stem, duration=duration, interval=a.interval)]
    if a.trace:
        csv = out.with_suffix(".csv")
        csv.write_text("start,size\n" + "".join(f"{s!r},{b}\n" for s, b in flows), encoding="utf-8")
        lines.append(f'[[traffic]]\nkind = "trace"\nfile = "{csv.name}"\nprotocol = "reno"\nsrc = "s0"\ndst = "d0"\n')
    else:
        for s, b in flows:
            lines.append(f'[[flows]]\nprotocol = "reno"\nsrc = "s0"\ndst = "d0"\nstart = {s!r}\nsize = "{b}B"\n')
    out.write_text("\n".join(lines), encoding="utf-8")
    print(f"{out}: {a.flows} flows over {flows[-1][0]:.1f} s, run {duration} s")


if __name__ == "__main__":
    main()
