#!/bin/sh
# Prepares the data of the xgboost example: the handwritten digits shipped in Debian's python3-sklearn
# (1797 images of 8x8 pixels, values 0..16, ten classes) in libsvm's sparse text format, which the
# xgboost command-line trainer reads, split once and for all into a training set (4 rows in 5) and a
# validation set (every 5th row; the classes are interleaved in the file, so both are balanced).
#   usage: prepare-data.sh [OUTDIR]     (default: data/ beside this script)
# Writes OUTDIR/train.libsvm (1438 rows) and OUTDIR/valid.libsvm (359 rows). DIGITS_CSV names another
# copy of digits.csv.gz.
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

mkdir -p "$out"
# Each CSV row: 64 pixel values, then the label. libsvm format: "label index:value ...", zeros left
# out. Trees need no scaling.
zcat "$csv" | awk -F, -v train="$out/train.libsvm.tmp" -v valid="$out/valid.libsvm.tmp" '{
  line = sprintf("%d", $NF)
  for (i = 1; i < NF; i++) if ($i != 0) line = line sprintf(" %d:%s", i, $i)
  print line > (NR % 5 == 0 ? valid : train)
}'
[ "$(cat "$out/train.libsvm.tmp" "$out/valid.libsvm.tmp" | wc -l)" -eq 1797 ] || { echo "prepare-data.sh: $csv does not hold the 1797 digits" >&2; exit 1; }
mv "$out/train.libsvm.tmp" "$out/train.libsvm"
mv "$out/valid.libsvm.tmp" "$out/valid.libsvm"
echo "prepare-data.sh: wrote $out/train.libsvm (1438 digits) and $out/valid.libsvm (359 digits)"
