"""Where scenario files live: ``scenarios/`` under the CWD (or a parent), then the scenarios shipped
inside the package (``racc/scenarios``; the checkout's top-level ``scenarios`` is a link to it), so a
shipped scenario is found from any folder."""

from __future__ import annotations

from pathlib import Path

import tomllib

#: The scenarios shipped with racc (the single copy; the source checkout's ``scenarios`` links here).
SHIPPED = Path(__file__).resolve().parent / "scenarios"


def scenario_dirs(cwd: Path | None = None) -> list[Path]:
    """Existing ``scenarios`` folders: nearest one at or above ``cwd``, then the shipped ones."""
    found: list[Path] = []
    here = (cwd or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / "scenarios").is_dir():
            found.append(d / "scenarios")
            break
    if SHIPPED.is_dir() and SHIPPED not in {f.resolve() for f in found}:
        found.append(SHIPPED)
    return found


def shipped(name: str) -> Path | None:
    """The shipped scenario ``name`` (with or without ``.toml``), whatever the current folder holds."""
    stem = name.removesuffix(".toml")
    p = SHIPPED / f"{stem}.toml"
    return p if p.is_file() else None


def shipped_names() -> list[str]:
    return sorted(p.relative_to(SHIPPED).with_suffix("").as_posix() for p in SHIPPED.rglob("*.toml"))


def find(cwd: Path | None = None) -> list[tuple[str, Path, str]]:
    """(name, path, description) of every ``*.toml`` under the scenario folders, first folder wins."""
    seen: dict[str, tuple[str, Path, str]] = {}
    for d in scenario_dirs(cwd):
        for p in sorted(d.rglob("*.toml")):
            name = p.relative_to(d).with_suffix("").as_posix()
            seen.setdefault(name, (name, p, describe(p)))
    return sorted(seen.values())


def resolve(name: str, cwd: Path | None = None) -> Path | None:
    """The file of scenario ``name`` (``racc run dumbbell``), or None."""
    for d in scenario_dirs(cwd):
        p = d / f"{name}.toml"
        if p.is_file():
            return p
    return None


def describe(path: Path) -> str:
    """A one-line description: the ``description`` key, else the first sentence of the leading comment."""
    from racc.errors import ScenarioError

    try:
        text = _read(path)
    except ScenarioError:
        return "(not readable)"
    try:
        desc = tomllib.loads(text).get("description")
        if isinstance(desc, str) and desc.strip():
            return first_sentence(" ".join(desc.split()))
    except (tomllib.TOMLDecodeError, RecursionError):
        return "(TOML syntax error)"
    para: list[str] = []
    for line in text.splitlines():
        st = line.strip()
        if not st.startswith("#"):
            if para or st:
                break
            continue
        body = st.lstrip("#").strip()
        if not body:
            if para:
                break
            continue
        para.append(body)
    return first_sentence(" ".join(para))


def _read(path: Path) -> str:
    """A scenario file's text: a regular file, bounded (a FIFO named ``x.toml`` never blocks a listing)."""
    from racc import inputs

    return inputs.read_text(path, str(path), inputs.MAX_SCENARIO_BYTES, "scenario file")


def first_sentence(text: str, limit: int = 120) -> str:
    """The first sentence of ``text``, cut at ``limit`` characters."""
    end = text.find(". ")
    s = text if end < 0 else text[: end + 1]
    s = s if len(s) <= limit else s[: limit - 1].rstrip() + "…"
    from racc.inputs import escape

    return escape(s, limit + 10)


def trace_files(path: Path) -> list[str]:
    """The relative files a scenario's trace entries read (`[[traffic]] kind = "trace"` or
    `"connection_matrix"`)."""
    from racc.errors import ScenarioError

    try:
        data = tomllib.loads(_read(path))
    except (ScenarioError, tomllib.TOMLDecodeError, RecursionError):
        return []
    return [
        t["file"]
        for t in data.get("traffic") or []
        if isinstance(t, dict) and t.get("kind") in ("trace", "connection_matrix") and isinstance(t.get("file"), str)
        and not Path(t["file"]).is_absolute()
    ]
