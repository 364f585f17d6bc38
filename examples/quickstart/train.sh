#!/bin/sh
# A stand-in for a training script: takes --lr, --layers and --act, "trains" for three epochs and
# prints the validation accuracy after each (step=N val_acc=X, kept as intermediate values) and at
# the end (val_acc=X, the objective). The accuracy peaks near lr = 3e-3, 4 layers, relu, with a
# little noise, as a real validation score would have.
while [ $# -gt 0 ]; do
  case "$1" in
    --lr) lr=$2; shift 2 ;;
    --layers) layers=$2; shift 2 ;;
    --act) act=$2; shift 2 ;;
    *) echo "train.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$lr" ] && [ -n "$layers" ] && [ -n "$act" ] || { echo "usage: train.sh --lr LR --layers N --act relu|tanh" >&2; exit 2; }
for epoch in 1 2 3; do
  sleep 0.05
  awk -v lr="$lr" -v layers="$layers" -v act="$act" -v epoch="$epoch" -v seed="${TUNE_TRIAL_ID:-0}" 'BEGIN {
    srand(seed * 7 + epoch)
    l = log(lr) / log(10)
    acc = 0.97 - 0.02 * (l + 2.5) ^ 2 - 0.004 * (layers - 4) ^ 2 - (act == "tanh" ? 0.01 : 0)
    acc = acc - 0.05 / epoch + 0.002 * (rand() - 0.5)
    if (acc < 0.1) acc = 0.1
    if (epoch < 3) printf "step=%d val_acc=%.5f\n", epoch, acc
    else printf "val_acc=%.5f\n", acc
  }'
done
