"""What a paper experiment is in racc: a set of cases (one scenario each, usually one per
protocol compared), figures drawn like the paper's, and the paper's claims checked against
what was measured. ``racc reproduce NAME`` runs one; the claims are reported, not asserted:
the tests assert them at reduced scale."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from racc.errors import Interrupted, ScenarioError, core


@dataclass(frozen=True)
class Case:
    """One run of an experiment: a scenario shipped with racc (``racc/scenarios``) with overrides."""

    name: str
    scenario: str
    overrides: Mapping[str, Any] = field(default_factory=dict)
    #: protocol and router-module names the case needs; missing ones skip the case with a reason
    requires: Sequence[str] = ()


#: The "about" rule's tolerance (see ABOUT below, where the rules are listed).
ABOUT_DEFAULT = 0.25

#: Verdict of a claim the reduced scale (``--quick``) cannot decide; the note says why.
NOT_JUDGED_QUICK = "not judged at --quick scale"


#: Why a claim differs from its paper (issue 35), one of:
#: - "paper": the paper's own numbers or parameters cannot produce its figure (arithmetic or a sweep);
#: - "reference": an independent implementation on the identical scenario (ns-2.35 through
#:   ``racc crosscheck``, or the authors' code) gives racc's number;
#: - "unspecified": the paper omits a setting that decides the claim (its range over a sweep);
#: - "configuration": the claim holds in another documented configuration of the same protocol;
#: - "racc": none of these found: racc's own open shortfall (the evidence says what was tried).
CAUSES = ("paper", "reference", "unspecified", "configuration", "racc")


@dataclass(frozen=True)
class Cause:
    """Why a "differs" claim differs: its kind (:data:`CAUSES`), one line of text, and the evidence.
    The evidence of every kind but "racc" is produced by the run (another case's measured value, a
    sweep's range, arithmetic computed in code) or names the test that produces it; for "racc" it
    says what was tried."""

    kind: str
    text: str
    evidence: str

    def __post_init__(self) -> None:
        if self.kind not in CAUSES:
            raise ValueError(f"cause kind {self.kind!r} is not one of {', '.join(CAUSES)}")
        for key in ("text", "evidence"):
            value = getattr(self, key)
            if not value or "\n" in value:
                raise ValueError(f"cause {key} must be one non-empty line, got {value!r}")

    def line(self) -> str:
        """The cause as one line: "kind: text (evidence)"."""
        return f"{self.kind}: {self.text} ({self.evidence})"


@dataclass
class Claim:
    """A paper's claim next to what racc measured.

    ``claim`` is the paper's statement, ``paper`` its number (or words), ``measured`` racc's, and
    ``rule`` the acceptance rule written out (e.g. "within ±25 % of 15:1: 11.25-18.75"). A claim
    judged on one number also carries it (``value``) and its acceptance window (``accept``, lower
    and upper bound, None for open): its verdict is then "consistent" exactly when ``value`` lies
    in the window, which is checked here, so a table can never show a "consistent" row whose number
    is outside its written rule. Build such claims with :func:`judged` or :func:`about_claim`.
    """

    claim: str
    paper: str
    measured: str
    #: "consistent", "differs", "not run", "measured" (a figure the paper does not give), or
    #: NOT_JUDGED_QUICK
    verdict: str
    note: str = ""
    rule: str = ""
    value: float | None = None
    accept: tuple[float | None, float | None] | None = None
    #: why a "differs" claim differs (:class:`Cause`); set by :func:`explain`
    cause: Cause | None = None

    def __post_init__(self) -> None:
        if self.cause is not None and self.verdict != "differs":
            raise ValueError(f'claim {self.claim!r}: a cause on a {self.verdict!r} claim (only "differs" has one)')
        if self.accept is not None and self.verdict in ("consistent", "differs"):
            inside = within(self.value, self.accept)
            if inside != (self.verdict == "consistent"):
                raise ValueError(
                    f"claim {self.claim!r}: verdict {self.verdict!r} but {self.value} is "
                    f"{'inside' if inside else 'outside'} its window {self.accept} ({self.rule})"
                )

    def rule_text(self) -> str:
        """The acceptance rule as shown: ``rule``, else the note (older claims keep it there)."""
        return self.rule or self.note

    def to_json(self) -> dict[str, Any]:
        """The claim as claims.json holds it (its cause a {kind, text, evidence} object or null)."""
        return asdict(self)


def explain(claims: Sequence[Claim], name: str, cause: Cause) -> bool:
    """Give the claim named ``name`` its cause if its verdict is "differs" (a consistent claim keeps
    none); True if a claim was explained. An unknown name is an error (a renamed claim must not
    silently lose its cause)."""
    found = [c for c in claims if c.claim == name]
    if not found:
        raise KeyError(f"no claim named {name!r} to explain")
    done = False
    for c in found:
        if c.verdict == "differs":
            c.cause = cause
            done = True
    return done


def unexplained(claims: Sequence[Claim]) -> list[Claim]:
    """The claims whose verdict is "differs" and which carry no cause."""
    return [c for c in claims if c.verdict == "differs" and c.cause is None]


def tally(claims: Sequence[Claim]) -> tuple[dict[str, int], dict[str, int]]:
    """(claims by verdict, "differs" claims by cause kind; "none" for those without one)."""
    verdicts: dict[str, int] = {}
    causes: dict[str, int] = {}
    for c in claims:
        verdicts[c.verdict] = verdicts.get(c.verdict, 0) + 1
        if c.verdict == "differs":
            k = c.cause.kind if c.cause else "none"
            causes[k] = causes.get(k, 0) + 1
    return verdicts, causes


def within(value: float | None, accept: tuple[float | None, float | None]) -> bool:
    lo, hi = accept
    return value is not None and (lo is None or value >= lo) and (hi is None or value <= hi)


def judged(
    claim: str,
    paper: str,
    value: float | None,
    measured: str,
    accept: tuple[float | None, float | None],
    rule: str,
    note: str = "",
) -> Claim:
    """A claim judged on one number: consistent exactly when ``value`` lies within ``accept``."""
    return Claim(claim, paper, measured, verdict(within(value, accept)), note, rule, value, accept)


def about_claim(
    claim: str,
    paper: str,
    target: float,
    value: float | None,
    measured: str,
    *,
    fmt: Callable[[float], str] = lambda x: f"{x:.3g}",
    rel: float = ABOUT_DEFAULT,
    note: str = "",
    source: str = "the 'about' rule",
) -> Claim:
    """The "about X" rule written out: within ±rel of ``target``, with its bounds."""
    lo, hi = target - rel * abs(target), target + rel * abs(target)
    rule = f"within ±{rel:.0%} of {fmt(target)}: {fmt(lo)} to {fmt(hi)} ({source})"
    return judged(claim, paper, value, measured, (lo, hi), rule, note)


def not_judged_quick(claim: str, paper: str, measured: str, reason: str) -> Claim:
    return Claim(claim, paper, measured, NOT_JUDGED_QUICK, reason)


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
    ``cases`` runs only the named cases (claims about the others are left out).
    """
    from racc.manifest import Manifest, clear_partial
    from racc.results import check_replaceable, is_results_dir
    from racc.results import load as load_results

    exp = get(name)
    selected = _select(exp, cases)
    have = available()
    out_dir = Path(out) if out is not None else None
    skipped: dict[str, str] = {}
    jobs: list[tuple[str, str, dict[str, Any], Path | None]] = []
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
    todo = [j for j in jobs if j[0] not in results]
    tracker = _tracker(exp.name, jobs, results) if progress and todo else None
    try:
        if scheduler or (workers or 1) > 1:
            for case_name, res in _run_on_dask(todo, scheduler, workers):
                results[case_name] = res
                _finished(case_name, manifest, tracker)
        else:
            for case_name, path, overrides, folder in todo:
                if tracker is not None:
                    tracker.begin(case_name)
                results[case_name] = _run_case(path, overrides, folder, tracker.at if tracker else False)
                _finished(case_name, manifest, tracker)
    except KeyboardInterrupt:
        from racc.results import remove_own_temporaries

        for case_name, _path, _ov, folder in todo:
            if folder is not None and case_name not in results:
                remove_own_temporaries(folder)
        raise Interrupted(_interrupted_message(jobs, results, out_dir, hint)) from None
    finally:
        if tracker is not None:
            tracker.close()
    results = {j[0]: results[j[0]] for j in jobs}  # the experiment's case order
    figures: list[Path] = []
    if out_dir is not None and results:
        figures = exp.figures(results, out_dir / "figures")
    claims = exp.claims(results, quick)
    if exp.causes is not None and results:
        exp.causes(results, claims, quick)
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
            "quick": quick,
            "seed": seed,
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
        manifest.close()  # last: only now does the manifest call the reproduction complete
    return Reproduction(exp, results, skipped, claims, figures, out_dir, headline)


def redraw(out: str | os.PathLike) -> Reproduction:
    """Redraw an experiment folder written by :func:`reproduce`: its figures, claims.json and
    report.html from the cases' saved results (nothing is simulated; a folder with unfinished
    cases is refused, naming the command that finishes it)."""
    import racc.experiments  # noqa: F401  (the registry)
    from racc.manifest import NAME

    folder = Path(out)
    try:
        manifest = json.loads((folder / NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ScenarioError(f"{folder}: no readable {NAME}, so not a racc reproduce folder") from None
    st = manifest.get("settings") or {}
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


def _interrupted_message(jobs: list, results: Mapping[str, Any], out: Path | None, hint: str) -> str:
    done = [j[0] for j in jobs if j[0] in results]
    left = [j[0] for j in jobs if j[0] not in results]
    if out is None:
        return f"interrupted; {len(done)} of {len(jobs)} cases had finished; nothing was written (no --out)"
    return (
        f"interrupted; {len(done)} of {len(jobs)} cases finished and are kept in {out}"
        f" ({', '.join(done) or 'none'}); not finished: {', '.join(left)}. Resume with: {hint}"
    )


def _tracker(label: str, jobs: list, finished: Mapping[str, Any]):
    from racc import scenario as _scenario
    from racc.progress import Tracker

    units = []
    for case_name, path, overrides, _folder in jobs:
        units.append((case_name, core().check(_scenario.load(path, overrides=overrides).to_json(), path)))
    return Tracker(label, units, already=list(finished))


def _finished(case_name: str, manifest: Any, tracker: Any) -> None:
    if manifest is not None:
        manifest.mark(case_name)
    if tracker is not None:
        tracker.finish(case_name)


def _run_case(path: str, overrides: dict[str, Any], folder: Path | None, progress: Any = False) -> Any:
    """One case, here or on a Dask worker (whence its Results travel back pickled: polars frames
    and dicts); plots only when it has a folder to draw them in."""
    from racc.runner import run

    return run(path, overrides=overrides, out=folder, progress=progress, plots=folder is not None)


def _run_on_dask(jobs: list, scheduler: str | None, workers: int | None):
    """(case name, Results) of each case as it finishes on Dask; errors surface here."""
    if not jobs:
        return
    from dask.distributed import as_completed

    from racc.sweep import dask_client

    with dask_client(scheduler, workers, len(jobs)) as client:
        futures = {
            client.submit(_run_case, path, overrides, folder, pure=False, key=f"racc-case-{name}"): name
            for name, path, overrides, folder in jobs
        }
        for fut in as_completed(list(futures)):
            yield futures[fut], fut.result()


def verdict(ok: bool) -> str:
    return "consistent" if ok else "differs"


def port_summary(res: Any, name: str) -> dict:
    for p in res.summary["ports"]:
        if p["name"] == name:
            return p
    raise KeyError(name)


# How a paper's words become an acceptance window, written before measuring (docs/FRONTEND.md,
# "Claims"). One rule per kind of wording, used by every experiment that states such a claim.

#: "about X", "≈ X", "nearly X", "up to X" read off a figure: within ±25 % of X.
ABOUT = ABOUT_DEFAULT
#: "much better", "far smaller", "significantly better": better by at least this factor (the
#: engine tests of DCP-EW read "significantly" the same way, crates/racc-sim/tests/dcpew.rs).
MUCH = 1.5
#: "equal", "nearly identical", "comparable" (of two utilisations): within this many points.
SAME_UTILISATION = 0.03
#: "high utilisation", "performs reasonably well" (of a link): at least this fraction of capacity.
HIGH_UTILISATION = 0.90
#: "almost at once", "almost instantaneously", "within a few RTTs": within this many RTTs.
FEW_RTTS = 10
#: "fair" / "max-min fair" (of rates against an oracle): every rate within ±10 % of it.
FAIR = 0.10


def about(measured: float, paper: float, rel: float = ABOUT) -> bool:
    """The "about X" rule: ``measured`` within ``rel`` of ``paper`` (relative)."""
    return abs(measured - paper) <= rel * abs(paper)


def much_smaller(small: float, large: float, factor: float = MUCH) -> bool:
    """The "much better" rule for a figure where smaller is better: ``small`` ≤ ``large`` / factor."""
    return small * factor <= large
