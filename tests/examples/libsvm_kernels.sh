#!/usr/bin/env bash
# examples/libsvm/campaign-kernels.yaml in a small form: 12 trials over the kernel and the
# parameters each kernel has (a conditional space). svm-cv.sh refuses an option its kernel does not
# have, so every trial completing means no trial got one; the state and the trials' logs are
# checked as well, and the best configuration's accuracy is what svm-cv.sh gives for it again.
# Usage: libsvm_kernels.sh TUNE_BINARY EXAMPLES_DIR WORK_DIR
# shellcheck source=tests/examples/common.sh
source "$(dirname "$0")/common.sh"
libsvm_example "$@"
example/prepare-data.sh > /dev/null

# The script's own refusals, which the campaign relies on.
example/svm-cv.sh --kernel=linear --log2c=1 --log2g=-5 2> /dev/null && fail "svm-cv.sh took --log2g for the linear kernel"
example/svm-cv.sh --kernel=rbf --log2c=1 --degree=3 --log2g=-5 2> /dev/null && fail "svm-cv.sh took --degree for rbf"

set_line example/campaign-kernels.yaml '^budget:' 'budget: {trials: 12, failures: 3}'
run_campaign "$tune" example/campaign-kernels.yaml run run.log
status=$("$tune" status run)
grep -q '^trials: 12 complete, 0 running, 0 queued, 0 failed' <<< "$status" || { echo "$status"; fail "not 12 completed trials"; }

# Each trial's svm-train line has the options of its kernel and no other (the state says which).
kernels=$("$tune" export run | awk -F, '{ sub(/\r$/, "") } NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  { print $col["id"], $col["param.kernel"], ($col["param.log2g"] != ""), ($col["param.degree"] != ""), ($col["param.coef0"] != "") }')
seen=""
while read -r id kernel g d r; do
  case $kernel in
    linear) want="0 0 0" ;; rbf) want="1 0 0" ;; poly) want="1 1 1" ;; sigmoid) want="1 0 1" ;;
    *) fail "trial $id: kernel '$kernel'" ;;
  esac
  [[ "$g $d $r" == "$want" ]] || fail "trial $id ($kernel): gamma/degree/coef0 present $g $d $r, expected $want"
  line=$(grep -h '^svm-train' run/trials/"$id"/stderr | head -1)
  has() { if [[ $line == *" $1 "* ]]; then echo 1; else echo 0; fi; }
  [[ "$(has -g) $(has -d) $(has -r)" == "$want" ]] || fail "trial $id ($kernel): svm-train ran as '$line'"
  seen+=" $kernel"
done <<< "$kernels"
echo "kernels tried:$seen"

best=$("$tune" best run --json)
echo "best after 12 trainings: $best"
accuracy=$(json_number "$best" cv_accuracy)
at_least "$accuracy" 98 "best cv_accuracy"
echo "libsvm kernels: best 5-fold accuracy $accuracy% after 12 trainings"
