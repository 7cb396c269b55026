#!/usr/bin/env bash
# Fuzzing with clang + libFuzzer + ASan + UBSan (every sanitizer report is fatal): doc/fuzzing.md.
#   tools/fuzz.sh build            configure and build build-fuzz/ (every fuzz/*_fuzzer.c)
#   tools/fuzz.sh run [SECONDS]    fuzz every harness for SECONDS (default $FUZZ_SECONDS or 15), $(nproc) at a
#                                  time, starting from its committed corpus; new inputs go to $FUZZ_WORK
#                                  (default build-fuzz/work), never into fuzz/corpora. Prints a table (harness,
#                                  seconds, execs, cov, ft, findings) and exits 1 on any finding: crash,
#                                  sanitizer report, leak, timeout (-timeout=$FUZZ_TIMEOUT, default 30 s) or
#                                  out-of-memory; the input is kept as $FUZZ_WORK/<harness>/artifacts/*.
#   tools/fuzz.sh merge            adds to fuzz/corpora/<harness>/ the inputs of $FUZZ_WORK/<harness>/corpus
#                                  that add coverage (libFuzzer -merge=1), then prints what was added
# Harnesses can be chosen with FUZZ_ONLY='regex' (matched against the harness name).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
mode=${1:-run}
build=${FUZZ_BUILD:-build-fuzz}
work=${FUZZ_WORK:-$root/$build/work}
secs=${2:-${FUZZ_SECONDS:-15}}
jobs=$(nproc 2>/dev/null || echo 2)

harnesses() {
    for f in fuzz/*_fuzzer.c; do
        h=$(basename "$f" .c)
        [[ -z "${FUZZ_ONLY:-}" || "$h" =~ $FUZZ_ONLY ]] && echo "$h"
    done
}

case $mode in
build)
    CC=${CC:-clang} cmake -S . -B "$build" -DCMAKE_C_COMPILER="${CC:-clang}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DTSF_BUILD_FUZZERS=ON -DTSF_BUILD_TESTS=OFF -DTSF_BUILD_BENCH=OFF -DTSF_BUILD_CLI=OFF -DTSF_SHARED=OFF \
        ${CMAKE_C_COMPILER_LAUNCHER:+-DCMAKE_C_COMPILER_LAUNCHER=$CMAKE_C_COMPILER_LAUNCHER} >/dev/null
    cmake --build "$build" -j"$jobs" --target $(harnesses)
    ;;
run)
    mkdir -p "$work"
    one() { # harness seconds: fuzz, then write one table row to $work/<h>/row
        local h=$1 s=$2 d=$work/$1
        rm -rf "$d/artifacts" && mkdir -p "$d/corpus" "$d/artifacts"
        local rc=0
        ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
            "$root/$build/$h" -max_total_time="$s" -timeout="${FUZZ_TIMEOUT:-30}" -rss_limit_mb=2048 \
            -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$d/artifacts/" \
            "$d/corpus" "$root/fuzz/corpora/$h" > "$d/log" 2>&1 || rc=$?
        local execs cov ft found
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$d/log" | tail -1)
        cov=$(grep -o 'cov: [0-9]*' "$d/log" | tail -1 | cut -d' ' -f2)
        ft=$(grep -o 'ft: [0-9]*' "$d/log" | tail -1 | cut -d' ' -f2)
        found=$(find "$d/artifacts" -type f | wc -l)
        [ "$rc" = 0 ] && [ "$found" = 0 ] && found=0 || found="FAIL rc=$rc, $found artifact(s)"
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$h" "$s" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$found" > "$d/row"
    }
    export -f one
    export root build work
    harnesses | xargs -P "$jobs" -I{} bash -c 'one "$@"' _ {} "$secs"
    fail=0
    printf '%-32s %7s %10s %7s %7s  %s\n' harness seconds execs cov ft findings
    for h in $(harnesses); do
        IFS=$'\t' read -r n s e c f r < "$work/$h/row"
        printf '%-32s %7s %10s %7s %7s  %s\n' "$n" "$s" "$e" "$c" "$f" "$r"
        if [ "$r" != 0 ]; then
            fail=1
            echo "---- $h: last lines of $work/$h/log" >&2
            tail -n 40 "$work/$h/log" >&2
        fi
    done
    exit $fail
    ;;
merge)
    for h in $(harnesses); do
        [ -d "$work/$h/corpus" ] || continue
        before=$(ls "fuzz/corpora/$h" | wc -l)
        "$root/$build/$h" -merge=1 -close_fd_mask=3 "$root/fuzz/corpora/$h" "$work/$h/corpus" > "$work/$h/merge.log" 2>&1
        echo "$h: $before -> $(ls "fuzz/corpora/$h" | wc -l) files"
    done
    ;;
*)
    echo "usage: tools/fuzz.sh build|run [SECONDS]|merge" >&2
    exit 1
    ;;
esac
