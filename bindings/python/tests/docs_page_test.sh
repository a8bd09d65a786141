#!/usr/bin/env bash
# //bindings/python:docs_page_test — the README's Python example serves its docs page, and
# headless Chromium (Debian's, installed by ./bazelw setup) driven by playwright-core (npm lock)
# finds every route on it, gets the server's answer from "Try it out", and makes no request to
# any other host (tests/docs_page/docs_page.js). Screenshots of the page go to the test's
# undeclared outputs (.bazel/testlogs/bindings/python/docs_page_test/test.outputs/).
set -euo pipefail
wheel="$PWD/$1"
lock_python="$(readlink "$2" || echo "$2")"
readme="$PWD/$3"
# playwright-core from the npm lock: node_modules/playwright-core/package.json -> node_modules.
export NODE_PATH="$(dirname "$(dirname "$PWD/$4")")"
chromium="${FERRULE_CHROMIUM:-/usr/bin/chromium}"
[ -x "$chromium" ] || { echo "ferrule: $chromium not found — ./bazelw setup installs Debian's chromium" >&2; exit 1; }
tests="$PWD/bindings/python/tests/docs_page"
venv="$TEST_TMPDIR/venv"
"$lock_python" -m venv "$venv"
PIP_FIND_LINKS= "$venv/bin/python" -m pip install --quiet --no-index --no-deps --disable-pip-version-check "$wheel"
out="${TEST_UNDECLARED_OUTPUTS_DIR:-$TEST_TMPDIR/outputs}"
mkdir -p "$out"
cd "$TEST_TMPDIR"
# Chromium's scratch files: its profile lives in TEST_TMPDIR, but the socket it makes under
# TMPDIR must have a path shorter than a Unix socket's 108 bytes, which the sandbox's is not.
scratch="$(mktemp -d /tmp/ferrule-docs.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
export TMPDIR="$scratch" HOME="$TEST_TMPDIR"
PYTHONDONTWRITEBYTECODE=1 node "$tests/docs_page.js" --python "$venv/bin/python" --server "$tests/serve_readme.py" \
  --readme "$readme" --out "$out"
