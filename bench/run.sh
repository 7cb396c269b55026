#!/usr/bin/env bash
# Runs the tsf-bench experiments with the settings bench/RESULTS.md reports and renders their JSON rows as
# one Markdown section (date, commit, machine, load, the command of each experiment, a table per experiment).
#
#   bench/run.sh [--quick] [--write] [--bench PATH] [--out DIR] [EXPERIMENT...]
#
# EXPERIMENT: codec write filter read read-A arrow index compress dataset dataset-open (default: all of them). --quick runs each on
# small sizes (a smoke run: it checks that every experiment runs and reports, not how fast it is). The rows
# are kept in DIR (default build/bench-results/<UTC time>-<commit>/<experiment>.jsonl) next to the
# rendered section (section.md); --write also puts the section at the top of bench/RESULTS.md, under its
# title. Exits non-zero when an experiment fails or reports no row.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
quick=0 write=0 bench="$root/build/tsf-bench" out="" exps=()
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1 ;;
    --write) write=1 ;;
    --bench) bench=$2; shift ;;
    --out) out=$2; shift ;;
    -h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) exps+=("$1") ;;
    esac
    shift
done
[ ${#exps[@]} -gt 0 ] || exps=(codec write filter read read-A arrow index compress dataset dataset-open)
[ -x "$bench" ] || { echo "run.sh: $bench is not built (cmake --build build)" >&2; exit 2; }
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ] || commit="$commit+changes"
stamp=$(date -u +%Y-%m-%dT%H%MZ)
out=${out:-$root/build/bench-results/$stamp-$commit}
mkdir -p "$out"
data="$root/tests/data/datasets"
[ -f "$root/../shared/datasets/MANIFEST.md" ] && data="$root/../shared/datasets"

# The arguments of each experiment: the published sizes, or small ones with --quick.
args() {
    local q=$quick
    case $1 in
    codec) [ $q = 1 ] && echo "codec --rows 20000 --reps 3" || echo "codec --reps 7" ;;
    write) [ $q = 1 ] && echo "write --case A --rows 5000 --reps 2" || echo "write --case A --reps 5" ;;
    filter) [ $q = 1 ] && echo "filter --blocks 50 --runs 20" || echo "filter" ;;
    read) [ $q = 1 ] && echo "read --rows 100000 --reps 2" || echo "read --reps 5" ;;
    read-A) [ $q = 1 ] && echo "read --case A --rows 5000 --reps 2" || echo "read --case A --reps 5" ;;
    arrow) [ $q = 1 ] && echo "arrow --rows 100000 --reps 2" || echo "arrow --reps 11 --clock cpu" ;;
    index) [ $q = 1 ] && echo "index --keys 20000 --dataset uniform --reps 1 --ops 20000" ||
        echo "index --keys 10000000 --dataset all --reps 3" ;;
    compress) [ $q = 1 ] && echo "compress --data $root/tests/data/datasets --reps 1" ||
        echo "compress --data $data --reps 5" ;;
    dataset) [ $q = 1 ] && echo "dataset --files 2 --rows 5000 --reps 1 --slow-reps 1 --latency-ms 0 --dir $out/dataset-data" ||
        echo "dataset --reps 3 --slow-reps 1" ;;
    dataset-open) [ $q = 1 ] && echo "dataset-open --files 20 --rows 20 --reps 1 --dir $out/dsopen-data" ||
        echo "dataset-open --reps 11" ;;
    *) return 1 ;;
    esac
}

load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?"; }
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)
{
    echo "machine: ${cpu:-unknown CPU}, $(nproc) cores"
    echo "commit: $commit"
    echo "started: $stamp (UTC)"
    echo "load before: $(load)"
} >"$out/meta.txt"
status=0
for e in "${exps[@]}"; do
    a=$(args "$e") || { echo "run.sh: unknown experiment $e" >&2; exit 2; }
    echo "run.sh: tsf-bench $a --json" >&2
    echo "cmd.$e: tsf-bench $a" >>"$out/meta.txt"
    echo "load.$e: $(load)" >>"$out/meta.txt"
    # shellcheck disable=SC2086
    if ! (cd "$out" && "$bench" $a --json >"$out/$e.jsonl" 2>"$out/$e.log"); then
        echo "run.sh: tsf-bench $a failed (log: $out/$e.log)" >&2
        status=1
    fi
done
echo "load after: $(load)" >>"$out/meta.txt"
python3 "$root/bench/render.py" "$out" "${exps[@]}" >"$out/section.md" || status=1
if [ $write = 1 ] && [ $status = 0 ]; then
    python3 "$root/bench/render.py" --insert "$root/bench/RESULTS.md" "$out/section.md"
    echo "run.sh: section added to bench/RESULTS.md" >&2
fi
echo "run.sh: rows and section in $out" >&2
cat "$out/section.md"
exit $status
