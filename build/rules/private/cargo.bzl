"""Cargo inside Bazel (stands in for rules_rust's rust_library/rust_binary/rust_test/
rust_shared_library and cargo_build_script).

rules_rust compiles each crate as its own Bazel action; Ferrule instead runs cargo itself,
offline, on the vendored crates, in ONE action per cargo workspace (`cargo_workspace`): one
`cargo build --release --all-targets` in one target dir, so every crate is compiled once, with
one feature set, and cargo's own feature resolution and build scripts (pyo3, napi,
rb-sys/bindgen) work unchanged. Every artifact is a declared output of that action, listed by
crate and kind in its `CargoInfo`; thin targets pick one by crate:

  cargo_workspace  the one action; `crates` says what Bazel takes from each crate
  cargo_artifact   one artifact of a crate (a cdylib, a binary) as a plain target
  cargo_binary     a crate's binary, runnable with `bazel run`
  cargo_test       runs one test executable of a crate as a Bazel test
  cargo_tests      macro: one cargo_test per test executable of a crate (this package's)

The action's command line carries the pinned rustc version (from @ferrule_host), so a
toolchain upgrade changes the action key; --config=dev (--define=ferrule_dev=1) switches to a
persistent target dir (cargo_driver.py) and links without LTO (below), for fast edit loops.
"""

load("@ferrule_host//:toolchain.bzl", "HOST")
load(":providers.bzl", "CargoInfo")

def crate(member, *kinds):
    """A `crates` entry: the crate's member directory (relative to the manifest; "" for the
    root package), then what Bazel takes from it:

      "cdylib"          its shared library
      "bin:NAME"        its binary NAME
      "tests"           its test executables: the library's unit tests (src/lib.rs) and one
                        per tests/<n>.rs or tests/<n>/main.rs
      "bin-tests:NAME"  the unit tests of its binary NAME
    """
    for kind in kinds:
        if kind not in ("cdylib", "tests") and not kind.startswith("bin:") and not kind.startswith("bin-tests:"):
            fail("crate %s: unknown artifact kind %r (cdylib, tests, bin:NAME, bin-tests:NAME)" % (member, kind))
    return [member] + list(kinds)

def test_targets(paths, member):
    """Integration tests of a member from its file paths: tests/<n>.rs and tests/<n>/main.rs."""
    prefix = member + "/tests/" if member else "tests/"
    names = []
    for p in paths:
        if not p.startswith(prefix):
            continue
        rest = p[len(prefix):]
        if "/" not in rest and rest.endswith(".rs"):
            names.append(rest[:-3])
        elif rest.count("/") == 1 and rest.endswith("/main.rs"):
            names.append(rest.split("/")[0])
    return sorted(names)

def _declare(ctx, artifacts, by_crate, crate_name, kind, target_kind, target, rel):
    out = ctx.actions.declare_file("%s/%s/%s" % (ctx.label.name, crate_name, rel))
    artifacts.append({"crate": crate_name, "kind": kind, "target_kind": target_kind, "target": target, "out": out.path})
    by_crate.setdefault(crate_name, {})[kind if kind == "cdylib" else "%s:%s" % (kind, target)] = out
    return out

def _cargo_workspace_impl(ctx):
    dev = ctx.var.get("ferrule_dev", "0") == "1"
    manifest = ctx.file.manifest
    ws_dir = manifest.dirname
    ws_rel = manifest.short_path.rsplit("/", 1)[0] if "/" in manifest.short_path else ""
    if ws_rel.startswith("../"):
        ws_rel = "external/" + ws_rel[3:]
    prefix = "" if ws_dir in ("", ".") else ws_dir + "/"
    src_paths = [f.path[len(prefix):] for f in ctx.files.srcs if f.path.startswith(prefix)]

    # Every artifact: declared here, found by the driver in cargo's messages, listed by crate.
    artifacts = []
    by_crate = {}

    bins = []
    for crate_name, entry in ctx.attr.crates.items():
        member, kinds = entry[0], entry[1:]
        for kind in kinds:
            if kind == "cdylib":
                _declare(ctx, artifacts, by_crate, crate_name, "cdylib", "cdylib", crate_name.replace("-", "_"), "cdylib.so")
            elif kind.startswith("bin:"):
                name = kind[4:]
                bins.append(name)
                _declare(ctx, artifacts, by_crate, crate_name, "bin", "bin", name, "bin/" + name)
            elif kind.startswith("bin-tests:"):
                name = kind[len("bin-tests:"):]
                _declare(ctx, artifacts, by_crate, crate_name, "test", "bin", name, "test/bin-" + name)
            elif kind == "tests":
                if (member + "/" if member else "") + "src/lib.rs" in src_paths:
                    _declare(ctx, artifacts, by_crate, crate_name, "test", "lib", "lib", "test/lib")
                for name in test_targets(src_paths, member):
                    _declare(ctx, artifacts, by_crate, crate_name, "test", "test", name, "test/" + name)

    inputs = [manifest] + ctx.files.srcs + [ctx.file.vendor_tar, ctx.file.vendor_sha, ctx.file._driver]

    # Directories a build script reads (by env var): their files are declared inputs, so a
    # change to any of them changes the action's key, and only they are in its sandbox.
    env_dirs = {}
    for target, var in ctx.attr.env_dirs.items():
        files = target.files.to_list()
        dirs = sorted({f.dirname: True for f in files}.keys())
        if len(dirs) != 1:
            fail("env_dirs: %s must be files of one directory (for %s), not of %s" % (target.label, var, dirs or "none"))
        env_dirs[var] = dirs[0]
        inputs += files
    env = {}
    if dev:
        # The edit loop links without the release profile's fat LTO, the slow part of a rebuild
        # (an edit to the core relinked the Node addon in 2m15s with it): dev outputs are neither
        # cached nor benchmarked. Set here, not in the driver, so no hermetic action's key moves.
        env["CARGO_PROFILE_RELEASE_LTO"] = "false"
    env.update(ctx.attr.env)
    spec = {
        "name": ctx.label.name,
        "manifest": manifest.path,
        "workspace_rel": ws_rel,
        "vendor_tar": ctx.file.vendor_tar.path,
        "vendor_sha": ctx.file.vendor_sha.path,
        "cargo": HOST["CARGO"],
        "rustc": HOST["RUSTC"],
        "sysroot": HOST["RUST_SYSROOT"],
        "python": HOST["PYTHON"],
        "python_version": HOST["PYTHON_VERSION"],
        "tool_dirs": [p.rsplit("/", 1)[0] for p in [HOST["PYTHON"], HOST["NODE"], HOST["RUBY"]]],
        "cache_dir": HOST["CACHE_DIR"],
        "select": ctx.attr.select,
        "only_bins": bins if ctx.attr.bin_flags else [],
        "artifacts": artifacts,
        "env": env,
        "env_dirs": env_dirs,
    }

    # Only when set: the spec is an input of the action, and a key that changed for every
    # workspace would rebuild oha (7-17 minutes) for nothing.
    if ctx.attr.rustflags:
        spec["rustflags"] = ctx.attr.rustflags
    if ctx.attr.host_target:
        spec["host_target"] = True
    spec_file = ctx.actions.declare_file(ctx.label.name + ".spec.json")
    ctx.actions.write(spec_file, struct(**spec).to_json())

    argv = [
        HOST["PYTHON"],
        ctx.file._driver.path,
        "--spec=" + spec_file.path,
        "--rustc-version=" + HOST["RUSTC_VERSION"],
        "--mode=" + ("dev" if dev else "hermetic"),
    ]
    execution_requirements = {}
    if dev:
        execution_requirements = {"no-sandbox": "1", "no-remote": "1"}
    outputs = [f for files in by_crate.values() for f in files.values()]
    ctx.actions.run(
        mnemonic = "Cargo",
        progress_message = "cargo %s (%s, rustc %s)" % (ctx.label, "dev target dir" if dev else "hermetic", HOST["RUSTC_VERSION"]),
        executable = argv[0],
        arguments = argv[1:],
        inputs = depset(inputs + [spec_file]),
        outputs = outputs,
        # PATH for cc/ld and friends; the driver builds the rest of the environment itself.
        use_default_shell_env = True,
        execution_requirements = execution_requirements,
    )
    return [
        DefaultInfo(files = depset(outputs)),
        CargoInfo(crates = by_crate, argv = argv, rustc_version = HOST["RUSTC_VERSION"]),
    ]

cargo_workspace = rule(
    implementation = _cargo_workspace_impl,
    doc = "Builds a whole cargo workspace in one action; see the file docstring.",
    attrs = {
        "manifest": attr.label(allow_single_file = ["Cargo.toml"], mandatory = True),
        "srcs": attr.label_list(allow_files = True, doc = "Every file cargo reads (manifests, lock, sources)."),
        "vendor_tar": attr.label(allow_single_file = [".tar"], mandatory = True),
        "vendor_sha": attr.label(allow_single_file = True, mandatory = True),
        "crates": attr.string_list_dict(
            mandatory = True,
            doc = "crate (package) name -> crate(member dir, kinds...): what Bazel takes from each crate.",
        ),
        "select": attr.string_list(default = ["--workspace"], doc = "Package selection for cargo build."),
        "bin_flags": attr.bool(default = False, doc = "Build only the named binaries (--bin NAME), not every target."),
        "env": attr.string_dict(),
        "env_dirs": attr.label_keyed_string_dict(
            allow_files = True,
            doc = "files of one directory -> the env var that gets its path (made absolute by the driver); " +
                  "the files are inputs of the action. E.g. Swagger UI's files for core/build.rs.",
        ),
        "rustflags": attr.string_list(doc = "Extra rustc flags for every crate compiled for the target (e.g. coverage instrumentation)."),
        "host_target": attr.bool(
            default = False,
            doc = "Build for an explicit --target (the host's triple), so rustflags reach the target's crates " +
                  "but not build scripts and proc macros, which run on the host.",
        ),
        "_driver": attr.label(default = "//build/rules/private:cargo_driver.py", allow_single_file = True),
    },
)

def _artifact(ctx, key):
    crates = ctx.attr.workspace[CargoInfo].crates
    if ctx.attr.crate not in crates:
        fail("%s builds no artifact of crate %s (its crates: %s)" % (ctx.attr.workspace.label, ctx.attr.crate, ", ".join(sorted(crates))))
    artifacts = crates[ctx.attr.crate]
    if key not in artifacts:
        fail("%s builds no %s of crate %s (it builds: %s)" % (ctx.attr.workspace.label, key, ctx.attr.crate, ", ".join(sorted(artifacts))))
    return artifacts[key]

def _cargo_artifact_impl(ctx):
    src = _artifact(ctx, ctx.attr.kind)
    if not ctx.attr.executable:
        return [DefaultInfo(files = depset([src]), runfiles = ctx.runfiles(files = [src]))]
    out = ctx.actions.declare_file(ctx.label.name)
    ctx.actions.symlink(output = out, target_file = src, is_executable = True)
    return [DefaultInfo(files = depset([out]), executable = out, runfiles = ctx.runfiles(files = [out, src]))]

_artifact_attrs = {
    "workspace": attr.label(mandatory = True, providers = [CargoInfo]),
    "crate": attr.string(mandatory = True, doc = "The crate (package) name, as in the workspace's `crates`."),
}

cargo_artifact = rule(
    implementation = _cargo_artifact_impl,
    doc = "One artifact of a crate built by a cargo_workspace: kind \"cdylib\" or \"bin:NAME\".",
    attrs = dict(_artifact_attrs, kind = attr.string(mandatory = True), executable = attr.bool(default = False)),
)

_cargo_binary = rule(
    implementation = _cargo_artifact_impl,
    attrs = dict(_artifact_attrs, kind = attr.string(mandatory = True), executable = attr.bool(default = True)),
    executable = True,
)

def cargo_binary(name, crate, workspace = "//:cargo", bin = None, **kwargs):
    """A crate's binary (`bin`, default: the target's name), runnable with `bazel run`."""
    _cargo_binary(name = name, crate = crate, kind = "bin:" + (bin or name), workspace = workspace, **kwargs)

def _sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"

def _cargo_test_impl(ctx):
    exe = _artifact(ctx, ctx.attr.test)
    launcher = ctx.actions.declare_file(ctx.label.name + ".sh")
    lines = ["#!/bin/sh", "# Runs one cargo test executable from the runfiles tree.", "set -e"]
    for k, v in sorted(ctx.attr.runfiles_env.items()):
        lines.append('export %s="$PWD"/%s' % (k, _sh_quote(v)))
    for k, v in sorted(ctx.attr.env.items()):
        lines.append("export %s=%s" % (k, _sh_quote(v)))
    lines.append('exec ./%s "$@"' % _sh_quote(exe.short_path))
    ctx.actions.write(launcher, "\n".join(lines) + "\n", is_executable = True)
    runfiles = ctx.runfiles(files = [exe] + ctx.files.data)
    for d in ctx.attr.data:
        runfiles = runfiles.merge(d[DefaultInfo].default_runfiles)
    return [DefaultInfo(executable = launcher, runfiles = runfiles)]

cargo_test = rule(
    implementation = _cargo_test_impl,
    doc = "Runs one test executable of a crate (\"test:lib\", \"test:NAME\", \"test:bin-NAME\") as a Bazel test.",
    attrs = dict(
        _artifact_attrs,
        test = attr.string(mandatory = True),
        data = attr.label_list(allow_files = True),
        env = attr.string_dict(),
        runfiles_env = attr.string_dict(doc = "env var -> path relative to the runfiles root (made absolute)."),
    ),
    test = True,
)

def cargo_tests(crate, workspace = "//:cargo", bins = [], **kwargs):
    """One cargo_test per test executable of `crate`, whose member is this package: :unit_tests
    (src/lib.rs), :bin_<name>_tests per binary in `bins`, and one per tests/<n>.rs or
    tests/<n>/main.rs. Must agree with cargo_workspace's derivation (test_targets)."""
    paths = native.glob(["tests/*.rs", "tests/*/main.rs", "src/lib.rs"])
    if "src/lib.rs" in paths:
        cargo_test(name = "unit_tests", crate = crate, workspace = workspace, test = "test:lib", **kwargs)
    for b in bins:
        cargo_test(name = "bin_%s_tests" % b.replace("-", "_"), crate = crate, workspace = workspace, test = "test:" + b, **kwargs)
    for name in test_targets(paths, ""):
        cargo_test(name = name, crate = crate, workspace = workspace, test = "test:" + name, **kwargs)
