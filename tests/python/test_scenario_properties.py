"""Property-based tests (hypothesis) of the scenario layer: overrides land where their key says,
JSON for the engine round-trips and refuses non-finite numbers by their key, and the engine's
validator answers every numeric setting with a scenario or a ScenarioError naming the key,
never another exception (issue 12, items 5 and 11)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from racc import scenario
from racc.errors import ScenarioError

SEGMENT = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
SCALAR = st.one_of(
    st.integers(-(2**62), 2**62),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.text(max_size=12),
)
TREE = st.recursive(
    SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(SEGMENT, inner, max_size=4)),
    max_leaves=20,
)


@given(st.dictionaries(SEGMENT, TREE, max_size=4), st.lists(SEGMENT, min_size=1, max_size=4), SCALAR)
def test_set_path_puts_the_value_at_its_key_and_nowhere_else(data, path, value):
    before = json.loads(json.dumps(data))
    try:
        scenario.set_path(data, ".".join(path), value)
    except ScenarioError as e:
        # Only a non-table on the way refuses, naming the key.
        assert "not a table or array" in str(e) or "expected an integer index" in str(e), e
        return
    node = data
    for seg in path:
        node = node[seg]
    assert node == value or (isinstance(value, float) and math.isnan(value))
    # Everything not on the path is as it was.
    for k in before:
        if k != path[0]:
            assert data[k] == before[k]


@given(SCALAR)
def test_override_values_parse_as_toml(value):
    if isinstance(value, str):
        # A TOML basic string (JSON's escapes are TOML's; DEL must be escaped too).
        text = json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    elif isinstance(value, bool):
        text = "true" if value else "false"
    else:
        text = repr(value)
    assert scenario.parse_value(text) == value


@given(TREE)
def test_to_json_round_trips_finite_trees(tree):
    assert json.loads(scenario.to_json({"t": tree}, "p.toml")) == {"t": tree}


@given(st.lists(SEGMENT, min_size=1, max_size=4), st.sampled_from([math.inf, -math.inf, math.nan]))
def test_to_json_names_the_key_of_a_non_finite_number(path, bad):
    data: dict = {}
    scenario.set_path(data, ".".join(path), bad)
    with pytest.raises(ScenarioError, match=f"p.toml: key `{'.'.join(path)}`: non-finite"):
        scenario.to_json(data, "p.toml")


BASE = {
    "duration": "2s",
    "topology": {
        "kind": "dumbbell",
        "pairs": 1,
        "bottleneck": {"capacity": "10Mbps", "delay": "10ms", "buffer": 50},
    },
    "flows": [{"protocol": "newreno", "src": "s0", "dst": "d0"}],
}
KEYS = [
    "duration",
    "record.interval",
    "min_rto",
    "topology.bottleneck.capacity",
    "topology.bottleneck.delay",
    "topology.bottleneck.buffer",
    "flows.0.start",
    "flows.0.stop",
    "flows.0.size",
    "flows.0.count",
    "limits.samples",
    "limits.flows",
]
NUMBER = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, 1e-300, 1e300, 2**53, 2**63, 2**64, 5e-10, 1e-9]),
)
UNIT = st.sampled_from(["", "s", "ms", "ns", "us", "Mbps", "pkt", "B", "MB"])


@settings(max_examples=300, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(KEYS), NUMBER, UNIT, st.booleans())
def test_the_validator_answers_every_number_with_a_scenario_or_a_keyed_error(key, number, unit, as_text):
    from conftest import HAVE_CORE

    if not HAVE_CORE:
        pytest.skip("racc._core is not built")
    from racc import _core

    data = json.loads(json.dumps(BASE))
    value = f"{number}{unit}" if as_text else number
    scenario.set_path(data, key, value)
    try:
        text = scenario.to_json(data, "h.toml")
    except ScenarioError:
        return
    try:
        spec = json.loads(_core.validate(text, "h.toml"))
    except ScenarioError as e:
        assert str(e).startswith("h.toml: "), e
        return
    # Accepted: every time is a whole number of ns inside the clock's range.
    assert 0 < spec["duration"] <= 2**53
    assert 0 < spec["sample_interval"] <= spec["duration"]
    for f in spec["flows"]:
        assert 0 <= f["start"] < spec["duration"]
