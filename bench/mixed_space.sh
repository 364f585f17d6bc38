#!/usr/bin/env bash
# The mixed-space benchmark in one command: tune (bench/mixed_space.cpp: ei, random, or strategies
# with options) and Optuna's TPE and random samplers (bench/mixed_space.py) on the mixed-space test
# functions (bench/functions/mixed_space.hpp), same budget and seeds, one process at a time; first
# the check of the known minima, then the combined tables.
#
# Usage: bench/mixed_space.sh BUILD_DIR OUT_DIR [--seeds N] [--evaluations N] [--functions a,b]
#                             [--methods a,b] [--optuna-methods a,b] [--orders shuffled|listed]
#   BUILD_DIR: a build configured with -DTUNE_BUILD_BENCH=ON, with the mixed_space target built.
#   OUT_DIR:   gets mixed_space_cpp.csv, mixed_space_optuna.csv (every step of every run),
#              mixed_space.csv (the summary) and mixed_space.txt (the tables, also printed).
# Defaults: 20 seeds, 60 evaluations, branin_cat,hartmann3_cat2,nn_surrogate, methods ei,random
# (tune; NAME:YAML passes strategy options, e.g. "ei,ei:{epsilon: 0.01}"), tpe,optuna-random.
# --orders (tune's half): shuffled (default) lists each seed's categorical choices in an order of its
# own (mixed_space --orders); Optuna's half keeps the listed order (its categorical distributions do
# not depend on it). Needs Debian's python3-optuna (run with /usr/bin/python3).
set -euo pipefail
if (($# < 2)); then
  sed -n '2,16p' "$0" >&2
  exit 2
fi
build=$1 out=$2
shift 2
seeds=20 evaluations=60 functions=branin_cat,hartmann3_cat2,nn_surrogate methods=ei,random
optuna_methods=tpe,optuna-random orders=shuffled
while (($#)); do
  case $1 in
    --seeds) seeds=$2; shift 2 ;;
    --evaluations) evaluations=$2; shift 2 ;;
    --functions) functions=$2; shift 2 ;;
    --methods) methods=$2; shift 2 ;;
    --optuna-methods) optuna_methods=$2; shift 2 ;;
    --orders) orders=$2; shift 2 ;;
    *) echo "mixed_space.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/bench/mixed_space
mkdir -p "$out"
start=$SECONDS
common=(--seeds "$seeds" --evaluations "$evaluations" --functions "$functions")
minima=$("$bin" --check-minima --functions "$functions")
"$bin" "${common[@]}" --methods "$methods" --orders "$orders" --csv "$out/mixed_space_cpp.csv" >/dev/null
/usr/bin/python3 "$here/mixed_space.py" optuna --binary "$bin" "${common[@]}" --methods "$optuna_methods" \
  --csv "$out/mixed_space_optuna.csv" >/dev/null
{
  echo "# Mixed-space benchmark: $seeds seeds, $evaluations evaluations, $functions"
  echo
  echo "Known minima against an exhaustive numerical search (bench/functions/mixed_space.hpp):"
  echo
  echo "$minima"
  /usr/bin/python3 "$here/mixed_space.py" summarise --binary "$bin" "$out/mixed_space_cpp.csv" \
    "$out/mixed_space_optuna.csv" --out-csv "$out/mixed_space.csv"
  echo
  echo "Run time: $((SECONDS - start)) s"
} | tee "$out/mixed_space.txt"
