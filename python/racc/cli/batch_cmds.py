"""``racc sweep``, ``racc crosscheck`` and ``racc bench``: many runs of one scenario."""

from __future__ import annotations

import argparse
from pathlib import Path

from racc.cli.common import EXIT_ENV, EXIT_INPUT, add_scenario_options, fail, fmt, scenario_path


def add(sub: argparse._SubParsersAction) -> None:
    sw = sub.add_parser("sweep", help="run a grid of scenario variants and seeds in parallel on Dask")
    sw.add_argument("file", metavar="FILE", help="base scenario TOML file (or the name of one under scenarios/)")
    sw.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="KEY=V1,V2,...",
        help="a swept key and its values, e.g. --grid topology.bottleneck.loss.p=0.001,0.01 (repeatable)",
    )
    sw.add_argument("--seeds", metavar="LIST", help="seeds, e.g. 1,2,3 or 1-5 (default: the file's seed)")
    add_scenario_options(sw, seed=False, help_set="override a value of the base scenario (repeatable)")
    sw.add_argument("--scheduler", metavar="ADDRESS", help="dask.distributed scheduler, e.g. tcp://host:8786")
    sw.add_argument("--workers", type=int, metavar="N", help="local worker processes (default: one per core)")
    sw.add_argument("--out", metavar="DIR", help="write sweep.parquet and each point's results folder here")
    sw.add_argument(
        "--resume", action="store_true", help="run only the points an interrupted sweep in --out did not finish"
    )
    sw.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    sw.set_defaults(func=cmd_sweep)

    cc = sub.add_parser("crosscheck", help="run a scenario in racc and in ns-2 and compare them side by side")
    cc.add_argument(
        "engine",
        choices=["ns2", "ns2-vcp", "linux", "ns3", "baselines"],
        help="the other simulator: ns2 (ns-2.35, Debian/Ubuntu package ns2), ns2-vcp (ns-2.35 with the VCP authors' code);"
        " CUBIC/BBR/DCTCP dumbbells against linux (the kernel's own, root), ns3 (the ns3 wheel), or baselines (both)",
    )
    cc.add_argument(
        "file",
        metavar="SCENARIO",
        nargs="?",
        help="scenario TOML file (or the name of one under scenarios/); for linux/ns3/baselines: cases"
        " PROTO-RATEM-RTTms-Nf[@SECONDS], comma-separated, or 'quick' (default) or 'full'",
    )
    cc.add_argument("--seeds", metavar="N", help="N seeds from the scenario's own (default 5), or e.g. 1,3 or 1-5")
    cc.add_argument("--window", metavar="START:END", help="seconds compared (default: the last half of the run)")
    cc.add_argument("--out", metavar="DIR", help="output folder (default: results/<scenario-stem>-<engine>)")
    cc.add_argument("--ns", metavar="PATH", help="the ns binary (ns2-vcp: one built with the VCP authors' code)")
    add_scenario_options(cc, seed=False)
    cc.set_defaults(func=cmd_crosscheck)

    b = sub.add_parser("bench", help="standard benchmark, one fresh process per flow count")
    b.add_argument(
        "--flows",
        type=int,
        metavar="N",
        help="flow count (default: 1, 10, 100 and 1000 at 100/1000 Mb/s, then 10,000 at 4000/10,000 Mb/s for 10 s)",
    )
    b.add_argument("--simtime", type=float, metavar="S", help="simulated seconds (default 60; 10 for 10,000 flows)")
    b.add_argument("--bottleneck-mbps", type=float, default=100.0, metavar="M", help="with --flows (default 100)")
    b.add_argument("--access-mbps", type=float, default=1000.0, metavar="M", help="with --flows (default 1000)")
    b.add_argument("--seed", type=int, default=1, metavar="N")
    b.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    b.add_argument("--kv", action="store_true", help="one key=value line per run (the format of earlier versions)")
    b.set_defaults(func=cmd_bench)


def parse_seeds(text: str | None) -> list[int] | None:
    """``"1,2,5"`` or ``"1-5"`` (or a mix) → a list of seeds."""
    from racc.errors import ScenarioError
    from racc.inputs import escape

    if not text:
        return None
    from racc.sweep import count_seeds

    seeds: list[int] = []
    try:
        count_seeds(text)  # bounded before any range is listed
        for part in text.split(","):
            lo, sep, hi = part.strip().partition("-")
            seeds.extend(range(int(lo), int(hi) + 1) if sep else [int(lo)])
    except ValueError:
        raise ScenarioError(f"--seeds {escape(text)!r}: expected integers like 1,2,3 or 1-5") from None
    if not seeds:
        raise ScenarioError(f"--seeds {escape(text)!r}: no seeds")
    return seeds


def cmd_sweep(args: argparse.Namespace) -> int:
    from rich.table import Table

    from racc.display import console as make_console
    from racc.sweep import parse_grid, sweep

    path = scenario_path(args.file)
    grid = parse_grid(args.grid)
    table = sweep(
        str(path),
        grid,
        seeds=parse_seeds(args.seeds),
        overrides=args.overrides,
        scheduler=args.scheduler,
        workers=args.workers,
        out=args.out,
        progress=True,
        resume=args.resume,
    )
    if args.json:
        from racc.display import print_json

        print_json(table.to_dicts())
        return 0
    shown = ["point", "seed", *grid, "utilisation", "mean_queue_pkts", "drop_rate", "jain", "goodput_bps", "fct_mean_s"]
    t = Table(title=f"sweep of {path.name}: {table.height} points", title_justify="left")
    for c in shown:
        t.add_column(c, justify="right", overflow="fold")
    for r in table.iter_rows(named=True):
        t.add_row(*(fmt(r.get(c)) for c in shown))
    make_console().print(t)
    if args.out:
        make_console().print(f"results: [bold]{Path(args.out) / 'sweep.parquet'}[/bold]")
    return 0


def cmd_crosscheck(args: argparse.Namespace) -> int:
    if args.engine in ("linux", "ns3", "baselines"):
        from racc.crosscheck import baselines_command

        return baselines_command.main(args)
    from racc.crosscheck import command

    if not args.file:
        return fail(f"crosscheck {args.engine}: give a SCENARIO", EXIT_INPUT)
    return command.main(args, scenario_path(args.file))


def cmd_bench(args: argparse.Namespace) -> int:
    from racc import bench

    try:
        style = "json" if args.json else "kv" if args.kv else "table"
        flows = [args.flows] if args.flows is not None else None
        if flows is None and (args.bottleneck_mbps, args.access_mbps) != (100.0, 1000.0):
            return fail(
                "--bottleneck-mbps and --access-mbps need --flows (the standard set fixes its rates)", EXIT_INPUT
            )
        bench.main(
            flows,
            args.simtime,
            args.seed,
            style=style,
            bottleneck_mbps=args.bottleneck_mbps,
            access_mbps=args.access_mbps,
        )
    except ValueError as exc:
        return fail(str(exc), EXIT_INPUT)
    except bench.BenchError as exc:
        return fail(str(exc), EXIT_ENV)
    return 0
