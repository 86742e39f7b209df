"""Smoke tests against the real engine; skipped until ``racc._core`` is built."""

import json

import pytest
from conftest import REPO, needs_core

pytestmark = needs_core


def test_listings():
    from racc import _core

    protos = _core.list_protocols()
    assert protos and all({"name", "description"} <= set(p) for p in protos)
    assert isinstance(_core.list_router_modules(), list) and isinstance(_core.list_loss_models(), list)


def test_scenario_error_is_shared():
    from racc import _core
    from racc.errors import ScenarioError

    assert ScenarioError is _core.ScenarioError
    with pytest.raises(ScenarioError, match="test.toml"):
        _core.validate('{"definitely_not_a_key": 1}', "test.toml")


def test_shipped_scenarios_validate():
    from racc import _core
    from racc import scenario as sc

    files = sorted((REPO / "scenarios").glob("*.toml"))
    if not files:
        pytest.skip("no scenarios/ files yet")
    for f in files:
        s = sc.load(f)
        resolved = _core.validate(s.to_json(), s.source)
        assert isinstance(json.loads(resolved) if isinstance(resolved, str) else resolved, dict)
