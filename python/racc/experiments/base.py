"""What a paper experiment is in racc: a set of cases (one scenario each, usually one per
protocol compared), figures drawn like the paper's, and the paper's claims checked against
what was measured. ``racc reproduce NAME`` runs one; the claims are reported, not asserted:
the tests assert them at reduced scale."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from racc.errors import Interrupted, ScenarioError, core

# Claims and their rules live below this module (``claims``); the experiments import them from
# here too, beside the machinery.
from racc.experiments.claims import (  # noqa: F401
    ABOUT,
    ABOUT_DEFAULT,
    CAUSES,
    FAIR,
    FEW_RTTS,
    HIGH_UTILISATION,
    MUCH,
    NOT_JUDGED_QUICK,
    SAME_UTILISATION,
    Cause,
    Claim,
    about,
    about_claim,
    explain,
    judged,
    much_smaller,
    not_judged_quick,
    tally,
    unexplained,
    verdict,
    within,
)


@dataclass(frozen=True)
class Case:
    """One run of an experiment: a scenario shipped with racc (``racc/scenarios``) with overrides."""

    name: str
    scenario: str
    overrides: Mapping[str, Any] = field(default_factory=dict)
    #: protocol and router-module names the case needs; missing ones skip the case with a reason
    requires: Sequence[str] = ()


@dataclass
class Experiment:
    name: str
    source: str  # seed and section, e.g. "VCP-DCCP §4"
    description: str
    cases: Sequence[Case]
    #: overrides that shrink every case for `--quick` (and the tests)
    quick: Mapping[str, Any]
    figures: Callable[[Mapping[str, Any], Path], list[Path]]
    claims: Callable[[Mapping[str, Any], bool], list[Claim]]
    #: gives the "differs" claims their causes from the results (:func:`explain`), after ``claims``
    causes: Callable[[Mapping[str, Any], list[Claim], bool], None] | None = None
    #: the experiment's summary, first line: which configuration reproduces the paper's figures
    #: (from the results; "" when no such statement applies)
    headline: Callable[[Mapping[str, Any], list[Claim]], str] | None = None


_REGISTRY: dict[str, Experiment] = {}


def register(exp: Experiment) -> Experiment:
    if exp.name in _REGISTRY:
        raise ValueError(f"experiment {exp.name} registered twice")
    _REGISTRY[exp.name] = exp
    return exp


def names() -> list[str]:
    return sorted(_REGISTRY)


def get(name: str) -> Experiment:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ScenarioError(f"unknown experiment '{name}' (known: {', '.join(names())})") from None


def scenario_path(case: Case) -> Path:
    """The case's scenario file: an absolute path, or a scenario shipped with racc (the package's
    ``scenarios`` folder), so ``racc reproduce`` gives the same runs from any folder, whatever
    ``scenarios/`` the current folder holds."""
    from racc import catalog

    p = Path(case.scenario)
    if p.is_absolute():
        return p
    found = catalog.shipped(p.as_posix())
    if found is None:
        raise ScenarioError(
            f"scenario file {case.scenario} not found among the scenarios shipped with racc ({catalog.SHIPPED})"
        )
    return found


def available() -> set[str]:
    engine = core()
    have = set()
    for p in engine.list_protocols():
        have.add(p["name"])
        have.update(p.get("aliases", []))
    have.update(r["name"] for r in engine.list_router_modules())
    return have


@dataclass
class Reproduction:
    experiment: Experiment
    results: dict[str, Any]  # case name -> racc.Results
    skipped: dict[str, str]  # case name -> reason
    claims: list[Claim]
    figures: list[Path]
    out: Path | None
    headline: str = ""


def reproduce(
    name: str,
    *,
    out: str | os.PathLike | None = None,
    quick: bool = False,
    progress: bool = False,
    seed: int | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    resume: bool = False,
    cases: Sequence[str] | None = None,
    case_plots: bool = False,
) -> Reproduction:
    """Run every case of experiment ``name`` that racc can run, draw its figures, check its claims.

    With ``out``: each case's results folder goes to ``out/<case>``, ``out/manifest.json`` lists
    the cases finished so far (rewritten as each finishes), figures go to ``out/figures`` and
    ``out/claims.json`` last (its presence marks a complete reproduction). With ``resume`` the
    cases the manifest lists as finished, with complete folders, are read back instead of run
    again (the same arguments are required), so an interrupted reproduction completes with the
    results of an uninterrupted one. On Ctrl-C, :class:`racc.errors.Interrupted` says which cases
    finished and how to resume. ``seed`` replaces every case's scenario seed (default: the
    scenario files' own), to see how far a claim depends on one random draw. With ``workers`` > 1
    or a Dask ``scheduler`` address the cases run in parallel on Dask (as ``racc sweep``'s points
    do); figures and claims are drawn from the results in case order, so they are the same as a
    sequential run's. ``progress``: case k of N, simulated seconds and the time left on stderr.
    ``cases`` runs only the named cases (claims about the others are left out). ``case_plots``:
    each case folder also gets its own plots and report.html (they cost more CPU than the run
    itself; ``racc plot OUT/CASE`` draws one later), linked from the experiment's report.
    """
    plan = prepare(name, out=out, quick=quick, seed=seed, resume=resume, cases=cases, case_plots=case_plots)
    todo = plan.todo()
    tracker = _tracker(plan.exp.name, plan.jobs, plan.results) if progress and todo else None
    try:
        if scheduler or (workers or 1) > 1:
            for case_name, res in run_on_dask(todo, scheduler, workers, plan.case_plots):
                plan.finished(case_name, res, tracker)
        else:
            for case_name, path, overrides, folder in todo:
                if tracker is not None:
                    tracker.begin(case_name)
                at = tracker.at if tracker else False
                plan.finished(case_name, run_case(path, overrides, folder, at, plan.case_plots), tracker)
        if tracker is not None:
            tracker.close()
        # Inside the try: Ctrl-C while the figures and claims are drawn keeps the cases too.
        return finish(plan)
    except BaseException as exc:
        try:  # the check is a call too: a second, pending Ctrl-C may land in it
            ours = is_interrupt(exc)
        except KeyboardInterrupt:
            ours = True
        if not ours:
            raise
        try:  # around the first call made here: see _interrupted_message
            message = _interrupted_message(plan)
        except KeyboardInterrupt:
            message = _interrupted_message(plan)
        raise Interrupted(message) from None
    finally:
        if tracker is not None:
            tracker.close()


@dataclass(frozen=True)
class Saved:
    """A finished case whose results are in ``folder`` (read back when the claims are drawn)."""

    folder: Path


#: One case to run: (case name, scenario path, overrides, results folder or None).
Job = tuple[str, str, dict[str, Any], "Path | None"]


@dataclass
class Plan:
    """An experiment made ready to run (:func:`prepare`): its cases as jobs, those a resumed
    folder already holds read back into ``results``, and the manifest that records each case as
    it finishes. :func:`finish` turns the finished plan into its figures, claims and report."""

    exp: Experiment
    quick: bool
    seed: int | None
    out: Path | None
    jobs: list[Job]
    skipped: dict[str, str]
    results: dict[str, Any]
    manifest: Any
    hint: str
    case_plots: bool = False
    #: each case folder's identity (:func:`_identity`) before this run, where one existed: a
    #: complete folder with another identity after an interrupt is this run's
    before: dict[str, int] = field(default_factory=dict)

    def todo(self) -> list[Job]:
        return [j for j in self.jobs if j[0] not in self.results]

    def finished(self, case_name: str, res: Any, tracker: Any = None) -> None:
        # A case saved to its folder is read back from there by :func:`finish` (as a resumed
        # run's are): the finished cases' tables are not all held while the next ones run
        # (dccp-vcp-t3: four cases of 0.24 M flow samples each).
        folder = next(j[3] for j in self.jobs if j[0] == case_name)
        self.results[case_name] = Saved(folder) if folder is not None and getattr(res, "path", None) else res
        if self.manifest is not None:
            self.manifest.mark(case_name)
        if tracker is not None:
            tracker.finish(case_name)

    def interrupted(self) -> None:
        """After Ctrl-C: a case whose folder this run completed counts as finished, even if the
        interrupt came before :meth:`finished` recorded it; the others' temporaries are removed
        (their folders never look whole); the manifest lists exactly the finished cases and says
        the reproduction is not complete (an interrupt in :func:`finish` may have come after its
        ``close``), so ``--resume`` draws the figures and claims again."""
        from racc.results import is_results_dir, remove_own_temporaries

        for case_name, _path, _ov, folder in self.jobs:
            if folder is None or case_name in self.results:
                continue
            if is_results_dir(folder) and _identity(folder) != self.before.get(case_name):
                self.results[case_name] = Saved(folder)
            else:
                remove_own_temporaries(folder)
        if self.manifest is not None:
            for case_name in self.results:
                if case_name not in self.manifest.finished:
                    self.manifest.mark(case_name)
            self.manifest.complete = False
            self.manifest.write()
            (self.manifest.folder / ".claims.json.partial").unlink(missing_ok=True)


def prepare(
    name: str,
    *,
    out: str | os.PathLike | None = None,
    quick: bool = False,
    seed: int | None = None,
    resume: bool = False,
    cases: Sequence[str] | None = None,
    case_plots: bool = False,
) -> Plan:
    """The jobs of :func:`reproduce` (same arguments), its manifest opened and written."""
    from racc.manifest import Manifest, clear_partial
    from racc.results import check_replaceable, is_results_dir
    from racc.results import load as load_results

    exp = get(name)
    selected = _select(exp, cases)
    have = available()
    out_dir = Path(out) if out is not None else None
    skipped: dict[str, str] = {}
    jobs: list[Job] = []
    for case in selected:
        missing = [r for r in case.requires if r not in have]
        if missing:
            skipped[case.name] = f"needs {', '.join(missing)}, not implemented yet"
            continue
        # Quick (reduced-scale) settings first, so a case's own overrides win.
        overrides = dict(exp.quick) if quick else {}
        if seed is not None:
            overrides["seed"] = seed
        overrides.update(case.overrides)
        folder = None if out_dir is None else out_dir / case.name
        if folder is not None and not resume:
            check_replaceable(folder)
        jobs.append((case.name, str(scenario_path(case)), overrides, folder))
    hint = _resume_command(exp.name, out_dir, quick, seed, cases)
    manifest = None
    results: dict[str, Any] = {}
    if out_dir is not None:
        settings = {"experiment": exp.name, "quick": quick, "seed": seed}
        if cases is not None:
            settings["cases"] = [c.name for c in selected]
        manifest = Manifest.open(out_dir, "reproduce", settings, [j[0] for j in jobs], resume=resume, resume_hint=hint)
        for case_name, _path, _ov, folder in jobs:
            if manifest.done(case_name, folder is not None and is_results_dir(folder)):
                results[case_name] = load_results(folder)
            elif resume and folder is not None:
                clear_partial(folder)  # a half-written case folder runs again
        manifest.write()
    before = {j[0]: _identity(j[3]) for j in jobs if j[3] is not None and j[3].exists()}
    return Plan(exp, quick, seed, out_dir, jobs, skipped, results, manifest, hint, case_plots, before)


def _identity(folder: Path) -> int | None:
    """The folder's inode: a results folder is renamed into place whole, so one this run wrote
    is a new inode (made while any older folder of that name still existed)."""
    try:
        return os.stat(folder).st_ino
    except OSError:
        return None


def finish(plan: Plan) -> Reproduction:
    """Figures, claims, causes and headline of a plan whose cases have all finished; with a
    folder, its figures, report.html and claims.json, and last the manifest marked complete."""
    from racc.results import load as load_results

    exp, out_dir, skipped = plan.exp, plan.out, plan.skipped
    results = {}
    for j in plan.jobs:  # the experiment's case order
        res = plan.results[j[0]]
        results[j[0]] = load_results(res.folder) if isinstance(res, Saved) else res
    figures: list[Path] = []
    if out_dir is not None and results:
        figures = exp.figures(results, out_dir / "figures")
    claims = exp.claims(results, plan.quick)
    if exp.causes is not None and results:
        exp.causes(results, claims, plan.quick)
    headline = exp.headline(results, claims) if exp.headline is not None and results else ""
    for case, why in skipped.items():
        claims.append(Claim(f"case {case}", "", "", "not run", why))
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        payload = {
            "experiment": exp.name,
            "source": exp.source,
            "description": exp.description,
            "headline": headline,
            "quick": plan.quick,
            "seed": plan.seed,
            "cases_run": sorted(results),
            "cases_skipped": skipped,
            "claims": [c.to_json() for c in claims],
            "figures": [str(p.relative_to(out_dir)) for p in figures],
        }
        from racc.experiments import report

        report.write(out_dir, payload, claims, figures)
        tmp = out_dir / ".claims.json.partial"
        tmp.write_text(json.dumps(payload, indent=2))
        os.replace(tmp, out_dir / "claims.json")
        plan.manifest.close()  # last: only now does the manifest call the reproduction complete
    return Reproduction(exp, results, skipped, claims, figures, out_dir, headline)


def _select(exp: Experiment, cases: Sequence[str] | None) -> list[Case]:
    if cases is None:
        return list(exp.cases)
    known = [c.name for c in exp.cases]
    unknown = [c for c in cases if c not in known]
    if unknown:
        raise ScenarioError(f"--cases: {exp.name} has no case {', '.join(unknown)} (its cases: {', '.join(known)})")
    return [c for c in exp.cases if c.name in set(cases)]


def _resume_command(name: str, out: Path | None, quick: bool, seed: int | None, cases: Sequence[str] | None) -> str:
    words = ["racc", "reproduce", name, "--out", str(out), "--resume"]
    words += ["--cases", ",".join(cases)] if cases is not None else []
    words += ["--quick"] if quick else []
    words += ["--seed", str(seed)] if seed is not None else []
    return " ".join(words)


def is_interrupt(exc: BaseException) -> bool:
    """Ctrl-C, as Python raises it or as polars' Rust side turns it into a panic: interrupted in
    some calls (``DataFrame.dtypes``), polars unwraps the KeyboardInterrupt its callback got, and
    pyo3 raises that as a PanicException whose message names it (seen in CI)."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    return type(exc).__name__ == "PanicException" and "KeyboardInterrupt" in str(exc)


def _interrupted_message(plan: Plan) -> str:
    """Tidy up after Ctrl-C (:meth:`Plan.interrupted`) and say what is kept and how to resume.

    The handlers of Ctrl-C (:func:`reproduce`'s, and ``racc reproduce --all``'s in suite.py) make
    their first call inside a ``try`` and make it again on KeyboardInterrupt, because one Ctrl-C
    can raise it twice: polars, interrupted while it reads, writes or computes a table, raises
    its own KeyboardInterrupt and leaves Python's signal pending, which raises again at the next
    call, the handler's first. It must not escape without saying what finished. (A Ctrl-C
    pressed twice still escapes.)"""
    plan.interrupted()
    done = [j[0] for j in plan.jobs if j[0] in plan.results]
    left = [j[0] for j in plan.jobs if j[0] not in plan.results]
    if plan.out is None:
        return f"interrupted; {len(done)} of {len(plan.jobs)} cases had finished; nothing was written (no --out)"
    missing = f"not finished: {', '.join(left)}" if left else "the figures and claims are not written"
    return (
        f"interrupted; {len(done)} of {len(plan.jobs)} cases finished and are kept in {plan.out}"
        f" ({', '.join(done) or 'none'}); {missing}. Resume with: {plan.hint}"
    )


def _tracker(label: str, jobs: list, finished: Mapping[str, Any]):
    from racc import scenario as _scenario
    from racc.progress import Tracker

    units = []
    for case_name, path, overrides, _folder in jobs:
        units.append((case_name, core().check(_scenario.load(path, overrides=overrides).to_json(), path)))
    return Tracker(label, units, already=list(finished))


def run_case(
    path: str, overrides: dict[str, Any], folder: Path | None, progress: Any = False, plots: bool = False
) -> Any:
    """One case, here or on a Dask worker (whence its Results travel back pickled: polars frames
    and dicts); its own plots and report only with ``plots`` and a folder to draw them in."""
    from racc.runner import run

    return run(path, overrides=overrides, out=folder, progress=progress, plots=plots and folder is not None)


def run_on_dask(jobs: list, scheduler: str | None, workers: int | None, plots: bool = False):
    """(case name, Results) of each case as it finishes on Dask; errors surface here."""
    if not jobs:
        return
    from dask.distributed import as_completed

    from racc.sweep import dask_client

    with dask_client(scheduler, workers, len(jobs)) as client:
        futures = {
            client.submit(run_case, path, overrides, folder, False, plots, pure=False, key=f"racc-case-{name}"): name
            for name, path, overrides, folder in jobs
        }
        for fut in as_completed(list(futures)):
            yield futures[fut], fut.result()


def port_summary(res: Any, name: str) -> dict:
    for p in res.summary["ports"]:
        if p["name"] == name:
            return p
    raise KeyError(name)
