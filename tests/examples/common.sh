# shellcheck shell=bash
# Shared by the example tests (sourced). Each test copies an example into its work directory (so that
# nothing is written into the source tree), runs it in a small form and checks what it produced.
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
# ctest reports exit code 77 as "skipped" (SKIP_RETURN_CODE); only for a program that is not there.
skip() { echo "SKIP: $*"; exit 77; }
require_program() {  # NAME DEBIAN_PACKAGE
  command -v "$1" > /dev/null || skip "$1 is not installed (Debian package $2; scripts/setup-debian.sh installs it)"
}
require_digits() {
  local files
  files=$(dpkg -L python3-sklearn 2> /dev/null || true)
  grep -q '/sklearn/datasets/data/digits.csv.gz$' <<< "$files" ||
    skip "the digits data is not installed (Debian package python3-sklearn; scripts/setup-debian.sh installs it)"
}

# copy_example SOURCE_DIR DEST_DIR: the example's scripts and campaign files, without its data/.
copy_example() {
  rm -rf "$2"
  mkdir -p "$2"
  find "$1" -maxdepth 1 -type f \( -name '*.sh' -o -name '*.yaml' \) -exec cp -p {} "$2" \;
}

# libsvm_example TUNE_BINARY EXAMPLES_DIR WORK_DIR: the libsvm tests' start. Skips without libsvm or
# the digits; sets $tune, $examples and $work, copies examples/libsvm to $work/example and enters $work.
libsvm_example() {
  tune=$(realpath "$1") examples=$(realpath "$2") work=$(realpath -m "$3")
  require_program svm-train libsvm-tools
  require_program svm-scale libsvm-tools
  require_digits
  rm -rf "$work"
  copy_example "$examples/libsvm" "$work/example"
  cd "$work" || exit 1
}

# set_line FILE PATTERN REPLACEMENT: replaces the one line matching PATTERN (a grep -E regex), so
# that a test notices when the example's file changes shape.
set_line() {
  local file=$1 pattern=$2 replacement=$3
  [[ $(grep -cE "$pattern" "$file") == 1 ]] || fail "$file: expected exactly one line matching '$pattern'"
  local tmp
  tmp=$(mktemp)
  awk -v pattern="$pattern" -v replacement="$replacement" '$0 ~ pattern { print replacement; next } { print }' \
    "$file" > "$tmp"
  mv "$tmp" "$file"
}

# run_campaign TUNE CAMPAIGN_FILE DIR LOG: runs it, prints the log if it does not finish with exit 0.
run_campaign() {
  local tune=$1 campaign=$2 dir=$3 log=$4 status=0
  "$tune" run "$campaign" --dir "$dir" > "$log" 2>&1 || status=$?
  if ((status != 0)); then
    cat "$log" >&2
    "$tune" status "$dir" >&2 || true
    fail "tune run $campaign exited with $status"
  fi
}

# json_number JSON KEY: the number after "KEY": in a one-line JSON object.
json_number() {
  # The first occurrence: `tune best` names the same keys again under "recommendation".
  grep -o "\"$2\": -\{0,1\}[0-9][-+0-9.eE]*" <<< "$1" | head -n 1 | sed 's/.*: //'
}
# at_least A B / below A B: numeric comparisons that fail with a message.
at_least() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }' || fail "$3: $1 is below $2"; }
below() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 < b + 0) }' || fail "$3: $1 is not below $2"; }
