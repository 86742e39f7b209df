"""Claims that cannot be misread (issue 18 item 6): every judged claim shows its acceptance rule
written out, and no "consistent" row has a measured number outside its written rule."""

from __future__ import annotations

import math
import re

import pytest
from conftest import needs_core
from racc.experiments.base import NOT_JUDGED_QUICK, Claim, about_claim, judged, not_judged_quick


def test_about_rule_is_written_out_with_its_bounds():
    c = about_claim("vcp: L0 split", "≈15:1", 15.0, 12.0, "12.0:1", fmt=lambda x: f"{x:.4g}:1")
    assert c.rule == "within ±25% of 15:1: 11.25:1 to 18.75:1 (the 'about' rule)"
    assert (c.verdict, c.value, c.accept) == ("consistent", 12.0, (11.25, 18.75))
    assert about_claim("x", "≈15:1", 15.0, 4.5, "4.5:1").verdict == "differs"
    assert about_claim("x", "≈15:1", 15.0, None, "never").verdict == "differs"


def test_verdict_follows_the_window_and_cannot_contradict_it():
    assert judged("x", "< 4 s", 4.0, "4.0 s", (None, 4.0), "at most 4 s").verdict == "consistent"
    assert judged("x", "< 4 s", 4.1, "4.1 s", (None, 4.0), "at most 4 s").verdict == "differs"
    with pytest.raises(ValueError, match="outside its window"):
        Claim("x", "< 4 s", "5 s", "consistent", rule="at most 4 s", value=5.0, accept=(None, 4.0))
    with pytest.raises(ValueError, match="inside its window"):
        Claim("x", "< 4 s", "3 s", "differs", rule="at most 4 s", value=3.0, accept=(None, 4.0))


def test_not_judged_at_quick_scale_says_why():
    c = not_judged_quick("drops stop", "after ≈30 s", "", "needs a run of at least 60 s")
    assert c.verdict == NOT_JUDGED_QUICK == "not judged at --quick scale" and c.note


def _numbers(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", text)]


def check_claims(claims) -> None:
    """Every judged claim has a written rule; a claim judged on a number is consistent exactly when
    the number lies within its window, and the window's bounds are the numbers written in the rule."""
    for c in claims:
        if c.verdict not in ("consistent", "differs"):
            continue
        assert c.rule_text(), f"no acceptance rule written for {c.claim!r}"
        if c.accept is None:
            continue
        lo, hi = c.accept
        inside = c.value is not None and (lo is None or c.value >= lo) and (hi is None or c.value <= hi)
        assert inside == (c.verdict == "consistent"), c
        written = _numbers(c.rule)
        for bound in (lo, hi):
            if bound is not None and math.isfinite(bound):
                # The rule shows the bound as formatted (%, kb/s, 3 significant digits, ...).
                assert any(
                    math.isclose(w, x, rel_tol=0.06, abs_tol=0.06)
                    for w in written
                    for x in (bound, bound * 100, bound / 1e3)
                ), (c.rule, bound)


@needs_core
@pytest.mark.parametrize("name", ["xcc-single", "mpcp-dumbbell", "dccp-vcp-t3"])
def test_quick_claims_of_experiments(name, quick_reproduction):
    """At reduced scale (scale-free property: the rule/verdict agreement)."""
    rep = quick_reproduction(name)
    judged_claims = [c for c in rep.claims if c.verdict in ("consistent", "differs")]
    assert judged_claims
    check_claims(rep.claims)
