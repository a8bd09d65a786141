#!/bin/sh
# Runs driver_test.py with the checked host Python (from @ferrule_host's toolchain.env).
set -eu
python="$(sed -n 's/^PYTHON=//p' "$3")"
exec "$python" build/rules/tests/driver_test.py "$@"
