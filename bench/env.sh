# Sourced by bench/run.sh and bench/load_test.sh (from their runfiles directory): points the
# harness at the pinned tools and the generated servers.
#   bench_env OHA PYTHON WHEEL
bench_env() {
  export FERRULE_OHA="$PWD/$1"
  export FERRULE_FIXTURES_DIR="$PWD/fixtures"
  export FERRULE_BENCH_APPS="$PWD/bench/apps"
  # The runfiles entry links to the lock venv's bin/python; keep the venv path (one readlink).
  FERRULE_BENCH_PYTHON="$(readlink "$2" || echo "$2")"
  export FERRULE_BENCH_PYTHON
  # A wheel is a zip of the installed files: unpacked, it is an install (dist-info included).
  local site
  site="$(mktemp -d "${TMPDIR:-/tmp}/ferrule-bench-site.XXXXXX")"
  "$FERRULE_BENCH_PYTHON" -m zipfile -e "$PWD/$3" "$site"
  export FERRULE_BENCH_PYTHONPATH="$site"
  trap 'rm -rf "$FERRULE_BENCH_PYTHONPATH"' EXIT
}
