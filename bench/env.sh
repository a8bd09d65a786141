# Sourced by bench/run.sh and bench/load_test.sh (from their runfiles directory): points the
# harness at the pinned tools, the packages under test and the generated servers.
#   bench_env OHA TOOLCHAIN_ENV PYTHON WHEEL NPM_PACKAGE_JSON NPM_TARBALL GEM
# (the caller then drops those seven arguments with `shift 7`).
bench_env() {
  local toolchain="$PWD/$2"
  export FERRULE_OHA="$PWD/$1"
  export FERRULE_FIXTURES_DIR="$PWD/fixtures"
  export FERRULE_BENCH_APPS="$PWD/bench/apps"
  # The runfiles entry links to the lock venv's bin/python; keep the venv path (one readlink).
  FERRULE_BENCH_PYTHON="$(readlink "$3" || echo "$3")"
  export FERRULE_BENCH_PYTHON
  FERRULE_BENCH_NODE="$(sed -n 's/^NODE=//p' "$toolchain")"
  export FERRULE_BENCH_NODE
  local site
  site="$(mktemp -d "${TMPDIR:-/tmp}/ferrule-bench-site.XXXXXX")"
  trap 'rm -rf "'"$site"'"' EXIT
  # A wheel is a zip of the installed files: unpacked, it is an install (dist-info included).
  "$FERRULE_BENCH_PYTHON" -m zipfile -e "$PWD/$4" "$site/python"
  export FERRULE_BENCH_PYTHONPATH="$site/python"
  # The npm tarball unpacked as node_modules/ferrule, next to the pinned peers' node_modules.
  mkdir -p "$site/node_modules/ferrule"
  tar -xzf "$PWD/$6" -C "$site/node_modules/ferrule" --strip-components=1
  export FERRULE_BENCH_NODE_PATH="$site/node_modules:$(dirname "$PWD/$5")/node_modules"
  # The gem's files (a .gem is a tar holding data.tar.gz): its lib/ on RUBYLIB.
  FERRULE_BENCH_RUBY="$(sed -n 's/^RUBY=//p' "$toolchain")"
  export FERRULE_BENCH_RUBY
  mkdir -p "$site/gem"
  tar -xOf "$PWD/$7" data.tar.gz | tar -xz -C "$site/gem"
  export FERRULE_BENCH_RUBYLIB="$site/gem/lib"
}
