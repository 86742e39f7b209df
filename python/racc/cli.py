"""The ``racc`` command: run, list, plot, reproduce, sweep, crosscheck, bench.

Bad input (scenario errors, a missing file, a bad ``--set``, a results folder that must
not be overwritten) prints one ``error: ...`` line on stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_INPUT = 2
EXIT_ENV = 1
EXIT_INTERRUPT = 130


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one ``error:`` line like every other input error."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(EXIT_INPUT, f"error: {self.prog}: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="racc", description="Router-assisted congestion control: packet-level simulator.")
    p.add_argument("--version", action="version", version=f"racc {_version()}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    r = sub.add_parser("run", help="run a scenario, print a summary, write results and plots")
    r.add_argument("file", metavar="FILE", help="scenario TOML file (or the name of one under scenarios/)")
    r.add_argument("--out", metavar="DIR", help="results folder (default: results/<scenario-stem>)")
    r.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a scenario value, e.g. --set flows[0].protocol=reno (repeatable; flows.0 is read the same)",
    )
    r.add_argument("--seed", type=int, help="set the scenario's top-level seed")
    r.add_argument(
        "--pcap", metavar="FILE", help="write the packets each port sends to FILE (pcapng, simulated times)"
    )
    r.add_argument(
        "--pcap-port",
        dest="pcap_ports",
        action="append",
        metavar="NAME",
        help="capture only this port, e.g. r0->r1 (repeatable; default every port)",
    )
    r.add_argument("--no-plots", action="store_true", help="do not draw plots or the HTML report")
    r.add_argument("--quiet", "-q", action="store_true", help="no progress bar and no summary table")
    r.add_argument("--json", action="store_true", help="print the summary as JSON instead of tables")

    ar = sub.add_parser(
        "arrivals", help="write the arrival list a scenario's traffic entries produce, for replay here or elsewhere"
    )
    ar.add_argument("file", metavar="SCENARIO", help="scenario TOML file (or the name of one under scenarios/)")
    ar.add_argument("--out", metavar="FILE", required=True, help="CSV file, or Parquet for a .parquet name")
    ar.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE", help="override a value"
    )
    ar.add_argument("--seed", type=int, help="set the scenario's top-level seed")

    lv = sub.add_parser("live", help="run a scenario on real Linux packets (root): racc live run FILE")
    lvs = lv.add_subparsers(dest="live_command", required=True, metavar="ACTION", parser_class=_Parser)
    lr = lvs.add_parser("run", help="run a scenario live and write the same results folder as `racc run`")
    lr.add_argument("file", metavar="FILE", help="scenario TOML file (or the name of one under scenarios/)")
    lr.add_argument("--out", metavar="DIR", help="results folder (default: results/<scenario-stem>-live)")
    lr.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE", help="override a value"
    )
    lr.add_argument("--seed", type=int, help="set the scenario's top-level seed")
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
    lr.add_argument("--no-plots", action="store_true", help="do not draw plots or the HTML report")
    lr.add_argument("--quiet", "-q", action="store_true", help="no runtime report and no summary table")

    ls = sub.add_parser("list", help="list protocols, router modules, loss models and scenarios")
    ls.add_argument("--json", action="store_true", help="as JSON")

    sc = sub.add_parser("scenario", help="the scenarios shipped with racc: list, show, copy one to edit")
    scs = sc.add_subparsers(dest="scenario_command", required=True, metavar="ACTION", parser_class=_Parser)
    scs.add_parser("list", help="the shipped scenarios").add_argument("--json", action="store_true", help="as JSON")
    sh = scs.add_parser("show", help="print a shipped scenario file")
    sh.add_argument("name", metavar="NAME")
    cp = scs.add_parser("copy", help="copy a shipped scenario to FILE, to edit and `racc run FILE`")
    cp.add_argument("name", metavar="NAME")
    cp.add_argument("dest", metavar="FILE", help="new file (or an existing folder to copy into)")
    cp.add_argument("--force", action="store_true", help="overwrite FILE if it exists")

    pl = sub.add_parser(
        "plot", help="redraw the plots and report of a results folder, or the figures, claims and report of a reproduce"
    )
    pl.add_argument("dir", metavar="DIR")

    rp = sub.add_parser("reproduce", help="run a paper experiment: every case, its figures and its claims")
    rp.add_argument("name", metavar="NAME", nargs="?", help="experiment name (omit, or --list, to list them)")
    rp.add_argument("--list", action="store_true", help="list the experiments")
    rp.add_argument("--out", metavar="DIR", help="output folder (default: results/<NAME>)")
    rp.add_argument("--quick", action="store_true", help="reduced scale (minutes become seconds; claims qualitative)")
    rp.add_argument("--seed", type=int, metavar="N", help="run every case with this seed instead of the scenarios' own")
    rp.add_argument("--workers", type=int, metavar="N", help="run the cases on a local Dask cluster of N processes")
    rp.add_argument("--scheduler", metavar="ADDR", help="run the cases on this Dask scheduler (tcp://host:8786)")
    rp.add_argument(
        "--resume", action="store_true", help="run only the cases an interrupted run in --out did not finish"
    )
    rp.add_argument("--cases", metavar="A,B", help="run only these cases (names as in --list)")
    rp.add_argument("--json", action="store_true", help="print the claims (or the list) as JSON instead of a table")

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
    sw.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a value of the base scenario (repeatable)",
    )
    sw.add_argument("--scheduler", metavar="ADDRESS", help="dask.distributed scheduler, e.g. tcp://host:8786")
    sw.add_argument("--workers", type=int, metavar="N", help="local worker processes (default: one per core)")
    sw.add_argument("--out", metavar="DIR", help="write sweep.parquet and each point's results folder here")
    sw.add_argument(
        "--resume", action="store_true", help="run only the points an interrupted sweep in --out did not finish"
    )
    sw.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")

    cc = sub.add_parser("crosscheck", help="run a scenario in racc and in ns-2 and compare them side by side")
    cc.add_argument("engine", choices=["ns2"], help="the other simulator: ns2 (ns-2.35, Debian/Ubuntu package ns2)")
    cc.add_argument("file", metavar="SCENARIO", help="scenario TOML file (or the name of one under scenarios/)")
    cc.add_argument("--seeds", metavar="N", help="N seeds from the scenario's own (default 5), or e.g. 1,3 or 1-5")
    cc.add_argument("--window", metavar="START:END", help="seconds compared (default: the last half of the run)")
    cc.add_argument("--out", metavar="DIR", help="output folder (default: results/<scenario-stem>-ns2)")
    cc.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE", help="override a value"
    )

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
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    import warnings

    from racc.errors import CoreUnavailable, ResultsError, ScenarioError
    from racc.scenario import OverrideHint

    def note(message, category, *_args, **_kw):
        if issubclass(category, OverrideHint):
            print(f"note: {message}", file=sys.stderr)
        else:
            sys.stderr.write(warnings.formatwarning(message, category, *_args[:2]))

    warnings.showwarning = note

    try:
        commands = {
            "run": cmd_run,
            "arrivals": cmd_arrivals,
            "live": cmd_live,
            "list": cmd_list,
            "scenario": cmd_scenario,
            "plot": cmd_plot,
            "reproduce": cmd_reproduce,
            "sweep": cmd_sweep,
            "crosscheck": cmd_crosscheck,
            "bench": cmd_bench,
        }
        return commands[args.command](args)
    except (ScenarioError, ResultsError) as exc:
        return _fail(str(exc), EXIT_INPUT)
    except CoreUnavailable as exc:
        return _fail(str(exc), EXIT_ENV)
    except KeyboardInterrupt as exc:
        from racc.errors import Interrupted

        msg = exc.message if isinstance(exc, Interrupted) else "interrupted; no results were written"
        return _fail(msg, EXIT_INTERRUPT)
    except BrokenPipeError:  # `racc ... | head`: the reader has gone, nothing left to say
        sys.stderr.close()
        return 0


def _scenario_path(name: str) -> Path:
    """A scenario file by path, or by its name (under a ``scenarios/`` folder here or above, then
    among the shipped ones); ``scenarios/NAME.toml`` of a shipped scenario works from any folder."""
    from racc import catalog, scenario
    from racc.errors import ScenarioError

    path = Path(name)
    if not path.exists() and scenario.looks_like_path(name) and path.suffix == "" and len(path.parts) == 1:
        path = catalog.resolve(name) or path
    if not path.exists() and path.suffix == ".toml" and path.parent.as_posix() in (".", "scenarios"):
        path = catalog.shipped(path.stem) or path
    if not path.exists():
        raise ScenarioError(f"{name}: file not found (shipped scenarios: `racc scenario list`)")
    return path


def cmd_scenario(args: argparse.Namespace) -> int:
    import shutil

    from racc import catalog
    from racc.errors import ScenarioError

    if args.scenario_command == "list":
        if args.json:
            from racc.display import print_json

            shipped = [catalog.SHIPPED / f"{n}.toml" for n in catalog.shipped_names()]
            print_json([{"name": p.stem, "path": str(p), "description": catalog.describe(p)} for p in shipped])
            return 0
        for name in catalog.shipped_names():
            print(f"{name:<28} {catalog.describe(catalog.SHIPPED / (name + '.toml'))}")
        return 0
    src = catalog.shipped(args.name)
    if src is None:
        raise ScenarioError(f"no shipped scenario '{args.name}' (known: {', '.join(catalog.shipped_names())})")
    if args.scenario_command == "show":
        sys.stdout.write(src.read_text(encoding="utf-8"))
        return 0
    dest = Path(args.dest)
    if dest.is_dir():
        dest = dest / src.name
    if dest.exists() and not args.force:
        raise ScenarioError(f"{dest}: exists; choose another file or pass --force")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    # A trace entry's file is relative to the scenario file: it comes along.
    for f in catalog.trace_files(src):
        if not (dest.parent / f).exists():
            (dest.parent / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src.parent / f, dest.parent / f)
    print(f"copied {args.name} to {dest}; edit it, then: racc run {dest}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from racc.results import check_replaceable

    path = _scenario_path(args.file)
    out = Path(args.out) if args.out else Path("results") / path.stem
    check_replaceable(out)  # refuse before spending time on the run

    from racc.runner import run

    res = run(
        str(path),
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

    path = _scenario_path(args.file)
    sc = scenario.load(str(path), seed=args.seed, overrides=args.overrides)
    try:
        text, arrivals = sc.engine_inputs()
        resolved = core().validate(text, sc.source, *((arrivals,) if arrivals else ()))
    except scenario.ScenarioError as exc:
        raise scenario.blame_override(exc, sc) from None
    try:
        df = trace.arrivals(json.loads(resolved) if isinstance(resolved, (str, bytes)) else resolved, sc.data)
    except scenario.ScenarioError as exc:
        raise scenario.ScenarioError(f"{sc.source}: {exc}") from None
    out = Path(args.out)
    trace.write(df, out)
    print(f"{out}: {df.height} flows (start, size, src, dst, protocol)")
    return 0


def cmd_live(args: argparse.Namespace) -> int:
    from racc import live
    from racc.results import check_replaceable

    if not live.is_root():  # before anything else, in one line
        return _fail(live.NOT_ROOT, EXIT_ENV)
    path = _scenario_path(args.file)
    out = Path(args.out) if args.out else Path("results") / f"{path.stem}-live"
    check_replaceable(out)
    try:
        res = live.run(
            str(path),
            seed=args.seed,
            overrides=args.overrides,
            out=out,
            plots=not args.no_plots,
            pcap=args.pcap,
            pcap_ports=args.pcap_ports,
            echo=not args.quiet,
        )
    except live.LiveUnavailable as exc:
        return _fail(str(exc), EXIT_ENV)
    from racc.display import console as make_console

    console = make_console()
    if not args.quiet:
        from racc.display import print_summary

        print_summary(res, console)
    if args.compare:
        from racc.runner import run

        sim = run(str(path), seed=args.seed, overrides=args.overrides, out=out / "simulated", plots=not args.no_plots)
        table = live.compare(res, sim)
        live.write_compare(out, table, res, sim)
        console.print("live against simulated (the same scenario):")
        for line in live.compare_lines(table):
            console.print(line, highlight=False, markup=False)
    console.print(
        f"results: [bold]{out}[/bold]"
        + ("" if args.no_plots else f"  report: {out / 'report.html'}")
        + (f"  simulated: {out / 'simulated'}  comparison: {out / 'compare.txt'}" if args.compare else "")
        + (f"  pcap: {args.pcap}" if args.pcap else "")
    )
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from rich.table import Table

    from racc import catalog
    from racc.display import console as make_console
    from racc.errors import CoreUnavailable, core

    console = make_console()
    status = 0
    try:
        engine = core()
    except CoreUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        engine, status = None, EXIT_ENV
    if args.json:
        from racc.display import print_json

        doc: dict = {"scenarios": [{"name": n, "path": str(p), "description": d} for n, p, d in catalog.find()]}
        if engine is not None:
            doc.update(
                protocols=engine.list_protocols(),
                router_modules=engine.list_router_modules(),
                loss_models=engine.list_loss_models(),
            )
        print_json(doc)
        return status
    if engine is not None:
        sections = [
            ("protocols", engine.list_protocols(), ["name", "aliases", "regulation", "description"]),
            ("router modules", engine.list_router_modules(), ["name", "description"]),
            ("loss models", engine.list_loss_models(), ["name", "description"]),
        ]
        for title, items, cols in sections:
            t = Table(title=title, title_justify="left")
            keys = cols if not items else [c for c in cols if c in items[0]] or list(items[0])
            for c in keys:
                t.add_column(c, overflow="fold")
            for it in items:
                t.add_row(*(_cell(it.get(c)) for c in keys))
            console.print(t)
    found = catalog.find()
    dirs = ", ".join(_rel(d) for d in catalog.scenario_dirs())
    t = Table(title=f"scenarios ({dirs})", title_justify="left")
    t.add_column("name", overflow="fold")
    t.add_column("description", overflow="fold")
    for name, _path, desc in found:
        t.add_row(name, desc)
    console.print(t if found else "scenarios: none found (looked for a scenarios/ folder here and above)")
    return status


def cmd_plot(args: argparse.Namespace) -> int:
    from racc.results import replot

    if (Path(args.dir) / "manifest.json").exists() and not (Path(args.dir) / "summary.json").exists():
        from racc.experiments.base import redraw

        rep = redraw(args.dir)
        out = Path(args.dir)
        print(f"figures: {out / 'figures'}  claims: {out / 'claims.json'}  report: {out / 'report.html'}")
        print(f"({rep.experiment.name}: {len(rep.figures)} figures, {len(rep.claims)} claims)")
        return 0

    res = replot(args.dir)
    print(f"plots: {Path(args.dir) / 'plots'}  report: {Path(args.dir) / 'report.html'}  ({res.name})")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from rich.table import Table

    from racc import experiments
    from racc.display import console as make_console
    from racc.display import print_json
    from racc.errors import ScenarioError

    console = make_console()
    if args.list or not args.name:
        if args.json:
            print_json(
                [
                    {
                        "name": e.name,
                        "source": e.source,
                        "cases": [c.name for c in e.cases],
                        "description": e.description,
                    }
                    for e in map(experiments.get, experiments.names())
                ]
            )
            return 0
        from racc.experiments.papers import PAPERS

        t = Table(
            title="experiments (papers: " + "; ".join(f"{k} = {v}" for k, v in PAPERS.items()) + ")",
            title_justify="left",
        )
        for c in ("name", "source", "cases", "description"):
            t.add_column(c, overflow="fold")
        for n in experiments.names():
            e = experiments.get(n)
            t.add_row(n, e.source, ", ".join(c.name for c in e.cases), e.description)
        console.print(t)
        return 0
    exp = experiments.get(args.name)  # unknown names are refused before anything runs
    out = Path(args.out) if args.out else Path("results") / exp.name
    if args.workers is not None and args.workers < 1:
        raise ScenarioError(f"--workers must be at least 1, got {args.workers}")
    rep = experiments.reproduce(
        exp.name,
        out=out,
        quick=args.quick,
        progress=True,
        seed=args.seed,
        workers=args.workers,
        scheduler=args.scheduler,
        resume=args.resume,
        cases=[c.strip() for c in args.cases.split(",") if c.strip()] if args.cases else None,
    )
    if args.json:
        print_json(
            {
                "experiment": exp.name,
                "source": exp.source,
                "quick": args.quick,
                "seed": args.seed,
                "out": str(out),
                "cases_run": list(rep.results),
                "cases_skipped": rep.skipped,
                "claims": [c.__dict__ for c in rep.claims],
            }
        )
        return 0
    scale = " — reduced scale (--quick): compare with the paper qualitatively" if args.quick else ""
    scale += f", seed {args.seed}" if args.seed is not None else ""
    from racc.experiments.papers import title as paper_title

    paper = paper_title(exp.source)
    t = Table(
        title=f"{exp.name} ({exp.source}{': ' + paper if paper else ''}){scale}", title_justify="left", show_lines=True
    )
    for c in ("the paper says", "paper's number", "racc's number", "acceptance rule (or why not judged)", "verdict"):
        t.add_column(c, overflow="fold")
    for c in rep.claims:
        rule = c.rule_text() if c.verdict in ("consistent", "differs") else (c.note or c.rule)
        if c.verdict in ("consistent", "differs") and c.note and c.rule and c.note != c.rule:
            rule += f" — {c.note}"
        t.add_row(c.claim, c.paper, c.measured, rule, _verdict_style(c.verdict))
    console.print(t)
    console.print(f"results: [bold]{out}[/bold]  figures: {out / 'figures'}  claims: {out / 'claims.json'}")
    return 0


def _verdict_style(v: str) -> str:
    style = {"consistent": "green", "differs": "bold red"}.get(v)
    return f"[{style}]{v}[/{style}]" if style else v


def parse_seeds(text: str | None) -> list[int] | None:
    """``"1,2,5"`` or ``"1-5"`` (or a mix) → a list of seeds."""
    from racc.errors import ScenarioError

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
        raise ScenarioError(f"--seeds {text!r}: expected integers like 1,2,3 or 1-5") from None
    if not seeds:
        raise ScenarioError(f"--seeds {text!r}: no seeds")
    return seeds


def cmd_sweep(args: argparse.Namespace) -> int:
    from rich.table import Table

    from racc.display import console as make_console
    from racc.sweep import parse_grid, sweep

    path = _scenario_path(args.file)
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
        t.add_row(*(_fmt(r.get(c)) for c in shown))
    make_console().print(t)
    if args.out:
        make_console().print(f"results: [bold]{Path(args.out) / 'sweep.parquet'}[/bold]")
    return 0


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "" if v is None else str(v)


def cmd_crosscheck(args: argparse.Namespace) -> int:
    from racc.crosscheck import command

    return command.main(args, _scenario_path(args.file))


def cmd_bench(args: argparse.Namespace) -> int:
    from racc import bench

    try:
        style = "json" if args.json else "kv" if args.kv else "table"
        flows = [args.flows] if args.flows is not None else None
        if flows is None and (args.bottleneck_mbps, args.access_mbps) != (100.0, 1000.0):
            return _fail(
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
        return _fail(str(exc), EXIT_INPUT)
    except bench.BenchError as exc:
        return _fail(str(exc), EXIT_ENV)
    return 0


def _fail(msg: str, status: int) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return status


def _cell(v: object) -> str:
    if isinstance(v, (list, tuple)):
        return ", ".join(map(str, v))
    return "" if v is None else str(v)


def _rel(p: Path) -> str:
    try:
        return str(p.relative_to(Path.cwd()))
    except ValueError:
        return str(p)


def _version() -> str:
    import racc

    return racc.__version__


if __name__ == "__main__":
    sys.exit(main())
