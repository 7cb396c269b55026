#!/usr/bin/env bash
# Fetches what the DuckDB extension (duckdb/, doc/duckdb.md) builds and is tested against into a cache
# outside the source tree (nothing of DuckDB is kept in the repository):
#   <dir>/lib/libduckdb.so                      the engine (npm package of duckdb/deps.env's DUCKDB_LIB_*)
#   <dir>/include/duckdb.h, duckdb_extension.h  the C API headers (DUCKDB_HEADERS_*)
# <dir> is $TSF_DUCKDB_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/tsfile-c/duckdb-<DUCKDB_LIB_VERSION>, the
# folder CMake looks in by default (cmake -DTSF_DUCKDB_DIR=... to point elsewhere). A complete folder is left
# as it is. Needs npm (the registry only: `npm pack`) and tar; each package's SHA-256 is checked.
# --print-dir prints <dir> and exits.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../duckdb/deps.env
. "$here/duckdb/deps.env"
dir=${TSF_DUCKDB_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tsfile-c/duckdb-$DUCKDB_LIB_VERSION}
if [ "${1-}" = --print-dir ]; then echo "$dir"; exit 0; fi
if [ -f "$dir/lib/libduckdb.so" ] && [ -f "$dir/include/duckdb.h" ] && [ -f "$dir/include/duckdb_extension.h" ]; then
    exit 0
fi
case "$(uname -s)-$(uname -m)" in
Linux-x86_64) ;;
*) echo "deps_duckdb: $DUCKDB_LIB_PACKAGE is a Linux x86-64 build; no DuckDB for $(uname -s)-$(uname -m)" \
        "(the extension is then not built; see doc/duckdb.md)" >&2
   exit 0 ;;
esac
if ! command -v npm >/dev/null; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    echo "installing: npm (to fetch DuckDB from the npm registry)" >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq npm >/dev/null
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# fetch PACKAGE VERSION SHA256: the package's tarball into $tmp, its name on stdout
fetch() {
    local tgz
    tgz=$(cd "$tmp" && npm pack --silent "$1@$2" | tail -n 1)
    if ! echo "$3  $tmp/$tgz" | sha256sum -c --status; then
        echo "deps_duckdb: $1@$2 ($tgz) does not have the SHA-256 duckdb/deps.env pins" >&2
        exit 1
    fi
    echo "$tmp/$tgz"
}
echo "fetching DuckDB: $DUCKDB_LIB_PACKAGE@$DUCKDB_LIB_VERSION, $DUCKDB_HEADERS_PACKAGE@$DUCKDB_HEADERS_VERSION (headers) into $dir" >&2
lib=$(fetch "$DUCKDB_LIB_PACKAGE" "$DUCKDB_LIB_VERSION" "$DUCKDB_LIB_SHA256")
hdr=$(fetch "$DUCKDB_HEADERS_PACKAGE" "$DUCKDB_HEADERS_VERSION" "$DUCKDB_HEADERS_SHA256")
new="$tmp/new"
mkdir -p "$new/lib" "$new/include" "$tmp/x"
tar xzf "$lib" -C "$tmp/x" package/libduckdb.so package/LICENSE
mv "$tmp/x/package/libduckdb.so" "$new/lib/"
mv "$tmp/x/package/LICENSE" "$new/LICENSE"
tar xzf "$hdr" -C "$tmp/x" package/src/duckdb/src/include/duckdb.h package/src/duckdb/src/include/duckdb_extension.h
mv "$tmp/x/package/src/duckdb/src/include/duckdb.h" "$tmp/x/package/src/duckdb/src/include/duckdb_extension.h" \
    "$new/include/"
printf '%s\n' "$DUCKDB_LIB_PACKAGE@$DUCKDB_LIB_VERSION" "$DUCKDB_HEADERS_PACKAGE@$DUCKDB_HEADERS_VERSION" >"$new/VERSIONS"
# replace a partial folder in one step, so a cut-short run never leaves one that looks complete
mkdir -p "$(dirname "$dir")"
rm -rf "$dir"
mv "$new" "$dir"
