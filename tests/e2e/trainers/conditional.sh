#!/bin/sh
# A toy trainer over a conditional space: --opt=O --lr=L, and --momentum=M only for sgd. Writes its
# arguments (one per line) to argv and its TUNE_PARAM_ variables to env in the trial directory, so
# tests can see what reached it; loss = (log10 lr + 2)^2 + (sgd: (M - 0.9)^2 + 0.05, adam: 0.1,
# rmsprop: 0.2). A --momentum without sgd, or sgd without one, exits 3.
printf '%s\n' "$@" > "$TUNE_TRIAL_DIR/argv"
env | grep '^TUNE_PARAM_' | sort > "$TUNE_TRIAL_DIR/env"
opt= lr= m=
for a in "$@"; do
  case "$a" in
    --opt=*) opt=${a#--opt=} ;;
    --lr=*) lr=${a#--lr=} ;;
    --momentum=*) m=${a#--momentum=} ;;
    *) echo "unexpected argument '$a'" >&2; exit 3 ;;
  esac
done
if [ "$opt" = sgd ] && [ -z "$m" ]; then echo "sgd without --momentum" >&2; exit 3; fi
if [ "$opt" != sgd ] && [ -n "$m" ]; then echo "--momentum for $opt" >&2; exit 3; fi
awk -v o="$opt" -v lr="$lr" -v m="$m" 'BEGIN {
  u = log(lr) / log(10); v = (u + 2) ^ 2
  if (o == "sgd") v += (m - 0.9) ^ 2 + 0.05; else if (o == "adam") v += 0.1; else v += 0.2
  printf "loss=%.17g\n", v }'
