#!/usr/bin/env bash
# Re-creates requirements.lock from requirements.in: exact pins plus sha256 hashes of every
# published file, so the @ferrule_py repository installs with `pip install --require-hashes`.
# Run it by hand after editing requirements.in (needs network to the Python package index).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tools="$(mktemp -d)"
trap 'rm -rf "$tools"' EXIT
python3 -m venv "$tools/venv"
"$tools/venv/bin/pip" install --quiet pip-tools
cd "$here"
PIP_FIND_LINKS= "$tools/venv/bin/pip-compile" --quiet --generate-hashes --allow-unsafe --strip-extras \
  --no-emit-index-url --no-emit-find-links --no-emit-trusted-host \
  --output-file requirements.lock requirements.in
