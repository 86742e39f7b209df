"""`racc reproduce --all` (issue 40 item 3): every experiment into OUT/<name>; interrupted after
the first experiment and run again, it skips what is complete and finishes the rest with the
claims of an uninterrupted run; nothing finished is rewritten without --force; a summary table
gives the claims by verdict of each experiment. Three stand-in experiments with the real
machinery (cases, manifests, figures, claims, the CLI) keep it to seconds."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import needs_core

pytestmark = needs_core

TINY = """
name = "tiny"
duration = "10s"
seed = 1
[topology]
kind = "dumbbell"
pairs = 4
bottleneck = { capacity = "20Mbps", delay = "20ms", buffer = 100 }
[[flows]]
protocol = "newreno"
src = "s{i}"
dst = "d{i}"
count = 4
[record]
interval = "500ms"
"""

# The table holds only the stand-ins: --all runs whatever the table lists.
DRIVER = """
import sys
import racc.experiments
from racc.experiments import base
from racc.experiments.base import Case, Claim, Experiment, judged, register

SCENARIO = sys.argv.pop(1)
base._REGISTRY.clear()


def claims(results, quick):
    out = [Claim(f"{n}: utilisation", "", f"{r.summary['ports'][0]['utilisation']:.6f}", "measured")
           for n, r in results.items()]
    u = min(r.summary["ports"][0]["utilisation"] for r in results.values())
    out.append(judged("busy", "", u, f"{u:.3f}", (0.5, None), "at least 0.5"))
    out.append(judged("idle", "", u, f"{u:.3f}", (None, 0.1), "at most 0.1"))
    return out


for k in range(3):
    register(Experiment(name=f"e{k}", source="test", description="--all test",
                        cases=[Case(f"c{i}", SCENARIO, {"seed": 10 * k + i + 1}) for i in range(2)],
                        quick={"duration": "4s"}, figures=lambda results, out: [], claims=claims))
from racc.cli import main
sys.exit(main(sys.argv[1:]))
"""

NAMES = ["e0", "e1", "e2"]


@pytest.fixture
def tiny(tmp_path, cli_env):
    (tmp_path / "tiny.toml").write_text(TINY)
    (tmp_path / "driver.py").write_text(DRIVER)

    def cmd(*args: str) -> list[str]:
        return [sys.executable, str(tmp_path / "driver.py"), str(tmp_path / "tiny.toml"), *args]

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            cmd(*args), cwd=tmp_path, env=cli_env, capture_output=True, text=True, timeout=300, check=False
        )

    return tmp_path, cmd, run


def _complete(folder: Path) -> bool:
    try:
        return json.loads((folder / "manifest.json").read_text())["complete"] is True
    except (OSError, ValueError, KeyError):
        return False


def _claims(folder: Path) -> list:
    return json.loads((folder / "claims.json").read_text())["claims"]


def _stamps(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def test_all_interrupted_after_the_first_skips_it_and_finishes(tiny, cli_env):
    tmp, cmd, run = tiny
    full = run("reproduce", "--all", "--quick", "--out", "A")
    assert full.returncode == 0, full.stderr
    assert all(_complete(tmp / "A" / n) for n in NAMES)

    proc = subprocess.Popen(
        cmd("reproduce", "--all", "--quick", "--out", "B"), cwd=tmp, env=cli_env, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while not _complete(tmp / "B" / "e0") and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Resume with: racc reproduce --all --out B --quick" in err
    assert _complete(tmp / "B" / "e0")
    assert not _complete(tmp / "B" / "e2"), "the SIGINT should land before the last experiment"
    # An experiment cut short has nothing that looks complete.
    for n in NAMES[1:]:
        assert not (tmp / "B" / n / "claims.json").exists() or _complete(tmp / "B" / n)
    first = (tmp / "B" / "e0" / "claims.json").stat().st_mtime_ns

    again = run("reproduce", "--all", "--quick", "--out", "B")
    assert again.returncode == 0, again.stderr
    assert "e0: already complete" in again.stdout
    assert (tmp / "B" / "e0" / "claims.json").stat().st_mtime_ns == first, "a complete experiment is not rewritten"
    for n in NAMES:
        assert _complete(tmp / "B" / n)
        assert _claims(tmp / "A" / n) == _claims(tmp / "B" / n), n


def test_all_rewrites_nothing_without_force_and_reports_claims_by_verdict(tiny):
    tmp, _cmd, run = tiny
    first = run("reproduce", "--all", "--quick", "--out", "R")
    assert first.returncode == 0, first.stderr
    # The summary: one row per experiment, its claims by verdict (2 measured, 1 consistent, 1 differs).
    for n in NAMES:
        row = next(line for line in first.stdout.splitlines() if f" {n} " in line)
        assert row.split("│")[3:6] == [" 1 ", " 1 ", " 2 "] or [c.strip() for c in row.split("│")[3:6]] == [
            "1",
            "1",
            "2",
        ], row
    before = _stamps(tmp / "R")

    second = run("reproduce", "--all", "--quick", "--out", "R", "--json")
    assert second.returncode == 0, second.stderr
    rows = json.loads(second.stdout)["experiments"]
    assert [(r["experiment"], r["status"], r["consistent"], r["differs"], r["measured"]) for r in rows] == [
        (n, "already complete", 1, 1, 2) for n in NAMES
    ]
    assert _stamps(tmp / "R") == before, "nothing is rewritten without --force"

    # Another scale is other work: refused, not mixed in and not replaced.
    other = run("reproduce", "--all", "--out", "R")
    assert other.returncode != 0
    assert "other settings" in other.stderr and "--force" in other.stderr
    assert _stamps(tmp / "R") == before

    forced = run("reproduce", "--all", "--quick", "--out", "R", "--force", "--json")
    assert forced.returncode == 0, forced.stderr
    assert [r["status"] for r in json.loads(forced.stdout)["experiments"]] == ["ran"] * 3
    assert (tmp / "R" / "e0" / "claims.json").stat().st_mtime_ns != before["e0/claims.json"]


def test_all_refuses_a_name_or_cases(tiny):
    _tmp, _cmd, run = tiny
    r = run("reproduce", "e0", "--all")
    assert r.returncode != 0 and "--all" in r.stderr and len(r.stderr.strip().splitlines()) == 1
