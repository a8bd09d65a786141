"""@ferrule_host: checks the host toolchains and records their versions and paths.

Stands in for the toolchain setup of rules_rust (rust_register_toolchains), rules_python
(python_register_toolchains), rules_nodejs (node_repositories) and rules_ruby: those
download toolchains, which this network does not allow, so Ferrule pins versions and checks
the host's instead. The generated `toolchain.bzl` feeds the build rules; every version ends up
on an action's command line, so a toolchain upgrade changes the action keys.
"""

_REQUIRED = {
    "python": ("3.11", "install CPython 3.11 (Debian bookworm: apt-get install python3 python3-venv)"),
    "node": ("20", "install Node.js 20.x"),
    "ruby": ("3.1", "install Ruby 3.1 (Debian bookworm: apt-get install ruby ruby-dev)"),
}

def _stop(msg):
    # One line, printed by Bazel as "Error in fail: ferrule: ...".
    fail("ferrule: " + msg)

def _run(rctx, args, what, cwd = None):
    kwargs = {"quiet": True}
    if cwd:
        kwargs["working_directory"] = cwd
    res = rctx.execute(args, **kwargs)
    if res.return_code != 0:
        _stop("%s failed (%s): %s" % (what, " ".join([str(a) for a in args]), (res.stderr or res.stdout).strip().split("\n")[-1]))
    return res.stdout.strip()

def _which(rctx, name, hint):
    p = rctx.which(name)
    if p == None:
        _stop("%s not found on PATH — %s" % (name, hint))
    return str(p)

def _toml_value(text, key):
    # Finds `key = "value"` (first occurrence); enough for rust-toolchain.toml and Cargo.toml.
    for line in text.split("\n"):
        line = line.strip()
        if line.startswith(key) and "=" in line and line.split("=")[0].strip() == key:
            v = line.split("=", 1)[1].strip()
            if v.startswith('"'):
                return v[1:].split('"')[0]
    return None

def _check_series(rctx, tool, version):
    want, hint = _REQUIRED[tool]
    if version != want and not version.startswith(want + "."):
        _stop("%s %s found, %s.x required — %s" % (tool, version, want, hint))

def _host_impl(rctx):
    workspace = rctx.path(Label("//:WORKSPACE.bazel")).dirname
    pin_text = rctx.read(Label("//:rust-toolchain.toml"))
    rust_pin = _toml_value(pin_text, "channel")
    cargo_toml = rctx.read(Label("//:Cargo.toml"))
    ferrule_version = _toml_value(cargo_toml.split("[workspace.package]")[-1], "version")

    # Rust: ask the rustup proxy (or a plain rustc) in the workspace so rust-toolchain.toml
    # applies, then use the toolchain's own binaries by path (actions have no HOME for rustup).
    rustc = _which(rctx, "rustc", "install Rust %s with rustup" % rust_pin)
    rustc_v = _run(rctx, [rustc, "--version"], "rustc --version", cwd = str(workspace))
    rustc_version = rustc_v.split(" ")[1] if len(rustc_v.split(" ")) > 1 else rustc_v
    if rustc_version != rust_pin:
        _stop("rustc %s found, %s required — run: rustup toolchain install %s" % (rustc_version, rust_pin, rust_pin))
    sysroot = _run(rctx, [rustc, "--print", "sysroot"], "rustc --print sysroot", cwd = str(workspace))
    for tool in ["rustc", "cargo"]:
        if not rctx.path(sysroot + "/bin/" + tool).exists:
            _stop("%s missing from the Rust %s toolchain at %s — run: rustup toolchain install %s" % (tool, rust_pin, sysroot, rust_pin))
    cargo_v = _run(rctx, [sysroot + "/bin/cargo", "--version"], "cargo --version")

    # Python: the real interpreter behind any shim (pyenv), and venv support.
    python3 = _which(rctx, "python3", _REQUIRED["python"][1])
    py = _run(rctx, [python3, "-c", "import sys, platform, venv, ensurepip; print(sys.executable); print(platform.python_version())"], "python3 (with venv and ensurepip)").split("\n")
    python, python_version = py[0].strip(), py[1].strip()
    _check_series(rctx, "python", python_version)

    node = _which(rctx, "node", _REQUIRED["node"][1])
    node_version = _run(rctx, [node, "--version"], "node --version").lstrip("v")
    _check_series(rctx, "node", node_version)
    npm = _which(rctx, "npm", "install npm (it ships with Node.js 20)")

    ruby = _which(rctx, "ruby", _REQUIRED["ruby"][1])
    rb = _run(rctx, [ruby, "-e", "require 'rbconfig'; puts RUBY_VERSION, RbConfig.ruby, Gem::Platform.local.to_s, File.join(RbConfig::CONFIG['bindir'], 'gem'), RbConfig::CONFIG['rubyhdrdir']"], "ruby").split("\n")
    ruby_version, ruby_path, ruby_platform, gem, ruby_hdr = rb[0], rb[1], rb[2], rb[3], rb[4]
    _check_series(rctx, "ruby", ruby_version)
    if not rctx.path(ruby_hdr + "/ruby.h").exists:
        _stop("ruby.h not found in %s — install the Ruby headers (apt-get install ruby-dev)" % ruby_hdr)
    if not rctx.path(gem).exists:
        gem = _which(rctx, "gem", "install RubyGems (apt-get install ruby)")

    values = {
        "FERRULE_VERSION": ferrule_version,
        "RUSTC_VERSION": rustc_version,
        "RUSTC_VERSION_LINE": rustc_v,
        "CARGO_VERSION_LINE": cargo_v,
        "RUST_SYSROOT": sysroot,
        "RUSTC": sysroot + "/bin/rustc",
        "CARGO": sysroot + "/bin/cargo",
        "PYTHON": python,
        "PYTHON_VERSION": python_version,
        "NODE": node,
        "NODE_VERSION": node_version,
        "NPM": npm,
        "RUBY": ruby_path,
        "RUBY_VERSION": ruby_version,
        "RUBY_PLATFORM": ruby_platform,
        "GEM": gem,
        "CACHE_DIR": rctx.os.environ.get("FERRULE_CACHE_DIR", rctx.os.environ.get("HOME", "/tmp") + "/.cache/ferrule"),
    }
    lines = ['"""Generated by @ferrule_host (build/rules/private/host.bzl): host toolchain versions and paths."""', ""]
    for k in sorted(values.keys()):
        lines.append("%s = %r" % (k, values[k]))
    lines.append("")
    lines.append("HOST = {")
    for k in sorted(values.keys()):
        lines.append("    %r: %s," % (k, k))
    lines.append("}")
    rctx.file("toolchain.bzl", "\n".join(lines) + "\n")
    rctx.file("toolchain.json", struct(**values).to_json() + "\n")
    rctx.file("toolchain.env", "".join(["%s=%s\n" % (k, values[k]) for k in sorted(values.keys())]))
    rctx.file("WORKSPACE.bazel", 'workspace(name = "%s")\n' % rctx.name)
    rctx.file("BUILD.bazel", """# Generated by @ferrule_host (build/rules/private/host.bzl).
load("@bazel_tools//tools/python:toolchain.bzl", "py_runtime_pair")

package(default_visibility = ["//visibility:public"])

exports_files(["toolchain.bzl", "toolchain.env", "toolchain.json"])

# Python toolchain: the checked host python3, by absolute path (Bazel's default
# autodetecting toolchain looks for `python`, which does not exist here).
py_runtime(
    name = "python3_runtime",
    interpreter_path = "{python}",
    python_version = "PY3",
)

py_runtime_pair(
    name = "python_runtimes",
    py3_runtime = ":python3_runtime",
)

toolchain(
    name = "python_toolchain",
    toolchain = ":python_runtimes",
    toolchain_type = "@bazel_tools//tools/python:toolchain_type",
)
""".format(python = python))

ferrule_host = repository_rule(
    implementation = _host_impl,
    # Re-run on every fetch (and so on every Bazel server start) and whenever one of these
    # variables changes: bazelw passes FERRULE_TOOLCHAIN_STAMP (the tools' version lines) so a
    # toolchain upgrade is seen at once, even by a running server.
    local = True,
    environ = ["PATH", "HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "FERRULE_CACHE_DIR", "FERRULE_TOOLCHAIN_STAMP"],
)
