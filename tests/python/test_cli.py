"""The ``racc`` command: clean errors (exit 2, one ``error:`` line), run/plot/list/bench wiring."""

import subprocess
import sys

from one_line import refused
from racc import bench, cli


def test_missing_file(tmp_path, racc_cli):
    p = racc_cli("run", "missing.toml", cwd=tmp_path, timeout=60)
    refused(p, "missing.toml", "not found")


def test_toml_syntax_error(tmp_path, racc_cli):
    (tmp_path / "bad.toml").write_text('name = "x"\n[flows\nprotocol = "reno"\n')
    p = racc_cli("run", "bad.toml", cwd=tmp_path, timeout=60)
    refused(p, "bad.toml", "line 2", "column")


def test_bad_set(tmp_path, racc_cli):
    (tmp_path / "s.toml").write_text('[[flows]]\nprotocol = "reno"\n')
    p = racc_cli("run", "s.toml", "--set", "flows[3].protocol=vcp", cwd=tmp_path, timeout=60)
    refused(p, "flows[3].protocol", "out of range")
    p = racc_cli("run", "s.toml", "--set", "noequals", cwd=tmp_path, timeout=60)
    refused(p, "expected key=value")


def test_usage_error_is_one_line(tmp_path, racc_cli):
    p = racc_cli("run", "s.toml", "--seed", "abc", cwd=tmp_path, timeout=60)
    refused(p, "--seed")


def test_version(tmp_path, racc_cli):
    p = racc_cli("--version", cwd=tmp_path, timeout=60)
    assert p.returncode == 0 and p.stdout.startswith("racc ")


def test_import_is_light(tmp_path, cli_env):
    code = "import sys, racc, racc._bench_child, racc.errors; print(sorted({'polars','matplotlib','rich'} & set(sys.modules)))"
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=cli_env, cwd=tmp_path, check=False
    )
    assert p.returncode == 0 and p.stdout.strip() == "[]", p.stderr


SCEN = """
name = "tiny"
duration = 4.0
interval = 0.5
[[flows]]
rate = 2e6
[[flows]]
rate = 1e6
size = 200000
"""


def test_run_in_process_with_fake_engine(tmp_path, monkeypatch, capsys, fake):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.toml").write_text(SCEN)
    assert cli.main(["run", "tiny.toml", "--set", "flows.0.rate=3e6", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert "Jain" in out and "r0->r1" in out and "results/tiny" in out
    d = tmp_path / "results" / "tiny"
    assert (d / "report.html").exists() and (d / "plots" / "throughput.png").exists()
    assert (d / "scenario.toml").read_text() == SCEN
    import racc

    res = racc.load(d)
    assert res.summary["run"]["seed"] == 5 and res.resolved["flows"][0]["rate"] == 3e6
    assert res.summary["run"]["overrides"] == ["flows[0].rate=3000000.0"]
    # a rerun replaces the folder only with --force; --no-plots --quiet prints nothing
    assert cli.main(["run", "tiny.toml", "--no-plots", "--quiet", "--out", str(d)]) == 2  # named: --force
    assert "pass --force" in capsys.readouterr().err and (d / "plots").exists()
    assert cli.main(["run", "tiny.toml", "--no-plots", "--quiet", "--out", str(d), "--force"]) == 0
    assert capsys.readouterr().out == "" and not (d / "plots").exists()
    assert cli.main(["plot", str(d)]) == 0
    assert (d / "plots" / "queue.png").exists()


def test_run_by_scenario_name(tmp_path, monkeypatch, capsys, fake):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "tiny.toml").write_text(SCEN)
    assert cli.main(["run", "tiny", "--quiet", "--no-plots"]) == 0
    assert (tmp_path / "results" / "tiny" / "summary.json").exists()


def test_run_refuses_foreign_out_before_running(tmp_path, monkeypatch, capsys, fake):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.toml").write_text(SCEN)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("x")
    fake.Simulation.calls = ["no simulation was created"]
    assert cli.main(["run", "tiny.toml", "--out", "mine"]) == 2
    assert "not a racc results folder" in capsys.readouterr().err
    assert fake.Simulation.calls == ["no simulation was created"]
    assert (tmp_path / "mine" / "notes.txt").read_text() == "x"


def test_run_engine_error_exit_2(tmp_path, monkeypatch, capsys, fake):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.toml").write_text(SCEN)
    assert cli.main(["run", "tiny.toml", "--set", "bogus=1"]) == 2
    err = capsys.readouterr().err
    assert err == "error: --set bogus=1: key `bogus`: unknown key (scenario tiny.toml)\n"
    assert not (tmp_path / "results" / "tiny").exists()


def test_run_interrupted_writes_nothing(tmp_path, monkeypatch, capsys, fake):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.toml").write_text(SCEN)
    assert cli.main(["run", "tiny.toml", "--set", "interrupt_at=2.0"]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert not (tmp_path / "results").exists() or list((tmp_path / "results").iterdir()) == []


def test_list_with_fake(tmp_path, monkeypatch, capsys):
    import fake_core
    import racc.errors

    monkeypatch.setattr(racc.errors, "core", lambda: fake_core)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "dumbbell.toml").write_text("# A single bottleneck\nname = 'd'\n")
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    for word in ("reno", "droptail", "uniform", "dumbbell", "A single bottleneck"):
        assert word in out


def test_bench_line_format():
    r = {
        "sim": "racc",
        "flows": 10,
        "simtime": 60.0,
        "events": 123456,
        "bottleneck_tx_pkts": 1000,
        "bottleneck_drops": 3,
        "util": 0.98765,
        "goodput_mbps": 9.87654,
        "delivered_pkts": 990,
        "link_tx_pkts": 3000,
        "wall_s": 0.123456,
        "events_per_s": 1234567.8,
        "pkthops_per_s": 98765.4,
        "peak_rss_kb": 20480,
        "extra": 1,
    }
    assert bench.format_line(r) == (
        "sim=racc flows=10 simtime=60 events=123456 bottleneck_tx_pkts=1000 bottleneck_drops=3 util=0.9877 "
        "goodput_mbps=9.877 delivered_pkts=990 link_tx_pkts=3000 wall_s=0.123 events_per_s=1234568 "
        "pkthops_per_s=98765 peak_rss_kb=20480"
    )


def test_bench_main_one_line_per_n(monkeypatch, capsys):
    import fake_core

    monkeypatch.setattr(
        bench, "run_one", lambda n, s, seed, b, a: {**fake_core.bench(n, s, seed, b, a), "peak_rss_kb": 1}
    )
    bench.main(None, None, 1)
    lines = capsys.readouterr().out.strip().splitlines()
    assert [ln.split()[1] for ln in lines] == ["flows=1", "flows=10", "flows=100", "flows=1000", "flows=10000"]
    # The standard set (issue 19): 60 s at 100 Mb/s, then 10,000 flows at 4 Gb/s for 10 s.
    assert [ln.split()[2] for ln in lines] == ["simtime=60"] * 4 + ["simtime=10"]
    assert all(ln.startswith("sim=racc ") and ln.endswith("peak_rss_kb=1") for ln in lines)


def test_bench_refuses_bad_options(tmp_path, racc_cli):
    """Issue 19: bad benchmark options are refused before anything runs, naming the option."""
    for args, fragment in (
        (["--flows", "0"], "--flows"),
        (["--flows", "10", "--simtime", "-1"], "--simtime"),
        (["--flows", "10", "--simtime", "nan"], "--simtime"),
        (["--flows", "10", "--bottleneck-mbps", "0.5"], "--bottleneck-mbps"),
        (["--flows", "10", "--access-mbps", "inf"], "--access-mbps"),
        (["--access-mbps", "5000"], "need --flows"),
        (["--flows", "ten"], "--flows"),
    ):
        refused(racc_cli("bench", *args, cwd=tmp_path, timeout=60), fragment)


def test_peak_rss_reader():
    from racc._bench_child import peak_rss_kb

    v = peak_rss_kb()
    if sys.platform.startswith("linux"):
        # /proc/self/status has VmHWM on Linux: a Python process holds more than 1 MB.
        assert v is not None and v > 1000, v
    else:
        assert v is None or v > 1000
