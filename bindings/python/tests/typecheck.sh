#!/usr/bin/env bash
# //bindings/python:typecheck — `mypy --strict` accepts the README's Python example against the installed
# wheel, and the example imports (its routes declare) without error.
set -euo pipefail
wheel="$PWD/$1"
lock_python="$(readlink "$2" || echo "$2")"
readme="$PWD/$3"
venv="$TEST_TMPDIR/venv"
"$lock_python" -m venv "$venv"
PIP_FIND_LINKS= "$venv/bin/python" -m pip install --quiet --no-index --no-deps --disable-pip-version-check "$wheel"
example="$TEST_TMPDIR/readme_example.py"
# The first ```python block of the README.
awk '/^```python$/ { inside = 1; next } /^```$/ { if (inside) exit } inside' "$readme" > "$example"
[ -s "$example" ] || { echo "no \`\`\`python block in README.md" >&2; exit 1; }
cd "$TEST_TMPDIR"
"$lock_python" -m mypy --python-executable "$venv/bin/python" --no-incremental --cache-dir=/dev/null \
  --strict "$example"
"$venv/bin/python" -c "import importlib.util, sys; spec = importlib.util.spec_from_file_location('readme_example', sys.argv[1]); spec.loader.exec_module(importlib.util.module_from_spec(spec)); print('README example imports')" "$example"
