#!/usr/bin/env bash
# examples/xgboost in a small form: cmets over the xgboost trainer's learning rate, depth,
# subsampling and L2 regularisation, with the number of boosting rounds as the resolution. The test
# declares the levels' costs (1, 3, 9, as the rounds) instead of measuring them, so that it does the
# same work on a loaded machine, and gives a budget of 40 (about four full runs). Every trial must
# have written its own configuration file from its configuration, the campaign must use more than one
# level, and reach a low validation log-loss.
# Usage: xgboost.sh TUNE_BINARY EXAMPLES_DIR WORK_DIR
# shellcheck source=tests/examples/common.sh
source "$(dirname "$0")/common.sh"
tune=$(realpath "$1") examples=$(realpath "$2") work=$(realpath -m "$3")
require_program xgboost xgboost
require_digits
rm -rf "$work"
copy_example "$examples/xgboost" "$work/example"
cd "$work" || exit 1
example/prepare-data.sh

set_line example/campaign.yaml '^resolution:' 'resolution: {param: rounds, levels: [10, 30, 90], cost: [1, 3, 9]}'
set_line example/campaign.yaml '^budget:' 'budget: {cost: 40, failures: 3}'
run_campaign "$tune" example/campaign.yaml run run.log
status=$("$tune" status run)
echo "$status" | head -n 11
grep -q 'last session ended: the cost budget is spent' <<< "$status" || fail "the campaign did not end on its cost budget"
grep -q '^trials: [0-9]* complete, 0 running, 0 queued, 0 failed' <<< "$status" || fail "a trial failed"

# Each trial's xgboost.conf holds the values tune passed to that trial, and xgboost ran that many
# rounds: one intermediate value per round before the last.
trials=0
for dir in run/trials/*/; do
  trials=$((trials + 1))
  conf=$dir/xgboost.conf
  [[ -f $conf ]] || fail "$dir has no xgboost.conf"
  for pair in eta:ETA max_depth:MAX_DEPTH subsample:SUBSAMPLE colsample_bytree:COLSAMPLE lambda:LAMBDA num_round:ROUNDS; do
    key=${pair%%:*} env=TUNE_PARAM_${pair##*:}
    given=$(sed -n "s/^  $env: \"\(.*\)\"$/\1/p" "$dir/command.yaml")
    written=$(sed -n "s/^$key = //p" "$conf")
    [[ -n $given && $given == "$written" ]] || fail "$conf: $key = '$written', but the trial was given $env = '$given'"
  done
  rounds=$(sed -n 's/^num_round = //p' "$conf")
  steps=$(grep -c '^step=' "$dir/stdout" || true)
  ((steps == rounds - 1)) || fail "$dir: $steps intermediate values for $rounds rounds"
done
((trials >= 5)) || fail "only $trials trials ran"

levels=$(sed -n 's/.*"event": "launch".*"level": \([0-9]*\).*/\1/p' run/events.jsonl)
distinct=$(sort -u <<< "$levels" | wc -l)
((distinct >= 2)) || fail "every trial ran at one level"

# Measured: this small form reached 0.077-0.095 (at 90 rounds) in three runs, and its 30-round
# trials 0.10-0.13; 10 rounds of a good configuration give ~0.27, xgboost's defaults (eta 0.3, depth
# 6, no subsampling, lambda 1) 0.099 after 90 rounds; a model that has not learnt, ln 10 = 2.3.
lowest=$(sed -n 's/^val_logloss=//p' run/trials/*/stdout | sort -g | head -n 1)
below "$lowest" 0.2 "the lowest validation log-loss at any level"
echo "xgboost: $trials trials at levels $(sort -u <<< "$levels" | tr '\n' ' '), lowest validation log-loss $lowest"
"$tune" best run --json
