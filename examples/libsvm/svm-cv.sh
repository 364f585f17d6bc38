#!/bin/sh
# One trial of the libsvm example: the 5-fold cross-validation accuracy of a support vector machine
# trained by libsvm's own svm-train, printed as `cv_accuracy=<percent>` for tune.
#   usage: svm-cv.sh --log2c X [--log2g Y] [--kernel K] [--degree D] [--coef0 R] [--fraction F] [--data FILE]
# (each option also as --option=value). C = 2^X and gamma = 2^Y (the axes of libsvm's grid search).
# --kernel is rbf (the default), linear, poly or sigmoid; gamma applies to all but linear, --degree
# (default 3) to poly, --coef0 (default 0) to poly and sigmoid, and an option given for a kernel it
# does not apply to is an error (campaign-kernels.yaml's conditional space never sends one). --fraction F (0 < F <= 1) trains on the
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
kernel=rbf
degree=
coef0=
usage="usage: svm-cv.sh --log2c X [--log2g Y] [--kernel rbf|linear|poly|sigmoid] [--degree D] [--coef0 R] [--fraction F] [--data FILE]"
while [ $# -gt 0 ]; do
  case "$1" in
    --*=*) option=${1%%=*} value=${1#*=}; shift ;;
    --*) [ $# -ge 2 ] || { echo "svm-cv.sh: $1 needs a value" >&2; exit 2; }; option=$1 value=$2; shift 2 ;;
    *) echo "svm-cv.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  case "$option" in
    --log2c) log2c=$value ;;
    --log2g) log2g=$value ;;
    --kernel) kernel=$value ;;
    --degree) degree=$value ;;
    --coef0) coef0=$value ;;
    --fraction) fraction=$value ;;
    --data) data=$value ;;
    *) echo "svm-cv.sh: unknown argument $option" >&2; exit 2 ;;
  esac
done
case "$kernel" in
  linear) t=0 ;; poly) t=1 ;; rbf) t=2 ;; sigmoid) t=3 ;;
  *) echo "svm-cv.sh: --kernel is linear, poly, rbf or sigmoid, not $kernel" >&2; exit 2 ;;
esac
[ -n "$log2c" ] || { echo "$usage" >&2; exit 2; }
if [ "$kernel" = linear ]; then
  [ -z "$log2g" ] || { echo "svm-cv.sh: --log2g does not apply to the linear kernel" >&2; exit 2; }
else
  [ -n "$log2g" ] || { echo "svm-cv.sh: the $kernel kernel needs --log2g" >&2; exit 2; }
fi
[ -z "$degree" ] || [ "$kernel" = poly ] || { echo "svm-cv.sh: --degree applies to the poly kernel only" >&2; exit 2; }
[ -z "$coef0" ] || [ "$kernel" = poly ] || [ "$kernel" = sigmoid ] ||
  { echo "svm-cv.sh: --coef0 applies to the poly and sigmoid kernels only" >&2; exit 2; }
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
set -- -t "$t" -c "$c"
[ -z "$log2g" ] || set -- "$@" -g "$(awk -v x="$log2g" 'BEGIN { printf "%.17g", 2 ^ x }')"
[ -z "$degree" ] || set -- "$@" -d "$degree"
[ -z "$coef0" ] || set -- "$@" -r "$coef0"

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

echo "svm-train -q -v 5 $* $train" >&2
out=$(svm-train -q -v 5 "$@" "$train")
[ -z "$subset" ] || rm -f "$subset"
acc=$(printf '%s\n' "$out" | sed -n 's/^Cross Validation Accuracy = \([0-9.eE+-]*\)%$/\1/p')
[ -n "$acc" ] || { printf 'svm-cv.sh: svm-train printed no accuracy:\n%s\n' "$out" >&2; exit 1; }
echo "cv_accuracy=$acc"
