#!/usr/bin/env bash
# The README's demo as it stands: examples/quickstart/campaign.yaml, 30 trials of train.sh, two at a
# time (ctest gives it 60 s: the README says it runs in under a minute).
# Usage: quickstart.sh TUNE_BINARY EXAMPLES_DIR WORK_DIR
# shellcheck source=tests/examples/common.sh
source "$(dirname "$0")/common.sh"
tune=$(realpath "$1") examples=$(realpath "$2") work=$(realpath -m "$3")
rm -rf "$work" && mkdir -p "$work"

run_campaign "$tune" "$examples/quickstart/campaign.yaml" "$work/run" "$work/run.log"
status=$("$tune" status "$work/run")
grep -q '^trials: 30 complete, 0 running, 0 queued, 0 failed' <<< "$status" || { echo "$status"; fail "not 30 completed trials"; }

# train.sh peaks at lr = 3e-3, 4 layers, relu, where its final accuracy is 0.953 +- 0.001; the
# configurations with 3 or 5 layers, or tanh, stay below 0.95.
best=$("$tune" best "$work/run" --json)
echo "best: $best"
at_least "$(json_number "$best" val_acc)" 0.95 "best val_acc"
grep -q '"layers": 4' <<< "$best" || fail "the best configuration does not have 4 layers: $best"
grep -q '"act": "relu"' <<< "$best" || fail "the best configuration does not use relu: $best"
lr=$(json_number "$best" lr)
at_least "$lr" 1e-3 "best lr"
below "$lr" 1e-2 "best lr"
# The intermediate values (step=1, step=2) of every trial are kept in the state.
trials_with_steps=$(grep -c 'intermediate: \[\[1, [0-9.]*\], \[2, [0-9.]*\]\]' "$work/run/state.yaml" || true)
[[ $trials_with_steps == 30 ]] || fail "$trials_with_steps trials, not 30, have the intermediate values of steps 1 and 2 in state.yaml"
echo "quickstart: 30 trials, best $(json_number "$best" val_acc)"
