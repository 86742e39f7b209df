"""RED's defaults act on the link they are on, and a setting that cannot act is told before the run
(issue 39 item 3): `warning:` lines on stderr naming the file, the key and the port, the same in
summary.json's `run.warnings`, and the settings RED derived in `run.router_settings`."""

from __future__ import annotations

import json

import pytest
from conftest import needs_core

SCENARIO = """
name = "red-warn"
duration = "2s"
seed = 1
packet_size = 1000
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = {{ capacity = "10Mbps", delay = "10ms", buffer = "40pkt", router = "red"{params} }}
access = {{ capacity = "100Mbps", delay = "5ms" }}
[[flows]]
protocol = "newreno"
src = "s{{i}}"
dst = "d{{i}}"
count = 2
"""


@needs_core
def test_thresholds_above_the_buffer_are_warned_of_before_the_run(tmp_path, racc_cli):
    path = tmp_path / "red-warn.toml"
    path.write_text(SCENARIO.format(params=", router_params = { min_th = 150, max_th = 700 }"))
    out = tmp_path / "out"
    p = racc_cli("run", path, "--out", out, "-q")
    assert p.returncode == 0, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("warning:")]
    assert len(lines) == 2, p.stderr  # both directions of the bottleneck
    for line, port in zip(lines, ("r0->r1", "r1->r0")):
        assert str(path) in line and "key `topology.bottleneck.router_params`" in line, line
        assert f"RED never acts on port {port}" in line and "buffer of 40 packets" in line, line
    run = json.loads((out / "summary.json").read_text())["run"]
    assert [w["key"] for w in run["warnings"]] == ["topology.bottleneck.router_params"] * 2
    assert run["router_settings"]["r0->r1"]["min_th"] == 150


@needs_core
def test_default_thresholds_fit_the_link_and_say_nothing(tmp_path, racc_cli):
    path = tmp_path / "red-quiet.toml"
    path.write_text(SCENARIO.format(params=""))
    out = tmp_path / "out"
    p = racc_cli("run", path, "--out", out, "-q")
    assert p.returncode == 0 and "warning" not in p.stderr, p.stderr
    run = json.loads((out / "summary.json").read_text())["run"]
    assert run["warnings"] == []
    # ns-2.35's automatic thresholds at 10 Mb/s and 1000-byte packets: max(5, 0.005·1250/2) = 5, and 3·5.
    s = run["router_settings"]["r0->r1"]
    assert (s["min_th"], s["max_th"], s["max_p"]) == (5.0, 15.0, 0.1)
    assert s["w_q"] == pytest.approx(1 - 2.718281828459045 ** (-1 / 1250), rel=1e-12)
