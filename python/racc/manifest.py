"""``manifest.json``: what a folder of several runs (``racc reproduce``, ``racc sweep``) holds so
far, rewritten atomically as each run finishes, so interrupted work can be resumed (``--resume``).

A run counts as finished only when the manifest lists it AND its results folder is complete
(``summary.json`` is written last, and a folder is renamed into place only when whole; see
:func:`racc.results.atomic_dir`): a half-written case folder is never taken for a finished one.
``settings`` (experiment, scale, seed; or the sweep's scenario, grid and seeds) must match for a
resume, so a resumed folder is what one uninterrupted run would have written.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from racc.errors import ScenarioError

FORMAT = "racc-manifest/1"
NAME = "manifest.json"


class Manifest:
    def __init__(self, folder: Path, kind: str, settings: Mapping[str, Any], units: Sequence[str]) -> None:
        self.folder, self.kind = folder, kind
        self.settings = json.loads(json.dumps(dict(settings)))  # as it reads back from the file
        self.units = list(units)
        self.finished: dict[str, Any] = {}  # unit -> its record (a sweep point's row)
        self.complete = False  # set by :meth:`close` once everything, claims and report included, is written

    @classmethod
    def open(
        cls,
        folder: Path,
        kind: str,
        settings: Mapping[str, Any],
        units: Sequence[str],
        *,
        resume: bool,
        resume_hint: str,
    ) -> Manifest:
        """A fresh manifest, or with ``resume`` the folder's, refused if its settings differ."""
        m = cls(folder, kind, settings, units)
        path = folder / NAME
        if not resume:
            return m
        if not path.exists():
            if folder.exists() and any(folder.iterdir()):
                raise ScenarioError(f"{folder}: has no {NAME}, so nothing to resume; choose a new --out")
            return m
        try:
            old = _read(path)
        except (OSError, ValueError) as exc:
            raise ScenarioError(f"{path}: unreadable ({exc}); cannot resume") from None
        if old.get("kind") != kind or old.get("settings") != m.settings:
            diff = _differences(old.get("settings") or {}, m.settings)
            raise ScenarioError(
                f"{path}: the folder holds other work ({diff or old.get('kind')}); "
                f"resume with the same arguments ({resume_hint}) or choose a new --out"
            )
        m.finished = {k: v for k, v in (old.get("finished") or {}).items() if k in m.units}
        return m

    def done(self, unit: str, complete: bool) -> bool:
        """Finished in the manifest and its folder complete (``complete``, checked by the caller)."""
        if unit in self.finished and not complete:
            del self.finished[unit]  # listed, but its folder is gone or partial: run it again
        return unit in self.finished

    def close(self) -> None:
        """Mark the work complete: the manifest says so last, after every other file."""
        self.complete = True
        self.write()

    def mark(self, unit: str, record: Any = None) -> None:
        self.finished[unit] = record if record is not None else {"at_utc": _now()}
        self.write()

    def write(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        payload = {
            "format": FORMAT,
            "kind": self.kind,
            "settings": self.settings,
            "units": self.units,
            "finished": {u: self.finished[u] for u in self.units if u in self.finished},
            "complete": self.complete,
        }
        tmp = self.folder / f".{NAME}.partial"
        tmp.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, self.folder / NAME)

    def missing(self) -> list[str]:
        return [u for u in self.units if u not in self.finished]


def clear_partial(folder: Path) -> None:
    """Remove ``folder`` if it is a half-written results folder (only racc's own files, without
    the ``summary.json`` that marks it complete), so its run starts again; anything else there is
    refused rather than deleted."""
    import shutil

    from racc.errors import ResultsError
    from racc.results import foreign_entries, is_results_dir

    if not folder.is_dir() or is_results_dir(folder):
        return
    foreign = foreign_entries(folder)
    if foreign:
        raise ResultsError(
            f"{folder}: not a racc results folder ({', '.join(sorted(foreign))}); refusing to replace it"
        )
    shutil.rmtree(folder)


#: What ``racc reproduce`` writes at the top of its folder, beside one results folder per case.
REPRODUCE_FILES = frozenset({NAME, "claims.json", "report.html", "figures", f".{NAME}.partial", ".claims.json.partial"})


def is_complete(folder: Path) -> bool:
    """Whether ``folder``'s manifest says its work is complete."""
    try:
        doc = _read(folder / NAME)
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and doc.get("complete") is True


def prepare_fresh(folder: Path, kind: str, force: bool) -> None:
    """Make ``folder`` ready for a fresh (not resumed) run of ``kind`` work: absent or empty is
    ready; racc's own earlier work there is removed with ``force`` (its manifest first, so an
    interruption never leaves a folder that looks finished) and refused without it; a folder
    holding anything else is never emptied."""
    import shutil

    from racc.errors import ResultsError
    from racc.results import check_replaceable

    if not folder.exists() and not folder.is_symlink():
        return
    if folder.is_symlink() or not folder.is_dir():
        raise ResultsError(f"{folder}: exists and is not a directory; choose another --out")
    entries = list(folder.iterdir())
    if not entries:
        return
    try:
        doc = _read(folder / NAME)
    except (OSError, ValueError):
        doc = None
    if not isinstance(doc, dict) or doc.get("kind") != kind:
        raise ResultsError(f"{folder}: not a racc {kind} folder (no {NAME} of one); refusing to replace it, even with --force")
    units = set(doc.get("units") or [])
    cases = []
    for p in entries:
        if p.name in REPRODUCE_FILES:
            continue
        hidden = p.name.startswith(".") and any(p.name.startswith(f".{u}.") for u in units)
        if p.name in units or hidden:
            if p.name in units:
                check_replaceable(p, force=True)  # a case folder holding the user's files is refused
            cases.append(p)
            continue
        from racc.inputs import escape

        raise ResultsError(
            f"{folder}: holds `{escape(p.name, 40)}`, which racc did not write; refusing to replace it, even with --force"
        )
    if not force:
        state = "a finished" if doc.get("complete") is True else "an unfinished"
        raise ResultsError(
            f"{folder}: holds {state} {kind}; add --resume to finish it with the same arguments, "
            "or --force to replace it"
        )
    (folder / NAME).unlink(missing_ok=True)  # first: nothing left looks finished
    for p in [folder / n for n in REPRODUCE_FILES] + cases:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        elif p.exists() or p.is_symlink():
            p.unlink()


def _read(path: Path) -> Any:
    """A manifest's JSON: a regular file of at most 64 MiB (else ValueError, as for bad JSON)."""
    from racc.inputs import read_bytes

    try:
        return json.loads(read_bytes(path, str(path), 64 * 2**20, "manifest"))
    except ScenarioError as exc:
        if "file not found" in str(exc):
            raise FileNotFoundError(str(exc)) from None
        raise ValueError(str(exc)) from None


def _differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    keys = sorted(set(old) | set(new))
    return ", ".join(f"{k}: {old.get(k)!r} there, {new.get(k)!r} now" for k in keys if old.get(k) != new.get(k))


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
