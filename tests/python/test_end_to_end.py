"""End to end on the real engine: a scenario file in, a results folder with data, summary,
plots and report out; determinism; the CLI's error path; the benchmark line."""

from __future__ import annotations

import json

import polars as pl
import pytest
from conftest import REPO, needs_core

pytestmark = needs_core

SMALL = """
name = "e2e"
duration = "20s"
seed = 3
[topology]
kind = "dumbbell"
pairs = 3
bottleneck = { capacity = "5Mbps", delay = "20ms", buffer = 60, router = "red", router_params = { min_th = 10, max_th = 40 } }
access = { capacity = "100Mbps", delay = "2ms" }
[[flows]]
protocol = "newreno"
src = "s{i}"
dst = "d{i}"
count = 2
[[flows]]
protocol = "reno"
src = "s2"
dst = "d2"
size = "200KB"
start = "1s"
[record]
interval = "100ms"
"""


@pytest.fixture(scope="module")
def small_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("scn") / "e2e.toml"
    p.write_text(SMALL)
    return p


def test_run_writes_a_complete_results_folder(small_file, tmp_path):
    import racc

    out = tmp_path / "res"
    res = racc.run(small_file, out=out, plots=True)
    for f in [
        "links.parquet",
        "flows.parquet",
        "completions.parquet",
        "flow_info.parquet",
        "port_info.parquet",
        "summary.json",
        "scenario.toml",
        "scenario.resolved.json",
        "report.html",
    ]:
        assert (out / f).is_file() and (out / f).stat().st_size > 0, f
    pngs = list((out / "plots").glob("*.png"))
    assert len(pngs) >= 4
    summary = json.loads((out / "summary.json").read_text())
    assert summary["sim_time_s"] == pytest.approx(20.0)
    # Packet conservation as reported by the engine.
    assert summary["sent_pkts"] == (
        summary["delivered_pkts"] + summary["dropped_pkts"] + summary["lost_pkts"] + summary["in_flight_pkts"]
    )
    bn = next(p for p in summary["ports"] if p["name"] == "r0->r1")
    # RED with thresholds below one BDP (~30 packets here) trades some utilisation for delay.
    assert 0.8 < bn["utilisation"] <= 1 + 1e-9  # a link cannot carry more than its capacity
    assert 0 < bn["mean_queue_pkts"] < 60
    # The finite flow finished and its FCT is recorded.
    assert res.completions.height == 1
    assert res.completions["size_bytes"][0] == 200_000
    # Frames have the documented columns and one row per sample and port / flow.
    assert {"time_s", "port", "name", "utilisation", "queue_pkts", "drops", "marks"} <= set(res.links.columns)
    assert {"time_s", "flow", "goodput_bps", "cwnd_bytes", "srtt_s"} <= set(res.flows.columns)
    assert res.links["time_s"].n_unique() == 200
    # A result folder loads back to the same frames.
    back = racc.load(out)
    assert back.links.equals(res.links)


def test_same_seed_gives_identical_frames(small_file):
    import racc

    a = racc.run(small_file)
    b = racc.run(small_file)
    assert a.links.equals(b.links) and a.flows.equals(b.flows) and a.completions.equals(b.completions)
    c = racc.run(small_file, seed=4)
    assert not a.flows.equals(c.flows)


def test_overrides_reach_the_engine(small_file):
    import racc

    res = racc.run(small_file, overrides=["topology.bottleneck.buffer=30", "flows.0.count=1"])
    assert res.flow_info.height == 2
    assert res.port_info.filter(pl.col("name") == "r0->r1")["limit_pkts"][0] == 30
    # A module that takes no parameters refuses the ones left over from RED, naming the key.
    with pytest.raises(racc.ScenarioError, match="router_params.max_th"):
        racc.run(small_file, overrides=["topology.bottleneck.router=droptail"])


def test_web_sources_reach_every_table():
    """Web-like on/off transfers are made during the run: each is a row of flow_info (its
    source's group, ends and RTT, its own start and size) and, once done, of completions."""
    import racc

    text = (
        SMALL.split("[[flows]]")[0]
        + """
[[traffic]]
name = "web"
kind = "web"
protocol = "newreno"
src = "s{i}"
dst = "d{i}"
sources = 3
[record]
interval = "100ms"
"""
    )
    res = racc.run(text)
    info = res.flow_info
    assert info.height > 3 and set(info["group"]) == {"web"}
    assert info["flow"].to_list() == list(range(info.height))
    done = res.completions.join(info, on="flow", suffix="_info")
    assert done.height >= info.height - 3  # at most one transfer per source still running
    assert (done["size_bytes"] == done["size_bytes_info"]).all()
    assert (done["start_s"] == done["start_s_info"]).all()
    assert set(res.flows["flow"]) <= set(info["flow"])


def test_cli_run_and_bad_input(small_file, tmp_path, racc_cli):
    out = tmp_path / "cli"
    ok = racc_cli("run", str(small_file), "--out", str(out), "--no-plots")
    assert ok.returncode == 0, ok.stderr
    assert (out / "summary.json").is_file()
    bad = tmp_path / "bad.toml"
    bad.write_text(SMALL.replace('capacity = "5Mbps"', 'capacity = "-5Mbps"'))
    r = racc_cli("run", str(bad))
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [
        f"error: {bad}: key `topology.bottleneck.capacity`: must be > 0, got -5000000 b/s"
    ]


def test_every_shipped_scenario_runs_briefly():
    """Each shipped scenario, run 2 s past its last flow group's start: the run lasts what was
    asked, packets are conserved, data is delivered, and no link or sample carries more than its
    capacity."""
    import racc
    from racc import _core, scenario

    for f in sorted((REPO / "scenarios").glob("*.toml")):
        # Run 2 s past the last flow group's start (the parking lot's L2 locals start at 1000 s).
        sc = scenario.load(f)
        data = sc.data
        last = max((scenario_seconds(g.get("start", 0)) for g in data.get("flows", [])), default=0.0)
        # A trace's rows must all start before the end of the run.
        last = max([last] + [float(t.frame["start"].max()) for t in sc.traces.values()])
        # ... plus two round trips of the longest path (bounded by every link's delay, both ways),
        # so that even the last flow has delivered data.
        spec = json.loads(_core.validate(sc.to_json(), sc.source))
        duration = last + 2.0 + 4 * sum(link["delay"] for link in spec["links"]) * 1e-9
        res = racc.run(f, overrides={"duration": duration})
        s = res.summary
        assert s["sim_time_s"] == pytest.approx(duration), f.name
        assert s["sent_pkts"] == s["delivered_pkts"] + s["dropped_pkts"] + s["lost_pkts"] + s["in_flight_pkts"], f.name
        assert s["delivered_pkts"] > 0 and s["events"] > s["sent_pkts"], f.name
        for p in s["ports"]:
            assert 0 <= p["utilisation"] <= 1 + 1e-9, (f.name, p["name"], p["utilisation"])
        if res.links.height:
            assert res.links["utilisation"].max() <= 1 + 1e-9, f.name
            assert res.links["time_s"].max() == pytest.approx(duration), f.name
        assert (res.flows["goodput_bps"] >= 0).all(), f.name


def scenario_seconds(v) -> float:
    """A scenario time ("1000s", "250ms" or a number of seconds) in seconds."""
    if isinstance(v, (int, float)):
        return float(v)
    for unit, mult in (("ms", 1e-3), ("us", 1e-6), ("s", 1.0)):
        if v.endswith(unit):
            return float(v[: -len(unit)]) * mult
    return float(v)


def test_bench_prints_one_line_in_the_documented_order(racc_cli):
    r = racc_cli("bench", "--flows", "10", "--simtime", "2", "--kv")
    assert r.returncode == 0, r.stderr
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("sim=racc")]
    assert len(line) == 1
    keys = [kv.split("=")[0] for kv in line[0].split()]
    assert keys == [
        "sim",
        "flows",
        "simtime",
        "events",
        "bottleneck_tx_pkts",
        "bottleneck_drops",
        "util",
        "goodput_mbps",
        "delivered_pkts",
        "link_tx_pkts",
        "wall_s",
        "events_per_s",
        "pkthops_per_s",
        "peak_rss_kb",
    ]
    vals = dict(kv.split("=") for kv in line[0].split())
    assert int(vals["flows"]) == 10 and int(vals["events"]) > 0 and int(vals["peak_rss_kb"]) > 0


def test_bench_table_and_json(racc_cli):
    """Issue 18 item 9: a table by default (units in the headings), --json for scripts."""
    import json

    r = racc_cli("bench", "--flows", "1", "--simtime", "1")
    assert r.returncode == 0, r.stderr
    assert "racc bench" in r.stdout and "M hops/CPU-s" in r.stdout and "bytes/flow" in r.stdout
    assert "sim=racc" not in r.stdout
    r = racc_cli("bench", "--flows", "1", "--simtime", "1", "--json")
    assert r.returncode == 0, r.stderr
    (row,) = json.loads(r.stdout)
    assert row["flows"] == 1 and row["events"] > 0 and row["sim"] == "racc"


def test_bench_json_has_the_speed_fields(racc_cli):
    """Issue 19: the table's figures in --json (a tiny run at the options of the 10,000-flow form)."""
    import json

    r = racc_cli(
        "bench", "--flows", "20", "--simtime", "1", "--bottleneck-mbps", "400", "--access-mbps", "1000", "--json"
    )
    assert r.returncode == 0, r.stderr
    (row,) = json.loads(r.stdout)
    fields = ("packet_hops", "cpu_s", "mhops_per_cpu_s", "ns_per_hop", "events_per_hop", "peak_rss_kb")
    fields += ("bytes_per_flow", "setup_s", "util")
    for k in fields:
        assert isinstance(row[k], (int, float)) and row[k] >= 0, (k, row[k])
    assert row["packet_hops"] == row["link_tx_pkts"] > 0 and row["bottleneck_mbps"] == 400
    # The figures are the same measurement seen three ways.
    assert abs(row["mhops_per_cpu_s"] * row["ns_per_hop"] - 1e3) < 1e-6 * 1e3
    assert abs(row["events_per_hop"] - row["events"] / row["packet_hops"]) < 1e-9
    assert 0 < row["setup_s"] <= row["cpu_s"] and 0 < row["util"] <= 1
