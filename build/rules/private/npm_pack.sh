#!/bin/sh
# npm_package action: stage the addon and the package files, then `npm pack` (offline).
# args: OUT ADDON ADDON_NAME FILE...
set -eu
out="$1"; addon="$2"; addon_name="$3"; shift 3
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/pkg" "$stage/cache" "$stage/dest"
cp "$addon" "$stage/pkg/$addon_name"
for f in "$@"; do cp "$f" "$stage/pkg/$(basename "$f")"; done
chmod -R u+w,go-w "$stage/pkg"
cd "$stage/pkg"
HOME="$stage" npm_config_cache="$stage/cache" npm_config_update_notifier=false \
  "$NPM" pack --offline --ignore-scripts --silent --pack-destination "$stage/dest" >/dev/null
cd - >/dev/null
tgz="$(ls "$stage/dest"/*.tgz)"
[ "$(basename "$tgz")" = "$(basename "$out")" ] || { echo "ferrule: npm pack made $(basename "$tgz"), expected $(basename "$out") (package.json version?)" >&2; exit 1; }
cp "$tgz" "$out"
