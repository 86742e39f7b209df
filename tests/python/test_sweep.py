"""``racc sweep`` on a local Dask cluster: grid expansion, order, agreement with single runs."""

from __future__ import annotations

import pytest
from conftest import needs_core
from racc.errors import ScenarioError
from racc.sweep import parse_grid, points

BASE = """
name = "sweep-base"
duration = "10s"
seed = 1
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { capacity = "5Mbps", delay = "20ms", buffer = 50, loss = { model = "bernoulli", p = 0.001 } }
[[flows]]
protocol = "newreno"
src = "s{i}"
dst = "d{i}"
count = 2
[record]
interval = "500ms"
"""


def test_grid_parsing_and_points():
    g = parse_grid(["topology.bottleneck.loss.p=0.001,0.01", 'flows.0.protocol=["reno", "newreno"]'])
    assert g == {"topology.bottleneck.loss.p": [0.001, 0.01], "flows.0.protocol": ["reno", "newreno"]}
    pts = points(g, [1, 2])
    assert len(pts) == 8
    assert [p.index for p in pts] == list(range(8))
    assert pts[0].overrides == (("topology.bottleneck.loss.p", 0.001), ("flows.0.protocol", "reno"))
    assert (pts[0].seed, pts[1].seed) == (1, 2)
    assert points({}, None)[0].label() == "base"
    with pytest.raises(ScenarioError):
        parse_grid(["nokey"])
    with pytest.raises(ScenarioError):
        parse_grid(["a=1", "a=2"])


@needs_core
def test_sweep_rows_match_single_runs(tmp_path):
    import racc
    from racc.sweep import sweep

    scn = tmp_path / "base.toml"
    scn.write_text(BASE)
    out = tmp_path / "sw"
    table = sweep(scn, {"topology.bottleneck.loss.p": [0.001, 0.02]}, seeds=[1, 2], workers=2, out=out)
    assert table.height == 4
    assert table["point"].to_list() == [0, 1, 2, 3]
    assert (out / "sweep.parquet").is_file()
    assert len(list((out / "points").iterdir())) == 4
    # More loss, less goodput (each seed).
    gp = table["goodput_bps"].to_list()
    assert gp[2] < gp[0] and gp[3] < gp[1]
    # A point equals the same run done directly: the sweep adds no nondeterminism.
    single = racc.run(scn, seed=2, overrides={"topology.bottleneck.loss.p": 0.02})
    assert table.row(3, named=True)["goodput_bps"] == single.summary["flows"]["aggregate_goodput_bps"]
    assert table.row(3, named=True)["events"] == single.summary["events"]


@needs_core
def test_a_bad_point_is_refused_before_dispatch(tmp_path):
    from racc.sweep import sweep

    scn = tmp_path / "base.toml"
    scn.write_text(BASE)
    with pytest.raises(ScenarioError, match="capacity"):
        sweep(scn, {"topology.bottleneck.capacity": ["5Mbps", 0]}, workers=1)


@needs_core
def test_cli_sweep(tmp_path, racc_cli):
    scn = tmp_path / "base.toml"
    scn.write_text(BASE)
    r = racc_cli(
        "sweep",
        scn,
        "--grid",
        "flows.0.protocol=reno,newreno",
        "--seeds",
        "1-2",
        "--workers",
        "2",
        "--out",
        tmp_path / "o",
    )
    assert r.returncode == 0, r.stderr
    assert "4 points" in r.stdout
    bad = racc_cli("sweep", str(scn), "--seeds", "x")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --seeds")
