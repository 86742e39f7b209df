"""Water-filling against docs/PROTOCOLS.md §15's parking-lot vector and hand cases."""

import pytest
from racc.maxmin import link_shares, max_min


def parking_lot(locals_on_l2: bool):
    cap = {"L0": 4e6, "L1": 4e6, "L2": 2e6, "L3": 4e6}
    paths, groups = {}, {}
    for i in range(30):
        paths[f"long{i}"] = ["L0", "L1", "L2", "L3"]
        groups[f"long{i}"] = "long"
    for link in cap:
        if link == "L2" and not locals_on_l2:
            continue
        for j in range(10):
            paths[f"{link}-{j}"] = [link]
            groups[f"{link}-{j}"] = "local"
    return cap, paths, groups


def test_parking_lot_before_l2_locals_start():
    cap, paths, groups = parking_lot(False)
    r = max_min(cap, paths)
    assert r["long0"] == pytest.approx(2e6 / 30)  # 66.7 kb/s
    assert r["L0-0"] == pytest.approx(200e3)
    s = link_shares(r, paths, groups, "L0")
    assert s["long"] == pytest.approx(2e6) and s["local"] == pytest.approx(2e6)  # 50:50
    assert link_shares(r, paths, groups, "L2") == {"long": pytest.approx(2e6)}  # all long


def test_parking_lot_after_l2_locals_start():
    cap, paths, groups = parking_lot(True)
    r = max_min(cap, paths)
    assert r["long0"] == pytest.approx(50e3)
    assert r["L2-0"] == pytest.approx(50e3)
    assert r["L0-0"] == pytest.approx(250e3)
    s0 = link_shares(r, paths, groups, "L0")
    assert s0["long"] / (s0["long"] + s0["local"]) == pytest.approx(0.375)  # 37.5 : 62.5
    s2 = link_shares(r, paths, groups, "L2")
    assert s2["long"] / (s2["long"] + s2["local"]) == pytest.approx(0.75)  # 75 : 25


def test_demand_caps_and_conservation():
    cap = {"a": 10.0}
    paths = {"x": ["a"], "y": ["a"], "z": ["a"]}
    r = max_min(cap, paths, demand={"x": 1.0})
    assert r == {"x": 1.0, "y": pytest.approx(4.5), "z": pytest.approx(4.5)}
    assert sum(r.values()) == pytest.approx(10.0)


def test_every_link_is_feasible_and_every_flow_has_a_bottleneck():
    cap, paths, _ = parking_lot(True)
    r = max_min(cap, paths)
    for link, c in cap.items():
        load = sum(v for f, v in r.items() if link in paths[f])
        assert load <= c * (1 + 1e-12)
    # Max-min: each flow crosses a saturated link on which it has the largest rate.
    for f, links in paths.items():
        assert any(
            sum(v for g, v in r.items() if link in paths[g]) == pytest.approx(cap[link])
            and r[f] >= max(v for g, v in r.items() if link in paths[g]) - 1e-9
            for link in links
        ), f


def test_from_results_reads_ports_from_the_results():
    """Capacities come from ``port_info`` by the engine's port ids, whatever their numbering, and
    paths are the resolved routes: nothing is derived from link positions."""
    from types import SimpleNamespace

    import polars as pl
    from racc.maxmin import from_results

    port_info = pl.DataFrame({"port": [7, 3, 11], "name": ["a->b", "b->c", "c->b"], "capacity_bps": [4e6, 2e6, 2e6]})
    resolved = {
        "routes": [[7, 3], [3]],
        "flows": [{"group": "long", "fwd_route": 0}, {"group": "local", "fwd_route": 1}],
    }
    cap, paths, groups = from_results(SimpleNamespace(port_info=port_info, resolved=resolved))
    assert cap == {7: 4e6, 3: 2e6, 11: 2e6}
    assert paths == {0: [7, 3], 1: [3]} and groups == {0: "long", 1: "local"}
    assert max_min(cap, paths) == {0: pytest.approx(1e6), 1: pytest.approx(1e6)}
    _, only_long, _ = from_results(SimpleNamespace(port_info=port_info, resolved=resolved), [0])
    assert only_long == {0: [7, 3]}
