#!/usr/bin/env bash
# `bazel run //bench:all`: runs the benchmark harness from its runfiles, telling it where the
# pinned oha and the fixture corpus are. Extra arguments go to the harness.
set -euo pipefail
bench="$1"; oha="$2"; shift 2
export FERRULE_OHA="$PWD/$oha"
export FERRULE_FIXTURES_DIR="$PWD/fixtures"
exec "$PWD/$bench" "$@"
