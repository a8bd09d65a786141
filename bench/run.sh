#!/usr/bin/env bash
# `bazel run //bench:all [-- harness options]`: the whole matrix (every framework × workload,
# quick profile unless told otherwise), written to bench/results/<time>/ in the workspace:
# results.json, report.md, report.html.
set -euo pipefail
bench="$PWD/$1"; shift
source "$PWD/bench/env.sh"
bench_env "$@"
shift 7
workspace="${BUILD_WORKSPACE_DIRECTORY:-$PWD}"
out="$workspace/bench/results/$(date -u +%Y%m%d-%H%M%S)"
if commit="$(git -C "$workspace" rev-parse HEAD 2>/dev/null)"; then
  export FERRULE_COMMIT="$commit"
fi
"$bench" doctor >/dev/null || { "$bench" doctor; exit 1; }
"$bench" matrix --out "$out" "$@"
ln -sfn "$(basename "$out")" "$workspace/bench/results/latest"
echo "report: $out/report.md (and report.html)"
