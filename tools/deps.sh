#!/usr/bin/env bash
# Installs the Debian packages tsfile-c builds against (skips what is already there).
set -euo pipefail
# clang + libclang-rt-dev (libFuzzer and the sanitizer runtimes of Debian's default clang): tools/fuzz.sh
# python3-*: the Python package (python/) and its tests (tools/test_python.sh)
pkgs="build-essential cmake pkg-config zlib1g-dev liblzma-dev libzstd-dev liblz4-dev libsnappy-dev clang libclang-rt-dev
python3 python3-venv python3-pip python3-setuptools python3-wheel python3-numpy python3-pandas python3-pytest python3-dask python3-distributed"
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  echo "installing:$missing" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
# DuckDB (library + C headers) for the DuckDB extension and its tests, into a cache outside the tree
bash "$(dirname "$0")/deps_duckdb.sh"
