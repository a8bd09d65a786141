#!/usr/bin/env bash
# //bench:report_page_test — `ferrule-bench report` renders the committed sample result set
# (bench/testdata/sample-results.json: four languages, three rounds) with bench/budgets.json, and
# headless Chromium (Debian's, installed by ./bazelw setup) driven by playwright-core (npm lock)
# checks the page a person sees (tests/report_page.js). Screenshots go to the test's undeclared
# outputs (.bazel/testlogs/bench/report_page_test/test.outputs/).
set -euo pipefail
bench="$PWD/$1"
results="$PWD/$2"
budgets="$PWD/$3"
# playwright-core from the npm lock: node_modules/playwright-core/package.json -> node_modules.
export NODE_PATH="$(dirname "$(dirname "$PWD/$4")")"
languages="$5"
chromium="${FERRULE_CHROMIUM:-/usr/bin/chromium}"
[ -x "$chromium" ] || { echo "ferrule: $chromium not found — ./bazelw setup installs Debian's chromium" >&2; exit 1; }
out="${TEST_UNDECLARED_OUTPUTS_DIR:-$TEST_TMPDIR/outputs}"
mkdir -p "$out"
"$bench" report "$results" --fixtures "$PWD/fixtures" --budgets "$budgets" --out "$out"
script="$PWD/bench/tests/report_page.js"
cd "$TEST_TMPDIR"
# Chromium's scratch files: its profile lives in TEST_TMPDIR, but the socket it makes under
# TMPDIR must have a path shorter than a Unix socket's 108 bytes, which the sandbox's is not.
scratch="$(mktemp -d /tmp/ferrule-report.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
export TMPDIR="$scratch" HOME="$TEST_TMPDIR"
node "$script" --page "$out/report.html" --languages "$languages" --out "$out"
