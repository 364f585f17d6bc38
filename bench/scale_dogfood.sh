#!/bin/bash
# A real `tune run` campaign of thousands of trials with a trivial trainer (Hartmann-3 in awk, a few
# ms), to see what the tuner costs per trial as the campaign grows (bench/results/scale_dogfood.md).
# Samples the tuner's RSS and CPU time (utime + stime, its own, not its children's) every second
# with the number of launches so far, then times `tune status`, `best`, `export`, and `ask` and
# `tell` on copies of the finished campaign. bench/scale_dogfood.py reads what it leaves.
#
#   bench/scale_dogfood.sh OUT NAME WORKERS TRIALS STRATEGY [EXTRA_YAML]
#     e.g. bench/scale_dogfood.sh /tmp/sd eieps-w1 1 4000 "{name: ei, epsilon: 0.05, on_reject: evaluate_no_add}"
#   With a resolution in EXTRA_YAML the trainer gets the level as its 4th argument; COST=N sets budget.cost.
#   TUNE (default: build/tuner/tune) is the program run; REPEATS (default 3) the command timings.
set -u
HERE=$(cd "$(dirname "$0")/.." && pwd)
TUNE=${TUNE:-$HERE/build/tuner/tune}
OUT=$1; NAME=$2; W=$3; N=$4; STRAT=$5; EXTRA=${6:-}; REPEATS=${REPEATS:-3}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
D=$OUT/$NAME
rm -rf "$D"
cat > "$OUT/h3.sh" <<'SH'
#!/bin/sh
# Hartmann-3 (minimised, f* = -3.86278); a 4th argument r (1, 3, 9) adds the bias (1 - r/9) 0.3 (x1 - 0.5).
exec awk -v x1="$1" -v x2="$2" -v x3="$3" -v r="${4:-9}" 'BEGIN{
 a[1]=1.0;a[2]=1.2;a[3]=3.0;a[4]=3.2;
 A[1,1]=3;A[1,2]=10;A[1,3]=30; A[2,1]=0.1;A[2,2]=10;A[2,3]=35; A[3,1]=3;A[3,2]=10;A[3,3]=30; A[4,1]=0.1;A[4,2]=10;A[4,3]=35;
 P[1,1]=0.3689;P[1,2]=0.1170;P[1,3]=0.2673; P[2,1]=0.4699;P[2,2]=0.4387;P[2,3]=0.7470;
 P[3,1]=0.1091;P[3,2]=0.8732;P[3,3]=0.5547; P[4,1]=0.0381;P[4,2]=0.5743;P[4,3]=0.8828;
 x[1]=x1;x[2]=x2;x[3]=x3; f=0;
 for(i=1;i<=4;i++){s=0;for(j=1;j<=3;j++){d=x[j]-P[i,j];s+=A[i,j]*d*d}; f-=a[i]*exp(-s)}
 f += (1 - r/9) * 0.3 * (x1 - 0.5);
 printf "objective=%.12g\n", f }'
SH
chmod +x "$OUT/h3.sh"
CMD="[$OUT/h3.sh, \"{x1}\", \"{x2}\", \"{x3}\"]"
[[ "$EXTRA" == *resolution* ]] && CMD="[$OUT/h3.sh, \"{x1}\", \"{x2}\", \"{x3}\", \"{fid}\"]"
cat > "$OUT/$NAME.yaml" <<Y
name: $NAME
command: $CMD
space:
  x1: {type: float, low: 0, high: 1}
  x2: {type: float, low: 0, high: 1}
  x3: {type: float, low: 0, high: 1}
strategy: $STRAT
budget: {trials: $N, failures: 10${COST:+, cost: $COST}}
executor: {kind: local, workers: $W}
seed: 1
$EXTRA
Y
"$TUNE" run "$OUT/$NAME.yaml" --dir "$D" --quiet &
PID=$!
: > "$OUT/$NAME.samples"   # time, RSS kB, CPU ticks, launches so far
while kill -0 $PID 2>/dev/null; do
  R=$(awk '/VmRSS/{print $2}' /proc/$PID/status 2>/dev/null)
  C=$(awk '{print $14 + $15}' /proc/$PID/stat 2>/dev/null)
  [ -n "$R" ] && [ -n "$C" ] && echo "$(date +%s.%N) $R $C $(grep -c '"event": "launch"' "$D/events.jsonl" 2>/dev/null)" >> "$OUT/$NAME.samples"
  sleep 1
done
wait $PID
echo "$NAME: tune run exit $?, state.yaml $(stat -c %s "$D/state.yaml") bytes"

# Command times at the end: median of REPEATS, ms. ask and tell on copies (tell after an ask there).
med() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
ms() { local s=$(date +%s%N); "$@" >/dev/null 2>&1; echo $(( ($(date +%s%N) - s) / 1000000 )); }
C=$OUT/$NAME.copy
{
  for c in status best export; do echo "$c $(for i in $(seq $REPEATS); do ms "$TUNE" $c "$D"; done | med)"; done
  echo "ask $(for i in $(seq $REPEATS); do rm -rf "$C"; cp -r "$D" "$C"; ms "$TUNE" ask "$C" --trials 1000000; done | med)"
  echo "tell $(for i in $(seq $REPEATS); do rm -rf "$C"; cp -r "$D" "$C"; "$TUNE" ask "$C" --trials 1000000 > "$C.ask" 2>&1
     ms "$TUNE" tell "$C" "$(awk '/^trial:/{print $2}' "$C.ask")" -1; done | med)"
} > "$OUT/$NAME.commands"
rm -rf "$C" "$C.ask"
cat "$OUT/$NAME.commands"
