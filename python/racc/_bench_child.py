"""Benchmark worker run by ``racc bench`` in a fresh interpreter.

Imports only the standard library and ``racc._core`` (never polars or matplotlib), runs
one benchmark and prints one JSON object, adding its own peak RSS, so the memory figure
is the engine's plus a bare interpreter's.
"""

from __future__ import annotations

import argparse
import json
import sys


def peak_rss_kb() -> int | None:
    """Peak resident set size of this process in KiB (VmHWM, else getrusage)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    try:
        import resource

        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return rss // 1024 if sys.platform == "darwin" else rss
    except (ImportError, OSError):
        return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="racc._bench_child")
    p.add_argument("--flows", type=int, required=True)
    p.add_argument("--simtime", type=float, default=60.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--bottleneck-mbps", type=float, default=100.0)
    p.add_argument("--access-mbps", type=float, default=1000.0)
    a = p.parse_args(argv)
    from racc import _core

    out = dict(_core.bench(a.flows, a.simtime, a.seed, a.bottleneck_mbps, a.access_mbps))
    # The engine reads its own peak (and its memory per flow from it); else this process's.
    if not out.get("peak_rss_kb"):
        out["peak_rss_kb"] = peak_rss_kb()
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
