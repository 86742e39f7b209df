"""Ways to find a "differs" claim's cause from the run itself (issue 35): the same claim in another
configuration the experiment runs, a sweep the experiment runs, or a shortfall of racc's own
stated with what was tried. Each experiment's ``causes`` function uses these on its claims."""

from __future__ import annotations

from collections.abc import Sequence

from racc.experiments.base import Cause, Claim, explain


def claim_named(claims: Sequence[Claim], name: str) -> Claim | None:
    return next((c for c in claims if c.claim == name), None)


def evidence_of(c: Claim) -> str:
    """A claim's measured value with its rule and verdict, as evidence for another claim."""
    return f"'{c.claim}' measures {c.measured} in this run ({c.rule_text()}: {c.verdict})"


def other_configuration(claims: Sequence[Claim], name: str, other: str, configuration: str) -> bool:
    """Explain claim ``name`` by ``configuration`` when the same claim judged on the run of that
    configuration (claim ``other``) is consistent; True if explained."""
    o = claim_named(claims, other)
    if o is None or o.verdict != "consistent":
        return False
    return explain(claims, name, Cause("configuration", f"holds under {configuration}", evidence_of(o)))


def shortfall(claims: Sequence[Claim], name: str, text: str, tried: str) -> bool:
    """Mark claim ``name`` as racc's own open shortfall, saying what was tried (no claim of
    that name is fine: the claim may not be made in every run)."""
    if claim_named(claims, name) is None:
        return False
    return explain(claims, name, Cause("racc", text, tried))


def open_shortfalls(claims: Sequence[Claim], match, text: str, tried) -> int:
    """:func:`shortfall` for every differing claim without a cause whose name ``match`` accepts;
    ``tried(claim)`` says what was tried for it. The number of claims marked."""
    n = 0
    for c in claims:
        if c.verdict == "differs" and c.cause is None and match(c.claim):
            n += shortfall(claims, c.claim, text, tried(c))
    return n


def unspecified(claims: Sequence[Claim], names: Sequence[str], text: str, evidence: str) -> int:
    """Explain each differing claim without a cause among ``names`` by what the paper leaves
    unspecified (``text``), with the run's ``evidence``; the number explained."""
    n = 0
    for name in names:
        c = claim_named(claims, name)
        if c is not None and c.verdict == "differs" and c.cause is None:
            n += explain(claims, name, Cause("unspecified", text, evidence))
    return n
