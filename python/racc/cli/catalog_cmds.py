"""``racc list`` and ``racc scenario list|show|copy``: what racc knows and ships."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from racc.cli.common import EXIT_ENV, Parser, cell, check_new_file, new_file, rel


def add(sub: argparse._SubParsersAction) -> None:
    ls = sub.add_parser("list", help="list protocols, router modules, loss models and scenarios")
    ls.add_argument("--json", action="store_true", help="as JSON")
    ls.set_defaults(func=cmd_list)

    sc = sub.add_parser("scenario", help="the scenarios shipped with racc: list, show, copy one to edit")
    scs = sc.add_subparsers(dest="scenario_command", required=True, metavar="ACTION", parser_class=Parser)
    scs.add_parser("list", help="the shipped scenarios").add_argument("--json", action="store_true", help="as JSON")
    sh = scs.add_parser("show", help="print a shipped scenario file")
    sh.add_argument("name", metavar="NAME")
    cp = scs.add_parser("copy", help="copy a shipped scenario to FILE, to edit and `racc run FILE`")
    cp.add_argument("name", metavar="NAME")
    cp.add_argument("dest", metavar="FILE", help="new file (or an existing folder to copy into)")
    cp.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    sc.set_defaults(func=cmd_scenario)


def cmd_scenario(args: argparse.Namespace) -> int:
    import shutil

    from racc import catalog
    from racc.errors import ScenarioError
    from racc.inputs import escape

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
        known = ", ".join(catalog.shipped_names())
        raise ScenarioError(f"no shipped scenario '{escape(args.name)}' (known: {known})")
    if args.scenario_command == "show":
        sys.stdout.write(src.read_text(encoding="utf-8"))
        return 0
    dest = Path(args.dest)
    if dest.is_dir() and not dest.is_symlink():
        dest = dest / src.name
    check_new_file(dest, args.force, "scenario copy")
    # A trace entry's file is relative to the scenario file: it comes along (never over another file).
    extra = [f for f in catalog.trace_files(src) if not (dest.parent / f).exists()]
    with new_file(dest) as tmp:
        shutil.copyfile(src, tmp)
        for f in extra:
            with new_file(dest.parent / f) as t:
                shutil.copyfile(src.parent / f, t)
    print(f"copied {args.name} to {dest}; edit it, then: racc run {dest}")
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
                t.add_row(*(cell(it.get(c)) for c in keys))
            console.print(t)
    found = catalog.find()
    dirs = ", ".join(rel(d) for d in catalog.scenario_dirs())
    t = Table(title=f"scenarios ({dirs})", title_justify="left")
    t.add_column("name", overflow="fold")
    t.add_column("description", overflow="fold")
    for name, _path, desc in found:
        t.add_row(name, desc)
    console.print(t if found else "scenarios: none found (looked for a scenarios/ folder here and above)")
    return status
