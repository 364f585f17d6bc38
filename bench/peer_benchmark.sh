#!/usr/bin/env bash
# The peer benchmark of issue 7 in one command: tune (ei, ucb, compressed ei), dlib's global optimiser
# and Sobol (bench/peer_benchmark.cpp), Optuna's TPE and random samplers (bench/peer_benchmark.py),
# on the same functions, budget and seeds, one process at a time; then the tables.
#
# Usage: bench/peer_benchmark.sh BUILD_DIR OUT_DIR [--seeds N] [--evaluations N] [--functions a,b]
#   BUILD_DIR: a build configured with -DTUNE_BUILD_BENCH=ON (and dlib installed, for the dlib rows),
#              with the peer_benchmark target built.
#   OUT_DIR:   gets peer_benchmark_cpp.csv, peer_benchmark_optuna.csv (every step of every run),
#              peer_benchmark.csv (the summary) and peer_benchmark.txt (the tables, also printed).
# Defaults: 20 seeds, 100 evaluations, branin,hartmann3,hartmann6,rosenbrock4.
# Needs Debian's python3-optuna (run with /usr/bin/python3) and libdlib-dev.
set -euo pipefail
if (($# < 2)); then
  sed -n '2,11p' "$0" >&2
  exit 2
fi
build=$1 out=$2
shift 2
seeds=20 evaluations=100 functions=branin,hartmann3,hartmann6,rosenbrock4
while (($#)); do
  case $1 in
    --seeds) seeds=$2; shift 2 ;;
    --evaluations) evaluations=$2; shift 2 ;;
    --functions) functions=$2; shift 2 ;;
    *) echo "peer_benchmark.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/bench/peer_benchmark
mkdir -p "$out"
common=(--seeds "$seeds" --evaluations "$evaluations" --functions "$functions")
"$bin" "${common[@]}" --csv "$out/peer_benchmark_cpp.csv"
/usr/bin/python3 "$here/peer_benchmark.py" optuna --binary "$bin" "${common[@]}" --csv "$out/peer_benchmark_optuna.csv"
{
  echo "# Peer benchmark: $seeds seeds, $evaluations evaluations, $functions"
  /usr/bin/python3 "$here/peer_benchmark.py" summarise "$out/peer_benchmark_cpp.csv" \
    "$out/peer_benchmark_optuna.csv" --out-csv "$out/peer_benchmark.csv"
} | tee "$out/peer_benchmark.txt"
