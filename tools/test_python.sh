#!/usr/bin/env bash
# The Python package (python/) the way a user gets it: installs a copy of python/ with pip into a fresh
# virtual environment that sees Debian's NumPy, pandas and pytest (--system-site-packages; offline:
# --no-index --no-build-isolation), bundling the shared library of the given build (default: build),
# then runs python/tests against the installed package. Exits non-zero on any failure and on any
# skipped test (a skip is not a pass).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
lib=$PWD/$build/libtsf.so
[ -e "$lib" ] || { echo "error: $lib is missing (configure with -DTSF_SHARED=ON, no sanitizer)" >&2; exit 1; }
echo "== Python package: pip install into a venv, pytest python/tests"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r python "$work/src"
rm -rf "$work/src/build" "$work/src"/*.egg-info "$work/src/tsfile_c/libtsf.so"
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
TSFILE_C_LIB=$lib "$work/venv/bin/pip" install -q --no-index --no-build-isolation "$work/src"
log=$work/pytest.log
# from the tests' folder, so `import tsfile_c` finds the installed package, not the source tree
(cd python/tests && env -u TSFILE_C_LIB "$work/venv/bin/python" -m pytest -q -p no:cacheprovider -rs .) 2>&1 | tee "$log"
"$work/venv/bin/python" -c "import tsfile_c, sys; sys.exit(0 if '$work/venv' in tsfile_c.library_path else \
  'tsfile_c loaded ' + tsfile_c.library_path + ', not the copy installed next to the package')"
if grep -Eq '[0-9]+ skipped' "$log"; then
  echo "error: python tests were skipped (a skip is not a pass)" >&2
  exit 1
fi
