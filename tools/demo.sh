#!/usr/bin/env bash
# Builds tsf-bench in Release and runs a quick codec benchmark (the main job until the CLI lands).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)"
./build/tsf-bench codec --rows 2M --reps 5
