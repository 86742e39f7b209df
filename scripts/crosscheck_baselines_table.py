#!/usr/bin/env python3
"""Merge ``racc crosscheck linux|ns3|baselines --out FILE.json`` files into one racc / Linux / ns-3
table (docs/CROSSCHECK-BASELINES.md was written this way): for each case, each engine's runs come
from the first file that has them, so a Linux run and an ns-3 run made apart (they need different
machines' rights, and ns-3's import is slow) print side by side. Usage:

    python scripts/crosscheck_baselines_table.py quick-linux.json quick-ns3.json
"""

from __future__ import annotations

import json
import sys

from racc.crosscheck import baselines_run


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    merged: dict[str, baselines_run.Row] = {}
    for p in paths:
        with open(p, encoding="utf-8") as f:
            for row in baselines_run.rows_from_json(json.load(f)):
                have = merged.setdefault(row.case.name, baselines_run.Row(row.case))
                for e, ms in row.runs.items():
                    have.runs.setdefault(e, ms)
                for e, why in row.missing.items():
                    if e not in have.runs:
                        have.missing.setdefault(e, why)
    rows = list(merged.values())
    for r in rows:  # an engine found in a later file is no longer missing
        r.missing = {e: w for e, w in r.missing.items() if e not in r.runs}
    print(baselines_run.table(rows, list(baselines_run.ENGINES)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
