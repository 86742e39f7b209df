#!/usr/bin/env bash
# Install everything racc needs and run the whole test suite: Rust unit and integration
# tests, then the Python tests (which use the extension built by the install step).
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

echo "== installing racc and its test dependencies"
"$PY" -m pip install --quiet --disable-pip-version-check -e ".[test]" || exit 1

echo "== style (cargo fmt --check, ruff)"
cargo fmt --all --check || { echo "Rust code is not formatted: run cargo fmt --all"; exit 1; }
"$PY" -m ruff check --quiet python tests/python || { echo "ruff found problems"; exit 1; }

echo "== Rust tests (cargo test --workspace --release)"
log=$(mktemp)
cargo test --workspace --release >"$log" 2>&1
rc=$?
grep -E "^test result:|^     Running" "$log" | sed 's/^ *//'
if [ $rc -ne 0 ]; then
  cat "$log"
  echo "Rust tests failed (exit $rc)"
  exit $rc
fi
passed=$(grep -Eo "^test result: ok\. [0-9]+ passed" "$log" | awk '{s+=$4} END {print s+0}')
echo "Rust: $passed passed, 0 failed"

echo "== Python tests"
exec "$PY" -m pytest -q tests/python
