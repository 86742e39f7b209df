"""No import circles in the Python front end (issue 38): every `import` of a racc module, at the top
of a file or inside a function (a deferred import still ties the two files together), is an edge;
a circle is a set of modules each reachable from the others. The experiments stand in floors:
claims below base, printout and report; base below the experiments; the table
(``experiments/__init__.py``) above them; ``suite`` on top."""

from __future__ import annotations

import ast
from pathlib import Path

import racc

ROOT = Path(racc.__file__).resolve().parent

#: Circles known and not yet broken, each with its reason; breaking one means deleting it here.
KNOWN: list[set[str]] = []


def _modules() -> dict[str, Path]:
    mods = {}
    for f in ROOT.rglob("*.py"):
        parts = list(f.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = f
    return mods


def _graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, f in mods.items():
        package = m if f.name == "__init__.py" else m.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                graph[m].update(a.name for a in node.names if a.name in mods)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([base] if base else []))
                for a in node.names:
                    if f"{base}.{a.name}" in mods:
                        graph[m].add(f"{base}.{a.name}")
                    elif base in mods:
                        graph[m].add(base)
    return graph


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[set[str]] = []
    for root, deps in graph.items():
        if root in index:
            continue
        work = [(root, iter(sorted(deps)))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(comp)
    return out


def test_circles_are_found():
    # The check itself: a made-up circle of three and a chain beside it.
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(g) == [{"a", "b", "c"}]


def test_no_import_circles_in_the_front_end():
    found = circles(_graph(_modules()))
    assert sorted(map(sorted, found)) == sorted(map(sorted, KNOWN)), found


def test_the_experiments_floors():
    g = _graph(_modules())
    below = ("racc.experiments.claims", "racc.experiments.printout", "racc.experiments.report")
    for m in below:
        assert not {d for d in g[m] if d in ("racc.experiments", "racc.experiments.base")}, m
    assert "racc.experiments" not in g["racc.experiments.base"]
    inside = [m for m in g if m.startswith("racc.experiments")]
    assert not [m for m in inside if "racc.experiments.suite" in g[m]]
