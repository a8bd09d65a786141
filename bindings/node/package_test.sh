#!/usr/bin/env bash
# //bindings/node:package_test — the npm tarball installs offline, loads, and type-checks.
set -euo pipefail
tgz="$PWD/$1"
tsc="$PWD/$2"
# node_modules/@types of the pinned tools (its node/package.json was passed).
type_roots="$(dirname "$(dirname "$PWD/$3")")"
src="$PWD/bindings/node/test"
app="$TEST_TMPDIR/app"
mkdir -p "$app"
cd "$app"
echo '{"name":"ferrule-package-test","private":true}' > package.json
HOME="$TEST_TMPDIR" npm_config_cache="$TEST_TMPDIR/npm-cache" npm_config_update_notifier=false \
  npm install --offline --no-audit --no-fund --ignore-scripts --silent "$tgz"
cp "$src/smoke.js" "$src/smoke.ts" .
node smoke.js
node "$tsc" --noEmit --strict --typeRoots "$type_roots" --types node --module node16 --moduleResolution node16 smoke.ts
echo "tsc: smoke.ts type-checks against index.d.ts"
