"""What the ns-2 cross-check tests (test_crosscheck*.py) share: a scenario resolved by the engine,
and one row of a cross-check's comparison table with its spread."""

from __future__ import annotations

import json

from racc import scenario as _scenario


def resolve(text):
    """A scenario's TOML text: (the scenario, the engine's resolved form, its port_info)."""
    from racc._core import Simulation

    sc = _scenario.load(text)
    sim = Simulation(sc.to_json(), sc.source)
    return sc, json.loads(sim.resolved().json()), sim.results()["port_info"]


def comparison_row(cc, section, metric):
    """The one row of ``cc.comparison`` for (section, metric), as a dict."""
    rows = cc.comparison.filter((cc.comparison["section"] == section) & (cc.comparison["metric"] == metric))
    assert rows.height == 1, (section, metric, cc.comparison)
    return rows.row(0, named=True)


def spread(r):
    """The larger of the two simulators' seed-to-seed ranges in a comparison row."""
    return max(r["racc_max"] - r["racc_min"], r["ns2_max"] - r["ns2_min"])
