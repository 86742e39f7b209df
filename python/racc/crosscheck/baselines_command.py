"""``racc crosscheck linux|ns3|baselines [CASES]``: the command-line glue of ``baselines_run``.

``linux`` runs racc and Linux's own controllers (root; the kernel runtime), ``ns3`` racc and
ns-3 (the ``ns3`` wheel), ``baselines`` all three; each prints one Markdown table (stdout) and,
with ``--out FILE``, writes every seed's measures as JSON (rewritten after each case). CASES: ``quick`` (default, the tests'
reduced scale), ``full`` (issue 41's matrix), or case names (``baselines.parse``). Seeds: a count
from 1 or a list (default 3). An engine that cannot run here is reported under the table, not an
error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from racc.crosscheck import baselines, baselines_run
from racc.crosscheck.run import seed_list
from racc.errors import ScenarioError

ENGINES = {"linux": ["racc", "linux"], "ns3": ["racc", "ns-3"], "baselines": ["racc", "linux", "ns-3"]}


def cases(text: str | None) -> list[baselines.Case]:
    if not text or text == "quick":
        return baselines.quick()
    if text == "full":
        return baselines.matrix()
    return [baselines.parse(t.strip()) for t in text.split(",") if t.strip()]


def main(args: argparse.Namespace) -> int:
    if args.overrides or args.window:
        print(f"error: crosscheck {args.engine}: --set and --window do not apply to its fixed cases", file=sys.stderr)
        return 2
    try:
        chosen = cases(args.file)
        seeds = seed_list(args.seeds or "3", 1)
    except (ValueError, ScenarioError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    engines = ENGINES[args.engine]

    def save(rows: list[baselines_run.Row]) -> None:  # after every case: a long run keeps what it measured
        if args.out:
            Path(args.out).write_text(json.dumps(baselines_run.to_json(rows), indent=1), encoding="utf-8")

    rows = baselines_run.run_cases(chosen, engines, seeds, baselines_run.progress_log(), save)
    print(baselines_run.table(rows, engines))
    return 0
