"""``racc run``, ``racc arrivals`` and ``racc live run``: one scenario, simulated or live."""

from __future__ import annotations

import argparse
from pathlib import Path

from racc.cli import compare
from racc.cli.common import (
    EXIT_ENV,
    Parser,
    add_scenario_options,
    check_new_file,
    check_out,
    fail,
    new_file,
    scenario_path,
)


def add(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("run", help="run a scenario, print a summary, write results and plots")
    r.add_argument("file", metavar="FILE", help="scenario TOML file (or the name of one under scenarios/)")
    r.add_argument("--out", metavar="DIR", help="results folder (default: results/<scenario-stem>)")
    add_scenario_options(
        r,
        help_set="override a scenario value, e.g. --set flows[0].protocol=reno (repeatable; flows.0 is read the same)",
    )
    r.add_argument("--pcap", metavar="FILE", help="write the packets each port sends to FILE (pcapng, simulated times)")
    r.add_argument(
        "--pcap-port",
        dest="pcap_ports",
        action="append",
        metavar="NAME",
        help="capture only this port, e.g. r0->r1 (repeatable; default every port)",
    )
    r.add_argument("--force", action="store_true", help="replace racc's own earlier results in --out and --pcap")
    r.add_argument("--no-plots", action="store_true", help="do not draw plots or the HTML report")
    r.add_argument("--quiet", "-q", action="store_true", help="no progress bar and no summary table")
    r.add_argument("--json", action="store_true", help="print the summary as JSON instead of tables")
    r.set_defaults(func=cmd_run)

    ar = sub.add_parser(
        "arrivals", help="write the arrival list a scenario's traffic entries produce, for replay here or elsewhere"
    )
    ar.add_argument("file", metavar="SCENARIO", help="scenario TOML file (or the name of one under scenarios/)")
    ar.add_argument("--out", metavar="FILE", required=True, help="CSV file, or Parquet for a .parquet name")
    ar.add_argument("--force", action="store_true", help="replace FILE if it exists")
    add_scenario_options(ar)
    ar.set_defaults(func=cmd_arrivals)

    lv = sub.add_parser("live", help="run a scenario on real Linux packets (root): racc live run FILE")
    lvs = lv.add_subparsers(dest="live_command", required=True, metavar="ACTION", parser_class=Parser)
    lr = lvs.add_parser("run", help="run a scenario live and write the same results folder as `racc run`")
    lr.add_argument("file", metavar="FILE", help="scenario TOML file (or the name of one under scenarios/)")
    lr.add_argument("--out", metavar="DIR", help="results folder (default: results/<scenario-stem>-live)")
    add_scenario_options(lr)
    lr.add_argument(
        "--compare",
        action="store_true",
        help="also run the simulator on the same scenario: DIR/simulated/, and compare.{txt,json,png} in DIR",
    )
    lr.add_argument(
        "--pcap", metavar="FILE", help="write the packets each port sends, as the router holds them, to FILE (pcapng)"
    )
    lr.add_argument(
        "--pcap-port", dest="pcap_ports", action="append", metavar="NAME", help="capture only this port (repeatable)"
    )
    lr.add_argument("--force", action="store_true", help="replace racc's own earlier results in --out and --pcap")
    lr.add_argument("--no-plots", action="store_true", help="do not draw plots or the HTML report")
    lr.add_argument("--quiet", "-q", action="store_true", help="no runtime report and no summary table")
    lr.set_defaults(func=cmd_live)


def cmd_run(args: argparse.Namespace) -> int:
    path = scenario_path(args.file)
    out = Path(args.out) if args.out else Path("results") / path.stem
    # results/<stem> is racc's own: a rerun replaces it (if it holds only racc's files); a folder
    # the user named with --out is replaced only with --force.
    check_out(out, args.force or not args.out)  # refuse before spending time on the run
    if args.pcap:
        check_new_file(Path(args.pcap), args.force, "--pcap")

    from racc.runner import run

    res = run(
        path,
        seed=args.seed,
        overrides=args.overrides,
        out=out,
        progress=not args.quiet,
        plots=not args.no_plots,
        pcap=args.pcap,
        pcap_ports=args.pcap_ports,
    )
    if args.json:
        from racc.display import print_json

        print_json(res.summary)
    elif not args.quiet:
        from racc.display import console as make_console
        from racc.display import print_summary

        console = make_console()
        print_summary(res, console)
        console.print(f"results: [bold]{out}[/bold]" + ("" if args.no_plots else f"  report: {out / 'report.html'}"))
        cap = res.summary.get("run", {}).get("pcap")
        if cap:
            n = sum(cap["packets"].values())
            console.print(f"pcap: {cap['file']} ({n} packets)" + (f", stopped: {cap['error']}" if cap["error"] else ""))
        if res.summary.get("run", {}).get("plot_error"):
            console.print(f"[yellow]warning: plots not written: {res.summary['run']['plot_error']}")
    return 0


def cmd_arrivals(args: argparse.Namespace) -> int:
    """The exact flow list (start, size, src, dst, protocol) of the scenario's [[traffic]] entries,
    as the engine resolves it: a `kind = "trace"` entry reading the file replays it identically."""
    import json

    from racc import scenario, trace
    from racc.errors import core

    path = scenario_path(args.file)
    out = Path(args.out)
    check_new_file(out, args.force, "--out")
    sc = scenario.load(path, seed=args.seed, overrides=args.overrides)
    try:
        text, arrivals = sc.engine_inputs()
        resolved = core().validate(text, sc.source, *((arrivals,) if arrivals else ()))
    except scenario.ScenarioError as exc:
        raise scenario.blame_override(exc, sc) from None
    try:
        df = trace.arrivals(json.loads(resolved) if isinstance(resolved, (str, bytes)) else resolved, sc.data)
    except scenario.ScenarioError as exc:
        raise scenario.ScenarioError(f"{sc.source}: {exc}") from None
    with new_file(out) as tmp:
        trace.write(df, tmp, parquet=trace.is_parquet(out))
    print(f"{out}: {df.height} flows (start, size, src, dst, protocol)")
    return 0


def cmd_live(args: argparse.Namespace) -> int:
    import functools

    from racc import live

    if not live.is_root():  # before anything else, in one line
        return fail(live.NOT_ROOT, EXIT_ENV)
    return compare.run_beside(
        args,
        "live",
        functools.partial(live.run, pcap_ports=args.pcap_ports, echo=not args.quiet),
        live.LiveUnavailable,
        label="live against simulated (the same scenario):",
        pcap_ports=lambda _res: args.pcap_ports,
    )
