"""Scenario loading: TOML file/text/dict -> overrides -> seed -> JSON for the engine.

The schema belongs to the Rust side; Python only reads TOML, applies ``--set``
overrides and ``--seed``, and hands JSON text to ``racc._core`` together with a
``source`` name used in every error message.
"""

from __future__ import annotations

import copy
import datetime as _dt
import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomllib

from racc import inputs
from racc.errors import ScenarioError
from racc.inputs import escape

OVERRIDE_SOURCE = "--set"
_BRACKET_INDEX = re.compile(r"\[\s*(\d+)\s*\]")


class OverrideHint(UserWarning):
    """A ``--set`` key was understood but is not written the way racc writes keys (``flows.0``)."""


class ScenarioWarning(UserWarning):
    """A valid scenario holds a setting that provably does nothing on its topology: RED thresholds
    above the buffer, a loss that drops every packet, a sample interval longer than the run."""


_TOML_POS = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_TOML_END = re.compile(r"\s*\(at end of document\)\s*$")


@dataclass
class Scenario:
    """A scenario ready for the engine: the final ``data`` plus where it came from."""

    data: dict[str, Any]
    source: str
    text: str | None = None
    path: Path | None = None
    overrides: list[str] = field(default_factory=list)
    seed: int | None = None
    #: trace entries' files as read (`racc.trace`), by traffic index; handed to the engine as
    #: each entry's `arrivals` without passing through `data`
    traces: dict[int, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The scenario's ``name`` key, else the file stem, else ``"scenario"``; control
        characters escaped (an ESC or newline in a name never reaches a terminal raw)."""
        name = self.data.get("name")
        if isinstance(name, str) and name:
            return escape(name, 200)
        return escape(self.path.stem, 200) if self.path else "scenario"

    @property
    def stem(self) -> str:
        """File stem (for the default results folder), else the name."""
        return self.path.stem if self.path else self.name

    def to_json(self) -> str:
        """Serialise ``data`` to JSON; non-finite floats are refused naming their key. Trace
        entries get their file's rows as ``arrivals`` (spliced in as text, since their values
        are checked already; :meth:`engine_inputs` hands them over faster)."""
        if not self.traces:
            return self._json(self.data)
        data = dict(self.data)
        data["traffic"] = [dict(t) for t in data["traffic"]]
        marks = {}
        for i in self.traces:
            marks[i] = f"@racc-arrivals-{i}-{id(self)}@"
            data["traffic"][i]["arrivals"] = marks[i]
        text = self._json(data)
        for i, tr in self.traces.items():
            text = text.replace(json.dumps(marks[i]), tr.to_json(), 1)
        return text

    def engine_inputs(self) -> tuple[str, dict[int, dict[str, Any]]]:
        """The scenario's JSON without the trace entries' rows, and those rows by traffic index
        as the engine's ``arrivals`` argument takes them (buffers, not JSON numbers: a million
        rows cross in milliseconds)."""
        return self._json(self.data), {i: tr.columns() for i, tr in self.traces.items()}

    def _json(self, data: dict[str, Any]) -> str:
        """:func:`to_json`, a bad value a ``--set`` or ``--seed`` gave blamed on that argument."""
        try:
            return to_json(data, self.source)
        except ScenarioError as exc:
            raise blame_override(exc, self) from None


def looks_like_path(scenario: str) -> bool:
    """A string is a path unless it is TOML text: it has a newline, or an ``=`` and no file of
    that name exists (``a=b.toml`` is read as a file when there is one). A :class:`pathlib.Path`
    is always a path; the command line hands its FILE over as one."""
    if "\n" in scenario or "\r" in scenario:
        return False
    return "=" not in scenario or Path(scenario).exists()


def load(
    scenario: str | os.PathLike | Mapping[str, Any],
    *,
    seed: int | None = None,
    overrides: Iterable[str] | Mapping[str, Any] | None = None,
) -> Scenario:
    """Build a :class:`Scenario` from a path, TOML text or dict; apply overrides then the seed."""
    path: Path | None = None
    text: str | None = None
    if isinstance(scenario, Mapping):
        data = copy.deepcopy(dict(scenario))
        source = "<dict>"
    elif isinstance(scenario, os.PathLike) or (isinstance(scenario, str) and looks_like_path(scenario)):
        path = Path(scenario)
        source = str(scenario)
        if not path.exists() and path.parent.as_posix() == "scenarios" and path.suffix == ".toml":
            from racc import catalog  # `scenarios/NAME.toml` of a shipped scenario, from any folder

            path = catalog.shipped(path.stem) or path
        text = read_text(path)
        data = parse_toml(text, source)
    elif isinstance(scenario, str):
        source = "<string>"
        text = scenario
        data = parse_toml(text, source)
    else:
        raise TypeError(f"scenario must be a path, TOML text or dict, not {type(scenario).__name__}")

    applied: list[str] = []
    if overrides:
        items = overrides.items() if isinstance(overrides, Mapping) else (split_override(o) for o in overrides)
        for key, value in items:
            if not isinstance(key, str):
                raise TypeError("override keys must be strings")
            key = canonical_key(key) if isinstance(overrides, Mapping) else _user_key(key)
            if isinstance(value, str) and not isinstance(overrides, Mapping):
                value = parse_value(value)
            set_path(data, key, value)
            applied.append(f"{key}={json.dumps(value, default=_json_default)}")
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ScenarioError(f"--seed: expected an integer, got {seed!r}")
        data["seed"] = seed
    from racc import traffic_files  # trace files are relative to the scenario file (else to the current folder)

    # A scenario file's traces stay in its folder; the API's own dicts and text are not confined.
    sc = Scenario(data=data, source=source, text=text, path=path, overrides=applied, seed=seed)
    try:
        check_names(data, source)
    except ScenarioError as exc:
        raise blame_override(exc, sc) from None
    try:
        sc.traces = traffic_files.load_traces(data, source, path.parent if path is not None else Path.cwd(), path is not None)
    except ScenarioError as exc:
        raise blame_override(exc, sc) from None
    return sc


def check_names(data: dict[str, Any], source: str) -> None:
    """Names the engine would take silently but should not: two ``[[flows]]``/``[[traffic]]``
    entries with one group name (their flows would be merged into one group, and drawn with the
    same start times), and a node or medium name holding ``->``, which joins two names in a
    port's name (``r0->r1``, the handle of ``--pcap-port`` and ``ports."r0->r1"``): refused rather
    than renamed, so that every port keeps the one name a user can guess."""
    seen: dict[str, str] = {}
    for table in ("flows", "traffic"):
        entries = data.get(table)
        for i, e in enumerate(entries if isinstance(entries, list) else []):
            if not isinstance(e, dict):
                continue
            name = e.get("name") if isinstance(e.get("name"), str) else f"{table}{i}"
            key = f"{table}[{i}]"
            if name in seen:
                raise ScenarioError(
                    f"{source}: key `{key}.name`: group name '{escape(name)}' is also {seen[name]}'s; "
                    "each [[flows]] and [[traffic]] entry needs its own"
                )
            seen[name] = key
    topo = data.get("topology")
    for table in ("nodes", "media"):
        entries = topo.get(table) if isinstance(topo, dict) else None
        for i, e in enumerate(entries if isinstance(entries, list) else []):
            name = e.get("name") if isinstance(e, dict) else None
            if isinstance(name, str) and "->" in name:
                raise ScenarioError(
                    f"{source}: key `topology.{table}[{i}].name`: must not contain `->` "
                    "(it joins two names in a port's name, as in r0->r1)"
                )


def read_text(path: Path) -> str:
    """Read a scenario file: a regular file of at most :data:`racc.inputs.MAX_SCENARIO_BYTES`,
    UTF-8; every failure is one :class:`ScenarioError` naming the file, never its content."""
    return inputs.read_text(path, escape(str(path), 160), inputs.MAX_SCENARIO_BYTES, "scenario file")


#: Tables and arrays nested deeper than this are refused (a scenario needs four or five levels;
#: Python's TOML reader would fail with a RecursionError near 330).
MAX_DEPTH = 32


def parse_toml(text: str, source: str) -> dict[str, Any]:
    """Parse TOML; syntax errors become ``"<source>: line L, column C: <reason>"``."""
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise ScenarioError(
            f"{source}: TOML nested too deeply (at most {MAX_DEPTH} levels of tables and arrays)"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc.args[0] if exc.args else exc)
        line = getattr(exc, "lineno", None)
        col = getattr(exc, "colno", None)
        m = _TOML_POS.search(msg)
        if m:
            line, col = line or int(m.group(1)), col or int(m.group(2))
            msg = msg[: m.start()]
        elif _TOML_END.search(msg):
            msg = _TOML_END.sub("", msg)
            line = text.count("\n") + 1
            col = len(text.rsplit("\n", 1)[-1]) + 1
        where = f"line {line}, column {col}: " if line else ""
        raise ScenarioError(f"{source}: TOML syntax error: {where}{escape(msg, 120)}") from None
    if _depth(data) > MAX_DEPTH:
        raise ScenarioError(f"{source}: TOML nested too deeply (at most {MAX_DEPTH} levels of tables and arrays)")
    return data


def _depth(node: Any, limit: int = MAX_DEPTH + 1) -> int:
    """Nesting depth of tables and arrays, counted no further than ``limit``."""
    if limit <= 0 or not isinstance(node, (dict, list)):
        return 0
    items = node.values() if isinstance(node, dict) else node
    return 1 + max((_depth(v, limit - 1) for v in items), default=0)


def canonical_key(key: str) -> str:
    """A key as racc writes it, in its error messages and records: array elements in brackets,
    ``flows[0].protocol`` (TOML's arrays of tables, as the engine names them)."""
    return _render(split_key(key))


def _render(parts: list[str]) -> str:
    out = ""
    for part in parts:
        if re.fullmatch(r"\d+", part) and out:
            out += f"[{part}]"
        else:
            seg = f'"{part}"' if "." in part or "[" in part else part
            out += f".{seg}" if out else seg
    return out


def _user_key(key: str) -> str:
    """The canonical form of a key typed by the user, with an :class:`OverrideHint` when it was
    written another way (``flows.0.protocol``)."""
    canon = canonical_key(key)
    if canon != key and canon.replace('"', "") != key.replace('"', ""):
        import warnings

        warnings.warn(
            f"{OVERRIDE_SOURCE} key `{key}` read as `{canon}` (racc writes array elements as `flows[0]`)",
            OverrideHint,
            stacklevel=3,
        )
    return canon


def blame_override(exc: Exception, sc: Scenario) -> Exception:
    """An engine error about a key a ``--set`` gave is that ``--set``'s fault, not the file's:
    ``--set topology.bottleneck.capacity=0: key `topology.bottleneck.capacity`: must be > 0
    (scenario x.toml)``. Other errors are returned unchanged."""
    msg = str(exc)
    m = re.match(r"(?P<src>.*?): key `(?P<key>[^`]*)`: (?P<why>.*)$", msg, re.DOTALL)
    if not m:
        return exc
    key = m.group("key")
    if key == "seed" and sc.seed is not None:
        return ScenarioError(f"--seed {sc.seed}: {m.group('why')} (scenario {m.group('src')})")
    for applied in sc.overrides:
        okey, _, _ = applied.partition("=")
        if key == okey or key.startswith((okey + ".", okey + "[")) or okey.startswith((key + ".", key + "[")):
            src = m.group("src")
            where = f" (scenario {src})" if src != OVERRIDE_SOURCE else ""
            return ScenarioError(f"{OVERRIDE_SOURCE} {applied}: key `{key}`: {m.group('why')}{where}")
    return exc


def split_override(item: str) -> tuple[str, str]:
    """Split ``key=value`` at the first ``=``; the value stays raw text."""
    key, sep, value = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ScenarioError(f"{OVERRIDE_SOURCE} {item!r}: expected key=value")
    return key, value.strip()


def parse_value(raw: str) -> Any:
    """A TOML value if ``raw`` parses as one (``42``, ``"1Gbps"``, ``true``, ``[1,2]``), else ``raw``."""
    if "\n" in raw or "\r" in raw:
        return raw
    try:
        doc = tomllib.loads(f"v = {raw}")
    except tomllib.TOMLDecodeError:
        return raw
    except RecursionError:
        raise ScenarioError(f"{OVERRIDE_SOURCE}: a value nested too deeply (at most {MAX_DEPTH} levels)") from None
    if _depth(doc) > MAX_DEPTH:
        raise ScenarioError(f"{OVERRIDE_SOURCE}: a value nested too deeply (at most {MAX_DEPTH} levels)")
    return doc["v"] if list(doc) == ["v"] else raw


def split_key(key: str) -> list[str]:
    """Split a dotted key; double-quoted segments may contain dots (``ports."r0->r1".limit``)."""
    parts: list[str] = []
    buf: list[str] = []
    quoted = False
    was_quoted = False
    if "[" in key:
        key = _unbracket(key)
    for ch in key:
        if ch == '"':
            quoted = not quoted
            was_quoted = True
        elif ch == "." and not quoted:
            parts.append("".join(buf).strip())
            buf, was_quoted = [], False
        else:
            buf.append(ch)
    if quoted:
        raise ScenarioError(f"{OVERRIDE_SOURCE}: key `{key}`: unterminated quote")
    parts.append("".join(buf) if was_quoted else "".join(buf).strip())
    if any(p == "" for p in parts):
        raise ScenarioError(f"{OVERRIDE_SOURCE}: key `{key}`: empty key segment")
    return parts


def _unbracket(key: str) -> str:
    """``flows[0].protocol`` → ``flows.0.protocol``, leaving quoted segments alone."""
    pieces = key.split('"')
    for i in range(0, len(pieces), 2):  # outside quotes
        pieces[i] = _BRACKET_INDEX.sub(r".\1", pieces[i])
    return '"'.join(pieces)


def set_path(data: dict[str, Any], key: str, value: Any) -> None:
    """Set ``value`` at dotted ``key``: tables are created as needed, array indices must exist."""
    parts = split_key(key)
    node: Any = data
    for depth, seg in enumerate(parts):
        last = depth == len(parts) - 1
        here = key
        parent = _render(parts[:depth]) or "<top>"
        if isinstance(node, list):
            if not re.fullmatch(r"\d+", seg):
                raise ScenarioError(
                    f"{OVERRIDE_SOURCE}: key `{here}`: `{parent}` is an array; expected an integer index, got `{seg}`"
                )
            idx = int(seg)
            if idx >= len(node):
                raise ScenarioError(
                    f"{OVERRIDE_SOURCE}: key `{here}`: index {idx} is out of range "
                    f"(`{parent}` has {len(node)} entr{'y' if len(node) == 1 else 'ies'})"
                )
            if last:
                node[idx] = value
            else:
                node = node[idx]
        elif isinstance(node, dict):
            if last:
                node[seg] = value
            else:
                node = node.setdefault(seg, {})
        else:
            raise ScenarioError(
                f"{OVERRIDE_SOURCE}: key `{here}`: `{parent}` is {_toml_type(node)}, not a table or array"
            )


def to_json(data: Any, source: str) -> str:
    """JSON text for the engine; dates become ISO strings, inf/nan are refused with their key."""
    bad = _find_nonfinite(data, [])
    if bad is not None:
        key, val = bad
        key = _render(split_key(key)) if key else "<top>"
        if isinstance(val, int):
            raise ScenarioError(
                f"{source}: key `{escape(key)}`: an integer of {len(str(abs(val)))} digits is out of range "
                "(at most 64 bits)"
            )
        raise ScenarioError(f"{source}: key `{escape(key)}`: non-finite number {val} is not allowed")
    return json.dumps(data, default=_json_default, allow_nan=False)


def _find_nonfinite(node: Any, path: list[str]) -> tuple[str, float | int] | None:
    """The first non-finite float, or integer beyond 64 bits (a 301-digit number), and its key."""
    if isinstance(node, float) and not math.isfinite(node):
        return ".".join(path), node
    if isinstance(node, int) and not isinstance(node, bool) and not -(2**63) <= node < 2**64:
        return ".".join(path), node
    if isinstance(node, dict):
        items: Iterable = node.items()
    elif isinstance(node, list):
        items = ((str(i), v) for i, v in enumerate(node))
    else:
        return None
    for k, v in items:
        hit = _find_nonfinite(v, [*path, str(k)])
        if hit:
            return hit
    return None


def _json_default(obj: Any) -> Any:
    if isinstance(obj, (_dt.datetime, _dt.date, _dt.time)):
        return obj.isoformat()
    raise TypeError(f"cannot serialise {type(obj).__name__}")


def _toml_type(v: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a float", str: "a string"}.get(
        type(v), f"a {type(v).__name__}"
    )
