"""Today's baselines beside the papers' protocols (issue 41 item 3): every paper compares its
router-assisted protocol with TCP Reno or NewReno, the baseline of its day; these cases add what
hosts run now, CUBIC (RFC 9438, with HyStart++, RFC 9406: the Linux, Windows and macOS default)
and BBR v1 (Linux ``tcp_bbr.c``), on the same scenario with the routers the paper's own TCP
baseline had (no router assistance). DCTCP is left out: none of the four experiments that carry
these cases (mpcp-parking-lot, dccp-vcp-t3, qfcp-fct, xcc-single) is a data-centre topology
(their round-trip times are 50 ms to seconds), and DCTCP needs the data centre's step marking.

Their results are "measured" rows and panels beside the paper's protocols: they never make or
change a paper's claim, so every claim that compares protocols reads :func:`paper_results`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from racc.experiments.base import Case, Claim

#: case name suffix-free protocol -> how figures and rows name it
BASELINES = {"cubic": "CUBIC", "bbr": "BBR v1"}


def baseline_cases(scenario: str, overrides: Mapping[str, Any], suffix: str = "") -> list[Case]:
    """One case per baseline, named ``<protocol><suffix>``: ``overrides`` with every value
    "{protocol}" replaced by the baseline's name (flow groups' and arrival processes' protocol
    keys; routers are the caller's to set to the paper's non-assisted one)."""
    out = []
    for p in BASELINES:
        ov = {k: (p if v == "{protocol}" else v) for k, v in overrides.items()}
        out.append(Case(f"{p}{suffix}", scenario, ov, requires=(p,)))
    return out


def is_baseline(case: str) -> bool:
    """Whether a case name is one of today's baselines (``cubic``, ``bbr-red``, ...)."""
    return any(case == p or case.startswith(f"{p}-") for p in BASELINES)


def paper_results(results: Mapping[str, Any]) -> dict[str, Any]:
    """The cases of the paper's own protocols (every case but today's baselines)."""
    return {n: r for n, r in results.items() if not is_baseline(n)}


def baseline_results(results: Mapping[str, Any]) -> dict[str, Any]:
    return {n: r for n, r in results.items() if is_baseline(n)}


def label(case: str) -> str:
    """A baseline case's display name ("CUBIC", "BBR v1 (RED)"); other cases unchanged."""
    for p, name in BASELINES.items():
        if case == p:
            return name
        if case.startswith(f"{p}-"):
            return f"{name} ({case[len(p) + 1 :].upper()})"
    return case


def measured_row(claim: str, measured: str, rule: str) -> Claim:
    """A row beside the paper's claims: what racc measured for a baseline (the paper gives no such
    number, so nothing is judged)."""
    return Claim(claim, "", measured, "measured", rule=rule)
