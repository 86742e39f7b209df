"""``racc crosscheck ns2|ns2-vcp SCENARIO``: the command-line glue (cli.py hands its arguments here).

``ns2-vcp`` runs racc's VCP flows and routers against the VCP authors' own ns-2 code (an ``ns``
built with it: ``--ns PATH`` or ``RACC_NS2_VCP``; ``crosscheck/vcp.py``). A scenario with a
shared medium goes to the 802.11 comparison (``crosscheck/wlan``: ns-2's Mac/802_11 against
racc's medium, per-direction throughput and the 1 s Jain's index per seed).

Exit codes as the rest of the CLI: 2 for bad input and for a missing ``ns`` (one ``error:`` line
that says how to install or build it), 1 when ns-2 fails on a script.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import tomllib

EXIT_INPUT = 2
EXIT_ENV = 1


def main(args: argparse.Namespace, path: Path) -> int:
    """Run the cross-check, print the table, save the folder; the exit status."""
    from racc.crosscheck import ns, report, run, save

    vcp = args.engine == "ns2-vcp"
    if not vcp and _has_medium(path):
        return _wlan(args, path)
    out = Path(args.out) if args.out else Path("results") / f"{path.stem}-{args.engine}"
    save.check_replaceable(out)  # refuse before spending time on the runs
    try:
        cc = run.crosscheck_ns2(
            str(path),
            seeds=args.seeds,
            window=args.window,
            overrides=args.overrides,
            log=run.progress_log(),
            vcp=vcp,
            ns_path=getattr(args, "ns", None),
        )
    except ns.NsMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except ns.NsFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ENV
    save.save(cc, out)
    from racc.display import console as make_console

    console = make_console()  # full width when piped: no metric name is cut (issue 39 item 4)
    report.print_table(cc, console)
    console.print(f"results: [bold]{out}[/bold]  report: {out / 'report.html'}")
    return 0


def _has_medium(path: Path) -> bool:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return False  # the full check reports it
    return bool((data.get("topology") or {}).get("media"))


def overrides_dict(items: list[str]) -> dict[str, Any]:
    """``--set`` items (``flows[0].params.x="off"``) as the wlan runner's dotted keys
    (``flows.0.params.x``) with TOML values."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set {item!r}: expected KEY=VALUE")
        try:
            parsed = tomllib.loads(f"v = {value.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            parsed = value.strip()
        out[key.strip().replace("[", ".").replace("]", "")] = parsed
    return out


def _wlan(args: argparse.Namespace, path: Path) -> int:
    """The shared-medium comparison: racc's medium against ns-2's 802.11, seed by seed."""
    from racc.crosscheck import ns, run
    from racc.crosscheck.wlan import run as wlan
    from racc.crosscheck.wlan import tcl as wtcl
    from racc.errors import ScenarioError

    if args.window:
        print("error: --window: the shared-medium comparison reads every second after the first 3 s", file=sys.stderr)
        return EXIT_INPUT
    try:
        ov = overrides_dict(args.overrides)
        data = wlan.load(path, ov)
        wtcl.from_scenario(data)  # refusals, with their keys, before anything runs
        seeds = run.seed_list(args.seeds, int(data.get("seed", 1)))
        ns.find(getattr(args, "ns", None))
    except (ScenarioError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except ns.NsMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    runs = []
    try:
        for s in seeds:
            runs.append(wlan.run_racc(path, s, ov))
            runs.append(wlan.run_ns2(path, s, ov))
    except ns.NsFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ENV
    groups = tuple(dict.fromkeys(g for r in runs for g in r.per_flow))
    print(wlan.table(runs, groups))
    return 0
