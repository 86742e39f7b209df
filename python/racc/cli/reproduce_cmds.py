"""``racc reproduce`` (a paper experiment: its cases, figures and claims) and ``racc plot``
(redraw a results or reproduce folder)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add(sub: argparse._SubParsersAction) -> None:
    pl = sub.add_parser(
        "plot", help="redraw the plots and report of a results folder, or the figures, claims and report of a reproduce"
    )
    pl.add_argument("dir", metavar="DIR")
    pl.set_defaults(func=cmd_plot)

    rp = sub.add_parser("reproduce", help="run a paper experiment: every case, its figures and its claims")
    rp.add_argument("name", metavar="NAME", nargs="?", help="experiment name (omit, or --list, to list them)")
    rp.add_argument("--list", action="store_true", help="list the experiments")
    rp.add_argument(
        "--all",
        action="store_true",
        help="run every experiment into --out/<NAME>, skipping those already complete there and resuming "
        "one cut short; a summary table of claims by verdict at the end",
    )
    rp.add_argument("--out", metavar="DIR", help="output folder (default: results/<NAME>; with --all: results)")
    rp.add_argument("--quick", action="store_true", help="reduced scale (minutes become seconds; claims qualitative)")
    rp.add_argument("--seed", type=int, metavar="N", help="run every case with this seed instead of the scenarios' own")
    rp.add_argument("--workers", type=int, metavar="N", help="run the cases on a local Dask cluster of N processes")
    rp.add_argument("--scheduler", metavar="ADDR", help="run the cases on this Dask scheduler (tcp://host:8786)")
    rp.add_argument(
        "--resume", action="store_true", help="run only the cases an interrupted run in --out did not finish"
    )
    rp.add_argument(
        "--force", action="store_true", help="replace an earlier reproduction in --out (racc's own files only)"
    )
    rp.add_argument(
        "--case-plots",
        action="store_true",
        help="also draw each case's own plots and report.html (more CPU than the runs; `racc plot OUT/CASE` draws one later)",
    )
    rp.add_argument("--cases", metavar="A,B", help="run only these cases (names as in --list)")
    rp.add_argument("--json", action="store_true", help="print the claims (or the list) as JSON instead of a table")
    rp.add_argument("--all-claims", action="store_true", help="print every claim, measured rows too (default: summary)")
    rp.set_defaults(func=cmd_reproduce)


def cmd_plot(args: argparse.Namespace) -> int:
    from racc.errors import ResultsError
    from racc.results import replot

    folder = Path(args.dir)
    if not folder.is_dir():
        raise ResultsError(f"{folder}: not a folder" if folder.exists() else f"{folder}: no such folder")
    if (folder / "manifest.json").exists() and not (folder / "summary.json").exists():
        from racc.experiments.suite import redraw

        rep = redraw(args.dir)
        print(f"figures: {folder / 'figures'}  claims: {folder / 'claims.json'}  report: {folder / 'report.html'}")
        print(f"({rep.experiment.name}: {len(rep.figures)} figures, {len(rep.claims)} claims)")
        return 0

    res = replot(args.dir)
    print(f"plots: {folder / 'plots'}  report: {folder / 'report.html'}  ({res.name})")
    return 0


def _list(args: argparse.Namespace) -> int:
    from rich.table import Table

    from racc import experiments
    from racc.display import console as make_console
    from racc.display import print_json

    if args.json:
        print_json(
            [
                {"name": e.name, "source": e.source, "cases": [c.name for c in e.cases], "description": e.description}
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
    make_console().print(t)
    return 0


def check_reproduce_out(out: Path, resume: bool, force: bool) -> None:
    """``--out`` of a reproduction: a folder (never a file); without ``--resume`` an earlier
    reproduction there is replaced only with ``--force`` (never anything racc did not write), so
    an old run's claims and cases never sit beside a new one's."""
    from racc.errors import ResultsError
    from racc.manifest import prepare_fresh

    if out.exists() and not out.is_dir():
        raise ResultsError(f"--out {out}: exists and is not a folder; choose another --out")
    if resume and force:
        raise ResultsError("--resume and --force: choose one (finish the earlier run, or replace it)")
    if not resume:
        prepare_fresh(out, "reproduce", force)


def cmd_reproduce(args: argparse.Namespace) -> int:
    from racc import experiments
    from racc.display import console as make_console
    from racc.display import print_json
    from racc.errors import ScenarioError

    if args.all:
        return _reproduce_all(args)
    if args.list or not args.name:
        return _list(args)
    exp = experiments.get(args.name)  # unknown names are refused before anything runs
    out = Path(args.out) if args.out else Path("results") / exp.name
    if args.workers is not None and args.workers < 1:
        raise ScenarioError(f"--workers must be at least 1, got {args.workers}")
    check_reproduce_out(out, args.resume, args.force)
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
        case_plots=args.case_plots,
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
                "headline": rep.headline,
                "claims": [c.to_json() for c in rep.claims],
            }
        )
        return 0
    scale = " — reduced scale (--quick): compare with the paper qualitatively" if args.quick else ""
    scale += f", seed {args.seed}" if args.seed is not None else ""
    from racc.experiments.papers import title as paper_title
    from racc.experiments.printout import print_reproduction

    paper = paper_title(exp.source)
    console = make_console()
    print_reproduction(
        rep, console, f"{exp.name} ({exp.source}{': ' + paper if paper else ''}){scale}", args.all_claims
    )
    console.print(f"results: [bold]{out}[/bold]  figures: {out / 'figures'}  claims: {out / 'claims.json'}")
    return 0


def _reproduce_all(args: argparse.Namespace) -> int:
    """``racc reproduce --all``: every experiment, then the summary table (claims by verdict)."""
    from racc.display import console as make_console
    from racc.display import print_json
    from racc.errors import ScenarioError
    from racc.experiments.suite import reproduce_all, summary_rows

    for given, flag in ((args.name, "a NAME"), (args.cases, "--cases"), (args.list, "--list")):
        if given:
            raise ScenarioError(f"--all runs every experiment and every case: drop {flag}")
    if args.workers is not None and args.workers < 1:
        raise ScenarioError(f"--workers must be at least 1, got {args.workers}")
    if args.resume and args.force:
        raise ScenarioError("--resume and --force: choose one (finish the earlier run, or replace it)")
    out = Path(args.out) if args.out else Path("results")
    console = make_console(stderr=True) if args.json else make_console()

    def said(o) -> None:
        console.print(f"{o.name}: {o.status}", highlight=False)

    outcomes = reproduce_all(
        out,
        quick=args.quick,
        seed=args.seed,
        workers=args.workers,
        scheduler=args.scheduler,
        force=args.force,
        progress=True,
        case_plots=args.case_plots,
        on_done=said,
    )
    rows = summary_rows(outcomes)
    if args.json:
        print_json({"out": str(out), "quick": args.quick, "seed": args.seed, "experiments": rows})
        return 0
    from rich.table import Table

    t = Table(title=f"racc reproduce --all: claims by verdict ({out})", title_justify="left")
    columns = list(dict.fromkeys(k for r in rows for k in r))
    for c in columns:
        t.add_column(c, justify="left" if c in ("experiment", "status") else "right")
    for r in rows:
        t.add_row(*(str(r.get(c, 0)) for c in columns))
    totals = {c: sum(r.get(c, 0) for r in rows) for c in columns if c not in ("experiment", "status")}
    t.add_row("all", f"{len(rows)} experiments", *(str(totals[c]) for c in columns[2:]), style="bold")
    console.print(t)
    console.print(f"results: [bold]{out}[/bold]/<experiment> (claims.json, report.html, figures)")
    return 0
