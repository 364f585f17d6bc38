#!/usr/bin/env bash
# The pruning benchmark in one command: tune (bench/pruning.cpp: ei and random, each without pruning
# and with median / percentile rules) and Optuna's TPE without a pruner and with its MedianPruner
# (bench/pruning.py), on the synthetic learning curves of bench/functions/learning_curves.hpp, same
# curve model, budget of steps and seeds, one process at a time.
#
# Usage: bench/pruning.sh BUILD_DIR OUT_DIR [--seeds N] [--budget-steps N] [--functions a,b]
#                         [--shapes a,b] [--methods a,b] [--optuna-methods a,b]
#   BUILD_DIR: a build configured with -DTUNE_BUILD_BENCH=ON, with the pruning target built.
#   OUT_DIR:   gets pruning_cpp.csv and pruning_optuna.csv (one row per function, shape, method and
#              seed), pruning.csv (both, one header) and pruning.txt (both halves' tables, also printed).
# Defaults: 20 seeds, 3000 steps (60 full runs of 50 steps), branin,hartmann3, independent,slow_good,
# methods random,random+p50,ei,ei+p50,ei+p50w10,ei+p25w10, optuna methods tpe,tpe+p50,tpe+p50w10.
# Needs Debian's python3-optuna (run with /usr/bin/python3).
set -euo pipefail
if (($# < 2)); then
  sed -n '2,15p' "$0" >&2
  exit 2
fi
build=$1 out=$2
shift 2
seeds=20 budget=3000 functions=branin,hartmann3 shapes=independent,slow_good
methods=random,random+p50,ei,ei+p50,ei+p50w10,ei+p25w10 optuna_methods=tpe,tpe+p50,tpe+p50w10
while (($#)); do
  case $1 in
    --seeds) seeds=$2; shift 2 ;;
    --budget-steps) budget=$2; shift 2 ;;
    --functions) functions=$2; shift 2 ;;
    --shapes) shapes=$2; shift 2 ;;
    --methods) methods=$2; shift 2 ;;
    --optuna-methods) optuna_methods=$2; shift 2 ;;
    *) echo "pruning.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/bench/pruning
mkdir -p "$out"
start=$SECONDS
{
  echo "# tune"
  "$bin" --seeds "$seeds" --budget-steps "$budget" --functions "$functions" --shapes "$shapes" \
    --methods "$methods" --csv "$out/pruning_cpp.csv"
  echo
  echo "# Optuna $(/usr/bin/python3 -c 'import optuna; print(optuna.__version__)')"
  /usr/bin/python3 "$here/pruning.py" --binary "$bin" --csv "$out/pruning_optuna.csv" --seeds "$seeds" \
    --budget-steps "$budget" --functions "$functions" --shapes "$shapes" --methods "$optuna_methods"
} | tee "$out/pruning.txt"
{ cat "$out/pruning_cpp.csv"; tail -n +2 "$out/pruning_optuna.csv"; } > "$out/pruning.csv"
echo "pruning.sh: $((SECONDS - start)) s" >&2
