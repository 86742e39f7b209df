"""Scenario loading: TOML errors, --set parsing and application, seed, JSON."""

import datetime as dt
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from racc import scenario as sc
from racc.errors import ScenarioError

BASE = """
name = "demo"
duration = 10.0
[[flows]]
protocol = "newreno"
[[flows]]
protocol = "vcp"
[links.bottleneck]
capacity = "10Mbps"
"""


@pytest.mark.parametrize(
    "raw, want",
    [
        ("42", 42),
        ("-3", -3),
        ("2.5", 2.5),
        ('"1Gbps"', "1Gbps"),
        ("1Gbps", "1Gbps"),
        ("true", True),
        ("false", False),
        ("[1,2]", [1, 2]),
        ("reno", "reno"),
        ("", ""),
        ("{a = 1}", {"a": 1}),
        ("a=b", "a=b"),
        ("'lit'", "lit"),
        ("1e3", 1000.0),
        ("2024-01-02", dt.date(2024, 1, 2)),
    ],
)
def test_parse_value_types(raw, want):
    assert sc.parse_value(raw) == want
    assert type(sc.parse_value(raw)) is type(want)


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_parse_value_integers_roundtrip(n):
    assert sc.parse_value(str(n)) == n


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20))
def test_parse_value_never_raises(raw):
    sc.parse_value(raw)


def test_split_override():
    assert sc.split_override("a.b= 3 ") == ("a.b", "3")
    assert sc.split_override("k=x=y") == ("k", "x=y")
    for bad in ("novalue", "=3", " =3"):
        with pytest.raises(ScenarioError, match="expected key=value"):
            sc.split_override(bad)


def test_split_key_quoted():
    assert sc.split_key('links."r0->r1.a".capacity') == ["links", "r0->r1.a", "capacity"]
    with pytest.raises(ScenarioError, match="empty key segment"):
        sc.split_key("a..b")


def test_set_dotted_index_and_create():
    s = sc.load(
        BASE,
        overrides=[
            "flows.1.protocol=reno",
            'links.bottleneck.capacity="1Gbps"',
            "duration=20",
            "new.table.key=[1,2]",
            "flows.0.ecn=true",
        ],
    )
    d = s.data
    assert d["flows"][1]["protocol"] == "reno"
    assert d["flows"][0]["ecn"] is True
    assert d["links"]["bottleneck"]["capacity"] == "1Gbps"
    assert d["duration"] == 20
    assert d["new"] == {"table": {"key": [1, 2]}}
    assert 'flows[1].protocol="reno"' in s.overrides  # recorded as racc writes keys


def test_set_index_out_of_range_names_key():
    with pytest.raises(ScenarioError) as e:
        sc.load(BASE, overrides=["flows[5].protocol=reno"])
    msg = str(e.value)
    assert msg.startswith("--set: key `flows[5].protocol`:")
    assert "index 5 is out of range" in msg and "2 entries" in msg


def test_set_non_integer_index_and_scalar_parent():
    with pytest.raises(ScenarioError, match="expected an integer index"):
        sc.load(BASE, overrides=["flows.first.protocol=reno"])
    with pytest.raises(ScenarioError, match="`duration` is a float, not a table"):
        sc.load(BASE, overrides=["duration.x=1"])


def test_set_mapping_values_kept_as_python():
    s = sc.load(BASE, overrides={"flows.0.protocol": "42"})
    assert s.data["flows"][0]["protocol"] == "42"


def test_seed_and_json():
    s = sc.load(BASE, seed=7)
    assert s.data["seed"] == 7
    assert json.loads(s.to_json())["seed"] == 7
    with pytest.raises(ScenarioError):
        sc.load(BASE, seed="x")


def test_toml_syntax_error_names_file_line_column(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text('name = "x"\nduration = \n')
    with pytest.raises(ScenarioError) as e:
        sc.load(f)
    msg = str(e.value)
    assert msg.startswith(f"{f}: TOML syntax error: line 2, column 12:")


def test_toml_error_at_end_of_document():
    with pytest.raises(ScenarioError, match=r"<string>: TOML syntax error: line \d+, column \d+"):
        sc.load('name = "x"\nflows = [1,\n')


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(ScenarioError, match="nope.toml: file not found"):
        sc.load(tmp_path / "nope.toml")
    with pytest.raises(ScenarioError, match="is a directory"):
        sc.load(tmp_path)


def test_path_text_dict_sources(tmp_path):
    f = tmp_path / "dumbbell.toml"
    f.write_text(BASE)
    from_path = sc.load(str(f))
    assert from_path.source == str(f) and from_path.text == BASE and from_path.stem == "dumbbell"
    assert from_path.name == "demo"
    from_text = sc.load(BASE)
    assert from_text.source == "<string>" and from_text.path is None
    d = {"flows": [{"protocol": "x"}]}
    from_dict = sc.load(d, overrides=["flows.0.protocol=y"])
    assert from_dict.source == "<dict>" and d["flows"][0]["protocol"] == "x"  # caller's dict untouched


def test_nonfinite_refused_with_key():
    with pytest.raises(ScenarioError, match=r"^--set flows\[0\].rate=Infinity: key `flows\[0\].rate`: non-finite"):
        sc.load(BASE, overrides=["flows.0.rate=inf"]).to_json()


def test_dates_serialise_as_iso():
    assert json.loads(sc.load("t = 2024-01-02").to_json())["t"] == "2024-01-02"


def test_bracket_index_accepted_with_a_hint():
    """Issue 18 item 8: racc writes `flows[0]` (as the engine's errors do); `flows.0` works too,
    with a hint."""
    import warnings

    from racc.scenario import OverrideHint

    text = 'name = "x"\n[[flows]]\nprotocol = "newreno"\n'
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = sc.load(text, overrides=["flows.0.protocol=reno"])
    assert loaded.data["flows"][0]["protocol"] == "reno"
    assert loaded.overrides == ['flows[0].protocol="reno"']
    (w,) = caught
    assert w.category is OverrideHint and "read as `flows[0].protocol`" in str(w.message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sc.load(text, overrides=["flows[0].protocol=reno"]).data["flows"][0]["protocol"] == "reno"


def test_engine_error_in_a_set_value_names_the_set_argument(tmp_path, racc_cli):
    """An error in a --set value is blamed on that --set, not on the file; the file's own errors
    still name the file."""
    from conftest import HAVE_CORE, REPO

    if not HAVE_CORE:
        pytest.skip("needs racc._core")
    f = tmp_path / "s.toml"
    f.write_text((REPO / "scenarios" / "dumbbell-newreno-droptail.toml").read_text())
    r = racc_cli("run", f, "--set", "topology.bottleneck.capacity=0", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.startswith("error: --set topology.bottleneck.capacity=0: key `topology.bottleneck.capacity`: ")
    assert f"(scenario {f})" in r.stderr
    r = racc_cli("run", f, "--set", "flows.0.protocol=nosuch", cwd=tmp_path)
    assert r.returncode == 2
    assert "note: --set key `flows.0.protocol` read as `flows[0].protocol`" in r.stderr
    assert "error: --set flows[0].protocol=\"nosuch\": key `flows[0].protocol`: unknown protocol" in r.stderr
    f.write_text(f.read_text().replace('capacity = "10Mbps"', 'capacity = "0Mbps"', 1))
    r = racc_cli("run", f, cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith(f"error: {f}: ")
