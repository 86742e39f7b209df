"""Output a user can read when it is piped or redirected (issue 39 item 4): no table cell is cut
("uti…" for "utilisation"), and ``racc reproduce`` leads with its summary, then the claims that
differ with their causes, leaving the measured rows to claims.json and report.html."""

from __future__ import annotations

import io
import json

import polars as pl
from conftest import needs_core


def _one_line(text: str) -> str:
    return " ".join(text.split())


@needs_core
def test_piped_run_keeps_every_metric_name(tmp_path, racc_cli):
    from racc import tables

    out = tmp_path / "r"
    r = racc_cli("run", "vcp-dumbbell", "--set", "duration=2s", "--no-plots", "--out", out, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout
    s = json.loads((out / "summary.json").read_text())
    names = [row[0] for row in tables.totals_rows(s)] + [row[0] for row in tables.flow_rows(s)]
    names += tables.port_rows(s, {})[0]
    for name in names:
        assert name in r.stdout, name


@needs_core
def test_piped_reproduce_leads_with_the_summary_and_keeps_every_word(tmp_path, racc_cli):
    out = tmp_path / "q"
    r = racc_cli("reproduce", "mpcp-queue", "--quick", "--out", out, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout
    doc = json.loads((out / "claims.json").read_text())
    claims = doc["claims"]
    lines = r.stdout.splitlines()
    # title, then the headline (which AI law reproduces Fig. 5), then claims by verdict
    assert lines[1] == doc["headline"] and doc["headline"].startswith("MPCP Fig. 5")
    assert lines[2].startswith(f"{len(claims)} claims: ")
    differs = [c for c in claims if c["verdict"] == "differs"]
    if differs:
        assert lines[3].startswith("differs, by cause: ")
    flat = _one_line(r.stdout)
    for c in claims:
        shown = c["verdict"] in ("consistent", "differs")
        assert (_one_line(c["claim"]) in flat) == shown, c["claim"]
        if c["cause"] is not None:
            assert _one_line(c["cause"]["text"]) in flat
    # the differing claims come before the consistent ones
    first = {
        v: min((flat.index(_one_line(c["claim"])) for c in claims if c["verdict"] == v), default=None)
        for v in ("differs", "consistent")
    }
    if first["differs"] is not None and first["consistent"] is not None:
        assert first["differs"] < first["consistent"]
    left = sum(c["verdict"] not in ("consistent", "differs") for c in claims)
    assert f"{left} more rows" in flat
    every = racc_cli("reproduce", "mpcp-queue", "--quick", "--out", out, "--resume", "--all-claims", cwd=tmp_path)
    assert every.returncode == 0, every.stderr
    flat = _one_line(every.stdout)
    assert all(_one_line(c["claim"]) in flat for c in claims)


def test_crosscheck_table_through_the_pipe_console_keeps_every_metric_name(monkeypatch):
    """The crosscheck table printed on racc's console for pipes (``racc.display.console``) keeps
    every metric name whole, however long."""
    monkeypatch.delenv("COLUMNS", raising=False)  # pytest-xdist's workers set COLUMNS=80
    from racc.crosscheck import report
    from racc.display import console

    class Comparison:
        ns_version = "2.35"
        scenario = "red-ecn-dumbbell"
        seeds = (1, 2, 3)
        window = (10.0, 20.0)
        comparison = pl.DataFrame(
            {
                "section": ["bottleneck r0->r1"] * 2 + ["flows"],
                "metric": [
                    "utilisation",
                    "mean queue (packets), sampled every interval",
                    "goodput of every flow (Mb/s)",
                ],
                "kind": ["util", "queue", "util"],
                "racc_mean": [0.95, 120.0, 9.1],
                "racc_min": [0.94, 110.0, 9.0],
                "racc_max": [0.96, 130.0, 9.2],
                "racc_n": [3, 3, 3],
                "ns2_mean": [0.93, 118.0, 9.0],
                "ns2_min": [0.92, 100.0, 8.9],
                "ns2_max": [0.94, 125.0, 9.1],
                "ns2_n": [3, 3, 3],
                "agree": [True, True, None],
            }
        )

    buf = io.StringIO()
    report.print_table(Comparison(), console(file=buf))
    text = buf.getvalue()
    assert "…" not in text
    for name in Comparison.comparison["metric"].to_list():
        assert name in text, name


@needs_core
def test_piped_crosscheck_command_keeps_every_metric_name(tmp_path, racc_cli):
    """The command itself, piped: before, it built an 80-column console and printed "uti…"."""
    import shutil

    import pytest

    if shutil.which("ns") is None:
        pytest.skip("ns-2 (`ns`) is not installed: apt-get install ns2 (scripts/test.sh installs it as root)")
    out = tmp_path / "cc"
    r = racc_cli(
        "crosscheck", "ns2", "crosscheck-rtt-dumbbell", "--seeds", "1", "--set", "duration=4s", "--out", out, cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout
    metrics = pl.read_parquet(out / "comparison.parquet")["metric"].to_list() if (out / "comparison.parquet").exists() else []
    for name in ["utilisation", "metric", *metrics]:
        assert name in r.stdout, name
