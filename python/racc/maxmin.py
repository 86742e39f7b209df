"""Max-min fair shares by water-filling (docs/PROTOCOLS.md §15): the oracle that multi-bottleneck
experiments (the parking lot) are judged against.

    while flows remain unfrozen:
        share_l = (C_l - frozen rates on l) / (unfrozen flows on l)   for every link l in use
        s* = min share (or a flow's own demand cap); freeze the flows on the arg-min link at s*
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any


def max_min(
    capacity: Mapping[Hashable, float],
    paths: Mapping[Hashable, Sequence[Hashable]],
    demand: Mapping[Hashable, float] | None = None,
) -> dict[Hashable, float]:
    """Max-min fair rate of every flow: ``capacity[link]``, ``paths[flow]`` = links it crosses,
    ``demand[flow]`` an optional cap (a flow that wants less, modelled as a private link)."""
    demand = dict(demand or {})
    for f, links in paths.items():
        for link in links:
            if link not in capacity:
                raise KeyError(f"flow {f!r} crosses unknown link {link!r}")
    rate: dict[Hashable, float] = {}
    left = dict(capacity)
    unfrozen = set(paths)
    while unfrozen:
        users: dict[Hashable, list[Hashable]] = {}
        for f in unfrozen:
            for link in paths[f]:
                users.setdefault(link, []).append(f)
        # The tightest link sets the next level; a demand below it freezes that flow alone.
        best_share, best_link = float("inf"), None
        for link in sorted(users, key=repr):
            share = max(left[link], 0.0) / len(users[link])
            if share < best_share:
                best_share, best_link = share, link
        capped = [f for f in unfrozen if demand.get(f, float("inf")) < best_share]
        if capped:
            level = min(demand[f] for f in capped)
            freeze = [f for f in capped if demand[f] == level]
        elif best_link is None:  # flows that cross no link: only their demand limits them
            level, freeze = float("inf"), list(unfrozen)
        else:
            level, freeze = best_share, users[best_link]
        for f in freeze:
            rate[f] = level
            unfrozen.discard(f)
            for link in paths[f]:
                left[link] -= level
    return rate


def link_shares(
    rates: Mapping[Hashable, float],
    paths: Mapping[Hashable, Sequence[Hashable]],
    groups: Mapping[Hashable, str],
    link: Hashable,
) -> dict[str, float]:
    """Total max-min rate of each flow group on ``link`` (e.g. long vs local on L0)."""
    out: dict[str, float] = {}
    for f, r in rates.items():
        if link in paths[f]:
            out[groups[f]] = out.get(groups[f], 0.0) + r
    return out


def from_results(res: Any, flows: Iterable[int] | None = None) -> tuple[dict, dict, dict]:
    """Capacities (by port), forward paths and groups of a run (a ``racc.Results``), restricted to
    ``flows`` (positions in the resolved scenario's flow list; default: all). Ports are the
    engine's port ids as the results list them (``port_info``); a path is the resolved route."""
    info = res.port_info
    capacity = dict(zip(info.get_column("port").to_list(), info.get_column("capacity_bps").to_list()))
    fl = res.resolved["flows"]
    ids = range(len(fl)) if flows is None else flows
    paths = {i: list(res.resolved["routes"][fl[i]["fwd_route"]]) for i in ids}
    groups = {i: fl[i]["group"] for i in ids}
    return capacity, paths, groups
