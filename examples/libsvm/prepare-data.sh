#!/bin/sh
# Prepares the data of the libsvm example: the handwritten digits shipped in Debian's python3-sklearn
# (1797 images of 8x8 pixels, values 0..16, ten classes), converted to libsvm's sparse format and
# scaled to [-1, 1] per feature with svm-scale, in the file's own order.
#   usage: prepare-data.sh [OUTDIR]     (default: data/ beside this script)
# Writes OUTDIR/digits.scale (the data the trials train on) and OUTDIR/digits.range (svm-scale's
# scaling parameters). DIGITS_CSV names another copy of digits.csv.gz.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/data}

csv=${DIGITS_CSV:-}
if [ -z "$csv" ]; then
  csv=$(dpkg -L python3-sklearn 2>/dev/null | grep '/sklearn/datasets/data/digits.csv.gz$' | head -n 1 || true)
fi
if [ -z "$csv" ] || [ ! -f "$csv" ]; then
  echo "prepare-data.sh: digits.csv.gz not found; install Debian's python3-sklearn (apt-get install python3-sklearn) or set DIGITS_CSV" >&2
  exit 1
fi
command -v svm-scale > /dev/null || { echo "prepare-data.sh: svm-scale not found; install Debian's libsvm-tools" >&2; exit 1; }

mkdir -p "$out"
# Each CSV row: 64 pixel values, then the label. libsvm format: "label index:value ...", indices from
# 1, zeros left out.
zcat "$csv" | awk -F, '{
  printf "%d", $NF
  for (i = 1; i < NF; i++) if ($i != 0) printf " %d:%s", i, $i
  printf "\n"
}' > "$out/digits.libsvm.tmp"
[ "$(wc -l < "$out/digits.libsvm.tmp")" -eq 1797 ] || { echo "prepare-data.sh: $csv does not hold the 1797 digits" >&2; exit 1; }
# svm-scale warns that scaling to [-1, 1] fills in the zeros; that is expected, so its messages go to a log.
svm-scale -l -1 -u 1 -s "$out/digits.range.tmp" "$out/digits.libsvm.tmp" > "$out/digits.scale.tmp" 2> "$out/svm-scale.log"
mv "$out/digits.libsvm.tmp" "$out/digits.libsvm"
mv "$out/digits.range.tmp" "$out/digits.range"
mv "$out/digits.scale.tmp" "$out/digits.scale"
echo "prepare-data.sh: wrote $out/digits.scale (1797 digits, 64 features scaled to [-1, 1])"
