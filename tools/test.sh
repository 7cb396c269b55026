#!/usr/bin/env bash
# Builds and runs every test twice: Release, then ASan+UBSan; then the concurrency tests under
# ThreadSanitizer. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
echo "== Release build + tests"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")
echo "== ASan+UBSan build + tests"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTSF_SANITIZE=ON -DTSF_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j"$jobs")
echo "== ThreadSanitizer build + concurrency tests"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTSF_TSAN=ON -DTSF_BUILD_BENCH=OFF -DTSF_BUILD_CLI=OFF \
    -DTSF_SHARED=OFF >/dev/null
cmake --build build-tsan -j"$jobs" --target index_test_index_concurrent read_test_parallel write_test_threads
(cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j"$jobs" \
    -R '^(index_test_index_concurrent|read_test_parallel|write_test_threads)$')
