#!/usr/bin/env bash
# //bindings/python:wheel_test — the wheel installs into a fresh venv and imports.
set -euo pipefail
wheel="$PWD/$1"
# The runfiles entry links to the lock venv's bin/python; keep the venv path (one readlink),
# not the base interpreter behind it, so pytest from the lock is importable.
lock_python="$(readlink "$2" || echo "$2")"
venv="$TEST_TMPDIR/venv"
"$lock_python" -m venv "$venv"
PIP_FIND_LINKS= "$venv/bin/python" -m pip install --quiet --no-index --no-deps --disable-pip-version-check "$wheel"
cd "$TEST_TMPDIR"
"$venv/bin/python" - <<'PY'
import ferrule
assert ferrule.__version__, "ferrule.__version__ is empty"
assert ferrule._ferrule.__file__.endswith(".abi3.so"), ferrule._ferrule.__file__
print("ferrule", ferrule.__version__, "imported from", ferrule.__file__)
PY
