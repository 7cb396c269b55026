#!/usr/bin/env bash
# Builds and runs every test twice: Release (with the Python package's tests), then ASan+UBSan (with the Python lifetime
# and Arrow tests on the instrumented library); then the concurrency tests under
# ThreadSanitizer; then fuzzes every libFuzzer harness for FUZZ_SECONDS seconds each (default 20; 0 skips)
# with clang, ASan and UBSan, every sanitizer report fatal (tools/fuzz.sh); any finding fails the run. Exits non-zero on any failure, and on any test
# that ctest reports skipped or not run: every test's data ships in tests/data, so a skip means a check
# silently did not happen.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
# The DuckDB extension's tests must run where tools/deps_duckdb.sh can fetch DuckDB (Linux x86-64): there a
# missing DuckDB fails configure instead of leaving the extension out.
duckdb=""
[ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] && duckdb="-DTSF_REQUIRE_DUCKDB=ON"

# run_ctest BUILD_DIR [ctest args...]: ctest, then fail if any test was skipped or not run.
run_ctest() {
  local dir=$1 log
  shift
  log=$(mktemp)
  (cd "$dir" && ctest --output-on-failure --no-tests=error -j"$jobs" "$@") 2>&1 | tee "$log"
  if grep -E '\*\*\*(Skipped|Not Run)|\(Skipped\)|\(Not Run\)' "$log" >/dev/null; then
    echo "error: tests in $dir were skipped or did not run (a skip is not a pass):" >&2
    grep -E '\*\*\*(Skipped|Not Run)' "$log" >&2 || true
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}
echo "== include directions (tools/check_layers.sh)"
bash tools/check_layers.sh
echo "== Release build + tests"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTSF_WERROR=ON $duckdb >/dev/null
cmake --build build -j"$jobs"
bash tools/check_layers.sh build # the link directions too
run_ctest build
# every symbol the static library exports carries the library prefix
if nm -g --defined-only build/libtsf.a | awk 'NF == 3 && $2 ~ /[TDBRC]/ {print $3}' | grep -v '^tsf_'; then
  echo "error: libtsf.a exports the symbols above without the tsf_ prefix" >&2
  exit 1
fi
bash tools/test_install.sh build
bash tools/test_python.sh build
echo "== ASan+UBSan build + tests"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTSF_SANITIZE=ON -DTSF_BUILD_BENCH=OFF $duckdb >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 run_ctest build-asan
bash tools/test_python_asan.sh build-asan # the Python lifetime and Arrow tests on the instrumented library
echo "== ThreadSanitizer build + concurrency tests"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTSF_TSAN=ON -DTSF_BUILD_BENCH=OFF -DTSF_BUILD_CLI=OFF \
    -DTSF_SHARED=OFF -DTSF_BUILD_DUCKDB=OFF >/dev/null
cmake --build build-tsan -j"$jobs" --target index_test_index_concurrent read_test_parallel write_test_threads \
    read_test_dataset arrow_test_arrow
TSAN_OPTIONS=halt_on_error=1 run_ctest build-tsan \
    -R '^(index_test_index_concurrent|read_test_parallel|write_test_threads|read_test_dataset|arrow_test_arrow)$'
fuzz_seconds=${FUZZ_SECONDS:-20}
if [ "$fuzz_seconds" != 0 ]; then
    echo "== libFuzzer + ASan + UBSan: every harness for $fuzz_seconds s"
    bash tools/fuzz.sh build
    bash tools/fuzz.sh run "$fuzz_seconds"
fi
