"""CPU cost of every paper experiment at full scale (issue 40 item 3): one line per experiment with
its CPU seconds split into the engine's run (``sim``), the results' conversion into tables
(``tables``) and the rest, Python (summaries, figures, claims, writing the folders).

    .venv/bin/python scripts/reproduce_cost.py OUT [NAME ...] [--profile DIR]

Each experiment is reproduced into ``OUT/<name>`` (which must not hold an earlier one); CPU time
is this process's (``time.process_time``), so other work on the machine does not count. With
``--profile DIR`` each experiment also leaves ``DIR/<name>.prof`` (cProfile; its overhead inflates
the Python share, so take the table from a run without it).
"""

from __future__ import annotations

import argparse
import cProfile
import time
from pathlib import Path

from racc import experiments, runner
from racc.results import Results


def _timed(fn, bucket: list[float]):
    def wrapped(*args, **kwargs):
        c0 = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            bucket[0] += time.process_time() - c0

    return wrapped


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("names", nargs="*")
    ap.add_argument("--profile", metavar="DIR")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    sim, tables = [0.0], [0.0]
    runner.advance = _timed(runner.advance, sim)
    Results.from_core = classmethod(_timed(Results.from_core.__func__, tables))
    total = [0.0, 0.0, 0.0]
    print(f"{'experiment':28} {'cpu_s':>7} {'sim_s':>7} {'tables_s':>8} {'python_s':>8}")
    for name in args.names or experiments.names():
        sim[0] = tables[0] = 0.0
        prof = cProfile.Profile() if args.profile else None
        c0 = time.process_time()
        if prof is not None:
            prof.enable()
        experiments.reproduce(name, out=Path(args.out) / name, quick=args.quick)
        if prof is not None:
            prof.disable()
            Path(args.profile).mkdir(parents=True, exist_ok=True)
            prof.dump_stats(Path(args.profile) / f"{name}.prof")
        cpu = time.process_time() - c0
        total = [total[0] + cpu, total[1] + sim[0], total[2] + tables[0]]
        print(f"{name:28} {cpu:7.2f} {sim[0]:7.2f} {tables[0]:8.2f} {cpu - sim[0] - tables[0]:8.2f}", flush=True)
    print(f"{'total':28} {total[0]:7.2f} {total[1]:7.2f} {total[2]:8.2f} {total[0] - total[1] - total[2]:8.2f}")


if __name__ == "__main__":
    main()
