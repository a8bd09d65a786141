#!/usr/bin/env bash
# The reliability probes (bench/src/probe): every Ferrule binding's generated server, started
# with a 1,024-descriptor limit, against malformed requests, h2spec, an idle flood, slow
# clients, handler faults, a soak, 10,000 kept-alive connections and SIGTERM under load.
#   as a test (//bench:reliability_test): results in $TEST_UNDECLARED_OUTPUTS_DIR, fails on a failed probe;
#   as `bazel run //bench:reliability`: written to bench/results/reliability-<time>/ in the workspace.
#   probe.sh BENCH H2SPEC OHA TOOLCHAIN_ENV PYTHON WHEEL NPM_PACKAGE_JSON NPM_TARBALL GEM [options]
set -euo pipefail
bench="$PWD/$1"
export FERRULE_H2SPEC="$PWD/$2"
shift 2
source "$PWD/bench/env.sh"
bench_env "$@"
shift 7
if [ -n "${TEST_TMPDIR:-}" ]; then
  out="${TEST_UNDECLARED_OUTPUTS_DIR:-$TEST_TMPDIR}"
else
  workspace="${BUILD_WORKSPACE_DIRECTORY:-$PWD}"
  out="$workspace/bench/results/reliability-$(date -u +%Y%m%d-%H%M%S)"
fi
"$bench" probe --out "$out" --strict "$@"
echo "report: $out/probes.md"
