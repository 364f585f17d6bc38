#!/bin/sh
# A multi-resolution toy trainer: minimise (x - 0.3)^2 + (y + 1)^2 / 4 at the full resolution. A run
# at resolution r (think epochs) reports that plus an offset c (1/r - 1/RMAX) (c = $MULTIRES_OFFSET,
# default 1: fewer epochs, worse loss; RMAX = $MULTIRES_TOP, default 9), plus $MULTIRES_SHIFT (default
# 0) below RMAX (a negative shift makes every cheap run look better than any full run), and noise of
# sd 0.02 / r. Usage: multires.sh X Y --epochs R.
# It checks that the placeholder it got equals $TUNE_RESOLUTION and that $TUNE_RESOLUTION_LEVEL is
# set (exit 2 otherwise). $MULTIRES_SLEEP seconds per unit of resolution make a run take
# MULTIRES_SLEEP * r seconds (for measured costs). Every run is appended to $TUNE_TOY_LOG (if set).
while [ $# -gt 0 ]; do
  case "$1" in
    --epochs) r=$2; shift 2 ;;
    *) if [ -z "$x" ]; then x=$1; else y=$1; fi; shift ;;
  esac
done
if [ "$r" != "$TUNE_RESOLUTION" ] || [ -z "$TUNE_RESOLUTION_LEVEL" ]; then
  echo "argv epochs '$r' but TUNE_RESOLUTION '$TUNE_RESOLUTION' (level '$TUNE_RESOLUTION_LEVEL')" >&2
  exit 2
fi
[ -n "$TUNE_TOY_LOG" ] && echo "start $TUNE_TRIAL_ID $x $y $r $TUNE_RESOLUTION_LEVEL" >> "$TUNE_TOY_LOG"
if [ -n "$MULTIRES_SLEEP" ]; then sleep "$(awk -v s="$MULTIRES_SLEEP" -v r="$r" 'BEGIN { print s * r }')"; fi
awk -v x="$x" -v y="$y" -v r="$r" -v top="${MULTIRES_TOP:-9}" -v c="${MULTIRES_OFFSET:-1}" -v shift="${MULTIRES_SHIFT:-0}" -v seed="$TUNE_TRIAL_ID" 'BEGIN {
  srand(seed + 1); z = 0; for (i = 0; i < 12; ++i) z += rand(); z -= 6
  printf "loss=%.17g\n", (x - 0.3) ^ 2 + (y + 1) ^ 2 / 4 + c * (1 / r - 1 / top) + (r < top ? shift : 0) + 0.02 / r * z
}'
[ -n "$TUNE_TOY_LOG" ] && echo "end $TUNE_TRIAL_ID" >> "$TUNE_TOY_LOG"
exit 0
