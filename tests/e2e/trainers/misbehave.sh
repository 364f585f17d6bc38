#!/bin/sh
# A trainer that fails in the way its first argument says.
case "$1" in
  crash*) echo "about to fail" >&2; exit 3 ;;
  garbage*) printf 'objective=0.5abc\n\001\002\377 not a number\n' ;;
  nan*) echo "objective=nan" ;;
  nothing*) : ;;
  flood*) head -c 10000000 /dev/zero | tr '\0' 'x'; echo; echo "objective=0.25" ;;
  segv*) kill -SEGV $$ ;;
  fork_and_hang*) sleep 1000 & sleep 1000 & echo "$!" > grandchild.pid; sleep 1000 ;;
  ignore_term*) trap '' TERM; while :; do sleep 0.1; done ;;
  result_file*) printf 'objective: 0.125\nacc: 0.9\n' > "$TUNE_RESULT_FILE" ;;
  truncated_json*) echo "epoch 1"; printf '{"objective": 0.9\n' ;;
  binary_prefix*) printf '\377\376objective=0.9\n' ;;
  json*) echo '{"objective": 0.75, "step": 1}'; echo '{"objective": 0.5}' ;;
  *) echo "objective=1" ;;
esac
