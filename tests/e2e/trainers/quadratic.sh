#!/bin/sh
# A toy trainer: minimise (x - 0.3)^2 + (y + 1)^2 / 4. Takes x and y as two positional numbers or as
# --x X --y Y. Every run is appended to $TUNE_TOY_LOG (if set) so tests can count runs per trial;
# $TOY_SLEEP makes each run take that many seconds.
while [ $# -gt 0 ]; do
  case "$1" in
    --x) x=$2; shift 2 ;;
    --y) y=$2; shift 2 ;;
    *) if [ -z "$x" ]; then x=$1; else y=$1; fi; shift ;;
  esac
done
[ -n "$TUNE_TOY_LOG" ] && echo "start $TUNE_TRIAL_ID $x $y" >> "$TUNE_TOY_LOG"
[ "${TOY_SLEEP:-0}" != 0 ] && sleep "$TOY_SLEEP"
awk -v x="$x" -v y="$y" 'BEGIN { printf "loss=%.17g\n", (x - 0.3) ^ 2 + (y + 1) ^ 2 / 4 }'
[ -n "$TUNE_TOY_LOG" ] && echo "end $TUNE_TRIAL_ID" >> "$TUNE_TOY_LOG"
exit 0
