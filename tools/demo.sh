#!/usr/bin/env bash
# Builds Release, runs `tsf demo` (writes sample sensor data, queries a time window and a value filter,
# aggregates per hour, prints throughput and sizes), then looks at the file with `tsf info`,
# `tsf stats` and `tsf cat --where`, and imports a real series shipped in tests/data/datasets.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
tsf=./build/tsf
$tsf demo -o "$dir/demo.tsfile"
echo "== tsf info (first lines)"
$tsf info "$dir/demo.tsfile" | head -12 || true # head closes the pipe early (SIGPIPE)
echo "== tsf stats --series root.demo.plant1.machine1.temperature --window 1d"
$tsf stats "$dir/demo.tsfile" --series root.demo.plant1.machine1.temperature --window 1d || true
echo "== tsf cat --where \"vibration > 5.4\" --columns vibration,temperature --limit 5"
$tsf cat "$dir/demo.tsfile" --where "vibration > 5.4" --columns vibration,temperature --limit 5
echo "== tsf import tests/data/datasets/nab/machine_temperature_system_failure.csv.gz (unpacked)"
gunzip -c tests/data/datasets/nab/machine_temperature_system_failure.csv.gz > "$dir/machine.csv"
$tsf import "$dir/machine.csv" --device root.nab.machine_temperature -o "$dir/nab.tsfile"
$tsf cat "$dir/nab.tsfile" --where "value > 108" --time-format iso --limit 5
