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
