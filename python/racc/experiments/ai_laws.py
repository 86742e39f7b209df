"""Cases that compare the VCP family's two additive-increase laws (issue 13; docs/PROTOCOLS.md,
`ai_law`): one case per protocol and law. The "seed001" cases are the protocol cases unchanged
(named after the protocol); the "ns2" cases (named `<protocol>-ns2`) set `ai_law = "ns2"` on
every flow group and the VCP reference code's router γ = 0.95 on every listed link, as
crates/racc-sim/tests/ai_law.rs runs that law."""

from __future__ import annotations

from typing import Any

from racc.experiments.base import Case
from racc.experiments.protocols import PROTOCOLS, protocol_cases, protocol_overrides

LAWS = ("seed001", "ns2")
#: the router γ the ns2 law runs with (the VCP reference code's; the routers' default is MPCP's)
NS2_GAMMA = 0.95


def ns2_overrides(flow_groups: int, links: list[str]) -> dict[str, Any]:
    ov: dict[str, Any] = {f"flows.{i}.params.ai_law": "ns2" for i in range(flow_groups)}
    ov.update({f"{link}.router_params.gamma": NS2_GAMMA for link in links})
    return ov


def law_cases(scenario: str, protocols: list[str], flow_groups: int, links: list[str]) -> list[Case]:
    """The protocol cases (law "seed001"), then one `<protocol>-ns2` case per protocol."""
    ns2 = [
        Case(
            f"{p}-ns2",
            scenario,
            {**protocol_overrides(p, flow_groups, links), **ns2_overrides(flow_groups, links)},
            requires=PROTOCOLS[p],
        )
        for p in protocols
    ]
    return protocol_cases(scenario, protocols, flow_groups, links) + ns2


def split_case(name: str) -> tuple[str, str]:
    """(protocol, law) of a case named by :func:`law_cases`."""
    return (name[: -len("-ns2")], "ns2") if name.endswith("-ns2") else (name, "seed001")


def by_law(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """law -> {protocol: results}, laws in LAWS order, only the laws run."""
    out: dict[str, dict[str, Any]] = {}
    for law in LAWS:
        sub = {split_case(n)[0]: r for n, r in results.items() if split_case(n)[1] == law}
        if sub:
            out[law] = sub
    return out


#: the two laws as a cause names them (docs/PROTOCOLS.md, `ai_law`)
LAW_NAMES = {
    "seed001": 'ai_law "seed001" (the law the MPCP paper prints)',
    "ns2": f'ai_law "ns2" (the VCP reference code\'s law, router γ {NS2_GAMMA})',
}


def law_counterpart(name: str, protocols: list[str]) -> tuple[str, str] | None:
    """(the same claim's name under the other AI law, that law) for a claim named after a case
    of :func:`law_cases` ("dpcp: ..." <-> "dpcp-ns2: ..."), or None."""
    for p in protocols:
        if name.startswith((f"{p}-ns2: ", f"{p}-ns2 (")):
            return p + name[len(p) + len("-ns2") :], "seed001"
        if name.startswith((f"{p}: ", f"{p} (")):
            return f"{p}-ns2" + name[len(p) :], "ns2"
    return None


def law_causes(claims: list, counterpart, tried: str = "") -> None:
    """A claim that differs under one AI law and holds under the other gets a "configuration"
    cause naming the law it holds under, with that law's measured value from this run; one that
    differs under both (and has no cause yet) is racc's open shortfall, with both laws' values as
    what was tried (plus ``tried``). ``counterpart(name)`` gives (the same claim's name under the
    other law, that law) or None."""
    from racc.experiments.base import Cause, explain
    from racc.experiments.causes import claim_named, other_configuration

    for c in claims:
        if c.verdict != "differs" or c.cause is not None:
            continue
        pair = counterpart(c.claim)
        if pair is None:
            continue
        if other_configuration(claims, c.claim, pair[0], LAW_NAMES[pair[1]]):
            continue
        o = claim_named(claims, pair[0])
        if o is not None and o.verdict == "differs":
            explain(
                claims,
                c.claim,
                Cause(
                    "racc",
                    "differs under both AI laws; no cause found",
                    f"tried both laws in this run: '{c.claim}' {c.measured}, '{o.claim}' {o.measured}"
                    + (f"; {tried}" if tried else ""),
                ),
            )
