#!/usr/bin/env bash
# Installs a configured build (default: build) into a scratch prefix and builds the programs of
# examples/ against the installed package the three ways a user would: CMake find_package(tsf),
# pkg-config (shared library) and pkg-config --static (one static program). Runs each and checks
# that all three print the same. Also checks that the exported CMake targets name no path of this
# machine. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
jobs=$(nproc 2>/dev/null || echo 2)
echo "== install + examples against the installed package (CMake, pkg-config, pkg-config --static)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null

targets=$(find "$prefix" -name 'tsfTargets*.cmake')
if grep -nE '(^|[";])/(usr|opt|home|work|tmp)/' $targets; then
  echo "error: the exported targets name absolute paths (above)" >&2
  exit 1
fi

cmake -S examples -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/cmake" -j"$jobs" >/dev/null

pcdir=$(dirname "$(find "$prefix" -name tsf.pc)")
mkdir -p "$work/pc" "$work/pc-static"
cp examples/*.c examples/Makefile "$work/pc/"
cp examples/*.c examples/Makefile "$work/pc-static/"
PKG_CONFIG_PATH=$pcdir make -s -C "$work/pc"
PKG_CONFIG_PATH=$pcdir make -s -C "$work/pc-static" STATIC=1
if ldd "$work/pc-static/write_table" >/dev/null 2>&1; then
  echo "error: the pkg-config --static build is not a static program" >&2
  exit 1
fi

libdir=$(dirname "$(find "$prefix" -name 'libtsf.a')")
for kind in cmake pc pc-static; do
  (cd "$work/$kind" && export LD_LIBRARY_PATH=$libdir &&
   ./write_table w.tsfile && ./query_range w.tsfile && ./aggregate w.tsfile) > "$work/$kind.out"
done
cmp "$work/cmake.out" "$work/pc.out"
cmp "$work/cmake.out" "$work/pc-static.out"
grep -q '^wrote w.tsfile' "$work/cmake.out"
cat "$work/cmake.out"
echo "examples: built and run against $prefix (CMake, pkg-config, static) with the same output"
