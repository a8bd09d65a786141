"""Every external repository of Ferrule (called once from WORKSPACE.bazel)."""

load("//build/rules/private:crates.bzl", "cargo_vendor")
load("//build/rules/private:go.bzl", "go_tool")
load("//build/rules/private:host.bzl", "ferrule_host")
load("//build/rules/private:node.bzl", "npm_ci")
load("//build/rules/private:python.bzl", "pip_venv")

# The pinned load generator for the benchmarks.
OHA_VERSION = "1.16.0"

# The HTTP/2 conformance checker the reliability tests run (its newest release on the module
# proxy; upstream tags v2.x without a /v2 module path, hence +incompatible).
H2SPEC_VERSION = "v2.2.1+incompatible"

def ferrule_repositories():
    ferrule_host(name = "ferrule_host")

    cargo_vendor(
        name = "ferrule_crates",
        lockfile = "//:Cargo.lock",
        manifests = [
            "//:Cargo.toml",
            "//core:Cargo.toml",
            "//core:conformance/Cargo.toml",
            "//core/fuzz:Cargo.toml",
            "//bench:Cargo.toml",
            "//bindings/python:Cargo.toml",
            "//bindings/node:Cargo.toml",
            "//bindings/ruby:Cargo.toml",
        ],
    )

    cargo_vendor(
        name = "oha",
        crate = "oha",
        version = OHA_VERSION,
    )

    go_tool(
        name = "h2spec",
        package = "github.com/summerwind/h2spec/cmd/h2spec",
        version = H2SPEC_VERSION,
        binary = "h2spec",
    )

    pip_venv(
        name = "ferrule_py",
        lock = "//third_party/python:requirements.lock",
    )

    npm_ci(
        name = "ferrule_npm",
        package_json = "//third_party/node:package.json",
        package_lock = "//third_party/node:package-lock.json",
    )
