#!/usr/bin/env bash
# run_case.sh - runs one CLI test case (tests/cli/README.md) and compares stdout, stderr and the exit
# code with the case's expected files. Usage: run_case.sh CASE_DIR TSF_BINARY GEN_BINARY REF_DIR
# (REF_DIR: tests/data). Exit 0 pass, 1 fail. UPDATE=1 rewrites the expected files from the actual
# output (review them with git diff before committing).
set -u
case_dir=$1 tsf_bin=$2 gen_bin=$3 ref=$4
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
case_dir=$(abs "$case_dir") tsf_bin=$(abs "$tsf_bin") gen_bin=$(abs "$gen_bin")
name=$(basename "$case_dir")
[ -f "$case_dir/cmd" ] || { echo "case $name: no cmd file"; exit 1; }
[ -d "$ref/tsfile-java" ] || { echo "case $name: $ref is not the reference folder (tests/data)"; exit 1; }
ref=$(cd "$ref" && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tsf-cli-$name.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export TSF=$tsf_bin GEN=$gen_bin REF=$ref TMP=$tmp
DATA=$(cd "$(dirname "$0")" && pwd)/data
export DATA
export TZ=UTC LC_ALL=C

(cd "$tmp" && bash "$case_dir/cmd") > "$tmp/.stdout" 2> "$tmp/.stderr"
rc=$?

# Paths vary between machines: print them as the variable names. An optional `filter` (sed script)
# removes what varies between runs (timings).
normalize() {
    local f=$1 out=$2
    local sed_args=(-e "s|$(printf '%s' "$tmp" | sed 's/[|.[\*^$]/\\&/g')|\$TMP|g"
                    -e "s|$(printf '%s' "$DATA" | sed 's/[|.[\*^$]/\\&/g')|\$DATA|g"
                    -e "s|$(printf '%s' "$ref" | sed 's/[|.[\*^$]/\\&/g')|\$REF|g"
                    -e "s|$(printf '%s' "$tsf_bin" | sed 's/[|.[\*^$]/\\&/g')|\$TSF|g")
    sed "${sed_args[@]}" "$f" > "$out.tmp"
    if [ -f "$case_dir/filter" ]; then sed -f "$case_dir/filter" "$out.tmp" > "$out"; else mv "$out.tmp" "$out"; fi
}
normalize "$tmp/.stdout" "$tmp/.stdout.n"
normalize "$tmp/.stderr" "$tmp/.stderr.n"

if [ "${UPDATE:-0}" = 1 ]; then
    cp "$tmp/.stdout.n" "$case_dir/expected.stdout"
    if [ -s "$tmp/.stderr.n" ] || [ -f "$case_dir/expected.stderr" ]; then
        cp "$tmp/.stderr.n" "$case_dir/expected.stderr"
    fi
    if [ "$rc" != 0 ]; then echo "$rc" > "$case_dir/expected.rc"; else rm -f "$case_dir/expected.rc"; fi
    echo "updated $name (rc $rc): review with git diff $case_dir"
    exit 0
fi

fail=0
want_rc=0
[ -f "$case_dir/expected.rc" ] && want_rc=$(tr -d ' \n' < "$case_dir/expected.rc")
if [ "$rc" != "$want_rc" ]; then
    echo "FAIL $name: exit code $rc, expected $want_rc"; fail=1
fi
if [ -f "$case_dir/expected.stdout" ]; then
    if ! diff -u "$case_dir/expected.stdout" "$tmp/.stdout.n" > "$tmp/.diff"; then
        echo "FAIL $name: stdout differs"; head -c 20000 "$tmp/.diff"; fail=1
    fi
else
    echo "FAIL $name: no expected.stdout (run with UPDATE=1 and review)"; fail=1
fi
if [ -f "$case_dir/expected.stderr" ]; then
    if ! diff -u "$case_dir/expected.stderr" "$tmp/.stderr.n" > "$tmp/.diff"; then
        echo "FAIL $name: stderr differs"; head -c 20000 "$tmp/.diff"; fail=1
    fi
fi
if [ "$fail" = 1 ]; then
    echo "--- stderr ---"; head -c 4000 "$tmp/.stderr.n"
    exit 1
fi
echo "ok $name"
exit 0
