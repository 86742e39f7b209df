"""Live against simulated for every registered protocol on three dumbbells (issue 39 item 2).

    sudo .venv/bin/python scripts/live_agreement.py [--protocols vcp,xcp] [--shapes a,b,c]
        [--duration 20] [--rerun 1] [--seeds 8] [--json FILE] [--clock-sends]

Prints one row per live run: aggregate goodput (Mb/s), bottleneck utilisation and drops on every
port, live and simulated, the relative differences, the 1-minute load average at the live run's
start and end, and the verdict (within 10 % in goodput and utilisation, drops of the same order).
With --seeds N, a row still outside after its re-runs is followed by the simulator's own spread
over seeds 1..N (a start-up that hangs on single packets' timing varies with the seed too).
The shapes are racc.live_agreement.SHAPES: a = 10 Mb/s 20 ms 2 flows, b = 20 Mb/s 60 ms 4 flows,
c = 15 Mb/s 120 ms 8 flows started over 2 s.
"""

import argparse
import json
import sys

from racc import live_agreement as la


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--protocols", default="", help="comma-separated (default: every registered protocol)")
    ap.add_argument("--shapes", default="a,b,c")
    ap.add_argument("--duration", type=float, default=20.0, help="seconds per run")
    ap.add_argument("--rerun", type=int, default=1, help="live re-runs of a row outside the tolerance")
    ap.add_argument("--seeds", type=int, default=0, help="under a row still outside: the simulator over seeds 1..N")
    ap.add_argument("--json", help="also write every row's numbers here")
    ap.add_argument("--clock-sends", action="store_true", help="live with due-time sends off (racc-live --clock-sends)")
    args = ap.parse_args(argv)
    names = [p for p in args.protocols.split(",") if p] or la.protocols()
    shapes = [s for s in args.shapes.split(",") if s]
    for s in shapes:
        if s not in la.SHAPES:
            print(f"error: --shapes: unknown shape {s!r} (known: {', '.join(la.SHAPES)})", file=sys.stderr)
            return 2
    rows = la.table(
        names,
        shapes,
        args.duration,
        args.rerun,
        echo=lambda line: print(line, flush=True),
        seeds=args.seeds,
        clock_sends=args.clock_sends,
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
