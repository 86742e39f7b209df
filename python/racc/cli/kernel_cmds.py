"""``racc kernel run``: a scenario on the Linux kernel's own TCP and queues (root; docs/KERNEL.md)."""

from __future__ import annotations

import argparse

from racc.cli import compare
from racc.cli.common import EXIT_ENV, Parser, add_scenario_options, fail


def add(sub: argparse._SubParsersAction) -> None:
    k = sub.add_parser(
        "kernel", help="run a scenario on the Linux kernel's own TCP and qdiscs (root): racc kernel run FILE"
    )
    ks = k.add_subparsers(dest="kernel_command", required=True, metavar="ACTION", parser_class=Parser)
    r = ks.add_parser(
        "run", help="run a scenario in network namespaces on kernel TCP; the same results folder as `racc run`"
    )
    r.add_argument("file", metavar="FILE", help="scenario TOML file (or the name of one under scenarios/)")
    r.add_argument("--out", metavar="DIR", help="results folder (default: results/<scenario-stem>-kernel)")
    add_scenario_options(r)
    r.add_argument(
        "--cc",
        choices=("reno", "cubic", "bbr"),
        help="run every flow with this Linux controller (default: reno for the scenario's newreno/reno flows)",
    )
    r.add_argument(
        "--compare",
        action="store_true",
        help="also run the simulator on the same scenario: DIR/simulated/, and compare.{txt,json,png} in DIR",
    )
    r.add_argument(
        "--pcap",
        metavar="FILE",
        help=(
            "capture the frames the bottleneck sends, as they leave its queue, to FILE (pcap); with "
            "--compare the simulator's capture of the same port goes beside it, as NAME-simulated.EXT"
        ),
    )
    r.add_argument("--force", action="store_true", help="replace racc's own earlier results in --out and --pcap")
    r.add_argument("--no-plots", action="store_true", help="do not draw plots or the HTML report")
    r.add_argument("--quiet", "-q", action="store_true", help="no summary table")
    r.set_defaults(func=cmd_kernel_run)


def cmd_kernel_run(args: argparse.Namespace) -> int:
    from racc.kernel import run as kernel

    try:
        kernel.check_environment()  # before anything else, in one line
    except kernel.KernelUnavailable as exc:
        return fail(str(exc), EXIT_ENV)

    def start(path: str, **options):
        import sys

        res = kernel.run(path, cc=args.cc, **options)
        for w in res.summary.get("kernel", {}).get("warnings", []):
            print(f"warning: {w}", file=sys.stderr)
        return res

    return compare.run_beside(
        args,
        "kernel",
        start,
        kernel.KernelUnavailable,
        label="kernel (live column) against simulated (the same scenario):",
        pcap_ports=captured_ports,
    )


def captured_ports(res) -> list[str] | None:
    """The port the kernel run captured (its bottleneck's egress, summary.kernel.pcap.port), so
    that the simulated capture beside it holds the same port; None (every port) if none."""
    port = ((res.summary.get("kernel") or {}).get("pcap") or {}).get("port")
    return [port] if port else None
