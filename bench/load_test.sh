#!/usr/bin/env bash
# A load test as a Bazel test: runs the harness's matrix on the given frameworks/workloads and
# keeps results.json and the reports in $TEST_UNDECLARED_OUTPUTS_DIR. `--strict` fails the test
# when Ferrule fails a request or a framework cannot be measured.
set -euo pipefail
bench="$PWD/$1"; shift
source "$PWD/bench/env.sh"
bench_env "$@"
shift 7
"$bench" matrix --out "${TEST_UNDECLARED_OUTPUTS_DIR:-$TEST_TMPDIR}" --strict "$@"
