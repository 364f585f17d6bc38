#!/bin/sh
# One trial of the xgboost example: writes this trial's configuration file (xgboost.conf, in the
# current directory: the trial's own directory under tune) from its arguments, trains a boosted-tree
# classifier of the ten digits with the xgboost command-line program, and reports the multi-class
# log-loss on the validation set: one `step=R val_logloss=X` line per boosting round (intermediate
# values), then `val_logloss=X` after the last round (the objective).
#   usage: xgb-train.sh --eta E --max-depth D --subsample S --colsample C --lambda L --rounds R [--data DIR]
# Every value must be a plain number: it is checked before it goes into the file, so no argument can
# add a line to the configuration. Without --data the trial uses data/ beside this script, and
# prepares it on first use (prepare-data.sh).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=
eta='' depth='' subsample='' colsample='' lambda='' rounds=''
while [ $# -gt 0 ]; do
  case "$1" in
    --eta) eta=$2 ;;
    --max-depth) depth=$2 ;;
    --subsample) subsample=$2 ;;
    --colsample) colsample=$2 ;;
    --lambda) lambda=$2 ;;
    --rounds) rounds=$2 ;;
    --data) data=$2 ;;
    *) echo "xgb-train.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift 2
done
for v in "$eta" "$depth" "$subsample" "$colsample" "$lambda" "$rounds"; do
  case "$v" in
    '' | *[!0-9.eE+-]*)
      echo "usage: xgb-train.sh --eta E --max-depth D --subsample S --colsample C --lambda L --rounds R [--data DIR] (numbers; got '$v')" >&2
      exit 2 ;;
  esac
done
case "$depth$rounds" in *[!0-9]*) echo "xgb-train.sh: --max-depth and --rounds must be integers" >&2; exit 2 ;; esac
command -v xgboost > /dev/null || { echo "xgb-train.sh: xgboost not found; install Debian's xgboost" >&2; exit 1; }

if [ -z "$data" ]; then
  data=$here/data
  if [ ! -f "$data/valid.libsvm" ]; then
    # Several trials may start at once: one prepares, the others wait for it.
    mkdir -p "$data"
    flock "$data/.prepare.lock" sh -c '[ -f "$1/data/valid.libsvm" ] || "$1/prepare-data.sh" "$1/data" >&2' sh "$here"
  fi
fi
data=$(cd "$data" && pwd)
[ -f "$data/train.libsvm" ] && [ -f "$data/valid.libsvm" ] || { echo "xgb-train.sh: no train.libsvm and valid.libsvm in $data (run prepare-data.sh)" >&2; exit 1; }

cat > xgboost.conf <<CONF
# written by xgb-train.sh for one trial
task = train
booster = gbtree
objective = multi:softprob
num_class = 10
eval_metric = mlogloss
eta = $eta
max_depth = $depth
subsample = $subsample
colsample_bytree = $colsample
lambda = $lambda
num_round = $rounds
seed = 0
nthread = 1
data = "$data/train.libsvm?format=libsvm"
eval[valid] = "$data/valid.libsvm?format=libsvm"
model_out = "model.xgb"
CONF

# xgboost prints "[hh:mm:ss] [round]<TAB>valid-mlogloss:X" after every round.
xgboost xgboost.conf > xgboost.log 2>&1 || { echo "xgb-train.sh: xgboost failed:" >&2; cat xgboost.log >&2; exit 1; }
awk '
  match($0, /\[[0-9]+\][ \t]+valid-mlogloss:[-+0-9.eE]+/) {
    s = substr($0, RSTART, RLENGTH)
    round = substr(s, 2, index(s, "]") - 2) + 1
    loss = substr(s, index(s, ":") + 1)
    if (last != "") print "step=" last_round " val_logloss=" last
    last = loss; last_round = round
  }
  END {
    if (last == "") { print "xgb-train.sh: no valid-mlogloss in xgboost.log" > "/dev/stderr"; exit 1 }
    print "val_logloss=" last
  }' xgboost.log
