#!/usr/bin/env bash
# Fails when an #include breaks the layer directions of CONTRIBUTING.md ("Layers"):
#   src/<layer>/   may include its own folder and the layers listed for it below;
#   cli/ bench/ examples/ duckdb/   the public headers (include/) and their own folder; the few internal
#                  headers a tool needs are listed in TOOL_INTERNAL with the file that may use them.
# Only quoted includes are checked (<...> are system headers). Prints every violation, exits 1 if any.
# With a build folder (tools/check_layers.sh build, after the build) it also checks the links: every symbol an
# object of src/<layer>/ uses from another layer's objects must come from a layer it may include, or from one
# listed in LINK_EXTRA (the learned index, used through its public header include/tsf_index.h).
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A ALLOWED=(
    [common]=""
    [codec]="common"
    [compress]="common"
    [format]="common codec compress"
    [write]="common codec compress format"
    [read]="common codec compress format"
    [index]="common"
    [arrow]="common read"
)

declare -A LINK_EXTRA=(
    [format]="index"
    [read]="index"
)

# file:internal-header pairs a tool may include (a small internal API, documented in CONTRIBUTING.md)
TOOL_INTERNAL="
cli/cmd_sketch.c:format/format.h
cli/cmd_sketch.c:format/meta_index_parse.h
bench/read.c:format/format.h
bench/filter.c:read/filter.h
bench/filter.c:codec/ts2diff_walk.h
bench/index.c:index/index_internal.h
bench/index.c:index/pla.h
bench/autobest.c:common/bytes.h
bench/autobest.c:format/format.h
bench/autobest.c:write/auto.h
"

public_header() { [ -f "include/$1" ]; }

bad=0
report() {
    echo "layer violation: $1" >&2
    bad=1
}

for layer in "${!ALLOWED[@]}"; do
    [ -d "src/$layer" ] || { report "src/$layer: no such layer folder (update tools/check_layers.sh)"; continue; }
done
for dir in src/*/; do
    layer=$(basename "$dir")
    [ -n "${ALLOWED[$layer]+x}" ] || report "src/$layer: a folder with no layer rule (add it to tools/check_layers.sh and CONTRIBUTING.md)"
done

while IFS= read -r -d '' f; do
    layer=$(echo "$f" | cut -d/ -f2)
    while IFS= read -r inc; do
        case $inc in
        ../*/*)
            to=$(echo "$inc" | cut -d/ -f2)
            ok=0
            for l in ${ALLOWED[$layer]-}; do [ "$l" = "$to" ] && ok=1; done
            [ $ok = 1 ] || report "$f includes \"$inc\" (src/$layer may include: ${ALLOWED[$layer]:-nothing})"
            ;;
        */*) report "$f includes \"$inc\" (use a path relative to the file)" ;;
        *)
            [ -f "$(dirname "$f")/$inc" ] || public_header "$inc" || report "$f includes \"$inc\": not in its folder"
            ;;
        esac
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done < <(find src -name '*.[ch]' -print0)

while IFS= read -r -d '' f; do
    while IFS= read -r inc; do
        public_header "$inc" && continue
        [ -f "$(dirname "$f")/$inc" ] && continue
        echo "$TOOL_INTERNAL" | grep -qx "$f:$inc" && continue
        report "$f includes \"$inc\": tools use the public headers (include/) only"
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done < <(find cli bench examples duckdb -name '*.[ch]' -print0 2>/dev/null)

# link directions: the undefined symbols of each layer's objects against the symbols each layer defines
if [ $# -ge 1 ]; then
    # objects of sources that still exist (a reused build folder keeps those of moved or deleted files)
    objs=$(find "$1" -path '*/tsf_obj.dir/src/*' -name '*.c.o' | sort | while read -r o; do
        src=${o#*/tsf_obj.dir/}; [ -f "${src%.o}" ] && echo "$o"; done)
    [ -n "$objs" ] || report "$1: no library objects (*/tsf_obj.dir/src/*/*.o); build first"
    rules=$(for l in "${!ALLOWED[@]}"; do echo "$l ${ALLOWED[$l]} ${LINK_EXTRA[$l]-}"; done)
    # nm -A: "object: [address] type symbol"; defined symbols first, then the undefined ones
    { nm -A -g --defined-only $objs | sed 's/^/D /'; nm -A -u $objs | sed 's/^/U /'; } |
        awk -v rules="$rules" '
        function layer(f) { sub(/.*\/tsf_obj\.dir\/src\//, "", f); sub(/\/.*/, "", f); return f }
        BEGIN { n = split(rules, r, "\n"); for (i = 1; i <= n; i++) { k = split(r[i], w, " "); for (j = 2; j <= k; j++) ok[w[1] " " w[j]] = 1 } }
        $1 == "D" { def[$NF] = layer($2) }
        $1 == "U" { s = $NF; l = layer($2); t = def[s]
                    if (t != "" && t != l && !((l " " t) in ok)) {
                        f = $2; sub(/.*\/tsf_obj\.dir\//, "", f); sub(/:.*/, "", f)
                        print "layer violation: " f " calls " s " of src/" t; bad = 1 } }
        END { exit bad }' >&2 || bad=1
fi

exit $bad
