#!/usr/bin/env bash
# Installs the built library into a temporary prefix, builds an outside project against it with
# find_package(tune), and runs one of its programs in WORK_DIR.
# Usage: install_and_consume.sh BUILD_DIR SOURCE_DIR WORK_DIR [PROGRAM [ARGS...]]
# PROGRAM (default: consumer) is a program the outside project builds; ARGS are passed to it.
set -euo pipefail
build=$1 source=$2 work=$3
program=${4:-consumer}
shift $(($# < 4 ? $# : 4))
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" > /dev/null
cmake -S "$source" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$work/build" > /dev/null
cd "$work"
"$work/build/$program" "$@"
