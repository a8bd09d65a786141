#!/usr/bin/env bash
# //bindings:api_contract — installs the wheel, the npm tarball and the gem as their users do
# (offline), then runs api_contract.py with the lock's Python (Schemathesis).
set -euo pipefail
wheel="$PWD/$1"
lock_python="$(readlink "$2" || echo "$2")"
tgz="$PWD/$3"
gem_file="$PWD/$4"
export FERRULE_README="$PWD/README.md"
script="$PWD/bindings/api_contract.py"
cd "$TEST_TMPDIR"

"$lock_python" -m venv venv
PIP_FIND_LINKS= venv/bin/python -m pip install --quiet --no-index --no-deps --disable-pip-version-check "$wheel"
site="$(venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"

mkdir -p node
(cd node && echo '{"name":"ferrule-contract","private":true,"type":"module"}' > package.json &&
  HOME="$TEST_TMPDIR" npm_config_cache="$TEST_TMPDIR/npm-cache" npm_config_update_notifier=false \
    npm install --offline --no-audit --no-fund --ignore-scripts --silent "$tgz")
export FERRULE_NODE_PROJECT="$TEST_TMPDIR/node"

export GEM_HOME="$TEST_TMPDIR/gems" HOME="$TEST_TMPDIR"
GEM_PATH="$GEM_HOME:$(ruby -e 'print Gem.default_path.join(":")')"
export GEM_PATH
gem install --local --no-document --install-dir "$GEM_HOME" "$gem_file" >/dev/null

export FERRULE_PYTHON_SITE="$site"
PYTHONDONTWRITEBYTECODE=1 exec "$lock_python" "$script"
