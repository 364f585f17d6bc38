#!/usr/bin/env bash
# examples/embed: installs the library into a temporary prefix, builds the example against it with
# find_package(tune) (tests/package/install_and_consume.sh, as the package test does) and runs it
# straight through; then runs it again interrupted after 12 evaluations and resumed from its saved
# study. Both runs must end with the same best trial, bit for bit, and a well-tuned controller.
# Usage: embed.sh BUILD_DIR EXAMPLES_DIR WORK_DIR INSTALL_AND_CONSUME_SCRIPT
# shellcheck source=tests/examples/common.sh
source "$(dirname "$0")/common.sh"
build=$(realpath "$1") examples=$(realpath "$2") work=$(realpath -m "$3") install_and_consume=$(realpath "$4")

straight=$("$install_and_consume" "$build" "$examples/embed" "$work" pid_tuning --state straight.yaml --evaluations 30)
echo "$straight" | tail -n 3
program=$work/build/pid_tuning
cd "$work" || exit 1
[[ -s straight.yaml ]] || fail "the straight run saved no study"

first=$("$program" --state resumed.yaml --evaluations 30 --stop-after 12)
grep -q '^stopped after 12 evaluations' <<< "$first" || { echo "$first"; fail "the first part did not stop after 12 evaluations"; }
second=$("$program" --state resumed.yaml --evaluations 30)
grep -q '^resumed resumed.yaml: 12 trials' <<< "$second" || { echo "$second"; fail "the second part did not resume the 12 saved trials"; }
# Three runs of a new program each print the same untuned reference; what matters is the best line.
best_straight=$(grep '^best trial' <<< "$straight")
best_resumed=$(grep '^best trial' <<< "$second")
[[ -n $best_straight && $best_straight == "$best_resumed" ]] ||
  fail "straight through: '$best_straight'; interrupted and resumed: '$best_resumed'"
# The saved study files are identical too: the same trials and the same model state.
cmp -s straight.yaml resumed.yaml || fail "the resumed study file differs from the straight one"

# Measured: untuned (kp 1) 33.0; the best of a 44,000-point grid 0.59; 30 evaluations of ei 0.75.
cost=$(sed -n 's/^best trial [0-9]* of 30: cost \([^ ]*\) at.*/\1/p' <<< "$best_straight")
below "$cost" 1.0 "best step-response cost after 30 evaluations"
echo "embed: $best_straight (identical after an interruption at 12)"
