#!/bin/bash
# paired.sh BASE NEW REPEATS CAMPAIGN_DIR...: each command run by BASE and by NEW alternately (which
# goes first alternates too); ask and tell on a fresh copy of the campaign's state.yaml and
# events.jsonl (tune ask --trials 1000000 hands out trial N, tune tell N -1 tells it). Prints
# "campaign command binary wall_ms user_ms exit_code" per run.
BASE=$1; NEW=$2; REPEATS=$3; shift 3
S=$(mktemp -d)
# wall ms (EPOCHREALTIME, microseconds), user ms (/usr/bin/time, 10 ms steps), exit code
t() {
  local t0=$EPOCHREALTIME
  /usr/bin/time -f "%U %x" -o $S/time "$@" > $S/out 2>&1
  local t1=$EPOCHREALTIME
  awk -v a=$t0 -v b=$t1 '{printf "%.1f %.0f %d", (b - a) * 1000, $1 * 1000, $2}' $S/time
}
for c in "$@"; do
  name=$(basename $c)
  for r in $(seq $REPEATS); do
    if [ $((r % 2)) = 1 ]; then order="$BASE $NEW"; else order="$NEW $BASE"; fi
    for b in $order; do
      tag=$([ $b = $BASE ] && echo base || echo new)
      for cmd in "status" "status --last 20" "best" "export"; do
        echo "$name $(echo $cmd | tr ' ' _) $tag $(t $b $cmd $c)"
      done
      rm -rf $S/c && mkdir $S/c && cp $c/state.yaml $c/events.jsonl $S/c/
      echo "$name ask $tag $(t $b ask $S/c --trials 1000000)"
      id=$(awk '/^trial:/{print $2}' $S/out)
      echo "$name tell $tag $(t $b tell $S/c $id -1)"
    done
  done
done
rm -rf $S
