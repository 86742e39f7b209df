#!/usr/bin/env bash
# Install everything racc needs and run the whole test suite: Rust unit and integration
# tests, then the Python tests (which use the extension built by the install step). The install
# is scripts/setup.sh: a virtual environment (.venv, or $RACC_VENV), Rust if missing, racc in it.
# As root with apt-get, ns-2 (Debian package ns2) is installed for the crosscheck tests, which
# skip without it. Each step says what it is doing as it starts.
set -uo pipefail
cd "$(dirname "$0")/.."
# The engine and racc-live are built in the profile the Rust tests use (test-debug, below), so the
# dependencies, racc-proto and racc-sim compile once for the install and the tests together, and
# the Python tests run the engine with its debug_assert!s and overflow checks on as well.
export RACC_PROFILE=test-debug
./scripts/setup.sh || exit 1
export PATH="$HOME/.cargo/bin:$PATH"
PY="${RACC_VENV:-.venv}/bin/python"

echo "== style (cargo fmt --check, ruff)"
cargo fmt --all --check || { echo "Rust code is not formatted: run cargo fmt --all"; exit 1; }
"$PY" -m ruff check --quiet python tests/python || { echo "ruff found problems"; exit 1; }

# In the test-debug profile too: its build scripts and proc macros (syn, serde_derive, pyo3's) are
# then the ones step 1 built; the checks themselves are clippy's own (no code is generated).
echo "== clippy (cargo clippy --workspace --all-targets, warnings are errors)"
cargo clippy --workspace --all-targets --profile test-debug -q -- -D warnings || { echo "clippy found problems"; exit 1; }

# One build of every test binary, in Cargo.toml's test-debug profile: optimised as release, with
# the debug_assert!s and integer overflow checks that release leaves out, and without release's
# thin LTO, which each of the ~40 test binaries paid again at its link. Every test, the
# simulator's property tests included, runs once with the assertions on.
echo "== Rust tests (cargo test --workspace --profile test-debug; building them takes minutes on a small machine)"
log=$(mktemp)
start=$(date +%s)
# Show each test binary as it starts and its result line as it ends; the full log on failure.
cargo test --workspace --profile test-debug 2>&1 | tee "$log" | grep --line-buffered -E "^test result:|^     Running|^ *Compiling racc" | sed -u 's/^ *//'
rc=${PIPESTATUS[0]}
if [ $rc -ne 0 ]; then
  cat "$log"
  echo "Rust tests failed (exit $rc)"
  exit $rc
fi
passed=$(grep -Eo "^test result: ok\. [0-9]+ passed" "$log" | awk '{s+=$4} END {print s+0}')
echo "Rust: $passed passed, 0 failed, in $(( $(date +%s) - start )) s (build included)"

echo "== ns-2 for the crosscheck tests"
if command -v ns >/dev/null 2>&1; then
  echo "ns-2: $(command -v ns)"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  # Quietly; refresh the package lists only if the first try fails.
  export DEBIAN_FRONTEND=noninteractive
  if apt-get install -y -qq ns2 >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq ns2 >/dev/null 2>&1; }; then
    echo "ns-2: installed the Debian package ns2"
  else
    echo "ns-2: apt-get install ns2 failed; the ns-2 crosscheck tests will skip"
  fi
else
  echo "ns-2: \`ns\` is not installed and installing needs root with apt-get; the ns-2 crosscheck tests will skip"
fi

echo "== Chromium for the report's browser test"
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
  echo "chromium: $(command -v chromium), chromedriver: $(command -v chromedriver)"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  if apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1; }; then
    echo "chromium: installed the Debian packages chromium and chromium-driver"
  else
    echo "chromium: apt-get install chromium chromium-driver failed; the browser test will skip"
  fi
else
  echo "chromium: not installed and installing needs root with apt-get; the browser test will skip"
fi

# Two workers (pytest-xdist), each test file on one worker so that a module's shared fixture (a
# simulation several tests read) runs once, and a test that reads another file's quick
# reproduction beside that file (conftest.py's QUICK_READERS; it extends loadfile so); the files
# in collection order, which conftest.py's SLOW_FIRST starts with the slowest (xdist would
# otherwise order them by their number of tests).
# The 20 slowest tests are listed before the summary, to see where the time goes.
echo "== Python tests (pytest -n 2 tests/python)"
exec "$PY" -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder --durations=20 tests/python
