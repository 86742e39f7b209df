"""htsim's connection matrices as traffic (issue 40): `[[traffic]] kind = "connection_matrix"`
reads `Nodes`/`Connections` and `SRC->DST start PS size B` lines into flows between fat-tree
hosts `h{i}`; every malformed line is refused naming the file, the line and the reason, quoting
nothing of the file; files outside the scenario's folder need --allow-path.
"""

from __future__ import annotations

import pytest
import racc
from conftest import needs_core
from racc.errors import ScenarioError
from racc.scenario import load

SCENARIO = """
name = "cm"
duration = "1s"
seed = 1
packet_size = 1500
[topology]
kind = "fat_tree"
k = 4
host = {{ capacity = "10Gbps" }}
edge_agg = {{ capacity = "10Gbps" }}
agg_core = {{ capacity = "10Gbps" }}
[[traffic]]
name = "cm"
kind = "connection_matrix"
file = "{file}"
protocol = "newreno"
src = "h0"
dst = "h1"
[record]
interval = "100ms"
"""

GOOD = "Nodes 16\nConnections 3\n# a comment\n\n0->8 id 1 start 0 size 100000\n3->12 start 2000000000 size 50000\n9->1 start 1e6 size 1460 prio 3\n"


def scenario(tmp_path, cm: str, name: str = "m.cm"):
    (tmp_path / name).write_text(cm)
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.format(file=name))
    return load(path)


def test_rows_become_flows_between_fat_tree_hosts(tmp_path):
    sc = scenario(tmp_path, GOOD)
    tr = sc.traces[0]
    assert tr.rows == "connection"
    assert tr.frame.get_column("src").to_list() == ["h0", "h3", "h9"]
    assert tr.frame.get_column("dst").to_list() == ["h8", "h12", "h1"]
    # start is picoseconds (ConnectionMatrix::load: "start is in picoseconds already").
    assert tr.frame.get_column("start").to_list() == [0.0, 2e-3, 1e-6]
    assert tr.frame.get_column("size").to_list() == [100000.0, 50000.0, 1460.0]


@needs_core
def test_a_matrix_runs_and_every_flow_completes(tmp_path):
    sc = scenario(tmp_path, GOOD)
    r = racc.run(sc.path)
    assert r.completions.height == 3


SECRET = "root:secretHash:0:0"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Nodes 16\nConnections 1\n0->8 start 0\n", "line 3: no `size`"),
        ("Nodes 16\nConnections 1\n0->8 size 10\n", "line 3: no `start`"),
        ("Nodes 16\nConnections 1\n0->8 start x size 10\n", "line 3: `start` is not a number"),
        ("Nodes 16\nConnections 1\n0->8 start -1 size 10\n", "line 3: `start` must be"),
        ("Nodes 16\nConnections 1\n0->8 start 0 size 0\n", "line 3: `size` must be"),
        ("Nodes 16\nConnections 1\n0->16 start 0 size 10\n", "line 3: DST 16 is not below Nodes = 16"),
        ("Nodes 16\nConnections 1\n4->4 start 0 size 10\n", "line 3: a host sends to itself"),
        ("Nodes 16\nConnections 1\nx->4 start 0 size 10\n", "line 3: a connection starts with SRC->DST"),
        ("Nodes 16\nConnections 1\n0->8 start 0 size 10 id 0\n", "line 3: `id` must be"),
        ("Nodes 16\nConnections 1\n0->8 id 1 trigger 2 size 10\n", "line 3: `trigger`: trigger-started"),
        ("Nodes 16\nConnections 1\n0->8 start 0 size 10 start 1\n", "line 3: `start` given twice"),
        ("Nodes 16\nConnections 1\n0->8 start 0 size\n", "line 3: `size` needs a value"),
        (f"Nodes 16\nConnections 1\n0->8 start 0 size 10 {SECRET}\n", "line 3: attribute 6 is not one of"),
        (f"Nodes 16\n{SECRET}\n", "line 2: not a header line"),
        ("Nodes 16\nConnections 2\n0->8 start 0 size 10\n", "`Connections` says 2, but the file lists 1"),
        ("Connections 1\n0->8 start 0 size 10\n", "line 2: a connection before the `Nodes N` header"),
        ("Nodes 16\n0->8 start 0 size 10\n", "no `Connections C` header line"),
        ("Nodes 16\nConnections 1\n0->8 start 0 size 10\nNodes 4\n", "line 4: `Nodes` after the first"),
        ("Nodes 16\nConnections 0\ntrigger id 1 oneshot\n", "line 3: `trigger` lines are not supported"),
        ("Nodes 16\nConnections 0\n", "no connections"),
    ],
)
def test_malformed_lines_are_named_never_quoted(tmp_path, text, reason):
    with pytest.raises(ScenarioError) as e:
        scenario(tmp_path, text)
    msg = str(e.value)
    assert reason in msg, msg
    assert "m.cm" in msg and "traffic[0].file" in msg
    assert "secretHash" not in msg


@needs_core
def test_rows_are_checked_against_the_run(tmp_path):
    # A start after the end of the run is the engine's to refuse, naming the connection.
    sc = scenario(tmp_path, "Nodes 16\nConnections 2\n0->8 start 0 size 10\n1->9 start 5e12 size 10\n")
    with pytest.raises(ScenarioError) as e:
        racc.run(sc.path)
    assert "m.cm: connection 2, `start`" in str(e.value)


def test_outside_the_scenario_folder_needs_allow_path(tmp_path):
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "x.cm").write_text(GOOD)
    inner = tmp_path / "scen"
    inner.mkdir()
    (inner / "s.toml").write_text(SCENARIO.format(file=str(other / "x.cm")))
    with pytest.raises(ScenarioError) as e:
        load(inner / "s.toml")
    assert "outside the scenario file's folder" in str(e.value) and "connection matrix" in str(e.value)
