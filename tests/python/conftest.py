"""Shared fixtures: the source tree on sys.path, a fake engine, and a skip marker for the real one."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# Hypothesis: the same examples on every run (derandomize), so CI's result does not depend on a
# draw, and no per-example deadline, which a loaded 2-core CI machine can miss for reasons that
# are not the code's (a flaky failure of test_scenario_properties under load was exactly that).
settings.register_profile("racc", derandomize=True, deadline=None)
settings.load_profile("racc")

REPO = Path(__file__).resolve().parents[2]
PYSRC = REPO / "python"
try:  # prefer an installed racc (it has the built extension); else the source tree
    import racc  # noqa: F401
except ImportError:
    sys.path.insert(0, str(PYSRC))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import fake_core


def _have_core() -> bool:
    try:
        return importlib.util.find_spec("racc._core") is not None
    except ImportError:
        return False


HAVE_CORE = _have_core()
if not HAVE_CORE and os.environ.get("CI"):
    # In CI the install step builds the engine; a missing engine must fail, not skip.
    raise RuntimeError("racc._core is not importable in CI: the install step did not build the engine")
needs_core = pytest.mark.skipif(not HAVE_CORE, reason="racc._core is not built (run `maturin develop --release`)")

#: The slowest test files, slowest first (`pytest --durations`, scripts/test.sh prints them). The
#: test command hands whole files to two workers in collection order (`--dist loadfile
#: --no-loadscope-reorder`, with the readers of QUICK_OWNER's runs, below, beside their owner);
#: started first, the long files run side by side and the short ones fill in behind them,
#: instead of a long file starting last and running alone at the end.
SLOW_FIRST = [
    "test_xcc",
    "test_examples",
    "test_dcpew",
    "test_reproduce",
    "test_causes",
    "test_qfcp",
    "test_mpcp",
    "test_anywhere",
    "test_piped_output",
    "test_resume",
    "test_sweep",
    "test_live",
    "test_end_to_end",
    "test_cli",
    "test_output",
    "test_plots",
]

#: The test file whose fixtures read each experiment's quick reproduction (quick_reproduction).
QUICK_OWNER = {
    **dict.fromkeys(["xcc-single", "xcc-rtt", "xcc-xcp-maxmin", "xcc-mice", "xcc-abrupt", "xcc-multilink"], "test_xcc"),
    **dict.fromkeys(["dcpew-parking-lot", "dcpew-dumbbell-loss", "dcpew-ipsec"], "test_dcpew"),
    **dict.fromkeys(["mpcp-dumbbell", "mpcp-queue", "mpcp-parking-lot"], "test_mpcp"),
    "qfcp-fct": "test_qfcp",
    "dccp-vcp-t3": "test_reproduce",
    "dccp-vcp-subqueues": "test_dccp_vcp_subqueues",
    "mpcp-vcp-scenarios": "test_mpcp_vcp_scenarios",
    "xcc-scalability": "test_xcc_scalability",
    "xcp-maxmin-n": "test_xcp_maxmin_n",
}

#: Tests of other files that read a quick reproduction ("file::test": experiment, or "[name]"
#: for the test's parameter). Each runs on the worker of its owner's file, after it, so the run
#: is made once for both: the test command's scheduler (pytest_xdist_make_scheduler) groups by
#: quick_group, not by file alone.
QUICK_READERS = {
    "test_causes::test_no_shipped_claim_differs_without_a_cause": "[name]",
    "test_causes::test_configuration_cause_carries_the_other_laws_measured_value": "mpcp-parking-lot",
    "test_causes::test_unspecified_cause_is_the_round_trip_sweeps_range": "mpcp-dumbbell",
    "test_claims::test_quick_claims_of_experiments": "[name]",
    "test_reproduce::test_reproduce_with_another_seed": "mpcp-queue",
    "test_reproduce::test_reproduce_on_dask_matches_the_sequential_run": "mpcp-queue",
}


def quick_group(nodeid: str) -> str:
    """The test's file (its stem), or for a reader of QUICK_READERS the owner's file."""
    path, _, rest = nodeid.partition("::")
    stem = Path(path).stem
    test, _, param = rest.partition("[")
    name = QUICK_READERS.get(f"{stem}::{test}")
    if name == "[name]":
        name = param.rstrip("]")
    return QUICK_OWNER.get(name, stem) if name else stem


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile``, with the readers of a quick reproduction in its owner's unit."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class QuickGroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return quick_group(nodeid)

    return QuickGroupScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    """Order the units (quick_group) of SLOW_FIRST first, in its order, the others after them as
    collected. Within a unit, the owner's tests first (they make the shared runs), then the
    readers', each file's tests together and in their order (a stable sort)."""
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        first.setdefault(quick_group(item.nodeid), i)
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    order = {id(item): i for i, item in enumerate(items)}

    def key(item):
        group = quick_group(item.nodeid)
        return (rank.get(group, len(rank)), first[group], item.path.stem != group, order[id(item)])

    items.sort(key=key)


_QUICK: dict = {}


@pytest.fixture(scope="session")
def quick_reproduction(tmp_path_factory):
    """``quick_reproduction(name)``: ``experiments.reproduce(name, quick=True)`` with its folder
    (``rep.out``: case folders, figures, claims.json), run once per test process and shared by
    every test that asks for it (a run is deterministic, so a second one gives the same). Read
    only: a test that changes what it gets back, or its folder, runs its own. A test of another
    file than QUICK_OWNER's that reads one is listed in QUICK_READERS, so xdist runs it on the
    worker that made it."""

    def get(name: str):
        if name not in _QUICK:
            from racc import experiments

            out = tmp_path_factory.mktemp("quick") / name
            _QUICK[name] = experiments.reproduce(name, out=out, quick=True)
        return _QUICK[name]

    return get


@pytest.fixture
def fake(monkeypatch):
    """Route ``racc.run`` to the fake engine."""
    import racc.runner

    monkeypatch.setattr(racc.runner, "core", lambda: fake_core)
    return fake_core


@pytest.fixture
def cli_env():
    """Environment for running ``python -m racc.cli`` from the source tree."""
    env = dict(os.environ)
    import racc

    pkg_parent = str(Path(racc.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_parent, env.get("PYTHONPATH")) if p)
    env.pop("COLUMNS", None)
    return env


@pytest.fixture
def racc_cli(cli_env):
    """``racc_cli("run", path, "--out", out)`` runs ``python -m racc ...`` from the source tree and
    returns the finished process (exit code, stdout and stderr as text), failing or not. ``env``
    replaces the environment (``cli_env`` by default)."""
    import subprocess

    def run(
        *args: object, timeout: float = 300, cwd: object = None, env: dict | None = None
    ) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "racc", *map(str, args)],
            capture_output=True,
            text=True,
            env=cli_env if env is None else env,
            cwd=cwd,
            timeout=timeout,
            check=False,
        )

    return run
