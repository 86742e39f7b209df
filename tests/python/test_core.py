"""Smoke tests against the real engine; skipped until ``racc._core`` is built."""

import json

import pytest
from conftest import REPO, needs_core

pytestmark = needs_core


# What the engine must list at least (other protocols may be added; none may go missing).
PROTOCOLS = {"newreno", "reno", "vcp", "dpcp", "tpcp", "dcpew"}
ROUTER_MODULES = {"droptail", "red", "vcp", "dpcp", "tpcp", "dcpew"}
LOSS_MODELS = {"none": {}, "bernoulli": {"p": 0.01}, "gilbert_elliott": {"loss": 0.05, "burst": 2}}


def _scenario(protocol: str = "newreno", router: str = "droptail", loss: dict | None = None) -> str:
    link = {"capacity": "10Mbps", "delay": "10ms", "buffer": 50, "router": router}
    if loss is not None:
        link["loss"] = loss
    return json.dumps(
        {
            "duration": 1,
            "topology": {"kind": "dumbbell", "pairs": 1, "bottleneck": link},
            "flows": [{"protocol": protocol, "src": "s0", "dst": "d0"}],
        }
    )


def test_listings():
    """Every listing names what the engine accepts, with a description, and nothing twice; each
    listed name (and alias) is accepted in a scenario, and a name not listed is refused."""
    from racc import _core
    from racc.errors import ScenarioError

    protos = _core.list_protocols()
    routers = _core.list_router_modules()
    losses = _core.list_loss_models()
    for listing in (protos, routers, losses):
        names = [p["name"] for p in listing]
        assert len(names) == len(set(names)), names
        assert all(isinstance(p["description"], str) and p["description"].strip() for p in listing), listing
    router_names = {r["name"] for r in routers}
    assert {p["name"] for p in protos} >= PROTOCOLS
    assert router_names >= ROUTER_MODULES
    assert {m["name"] for m in losses} >= set(LOSS_MODELS)
    for p in protos:
        assert p["regulation"] in ("window", "rate"), p
        # A protocol that needs its own router module gets it (a path contract may require it).
        router = p["name"] if p["name"] in router_names else "droptail"
        for name in [p["name"], *p["aliases"]]:
            resolved = json.loads(_core.validate(_scenario(name, router), "listed.toml"))
            assert resolved["flows"][0]["protocol"] == p["name"], (name, resolved["flows"][0])
    for r in routers:
        resolved = json.loads(_core.validate(_scenario(router=r["name"]), "listed.toml"))
        assert r["name"] in {link["router"] for link in resolved["links"]}, r
    for name, params in LOSS_MODELS.items():
        _core.validate(_scenario(loss={"model": name, **params}), "listed.toml")
    with pytest.raises(ScenarioError, match="unknown protocol 'not-listed'"):
        _core.validate(_scenario("not-listed"), "listed.toml")
    with pytest.raises(ScenarioError, match="unknown router module 'not-listed'"):
        _core.validate(_scenario(router="not-listed"), "listed.toml")
    with pytest.raises(ScenarioError, match="not-listed"):
        _core.validate(_scenario(loss={"model": "not-listed"}), "listed.toml")


def test_scenario_error_is_shared():
    from racc import _core
    from racc.errors import ScenarioError

    assert ScenarioError is _core.ScenarioError
    with pytest.raises(ScenarioError, match="test.toml"):
        _core.validate('{"definitely_not_a_key": 1}', "test.toml")


def test_shipped_scenarios_validate():
    """Every shipped scenario resolves, and the resolved spec keeps what the file says."""
    from racc import _core
    from racc import scenario as sc

    files = sorted((REPO / "scenarios").glob("*.toml"))
    assert len(files) >= 10, files
    for f in files:
        s = sc.load(f)
        resolved = json.loads(_core.validate(s.to_json(), s.source))
        assert resolved["name"] == s.data.get("name", f.stem), f.name
        assert resolved["seed"] == s.data.get("seed", 1), f.name
        assert resolved["flows"], f.name
        assert {fl["protocol"] for fl in resolved["flows"]} >= {g["protocol"] for g in s.data.get("flows", [])}, f.name
        assert 0 < resolved["sample_interval"] <= resolved["duration"], f.name


def test_check_refuses_as_validate_does_and_gives_the_duration():
    """`check` is `validate` without the resolved text: the same refusal, and the run's simulated
    seconds (what sweeps and progress bars need) exactly as the resolved scenario states them."""
    from racc import _core
    from racc import scenario as sc
    from racc.errors import ScenarioError

    for f in sorted((REPO / "scenarios").glob("*.toml"))[:6]:
        s = sc.load(f)
        resolved = json.loads(_core.validate(s.to_json(), s.source))
        assert _core.check(s.to_json(), s.source) == resolved["duration"] / 1e9, f.name
    with pytest.raises(ScenarioError, match="unknown protocol 'not-listed'"):
        _core.check(_scenario("not-listed"), "listed.toml")


def test_a_runs_resolved_scenario_is_what_validate_gives():
    """A run keeps the engine's checked scenario instead of checking it twice (issue 21): the
    text it makes on demand is `validate`'s, byte for byte, before and after the run."""
    from racc import _core

    text = _scenario("vcp", "vcp")
    sim = _core.Simulation(text, "same.toml")
    resolved = sim.resolved()
    assert resolved.json() == _core.validate(text, "same.toml")
    sim.run_until(1.0)
    del sim
    assert json.loads(resolved.json())["flows"][0]["protocol"] == "vcp"
