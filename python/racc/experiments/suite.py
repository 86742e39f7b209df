"""Every paper experiment at once (``racc reproduce --all``), and redrawing one experiment's folder
(``racc plot``). This is the top floor of ``racc.experiments``: it reads the table of experiments
(the package), which imports every experiment, and nothing below imports it back.

``--all`` writes each experiment to ``OUT/<name>`` exactly as ``racc reproduce NAME --out
OUT/<name>`` would, and is resumable at two levels: an experiment whose manifest says complete
(written last, after claims.json) is read back, not run; one cut short resumes from its finished
cases. Nothing finished is replaced without ``force``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from racc.errors import Interrupted, ResultsError, ScenarioError
from racc.experiments.base import (
    Plan,
    Reproduction,
    _resume_command,
    _tracker,
    finish,
    is_interrupt,
    prepare,
    reproduce,
    run_case,
)
from racc.experiments.claims import tally


@dataclass
class Outcome:
    """One experiment of ``--all``: ``status`` "ran", "resumed" (some cases came from an earlier
    run) or "already complete" (read back, nothing run), and its claims by verdict."""

    name: str
    status: str
    verdicts: dict[str, int] = field(default_factory=dict)


def reproduce_all(
    out: str | os.PathLike,
    *,
    quick: bool = False,
    seed: int | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    force: bool = False,
    progress: bool = False,
    case_plots: bool = False,
    on_done: Any = None,
) -> list[Outcome]:
    """Reproduce every experiment into ``out/<name>`` (see the module doc), the cases of all of
    them on one Dask cluster with ``workers`` > 1 or ``scheduler``, each experiment's figures and
    claims drawn here as soon as its last case finishes. ``on_done(outcome)`` is told each
    experiment as it completes. Every folder is checked before anything runs; on Ctrl-C,
    :class:`racc.errors.Interrupted` names the finished experiments and the command that resumes."""
    import racc.experiments as table

    root = Path(out)
    if root.exists() and not root.is_dir():
        raise ResultsError(f"--out {root}: exists and is not a folder; choose another --out")
    names = table.names()
    outcomes: dict[str, Outcome] = {}
    plans: list[Plan] = []
    resumed: set[str] = set()
    for name in names:
        folder = root / name
        done = None if force else _complete(folder, name, quick, seed)
        if done is not None:
            outcomes[name] = Outcome(name, "already complete", done)
            continue
        resume = not force and (folder / "manifest.json").exists()
        if not resume:
            from racc.manifest import prepare_fresh

            prepare_fresh(folder, "reproduce", force)
        plan = prepare(name, out=folder, quick=quick, seed=seed, resume=resume, case_plots=case_plots)
        if plan.results:
            resumed.add(name)
        plans.append(plan)
    for o in outcomes.values():
        if on_done is not None:
            on_done(o)
    jobs = [(f"{p.exp.name}/{j[0]}", *j[1:]) for p in plans for j in p.jobs]
    already = [f"{p.exp.name}/{c}" for p in plans for c in p.results]
    tracker = (
        _tracker("reproduce --all", jobs, dict.fromkeys(already)) if progress and len(already) < len(jobs) else None
    )

    def completed(plan: Plan) -> None:
        rep = finish(plan)
        verdicts, _ = tally(rep.claims)
        o = Outcome(plan.exp.name, "resumed" if plan.exp.name in resumed else "ran", verdicts)
        outcomes[o.name] = o
        if on_done is not None:
            on_done(o)

    try:
        if scheduler or (workers or 1) > 1:
            _on_dask(plans, scheduler, workers, tracker, completed)
        else:
            for plan in plans:
                for case_name, path, overrides, folder in plan.todo():
                    key = f"{plan.exp.name}/{case_name}"
                    if tracker is not None:
                        tracker.begin(key)
                    res = run_case(path, overrides, folder, tracker.at if tracker else False, case_plots)
                    plan.finished(case_name, res)
                    if tracker is not None:
                        tracker.finish(key)
                completed(plan)
    except BaseException as exc:
        try:  # the check is a call too: a second, pending Ctrl-C may land in it
            ours = is_interrupt(exc)
        except KeyboardInterrupt:
            ours = True
        if not ours:
            raise

        def say() -> str:
            for plan in plans:
                if plan.exp.name not in outcomes:
                    plan.interrupted()
            finished = [n for n in names if n in outcomes]
            hint = " ".join(
                ["racc", "reproduce", "--all", "--out", str(root)]
                + (["--quick"] if quick else [])
                + (["--seed", str(seed)] if seed is not None else [])
            )
            return (
                f"interrupted; {len(finished)} of {len(names)} experiments complete in {root}"
                f" ({', '.join(finished) or 'none'}); the cases finished in the others are kept. Resume with: {hint}"
            )

        try:  # around the first call made here: see base._interrupted_message
            message = say()
        except KeyboardInterrupt:
            message = say()
        raise Interrupted(message) from None
    finally:
        if tracker is not None:
            tracker.close()
    return [outcomes[n] for n in names]


def _complete(folder: Path, name: str, quick: bool, seed: int | None) -> dict[str, int] | None:
    """The claims by verdict of a complete reproduction of ``name`` in ``folder`` (its manifest
    says so, and claims.json reads back), or None if there is none. A complete one made with
    other settings is refused: it is not what this run would write, and replacing it needs force."""
    from racc.manifest import NAME, is_complete

    if not is_complete(folder):
        return None
    manifest = json.loads((folder / NAME).read_text(encoding="utf-8"))
    want = {"experiment": name, "quick": quick, "seed": seed}
    if manifest.get("settings") != want:
        raise ResultsError(
            f"{folder}: holds a finished reproduction with other settings ({manifest.get('settings')}, "
            f"not {want}); add --force to replace it, or choose another --out"
        )
    try:
        claims = json.loads((folder / "claims.json").read_text(encoding="utf-8"))["claims"]
    except (OSError, ValueError, KeyError, TypeError):
        return None  # its manifest says complete but claims.json is gone: run it again
    verdicts: dict[str, int] = {}
    for c in claims:
        verdicts[c["verdict"]] = verdicts.get(c["verdict"], 0) + 1
    return verdicts


def _on_dask(plans: Sequence[Plan], scheduler: str | None, workers: int | None, tracker: Any, completed: Any) -> None:
    """Every plan's cases on one Dask cluster; a plan is completed (figures, claims) here as soon
    as its last case is back, while the workers go on with the others."""
    todo = {p.exp.name: p for p in plans}
    for plan in plans:
        if not plan.todo():
            completed(plan)
            del todo[plan.exp.name]
    jobs = [(p, j) for p in todo.values() for j in p.todo()]
    if not jobs:
        return
    from dask.distributed import as_completed

    from racc.sweep import dask_client

    with dask_client(scheduler, workers, len(jobs)) as client:
        futures = {
            client.submit(
                run_case, path, ov, folder, False, p.case_plots, pure=False, key=f"racc-case-{p.exp.name}-{case}"
            ): (p, case)
            for p, (case, path, ov, folder) in jobs
        }
        for fut in as_completed(list(futures)):
            plan, case = futures[fut]
            plan.finished(case, fut.result())
            if tracker is not None:
                tracker.finish(f"{plan.exp.name}/{case}")
            if not plan.todo():
                completed(plan)


VERDICT_COLUMNS = ("consistent", "differs", "measured", "not judged at --quick scale", "not run")


def summary_rows(outcomes: Sequence[Outcome]) -> list[dict[str, Any]]:
    """One row per experiment: name, status, claims by verdict (the columns above, then any other)."""
    rows = []
    for o in outcomes:
        row: dict[str, Any] = {"experiment": o.name, "status": o.status}
        row.update({v: o.verdicts.get(v, 0) for v in VERDICT_COLUMNS})
        row.update({v: n for v, n in o.verdicts.items() if v not in VERDICT_COLUMNS})
        row["claims"] = sum(o.verdicts.values())
        rows.append(row)
    return rows


def redraw(out: str | os.PathLike) -> Reproduction:
    """Redraw an experiment folder written by :func:`reproduce`: its figures, claims.json and
    report.html from the cases' saved results (nothing is simulated; a folder with unfinished
    cases is refused, naming the command that finishes it)."""
    import racc.experiments  # noqa: F401  (the table: the folder's experiment must be registered)
    from racc.manifest import NAME

    folder = Path(out)
    try:
        manifest = json.loads((folder / NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ScenarioError(f"{folder}: no readable {NAME}, so not a racc reproduce folder") from None
    st: Mapping[str, Any] = manifest.get("settings") or {}
    left = [u for u in manifest.get("units", []) if u not in (manifest.get("finished") or {})]
    if manifest.get("kind") != "reproduce" or "experiment" not in st:
        raise ScenarioError(f"{folder}: {NAME} is not a racc reproduce folder's")
    if left:
        hint = _resume_command(st["experiment"], folder, bool(st.get("quick")), st.get("seed"), st.get("cases"))
        raise ScenarioError(f"{folder}: cases not finished: {', '.join(left)}; finish them with: {hint}")
    return reproduce(
        st["experiment"],
        out=folder,
        quick=bool(st.get("quick")),
        seed=st.get("seed"),
        resume=True,
        cases=st.get("cases"),
    )
