#!/usr/bin/env bash
# Builds Release, runs `tsf demo` (writes sample sensor data, queries a time window and a value filter,
# aggregates per hour, prints throughput and sizes) into build/demo/ (kept), then looks at the file with `tsf info`,
# `tsf stats` and `tsf cat --where`, and imports a real series shipped in tests/data/datasets.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)"
dir=build/demo # kept after the script, so the commands it suggests at the end work
mkdir -p "$dir"
rm -f "$dir/demo.tsfile" "$dir/nab.tsfile" "$dir/machine.csv"
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
echo "next (the files stay in $dir/):"
echo "  $tsf info $dir/demo.tsfile"
echo "  $tsf stats $dir/demo.tsfile --series root.demo.plant1.machine1 --window 1h --format csv"
echo "  $tsf cat $dir/nab.tsfile --from 2014-02-01T00:00:00Z --to 2014-02-01T01:00:00Z --time-format iso"
