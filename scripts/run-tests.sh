#!/usr/bin/env bash
# Builds and runs the whole test suite: a Release build with every test (unit, behavioural,
# end-to-end, package install), then an AddressSanitizer + UndefinedBehaviorSanitizer build that
# runs the unit and end-to-end tests again (the behavioural ones only measure sample efficiency).
# Usage: scripts/run-tests.sh [--no-sanitize]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
sanitize=1
[[ "${1:-}" == "--no-sanitize" ]] && sanitize=0

echo "== Release build and full test suite"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DTUNE_WERROR=ON
cmake --build build/release -j "$jobs"
# The Slurm executor's tests (label slurm, Release only) run against a private single-node cluster,
# started here and stopped on exit (unless it was already up); if it cannot start they skip.
if scripts/slurm-test-cluster.sh status >/dev/null 2>&1; then
  eval "$(scripts/slurm-test-cluster.sh env)"
elif scripts/slurm-test-cluster.sh start; then
  eval "$(scripts/slurm-test-cluster.sh env)"
  trap 'scripts/slurm-test-cluster.sh stop' EXIT
else
  echo "== warning: the Slurm test cluster did not start; the Slurm tests will be skipped" >&2
fi
ctest --test-dir build/release --output-on-failure -j "$jobs"

if ((sanitize)); then
  echo "== ASan + UBSan build: unit and end-to-end tests"
  # -O1 keeps Eigen usable under the sanitizers; the benchmarks are not built.
  cmake -S . -B build/sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
    -DTUNE_SANITIZE=ON -DTUNE_BUILD_BENCH=OFF -DTUNE_WERROR=ON
  cmake --build build/sanitize -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build/sanitize --output-on-failure -j "$jobs" -L 'unit|e2e'

fi
echo "== all tests passed"
