#!/usr/bin/env bash
# //bindings/node:node_test — installs the tarball into a fresh project and runs `node --test`.
set -euo pipefail
tgz="$PWD/$1"
export FERRULE_CONFORMANCE="$PWD/$2"
export FERRULE_FIXTURES_DIR="$PWD/fixtures"
# The `ws` package from the npm lock: the tests' real WebSocket client.
export NODE_PATH="$(dirname "$(dirname "$PWD/$3")")"
# The README, whose examples some tests serve.
export FERRULE_README="$PWD/README.md"
src="$PWD/bindings/node/test"
app="$TEST_TMPDIR/app"
mkdir -p "$app/test"
cd "$app"
echo '{"name":"ferrule-node-test","private":true}' > package.json
HOME="$TEST_TMPDIR" npm_config_cache="$TEST_TMPDIR/npm-cache" npm_config_update_notifier=false \
  npm install --offline --no-audit --no-fund --ignore-scripts --silent "$tgz"
cp "$src"/*.js test/
exec node --test test/*.test.js
