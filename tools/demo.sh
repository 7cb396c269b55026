#!/usr/bin/env bash
# The main job until `tsf demo` lands: builds Release, writes a realistic TsFile (100 random-walk DOUBLE
# series x 100,000 rows, GORILLA + LZ4, the E4 case A layout), reads it back with `tsf cat`, and runs a
# quick codec benchmark (E1 at 2M values).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$dir/demo.tsfile
./build/tsf-bench write --case A --data walk --rows 100000 --reps 3 --out "$out"
echo "== first rows of $out (tsf cat --format golden)"
./build/tsf cat --format golden "$out" | head -6 || true # head closes the pipe early (SIGPIPE)
echo "== rows read back: $(./build/tsf cat --format golden "$out" | tail -n +2 | wc -l)"
./build/tsf-bench codec --rows 2M --reps 5
