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
#                                  that reach edges the committed corpus does not, then prints the counts
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
        if [[ -z "${FUZZ_ONLY:-}" || "$h" =~ $FUZZ_ONLY ]]; then echo "$h"; fi
    done
}

case $mode in
build)
    CC=${CC:-clang} cmake -S . -B "$build" -DCMAKE_C_COMPILER="${CC:-clang}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DTSF_BUILD_FUZZERS=ON -DTSF_BUILD_TESTS=OFF -DTSF_BUILD_BENCH=OFF -DTSF_BUILD_CLI=OFF -DTSF_SHARED=OFF \
        ${CMAKE_C_COMPILER_LAUNCHER:+-DCMAKE_C_COMPILER_LAUNCHER=$CMAKE_C_COMPILER_LAUNCHER} >/dev/null
    if [ -z "${FUZZ_ONLY:-}" ]; then
        cmake --build "$build" -j"$jobs" # every target of this configuration is a harness or what they link
    else
        cmake --build "$build" -j"$jobs" --target $(harnesses)
    fi
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
    # Keeps only inputs that reach code (edges, not just counters) the committed corpus does not: libFuzzer's
    # merge runs the committed files first, then the new ones smallest first, and its control file lists for
    # each input the edges it covered first (COV); of the inputs with such edges and at most FUZZ_MERGE_MAX_LEN
    # bytes (default 16384), the FUZZ_MERGE_KEEP (default 40) with the most are copied in under their sha1.
    for h in $(harnesses); do
        [ -d "$work/$h/corpus" ] || continue
        before=$(ls "fuzz/corpora/$h" | wc -l)
        base=$(mktemp -d) && cp "fuzz/corpora/$h"/* "$base"/
        "$root/$build/$h" -merge=1 -merge_control_file="$work/$h/merge.ctl" -close_fd_mask=3 "$base" \
            "$work/$h/corpus" > "$work/$h/merge.log" 2>&1
        python3 - "$work/$h/merge.ctl" "fuzz/corpora/$h" "${FUZZ_MERGE_MAX_LEN:-16384}" "${FUZZ_MERGE_KEEP:-40}" <<'PY'
import hashlib, os, shutil, sys
ctl, dest, maxlen, keep = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
lines = open(ctl).read().splitlines()
n, first = int(lines[0]), int(lines[1])
files = lines[2:2 + n]
new = []
for ln in lines[2 + n:]:
    f = ln.split()
    if len(f) > 2 and f[0] == "COV" and int(f[1]) >= first and os.path.getsize(files[int(f[1])]) <= maxlen:
        new.append((len(f) - 2, files[int(f[1])]))
for _, src in sorted(new, key=lambda e: -e[0])[:keep]:
    shutil.copyfile(src, os.path.join(dest, hashlib.sha1(open(src, "rb").read()).hexdigest()))
PY
        rm -rf "$base"
        echo "$h: $before -> $(ls "fuzz/corpora/$h" | wc -l) files"
    done
    ;;
*)
    echo "usage: tools/fuzz.sh build|run [SECONDS]|merge" >&2
    exit 1
    ;;
esac
