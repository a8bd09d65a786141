#!/bin/sh
# ruby_gem action: stage lib/ with the compiled extension, then `gem build` (offline, with
# SOURCE_DATE_EPOCH so the .gem is reproducible).
# args: OUT GEMSPEC EXTENSION EXTENSION_PATH STRIP_PREFIX VERSION FILE...
set -eu
out="$1"; gemspec="$2"; ext="$3"; ext_path="$4"; strip="$5"; version="$6"; shift 6
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/gem/$(dirname "$ext_path")" "$stage/home"
cp "$ext" "$stage/gem/$ext_path"
cp "$gemspec" "$stage/gem/"
for f in "$@"; do
  rel="${f#"$strip"/}"
  mkdir -p "$stage/gem/$(dirname "$rel")"
  cp "$f" "$stage/gem/$rel"
done
chmod -R u+w,go-w "$stage/gem"
cd "$stage/gem"
HOME="$stage/home" SOURCE_DATE_EPOCH=315532800 FERRULE_VERSION="$version" \
  "$GEM" build --silent "$(basename "$gemspec")" >/dev/null
cd - >/dev/null
gem_file="$(ls "$stage/gem"/*.gem)"
[ "$(basename "$gem_file")" = "$(basename "$out")" ] || { echo "ferrule: gem build made $(basename "$gem_file"), expected $(basename "$out")" >&2; exit 1; }
cp "$gem_file" "$out"
