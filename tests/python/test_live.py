"""``racc live run`` (issue 17 item 5): a scenario on real packets written as the same results
folder as ``racc run``, ``--compare`` beside the simulator, a one-line refusal for non-root.

The live tests need root (network namespaces, TUN devices) and the ``racc-live`` binary
(`cargo build --release -p racc-net`; CI's cargo test step builds it); they skip with the
reason printed otherwise. Small scale: 2 flows at 10 Mb/s for 2 s, a few seconds in all.
"""

import json
from pathlib import Path

import polars as pl
import pytest
import racc
from conftest import needs_core
from racc import live, results

SCENARIO = """
name = "live-cli"
duration = "2s"
seed = 1
packet_size = 1000
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { capacity = "10Mbps", delay = "8ms", buffer = "1bdp", router = "vcp" }
access = { capacity = "100Mbps", delay = "1ms" }
[[flows]]
protocol = "vcp"
src = "s{i}"
dst = "d{i}"
count = 2
start_spread = "200ms"
params = { iw = 16 }
"""


def _live_or_skip():
    if not live.is_root():
        print("skipped: live runs need root (network namespaces and TUN devices)")
        pytest.skip("live runs need root (network namespaces and TUN devices)")
    try:
        return live.find_binary()
    except live.LiveUnavailable as exc:
        print(f"skipped: {exc}")
        pytest.skip(str(exc))


def test_non_root_is_refused_in_one_line(tmp_path, monkeypatch, capsys):
    from racc import cli

    monkeypatch.setattr(live, "is_root", lambda: False)
    (tmp_path / "s.toml").write_text(SCENARIO)
    status = cli.main(["live", "run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1
    assert err == [f"error: {live.NOT_ROOT}"]
    assert not (tmp_path / "out").exists()


@needs_core
def test_live_run_writes_the_results_layout_and_compares_with_the_simulator(tmp_path, racc_cli):
    _live_or_skip()
    (tmp_path / "s.toml").write_text(SCENARIO)
    out = tmp_path / "out"
    p = racc_cli(
        *("live", "run", "s.toml", "--out", out, "--compare", "--pcap", "cap.pcapng", "--pcap-port", "r0->r1"),
        cwd=tmp_path,
        timeout=120,
    )
    print(p.stdout[-3000:])
    assert p.returncode == 0, p.stderr
    res = results.load(out)
    assert res.summary["run"]["engine"] == "live"
    # The simulator's layout: every table, plots and the report.
    for f in ("links", "flows", "completions", "flow_info", "port_info", "group_links"):
        assert (out / f"{f}.parquet").exists()
    assert (out / "report.html").exists() and (out / "plots" / "throughput.png").exists()
    # Samples on the simulator's grid: 10 ms (the default interval) over 2 s, every port.
    n_ports = res.port_info.height
    assert res.links.height == 200 * n_ports
    assert sorted(set(res.links["time_s"].round(6).to_list()))[:2] == [0.01, 0.02]
    # The per-flow rows hold every byte the receivers delivered (as in the simulator).
    interval = res.summary["sample_interval_s"]
    from racc.summary import row_seconds

    bits = res.flows.select((pl.col("goodput_bps") * row_seconds(interval)).sum()).item()
    assert bits / 8 == pytest.approx(res.summary["goodput_bytes"], rel=1e-6)
    # The router's port counters reconcile with the per-sample rows.
    bottleneck = res.port_info.filter(pl.col("name") == "r0->r1")["port"][0]
    port = next(x for x in res.summary["ports"] if x["name"] == "r0->r1")
    assert res.links.filter(pl.col("port") == bottleneck)["tx_pkts"].sum() == port["tx_pkts"]
    # `racc plot` redraws it unchanged.
    q = racc_cli("plot", out)
    assert q.returncode == 0, q.stderr
    # --compare: the simulated run beside it, and the table side by side.
    sim = results.load(out / "simulated")
    assert sim.summary["run"].get("engine") != "live"
    table = json.loads((out / "compare.json").read_text())
    assert [r["flow"] for r in table["flows"]] == [0, 1]
    assert any(r["port"] == "r0->r1" for r in table["ports"])
    assert (out / "compare.png").exists() and "live Mb/s" in (out / "compare.txt").read_text()
    # Issue 39 item 5: --compare --pcap writes the simulator's capture of the same port beside the live one.
    live_cap, sim_cap = tmp_path / "cap.pcapng", tmp_path / "cap-simulated.pcapng"
    assert live_cap.stat().st_size > 0 and sim_cap.stat().st_size > 0, p.stdout
    cap = sim.summary["run"]["pcap"]
    assert (tmp_path / cap["file"]).resolve() == sim_cap.resolve() and sum(cap["packets"].values()) > 0
    assert "simulated pcap:" in p.stdout
    # Issue 17: the live mean rate within 15 % of the simulator's on the same scenario.
    live_bps = sum(r["live_goodput_bps"] for r in table["flows"])
    sim_bps = sum(r["sim_goodput_bps"] for r in table["flows"])
    print(f"goodput live {live_bps * 1e-6:.3f} Mb/s, simulated {sim_bps * 1e-6:.3f} Mb/s")
    assert abs(live_bps / sim_bps - 1) <= 0.15


@needs_core
def test_a_scenario_that_cannot_run_live_is_refused_with_the_key(tmp_path, racc_cli):
    _live_or_skip()
    (tmp_path / "s.toml").write_text(SCENARIO.replace("pairs = 2", "pairs = 60").replace("count = 2", "count = 60"))
    p = racc_cli("live", "run", "s.toml", "--out", tmp_path / "out", cwd=tmp_path, timeout=60)
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "flows" in lines[0] and "cannot run live" in lines[0], p.stderr
    assert "60 flows (60 in group" in lines[0] and "at most 50" in lines[0], p.stderr
    assert not (tmp_path / "out").exists()


@needs_core
def test_poisson_arrivals_over_the_live_limit_say_where_the_flows_come_from(tmp_path, racc_cli):
    """Issue 39 item 5: a [[traffic]] entry's arrivals are flows too; the refusal names its group and why."""
    _live_or_skip()
    shipped = Path(racc.__file__).parent / "scenarios" / "poisson-pareto-newreno.toml"
    p = racc_cli("live", "run", shipped, "--out", tmp_path / "out", cwd=tmp_path, timeout=60)
    assert p.returncode == 2, (p.stdout, p.stderr)
    (line,) = p.stderr.strip().splitlines()
    assert "cannot run live" in line and "[[traffic]] entry's arrivals" in line and "in group" in line, line
    assert "real socket pair" in line, line
    assert not (tmp_path / "out").exists()
