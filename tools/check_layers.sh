#!/usr/bin/env bash
# Fails when an #include breaks the layer directions of CONTRIBUTING.md ("Layers"):
#   src/<layer>/   may include its own folder and the layers listed for it below;
#   cli/ bench/ examples/   the public headers (include/) and their own folder; the few internal
#                  headers a tool needs are listed in TOOL_INTERNAL with the file that may use them.
# Only quoted includes are checked (<...> are system headers). Prints every violation, exits 1 if any.
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
done < <(find cli bench examples -name '*.[ch]' -print0 2>/dev/null)

exit $bad
