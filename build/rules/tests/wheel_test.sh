#!/bin/sh
# Runs wheel_test.py with the checked host Python (from @ferrule_host's toolchain.env).
set -eu
python="$(sed -n 's/^PYTHON=//p' "$2")"
exec "$python" build/rules/tests/wheel_test.py "$1"
