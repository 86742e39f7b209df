"""Arrival lists as files (issue 21): `[[traffic]] kind = "trace"` reads a CSV or Parquet file
relative to the scenario file; every malformed row is refused before the run with the file,
the line or row, the column and the reason; `racc arrivals` writes the exact list a scenario's
traffic produces, and replaying it is identical to the run that drew it; a run's memory grows
with the flows alive, not with every flow ever (issue 15 item 4), read from the run's own
peak-memory figure.
"""

from __future__ import annotations

import json

import polars as pl
import pytest
import racc
from conftest import needs_core
from racc.errors import ScenarioError

SCENARIO = """
name = "t"
duration = "20s"
seed = 3
packet_size = 1000
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = {{ capacity = "20Mbps", delay = "20ms", buffer = 60 }}
access = {{ capacity = "1Gbps", delay = "1ms" }}
[record]
interval = "500ms"
{body}
"""

TRACE = """
[[traffic]]
name = "list"
kind = "trace"
file = "{file}"
protocol = "newreno"
src = "s0"
dst = "d0"
"""

#: (start s, size B, pair), hand-written
FLOWS = [(0.0, 200_000, 0), (0.25, 960, 1), (0.5, 48_000, 0), (1.125, 1_500_000, 1), (2.0, 9_600, 0)]


def _csv(path, rows, header="start,size,src,dst"):
    path.write_text(header + "\n" + "".join(f"{s},{b},s{p},d{p}\n" for s, b, p in rows))
    return path


def _scenario(tmp_path, file="list.csv"):
    sc = tmp_path / "sc.toml"
    sc.write_text(SCENARIO.format(body=TRACE.format(file=file)))
    return sc


@needs_core
def test_a_trace_file_runs_as_the_same_flows_written_out(tmp_path):
    (tmp_path / "data").mkdir()
    _csv(tmp_path / "data" / "list.csv", FLOWS)
    from_file = racc.run(_scenario(tmp_path, "data/list.csv"))  # relative to the scenario file
    listed = "".join(  # one group per flow: two entries may not share a group's name
        f'[[flows]]\nname = "list{i}"\nprotocol = "newreno"\nsrc = "s{p}"\ndst = "d{p}"\nstart = {s}\nsize = "{b}B"\n'
        for i, (s, b, p) in enumerate(FLOWS)
    )
    written = racc.run(SCENARIO.format(body=listed))
    assert from_file.completions.height == len(FLOWS)
    assert from_file.completions.equals(written.completions)
    # Parquet reads the same.
    pl.read_csv(tmp_path / "data" / "list.csv").write_parquet(tmp_path / "list.parquet")
    assert racc.run(_scenario(tmp_path, "list.parquet")).completions.equals(written.completions)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("size,src\n960,s0\n", "list.csv: missing column `start`"),
        ("start\n0.5\n", "list.csv: missing column `size`"),
        # An unexpected name is described by its position, a bad value by its line: never quoted.
        ("start,size,flow\n0.5,960,1\n", "list.csv: line 1 is not a trace header: column 3 of 3 is not one of"),
        ("start,size\n0.5,960\nsoon,960\n", "list.csv: line 3, column `start`: not a number (value not shown)"),
        ("start,size\n0.5,960\n1.0,\n", "list.csv: line 3, column `size`: empty"),
        ("start,size\n0.5,960\n0.75,1kB\n", "list.csv: line 3, column `size`: not a number (value not shown)"),
        ("start,size\n0.5,960\ninf,960\n", "list.csv: line 3, column `start`: must be a finite number, got inf"),
        ("start,size\n0.5,960\nnan,960\n", "list.csv: line 3, column `start`: must be a finite number"),
        ("start,size,src\n0.5,960,s0\n1,960,\n", "list.csv: line 3, column `src`: empty"),
        ("start,size\n", "list.csv: no rows"),
        # The engine's checks of each row's values, named by the file's line:
        ("start,size\n0.5,960\n-1,960\n", "list.csv: line 3, column `start`: must be >= 0 s"),
        ("start,size\n0.5,960\n20,960\n", "list.csv: line 3, column `start`: 20 s is at or after the end of the run"),
        ("start,size\n0.5,960\n1,0\n", "list.csv: line 3, column `size`: must be at least 1 byte, got 0"),
        ("start,size\n0.5,960\n1,1e17\n", "list.csv: line 3, column `size`: 100000000000000000 B is more than"),
        ("start,size\n0.5,960\n1,960.5\n", "list.csv: line 3, column `size`: must be a whole number of bytes"),
        ("start,size,dst\n0.5,960,d0\n1,960,d9\n", "list.csv: line 3, column `dst`: no node named 'd9'"),
        (
            "start,size,protocol\n0.5,960,reno\n1,960,tcp-vegas\n",
            "list.csv: line 3, column `protocol`: unknown protocol",
        ),
    ],
)
@needs_core
def test_each_malformed_row_is_refused_with_its_line_column_and_reason(tmp_path, text, message):
    (tmp_path / "list.csv").write_text(text)
    with pytest.raises(ScenarioError) as e:
        racc.run(_scenario(tmp_path))
    assert f"sc.toml: key `traffic[0].file`: {message}" in str(e.value)


@needs_core
def test_parquet_rows_are_named_by_row(tmp_path):
    pl.DataFrame({"start": [0.5, 25.0], "size": [960, 960]}).write_parquet(tmp_path / "list.parquet")
    with pytest.raises(ScenarioError, match=r"list.parquet: row 2, column `start`: 25 s is at or after the end"):
        racc.run(_scenario(tmp_path, "list.parquet"))


def test_a_missing_file_is_named(tmp_path):
    from racc import traffic_files

    with pytest.raises(ScenarioError, match=r"key `traffic\[0\].file`: nowhere.csv: file not found"):
        traffic_files.load_traces({"traffic": [{"kind": "trace", "file": "nowhere.csv"}]}, "sc.toml", tmp_path)


def _same_run(a, b):
    """Every table and the summary equal, but for the run's provenance (times, paths)."""
    for t in ("links", "flows", "completions", "flow_info", "port_info", "group_links"):
        assert getattr(a, t).equals(getattr(b, t)), t
    sa, sb = (dict(r.summary) for r in (a, b))
    sa.pop("run"), sb.pop("run")
    assert json.dumps(sa, sort_keys=True, default=str) == json.dumps(sb, sort_keys=True, default=str)


@needs_core
@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_export_then_replay_is_identical(tmp_path, racc_cli, suffix):
    from racc import catalog

    out = tmp_path / f"arrivals.{suffix}"
    p = racc_cli("arrivals", "poisson-pareto-newreno", "--out", out)
    assert p.returncode == 0, p.stderr
    drawn = racc.run(catalog.shipped("poisson-pareto-newreno"))
    listed = pl.read_csv(out) if suffix == "csv" else pl.read_parquet(out)
    assert listed.columns == ["start", "size", "src", "dst", "protocol"]
    assert listed.height == drawn.flow_info.height > 2000
    import tomllib

    data = tomllib.loads(catalog.shipped("poisson-pareto-newreno").read_text())
    t = data["traffic"][0]
    data["traffic"][0] = {k: t[k] for k in ("name", "protocol", "src", "dst")} | {"kind": "trace", "file": str(out)}
    _same_run(drawn, racc.run(data))


@needs_core
def test_arrivals_refuses_web_sources(tmp_path, racc_cli):
    sc = tmp_path / "web.toml"
    sc.write_text(
        SCENARIO.format(body='[[traffic]]\nkind = "web"\nprotocol = "reno"\nsrc = "s0"\ndst = "d0"\nsources = 2\n')
    )
    p = racc_cli("arrivals", sc, "--out", tmp_path / "a.csv")
    assert p.returncode == 2
    assert "web source" in p.stderr and "no list" in p.stderr


#: Short flows arriving at 625/s (qfcp-fct's rate) on a 150 Mb/s dumbbell, as a Poisson
#: generator or as a trace file; `n` flows, the run lasting 2 s past the last arrival.
MEMORY = """
duration = "{duration}s"
seed = 1
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = {{ capacity = "150Mbps", delay = "10ms", buffer = "1bdp" }}
access = {{ capacity = "10Gbps", delay = "1ms" }}
[[traffic]]
name = "short"
protocol = "reno"
src = "s0"
dst = "d0"
{traffic}
[record]
interval = "1s"
flows = false
"""


def _peak(racc_cli, tmp_path, name, text):
    sc = tmp_path / f"{name}.toml"
    sc.write_text(text)
    out = tmp_path / f"out-{name}"
    p = racc_cli("run", sc, "--out", out, "--no-plots", "--quiet")
    assert p.returncode == 0, p.stderr
    run = json.loads((out / "summary.json").read_text())["run"]
    assert isinstance(run["setup_s"], float) and run["setup_s"] >= 0, run  # read, check, build
    return run["peak_memory_bytes"]


@needs_core
@pytest.mark.parametrize("kind", ["poisson", "trace"])
def test_memory_grows_with_flows_alive_not_flows_ever(tmp_path, racc_cli, kind):
    """Issue 15 item 4 and issue 21: the peak memory of 20,000 short flows stays within 1.3 times
    that of 2,000 arriving at the same rate (so with as many alive at once), each figure the
    run's own peak as `summary.json` states it."""
    peaks = {}
    for n in (2_000, 20_000):
        duration = n / 625 + 2
        if kind == "poisson":
            traffic = f'kind = "poisson"\nrate = 625\nmax_flows = {n}\nsize = {{ dist = "pareto", mean = "10pkt", shape = 1.2 }}\n'
        else:
            import random

            rng, t, rows = random.Random(n), 0.0, []
            for _ in range(n):
                t += rng.expovariate(625)
                rows.append(f"{t!r},{960 * max(1, int(2 / (1 - rng.random()) ** (1 / 1.2)))}\n")
            (tmp_path / f"list{n}.csv").write_text("start,size\n" + "".join(rows))
            traffic = f'kind = "trace"\nfile = "list{n}.csv"\n'
        peaks[n] = _peak(racc_cli, tmp_path, f"{kind}{n}", MEMORY.format(duration=duration, traffic=traffic))
    assert peaks[20_000] <= 1.3 * peaks[2_000], f"{peaks[20_000] / 1e6:.1f} MB vs {peaks[2_000] / 1e6:.1f} MB"
