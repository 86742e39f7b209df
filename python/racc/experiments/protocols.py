"""One case per protocol compared: the same scenario with every flow group's sender and every
listed link's router module set to that protocol's (MPCP and DCP-EW compare VCP, DPCP, TPCP
and DCP-EW this way)."""

from __future__ import annotations

from typing import Any

from racc.experiments.base import Case

#: scenario name -> (sender protocol, router module)
PROTOCOLS = {"vcp": ("vcp", "vcp"), "dpcp": ("dpcp", "dpcp"), "tpcp": ("tpcp", "tpcp"), "dcpew": ("dcpew", "dcpew")}


def protocol_overrides(protocol: str, flow_groups: int, links: list[str]) -> dict[str, Any]:
    """Every flow group and every listed router set to `protocol`'s sender and router module."""
    sender, router = PROTOCOLS[protocol]
    ov: dict[str, Any] = {f"flows.{i}.protocol": sender for i in range(flow_groups)}
    ov.update({f"{link}.router": router for link in links})
    return ov


def protocol_cases(scenario: str, protocols: list[str], flow_groups: int, links: list[str]) -> list[Case]:
    """One case per protocol, named after it."""
    return [Case(p, scenario, protocol_overrides(p, flow_groups, links), requires=PROTOCOLS[p]) for p in protocols]
