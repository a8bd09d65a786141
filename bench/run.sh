#!/usr/bin/env bash
# `bazel run //bench:all [-- harness options]`: the whole matrix (every framework × workload,
# quick profile unless told otherwise), written to bench/results/<time>/ in the workspace:
# results.json, report.md, report.html (the report judges bench/budgets.json on the run's rounds).
# `bazel run //bench:check [-- harness options]` (its first argument after the runfiles paths is
# `check`): the budgets of bench/budgets.json (or `--budgets FILE`, relative to where bazel was
# run), written to bench/results/check-<time>/; exits 1 when a budget is missed.
set -euo pipefail
bench="$PWD/$1"; shift
source "$PWD/bench/env.sh"
bench_env "$@"
shift 7
workspace="${BUILD_WORKSPACE_DIRECTORY:-$PWD}"
if commit="$(git -C "$workspace" rev-parse HEAD 2>/dev/null)"; then
  export FERRULE_COMMIT="$commit"
fi
"$bench" doctor >/dev/null || { "$bench" doctor; exit 1; }
# The budgets: what `check` measures, and what the report of either judges on the rounds it has.
export FERRULE_BENCH_BUDGETS="$PWD/bench/budgets.json"
if [[ "${1:-}" == check ]]; then
  shift
  # The harness runs in the runfiles tree: a budgets file the caller names is theirs, relative to
  # the directory `bazel run` was started in.
  args=()
  while (($#)); do
    if [[ "$1" == --budgets && $# -ge 2 && "$2" != /* ]]; then
      args+=("$1" "${BUILD_WORKING_DIRECTORY:-$PWD}/$2"); shift 2
    else
      args+=("$1"); shift
    fi
  done
  out="$workspace/bench/results/check-$(date -u +%Y%m%d-%H%M%S)"
  "$bench" check --out "$out" ${args[@]+"${args[@]}"}
  exit
fi
out="$workspace/bench/results/$(date -u +%Y%m%d-%H%M%S)"
"$bench" matrix --out "$out" "$@"
ln -sfn "$(basename "$out")" "$workspace/bench/results/latest"
echo "report: $out/report.md (and report.html)"
