"""A paper's claim next to what racc measured, and the rules that turn a paper's words into an
acceptance window. It sits below the experiment machinery (``base``) and the print-outs
(``printout``, ``report``), which all read claims, so none of them imports another to get one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

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


def verdict(ok: bool) -> str:
    return "consistent" if ok else "differs"


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
