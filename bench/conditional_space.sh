#!/usr/bin/env bash
# The conditional-space benchmark in one command: tune (bench/conditional_space.cpp: ei on the
# conditional space, ei-flat on the same parameters without conditions, random, or strategies with
# options) and Optuna's TPE, define-by-run and flat, and random samplers (bench/conditional_space.py)
# on the conditional-space test functions (bench/functions/conditional_space.hpp), same budget and
# seeds, one process at a time; first the check of the known minima, then the combined tables.
#
# Usage: bench/conditional_space.sh BUILD_DIR OUT_DIR [--seeds N] [--evaluations N] [--functions a,b]
#                                   [--methods a,b] [--optuna-methods a,b]
#   BUILD_DIR: a build configured with -DTUNE_BUILD_BENCH=ON, with the conditional_space target built.
#   OUT_DIR:   gets conditional_space_cpp.csv, conditional_space_optuna.csv (every step of every run),
#              conditional_space.csv (the summary) and conditional_space.txt (the tables, also printed).
# Defaults: 20 seeds, 60 evaluations, jenatton,optimizer_choice,layers_units, methods ei,ei-flat,random
# (tune; NAME-flat runs NAME on the flat space, NAME:YAML passes strategy options, e.g.
# "ei,ei-flat,ei:{epsilon: 0.01}"), tpe,tpe-flat,optuna-random. Needs Debian's python3-optuna (run
# with /usr/bin/python3).
set -euo pipefail
if (($# < 2)); then
  sed -n '2,16p' "$0" >&2
  exit 2
fi
build=$1 out=$2
shift 2
seeds=20 evaluations=60 functions=jenatton,optimizer_choice,layers_units methods=ei,ei-flat,random
optuna_methods=tpe,tpe-flat,optuna-random
while (($#)); do
  case $1 in
    --seeds) seeds=$2; shift 2 ;;
    --evaluations) evaluations=$2; shift 2 ;;
    --functions) functions=$2; shift 2 ;;
    --methods) methods=$2; shift 2 ;;
    --optuna-methods) optuna_methods=$2; shift 2 ;;
    *) echo "conditional_space.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/bench/conditional_space
mkdir -p "$out"
start=$SECONDS
common=(--seeds "$seeds" --evaluations "$evaluations" --functions "$functions")
minima=$("$bin" --check-minima --functions "$functions")
"$bin" "${common[@]}" --methods "$methods" --csv "$out/conditional_space_cpp.csv" >/dev/null
/usr/bin/python3 "$here/conditional_space.py" optuna --binary "$bin" "${common[@]}" --methods "$optuna_methods" \
  --csv "$out/conditional_space_optuna.csv" >/dev/null
{
  echo "# Conditional-space benchmark: $seeds seeds, $evaluations evaluations, $functions"
  echo
  echo "Known minima against an exhaustive numerical search (bench/functions/conditional_space.hpp):"
  echo
  echo "$minima"
  /usr/bin/python3 "$here/conditional_space.py" summarise --binary "$bin" "$out/conditional_space_cpp.csv" \
    "$out/conditional_space_optuna.csv" --out-csv "$out/conditional_space.csv"
  echo
  echo "Run time: $((SECONDS - start)) s"
} | tee "$out/conditional_space.txt"
