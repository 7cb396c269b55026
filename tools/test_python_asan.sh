#!/usr/bin/env bash
# The Python lifetime, Arrow and collected-column tests against a library built with AddressSanitizer + UBSan
# (tools/test.sh's build-asan, whose libtsf.so this loads through TSFILE_C_LIB): Debian's Python is not
# instrumented, so the sanitizer runtime is preloaded; leaks are not checked (the interpreter keeps memory
# to its end). A read of freed or out-of-bounds memory in the library aborts the run.
#
#   tools/test_python_asan.sh [BUILD_DIR]   (default build-asan)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-asan}
lib=$PWD/$build/libtsf.so
[ -e "$lib" ] || { echo "error: $lib is missing (configure $build with -DTSF_SANITIZE=ON)" >&2; exit 1; }
asan=$(${CC:-gcc} -print-file-name=libasan.so)
ubsan=$(${CC:-gcc} -print-file-name=libubsan.so)
[ -e "$asan" ] || { echo "error: no libasan.so next to ${CC:-gcc}" >&2; exit 1; }
echo "== Python lifetime, Arrow and collected-column tests against $lib (ASan + UBSan)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
(cd python/tests && env TSFILE_C_LIB="$lib" PYTHONPATH="$PWD/.." LD_PRELOAD="$asan:$ubsan" \
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    /usr/bin/python3 -m pytest -q -p no:cacheprovider -rs test_lifetime.py test_arrow.py \
    "test_read.py::test_collected_columns_equal_the_batches" "test_read.py::test_collected_time_bounds") 2>&1 | tee "$log"
if grep -Eq '[0-9]+ skipped' "$log"; then
    echo "error: tests were skipped (a skip is not a pass)" >&2
    exit 1
fi
