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
#: --no-loadscope-reorder`); started first, the long files run side by side and the short ones
#: fill in behind them, instead of a long file starting last and running alone at the end.
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


def pytest_collection_modifyitems(config, items):
    """Run the files of SLOW_FIRST first, in its order, and the others after them as collected
    (a stable sort: each file's tests keep their order and stay together)."""
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.stem, len(rank)))


_QUICK: dict = {}


def quick_reproduction(name: str):
    """``experiments.reproduce(name, quick=True)``, run once per test process and shared by every
    test that asks for it (a run is deterministic, so a second one gives the same). Read only: a
    test that changes what it gets back runs its own."""
    if name not in _QUICK:
        from racc import experiments

        _QUICK[name] = experiments.reproduce(name, quick=True)
    return _QUICK[name]


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
