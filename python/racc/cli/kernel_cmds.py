"""``racc kernel run``: a scenario on the Linux kernel's own TCP and queues (root; docs/KERNEL.md).
``racc kernel bench``: each BPF router module's cost per packet against 10 Gb/s line rate (root;
docs/KERNEL-BPF.md)."""

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
    b = ks.add_parser(
        "bench",
        help="each BPF router's cost per packet (BPF_PROG_TEST_RUN) and a bulk transfer through one on veth",
    )
    b.add_argument("--protocols", default="", help="comma-separated routers (default: every one the kernel has)")
    b.add_argument("--repeat", type=int, default=1_000_000, help="runs per round on one packet (default 1000000)")
    b.add_argument("--rounds", type=int, default=5, help="rounds per router and frame size (default 5)")
    b.add_argument("--fresh", type=int, default=2000, help="single runs on a new copy of the packet (default 2000)")
    b.add_argument("--seconds", type=float, default=5.0, help="seconds per iperf3 run through veth (default 5)")
    b.add_argument("--flows", type=int, default=2, help="iperf3 flows (default 2)")
    b.add_argument("--no-veth", action="store_true", help="only the per-packet cost, no transfer through veth")
    b.add_argument("--json", metavar="FILE", help="also write every number to FILE")
    b.set_defaults(func=cmd_kernel_bench)


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


def cmd_kernel_bench(args: argparse.Namespace) -> int:
    import json

    from racc.kernel import bpf, router_bench

    for name in ("repeat", "rounds", "flows"):
        if getattr(args, name) < 1:
            return fail(f"--{name}: must be at least 1, got {getattr(args, name)}", 2)
    if args.fresh < 0 or not args.seconds > 0:
        return fail("--fresh must be at least 0 and --seconds above 0", 2)
    reason = bpf.available()
    if reason:
        return fail(reason, EXIT_ENV)
    try:
        res = router_bench.run(
            [p for p in args.protocols.split(",") if p] or None,
            repeat=args.repeat,
            rounds=args.rounds,
            fresh=args.fresh,
            seconds=args.seconds,
            flows=args.flows,
            veth=not args.no_veth,
        )
    except ValueError as exc:
        return fail(str(exc), 2)
    except RuntimeError as exc:
        return fail(str(exc), EXIT_ENV)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


def captured_ports(res) -> list[str] | None:
    """The port the kernel run captured (its bottleneck's egress, summary.kernel.pcap.port), so
    that the simulated capture beside it holds the same port; None (every port) if none."""
    port = ((res.summary.get("kernel") or {}).get("pcap") or {}).get("port")
    return [port] if port else None
