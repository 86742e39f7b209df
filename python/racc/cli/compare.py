"""``--compare`` of ``racc live run`` and ``racc kernel run``: the simulator's run of the same
scenario beside the live (or kernel) one, the comparison files and table, the results line, and
with ``--pcap`` the simulator's capture of the same ports beside the live capture."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from racc.cli.common import EXIT_ENV, check_new_file, check_out, fail, scenario_path


def run_beside(
    args: argparse.Namespace,
    engine: str,
    start: Callable[..., Any],
    unavailable: type[Exception],
    *,
    label: str,
    pcap_ports: Callable[[Any], Iterable[str] | None],
) -> int:
    """``racc live run`` and ``racc kernel run`` after their environment check: the scenario,
    ``--out`` (default ``results/STEM-ENGINE``) and the captures refused before the run; the run,
    ``start(path, out=, seed=, overrides=, plots=, pcap=)``, whose ``unavailable`` is one line;
    then :func:`finish`, the simulated capture holding ``pcap_ports(results)``."""

    path = scenario_path(args.file)
    out = Path(args.out) if args.out else Path("results") / f"{path.stem}-{engine}"
    check_out(out, args.force or not args.out)
    sim_pcap = check_captures(args)
    try:
        res = start(
            str(path), out=out, seed=args.seed, overrides=args.overrides, plots=not args.no_plots, pcap=args.pcap
        )
    except unavailable as exc:
        return fail(str(exc), EXIT_ENV)
    finish(args, path, out, res, label=label, sim_pcap=sim_pcap, pcap_ports=pcap_ports(res))
    return 0


def simulated_capture(live_pcap: Path) -> Path:
    """Where ``--compare --pcap FILE`` writes the simulator's capture of the same ports: beside
    the live one, ``NAME-simulated.pcapng`` for ``NAME.pcapng``, so the two open side by side."""
    suffix = live_pcap.suffix or ".pcapng"
    return live_pcap.with_name(f"{live_pcap.stem}-simulated{suffix}")


def check_captures(args: argparse.Namespace) -> Path | None:
    """Refuse, before the run, a ``--pcap`` file (and with ``--compare`` its simulated sibling)
    that would overwrite something; the simulated capture's path, or None when none is asked."""
    sim_pcap = simulated_capture(Path(args.pcap)) if args.pcap and args.compare else None
    if args.pcap:
        check_new_file(Path(args.pcap), args.force, "--pcap")
    if sim_pcap is not None:
        check_new_file(sim_pcap, args.force, "--pcap (its simulated sibling)")
    return sim_pcap


def finish(
    args: argparse.Namespace,
    path: Path,
    out: Path,
    res: Any,
    *,
    label: str,
    sim_pcap: Path | None,
    pcap_ports: Iterable[str] | None,
) -> None:
    """After a live or kernel run: its summary table (unless ``--quiet``); with ``--compare`` the
    simulator's run of the scenario into ``out/simulated`` (capturing ``pcap_ports`` to
    ``sim_pcap`` when given), ``compare.{txt,json,png}`` and the table headed ``label``; then
    the results line."""
    from racc.display import console as make_console

    console = make_console()
    if not args.quiet:
        from racc.display import print_summary

        print_summary(res, console)
    if args.compare:
        from racc import live
        from racc.runner import run

        sim = run(
            path,
            seed=args.seed,
            overrides=args.overrides,
            out=out / "simulated",
            plots=not args.no_plots,
            pcap=sim_pcap,
            pcap_ports=pcap_ports,
        )
        table = live.compare(res, sim)
        live.write_compare(out, table, res, sim)
        console.print(label)
        for line in live.compare_lines(table):
            console.print(line, highlight=False, markup=False)
    console.print(
        f"results: [bold]{out}[/bold]"
        + ("" if args.no_plots else f"  report: {out / 'report.html'}")
        + (f"  simulated: {out / 'simulated'}  comparison: {out / 'compare.txt'}" if args.compare else "")
        + (f"  pcap: {args.pcap}" if args.pcap else "")
        + (f"  simulated pcap: {sim_pcap}" if sim_pcap else "")
    )
