"""A run's cost is bounded before it starts, and Ctrl-C ends it at any scale (issue 37 items 3
and 5, issue 39 item 5).

Refusals are checked by what was built, not by a clock: the process's peak resident size grows
by less than one of the refused structures would take, and the message is the one of the check
made from the file's counts ("at least"), which runs before the topology is expanded. Ctrl-C
tests use a generous timeout only as a guard against a hang.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import needs_core
from racc import memory
from racc.errors import ScenarioError, core

pytestmark = needs_core

DUMBBELL = """
name = "{name}"
duration = "{duration}"
{limits}
[topology]
kind = "dumbbell"
pairs = {pairs}
bottleneck = {{ capacity = "{capacity}", delay = "18ms", buffer = 100 }}
access = {{ capacity = "{capacity}", delay = "1ms" }}
[[flows]]
protocol = "newreno"
src = "s0"
dst = "d0"
count = {count}
{record}
"""


def scenario(**kw: object) -> str:
    base = {
        "name": "b",
        "duration": "10s",
        "limits": "",
        "pairs": 1,
        "capacity": "10Mbps",
        "count": 1,
        "record": "",
    }
    base.update(kw)
    return DUMBBELL.format(**base)


def refusal(text: str) -> tuple[ScenarioError, int]:
    """The engine's refusal of ``text`` and how much the process's peak resident size grew."""
    from racc import scenario as _scenario

    sc = _scenario.load(text)
    memory.reset_peak()
    before = memory.peak_bytes() or 0
    with pytest.raises(ScenarioError) as info:
        core().check(sc.to_json(), "t.toml")
    return info.value, (memory.peak_bytes() or 0) - before


# A million pairs are 2 million nodes and 4 million ports (over 1 GB built); ten million flows
# are over 2 GB. Refused from the file's counts, the process grows by far less than either.
GREW_AT_MOST = 50e6


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's resettable peak")
def test_a_million_pairs_is_refused_before_the_topology_is_built():
    err, grew = refusal(scenario(pairs=1_000_000))
    assert "`limits.samples`" in str(err) and "at least" in str(err), err
    assert "4000002 recorded ports" in str(err), err
    assert grew < GREW_AT_MOST, f"grew {grew / 1e6:.0f} MB before refusing"


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's resettable peak")
def test_ten_million_flows_are_refused_before_any_flow_is_made():
    raised = "[limits]\nflows = 1e8"
    err, grew = refusal(scenario(count=10_000_000, limits=raised))
    assert "key `limits.samples`" in str(err) and "at least" in str(err), err
    assert grew < GREW_AT_MOST, f"grew {grew / 1e6:.0f} MB before refusing"
    # Without per-flow series the flows' own state is what is too big: the memory estimate.
    err, grew = refusal(scenario(count=10_000_000, limits=raised, record="[record]\nflows = false"))
    assert "key `limits.memory`" in str(err) and "at least 20." in str(err), err
    assert grew < GREW_AT_MOST, f"grew {grew / 1e6:.0f} MB before refusing"


@pytest.mark.parametrize(
    "kw",
    [
        {"capacity": "1Tbps", "duration": "60s"},  # 1 Tb/s links: about 10^11 packets a minute
        {"duration": "8640000s", "record": '[record]\ninterval = "1000s"'},  # 100 days at 10 Mb/s
    ],
    ids=["1Tbps", "100days"],
)
def test_absurd_runs_are_refused_by_their_estimated_events(kw):
    err, _ = refusal(scenario(**kw))
    assert "key `limits.events`" in str(err) and "simulated events" in str(err), err
    # The key named is the one to change: raised, the same run is accepted.
    from racc import scenario as _scenario

    sc = _scenario.load(scenario(**kw, limits="[limits]\nevents = 1e15"))
    assert core().check(sc.to_json(), "t.toml") > 0


def test_a_huge_seed_range_is_refused_before_it_is_listed():
    from racc.cli import parse_seeds
    from racc.sweep import MAX_RUNS, points

    memory.reset_peak()
    before = memory.peak_bytes() or 0
    with pytest.raises(ScenarioError, match=r"--seeds '1-100000000': 100000000 seeds"):
        parse_seeds("1-100000000")
    # A list of 10^8 ints would be over 3 GB; nothing of the kind was made.
    assert (memory.peak_bytes() or 0) - before < GREW_AT_MOST
    assert len(parse_seeds(f"1-{MAX_RUNS}")) == MAX_RUNS
    with pytest.raises(ScenarioError, match="--grid/--seeds: 200000 points"):
        points({"a": list(range(1000)), "b": list(range(200))})


# --- Ctrl-C ------------------------------------------------------------------------------------

# A 104-day dumbbell: tens of hours of computing, 1 % of it (the display's chunk) half an hour.
LONG = scenario(
    name="long",
    duration="9000000s",
    limits="[limits]\nevents = 1e15",
    record='[record]\ninterval = "1000s"',
)

DRIVER = """
import sys
import racc
print("running", flush=True)
racc.run(sys.argv[1], out=sys.argv[2])
"""


def test_ctrl_c_ends_a_long_run_promptly_and_leaves_nothing(tmp_path, cli_env):
    (tmp_path / "long.toml").write_text(LONG)
    (tmp_path / "driver.py").write_text(DRIVER)
    out = tmp_path / "out"
    p = subprocess.Popen(
        [sys.executable, str(tmp_path / "driver.py"), str(tmp_path / "long.toml"), str(out)],
        env=cli_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert p.stdout.readline().strip() == "running"
    time.sleep(2.0)  # building a 4-host dumbbell takes milliseconds: the engine is running
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=120)  # a guard against a hang, not a speed bound
    except subprocess.TimeoutExpired:
        p.kill()
        pytest.fail("the run did not stop on SIGINT")
    assert p.returncode != 0
    assert "KeyboardInterrupt" in err
    assert not out.exists(), "an interrupted run left a results folder"
    assert not list(tmp_path.glob(".out*")), "an interrupted run left a partial folder"


TINY = scenario(name="tiny", duration="5s", count=2, record='[record]\ninterval = "500ms"')


def _group_alive(pgid: int) -> list[int]:
    """Processes still in process group ``pgid``."""
    alive = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                alive.append(int(d.name))
    return alive


@pytest.mark.skipif(not Path("/proc").exists(), reason="needs /proc to list processes")
def test_ctrl_c_during_a_dask_sweep_is_one_line_and_leaves_no_worker(tmp_path, cli_env):
    (tmp_path / "tiny.toml").write_text(TINY)
    p = subprocess.Popen(
        [sys.executable, "-m", "racc.cli", "sweep", str(tmp_path / "tiny.toml"), "--seeds", "1-200"]
        + ["--workers", "2", "--out", str(tmp_path / "sw")],
        env=cli_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own group, as a shell gives a job: Ctrl-C reaches all of it
    )
    lines = []
    for line in p.stderr:
        lines.append(line)
        if "finished" in line:  # a point has finished: the workers are running others
            break
    os.killpg(p.pid, signal.SIGINT)
    try:
        _, rest = p.communicate(timeout=120)  # a guard against a hang, not a speed bound
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        pytest.fail("the sweep did not stop on SIGINT")
    after = rest.strip().splitlines()
    assert "Traceback" not in rest, rest
    assert len(after) == 1 and "interrupted;" in after[0] and "--resume" in after[0], rest
    deadline = time.monotonic() + 30  # the cluster's processes are reaped as they exit
    while _group_alive(p.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _group_alive(p.pid), "worker processes outlived the sweep"


# --- the memory estimate against measured peaks --------------------------------------------------

# Five shipped scenarios; one sampled finely enough that its rows dominate its memory.
SHIPPED = [
    ("dumbbell-newreno-droptail", []),
    ("dumbbell-newreno-droptail", ['record.interval="2ms"']),
    ("poisson-pareto-newreno", []),
    ("vcp-dumbbell", []),
    ("trace-replay", []),
]
#: The estimate is an upper bound on the peak, and at most this many times the peak.
FACTOR = 3.0


@pytest.mark.parametrize(("name", "sets"), SHIPPED, ids=[n + ("-fine" if s else "") for n, s in SHIPPED])
def test_memory_estimate_bounds_the_measured_peak(tmp_path, cli_env, name, sets):
    out = tmp_path / "o"
    args = [sys.executable, "-m", "racc.cli", "run", name, "--out", str(out), "-q", "--no-plots"]
    for s in sets:
        args += ["--set", s]
    # Through a small launcher: a child's ru_maxrss starts at its forking parent's resident size
    # (Linux keeps the high-water mark across exec), and a pytest worker is hundreds of MB.
    launcher = (
        "import os, subprocess, sys\n"
        "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
        "_, status, usage = os.wait4(p.pid, 0)\n"
        "print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", launcher, *args], check=False, env=cli_env, capture_output=True, text=True
    )
    code, maxrss = (int(x) for x in r.stdout.split())
    assert code == 0, r.stderr
    peak = maxrss * 1024  # Linux: KiB
    estimate = json.loads((out / "summary.json").read_text())["run"]["estimate"]["memory_bytes"]
    assert peak <= estimate <= FACTOR * peak, f"peak {peak / 1e6:.0f} MB, estimate {estimate / 1e6:.0f} MB"
