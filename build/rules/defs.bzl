"""Ferrule's build rules: what BUILD files load. Implementations are under private/.

  cargo_workspace, crate     one cargo action per workspace (rules_rust's rust_* rules)
  cargo_artifact             a crate's cdylib or binary, picked by crate
  cargo_binary               a crate's binary, for `bazel run`
  cargo_test, cargo_tests    a crate's test executables as Bazel tests (rules_rust's rust_test)
  py_wheel                   a wheel packed from a crate's cdylib and Python sources (rules_python's py_wheel)
  npm_package                `npm pack` of a napi-rs addon (rules_nodejs' pkg_npm)
  ruby_gem                   `gem build` of a magnus extension (rules_ruby's rb_gem_build)
  CargoInfo                  the provider: a workspace's artifacts by crate and kind
"""

load("//build/rules/private:cargo.bzl", _cargo_artifact = "cargo_artifact", _cargo_binary = "cargo_binary", _cargo_test = "cargo_test", _cargo_tests = "cargo_tests", _cargo_workspace = "cargo_workspace", _crate = "crate")
load("//build/rules/private:packaging.bzl", _npm_package = "npm_package", _ruby_gem = "ruby_gem")
load("//build/rules/private:providers.bzl", _CargoInfo = "CargoInfo")
load("//build/rules/private:wheel.bzl", _py_wheel = "py_wheel")

CargoInfo = _CargoInfo
cargo_artifact = _cargo_artifact
cargo_binary = _cargo_binary
cargo_test = _cargo_test
cargo_tests = _cargo_tests
cargo_workspace = _cargo_workspace
crate = _crate
npm_package = _npm_package
py_wheel = _py_wheel
ruby_gem = _ruby_gem
