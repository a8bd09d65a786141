#!/usr/bin/env bash
# //bindings/ruby:gem_test — the gem installs locally (no network) and loads.
set -euo pipefail
gem_file="$PWD/$1"
smoke="$PWD/bindings/ruby/test/smoke.rb"
export GEM_HOME="$TEST_TMPDIR/gems" GEM_PATH="$TEST_TMPDIR/gems" HOME="$TEST_TMPDIR"
gem install --local --no-document --install-dir "$GEM_HOME" "$gem_file" >/dev/null
cd "$TEST_TMPDIR"
ruby "$smoke"
