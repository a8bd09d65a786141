#!/usr/bin/env bash
# The fuzz targets of core/fuzz (bench/src/fuzz.rs), seeded from the fixture corpus.
#   as a test (//bench:fuzz_test): a short fixed-seed run of every target; fails on a finding;
#   as `bazel run //bench:fuzz -- --minutes N`: a campaign; the report goes to
#   bench/results/fuzz-<time>/ and the grown corpus (with execution totals) stays in
#   ~/.cache/ferrule/fuzz-corpus, so campaigns build on each other.
#   fuzz.sh BENCH FUZZER FIXTURES [options]
set -euo pipefail
bench="$PWD/$1"
fuzzer="$PWD/$2"
fixtures="$PWD/$3"
shift 3
if [ -n "${TEST_TMPDIR:-}" ]; then
  out="${TEST_UNDECLARED_OUTPUTS_DIR:-$TEST_TMPDIR}/fuzz"
  set -- --corpus "$TEST_TMPDIR/corpus" "$@"
else
  workspace="${BUILD_WORKSPACE_DIRECTORY:-$PWD}"
  out="$workspace/bench/results/fuzz-$(date -u +%Y%m%d-%H%M%S)"
  set -- --corpus "${FERRULE_FUZZ_CORPUS:-$HOME/.cache/ferrule/fuzz-corpus}" "$@"
fi
"$bench" fuzz --fuzzer "$fuzzer" --fixtures "$fixtures" --out "$out" "$@"
