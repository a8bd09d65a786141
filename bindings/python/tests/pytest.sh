#!/usr/bin/env bash
# //bindings/python:pytest — installs the wheel into a fresh venv and runs the pytest suite
# against it with the lock's Python (pytest, uvloop), checking the fixture corpus with
# //core:ferrule-conformance.
set -euo pipefail
wheel="$PWD/$1"
# The runfiles entry links to the lock venv's bin/python; keep the venv path (one readlink).
lock_python="$(readlink "$2" || echo "$2")"
export FERRULE_CONFORMANCE="$PWD/$3"
export FERRULE_FIXTURES_DIR="$PWD/fixtures"
# The README, whose examples some tests serve.
export FERRULE_README="$PWD/README.md"
venv="$TEST_TMPDIR/venv"
"$lock_python" -m venv "$venv"
PIP_FIND_LINKS= "$venv/bin/python" -m pip install --quiet --no-index --no-deps --disable-pip-version-check "$wheel"
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
tests="$PWD/bindings/python/tests"
cd "$TEST_TMPDIR"
PYTHONPATH="$site" PYTHONDONTWRITEBYTECODE=1 exec "$lock_python" -m pytest -q -p no:cacheprovider --rootdir="$tests" "$tests"
