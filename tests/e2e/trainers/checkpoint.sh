#!/bin/sh
# A trainer that resumes from its checkpoint, as real ones do: $TUNE_TRIAL_DIR/checkpoint holds the
# last finished epoch. Usage: checkpoint.sh EPOCHS X. It prints `resuming from epoch N`, trains up to
# EPOCHS writing the checkpoint (atomically) after each epoch, and reports loss = N, so the value
# says which attempt produced it. A run that starts from scratch first writes a provisional result
# file (loss: 999) and, after epoch 2, waits until it is stopped, so a test can interrupt it there;
# it waits so only once per file $CK_HOLD_ONCE names (created then), so a run that lost its
# checkpoint still ends.
ck="$TUNE_TRIAL_DIR/checkpoint"
start=0
[ -f "$ck" ] && start=$(cat "$ck")
echo "resuming from epoch $start"
[ "$start" = 0 ] && echo "loss: 999" > "$TUNE_RESULT_FILE"
epoch=$start
while [ "$epoch" -lt "$1" ]; do
  epoch=$((epoch + 1))
  echo "$epoch" > "$ck.tmp" && mv "$ck.tmp" "$ck"
  echo "epoch $epoch"
  if [ "$start" = 0 ] && [ "$epoch" = 2 ] && [ ! -e "$CK_HOLD_ONCE" ]; then
    : > "$CK_HOLD_ONCE"
    while :; do sleep 0.1; done
  fi
done
echo "loss=$start"
