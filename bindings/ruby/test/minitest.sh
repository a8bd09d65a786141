#!/usr/bin/env bash
# //bindings/ruby:minitest — installs the gem locally into a fresh GEM_HOME and runs every
# test/*_test.rb against it.
set -euo pipefail
gem_file="$PWD/$1"
export FERRULE_CONFORMANCE="$PWD/$2"
export FERRULE_FIXTURES_DIR="$PWD/fixtures"
# The README, whose examples some tests serve.
export FERRULE_README="$PWD/README.md"
tests="$PWD/bindings/ruby/test"
# The fresh GEM_HOME first, then Ruby's own gem paths (minitest is one of Ruby's bundled gems).
export GEM_HOME="$TEST_TMPDIR/gems" HOME="$TEST_TMPDIR"
GEM_PATH="$GEM_HOME:$(ruby -e 'print Gem.default_path.join(":")')"
export GEM_PATH
gem install --local --no-document --install-dir "$GEM_HOME" "$gem_file" >/dev/null
cd "$TEST_TMPDIR"
status=0
for test in "$tests"/*_test.rb; do
  echo "== $(basename "$test")"
  ruby -I"$tests" "$test" || status=1
done
exit "$status"
