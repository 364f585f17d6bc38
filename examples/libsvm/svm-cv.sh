#!/bin/sh
# One trial of the libsvm example: the 5-fold cross-validation accuracy of an RBF support vector
# machine trained by libsvm's own svm-train, printed as `cv_accuracy=<percent>` for tune.
#   usage: svm-cv.sh --log2c X --log2g Y [--fraction F] [--data FILE]
# C = 2^X and gamma = 2^Y (the axes of libsvm's grid search). --fraction F (0 < F <= 1) trains on the
# first F of the data only (the resolution of the multi-resolution campaign; the digits are stored
# with the classes interleaved, so every prefix is balanced). svm-train seeds its fold split itself,
# so the same arguments always give the same accuracy. Without --data the trial uses data/digits.scale
# beside this script, and prepares it on first use (prepare-data.sh).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=
fraction=1
log2c=
log2g=
while [ $# -gt 0 ]; do
  case "$1" in
    --log2c) log2c=$2; shift 2 ;;
    --log2g) log2g=$2; shift 2 ;;
    --fraction) fraction=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    *) echo "svm-cv.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$log2c" ] && [ -n "$log2g" ] || { echo "usage: svm-cv.sh --log2c X --log2g Y [--fraction F] [--data FILE]" >&2; exit 2; }
command -v svm-train > /dev/null || { echo "svm-cv.sh: svm-train not found; install Debian's libsvm-tools" >&2; exit 1; }

if [ -z "$data" ]; then
  data=$here/data/digits.scale
  if [ ! -f "$data" ]; then
    # Several trials may start at once: one prepares, the others wait for it.
    mkdir -p "$here/data"
    flock "$here/data/.prepare.lock" sh -c '[ -f "$1/data/digits.scale" ] || "$1/prepare-data.sh" "$1/data" >&2' sh "$here"
  fi
fi
[ -f "$data" ] || { echo "svm-cv.sh: no data file $data (run prepare-data.sh)" >&2; exit 1; }

c=$(awk -v x="$log2c" 'BEGIN { printf "%.17g", 2 ^ x }')
g=$(awk -v x="$log2g" 'BEGIN { printf "%.17g", 2 ^ x }')

train=$data
subset=
if [ "$fraction" != 1 ]; then
  total=$(wc -l < "$data")
  rows=$(awk -v f="$fraction" -v n="$total" 'BEGIN {
    if (!(f > 0 && f <= 1)) exit 1
    r = int(f * n + 0.5); if (r < 10) r = 10; print r }') || { echo "svm-cv.sh: --fraction must be in (0, 1], not $fraction" >&2; exit 2; }
  subset=$(mktemp "${TUNE_TRIAL_DIR:-${TMPDIR:-/tmp}}/subset.XXXXXX")
  head -n "$rows" "$data" > "$subset"
  train=$subset
fi

echo "svm-train -q -v 5 -c $c -g $g $train" >&2
out=$(svm-train -q -v 5 -c "$c" -g "$g" "$train")
[ -z "$subset" ] || rm -f "$subset"
acc=$(printf '%s\n' "$out" | sed -n 's/^Cross Validation Accuracy = \([0-9.eE+-]*\)%$/\1/p')
[ -n "$acc" ] || { printf 'svm-cv.sh: svm-train printed no accuracy:\n%s\n' "$out" >&2; exit 1; }
echo "cv_accuracy=$acc"
