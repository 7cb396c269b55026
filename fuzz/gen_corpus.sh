#!/bin/sh
# gen_corpus.sh - builds fuzz/gen_corpus.c against the static library of a CMake build and
# regenerates the seed corpora under fuzz/corpora (only the gen-* files are replaced).
# Usage: fuzz/gen_corpus.sh [build-dir]   (default: build; run from the repository root)
set -e
build=${1:-build}
cmake --build "$build" --target tsf_static >/dev/null
cc -std=c11 -O2 -D_GNU_SOURCE -Iinclude -Ifuzz fuzz/gen_corpus.c "$build/libtsf.a" \
   -lz -llzma -lzstd -llz4 -lsnappy -lm -lpthread -o "$build/gen_corpus"
"$build/gen_corpus" fuzz/corpora
