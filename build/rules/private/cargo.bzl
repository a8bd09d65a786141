"""Cargo inside Bazel (stands in for rules_rust's rust_library/rust_binary/rust_test/
rust_shared_library and cargo_build_script).

rules_rust compiles each crate as its own Bazel action; Ferrule instead runs cargo itself,
offline, on the vendored crates, in ONE action per cargo workspace (`cargo_workspace`), so
the crate graph is compiled once per build and cargo's own feature resolution, build
scripts (pyo3, napi, rb-sys/bindgen) and maturin work unchanged. Every artifact is a
declared output of that action; thin targets pick one:

  cargo_workspace  the one action: wheel (maturin), binaries, cdylibs, test executables
  cargo_artifact   one declared output of it, as a normal (optionally executable) target
  cargo_test       runs one cargo test executable as a Bazel test
  cargo_tests      macro: one cargo_test per integration test file of a member, plus its
                   unit tests

The action command line carries the pinned rustc version (from @ferrule_host), so a
toolchain upgrade changes the action key; --config=dev (--define=ferrule_dev=1) switches
to a persistent target dir for fast edit loops (build/rules/cargo_driver.py).
"""

load("@ferrule_host//:toolchain.bzl", "HOST")

CargoWorkspaceInfo = provider(
    doc = "What a cargo_workspace action was asked to build (used by the rule-layer tests).",
    fields = {
        "argv": "the driver's command line",
        "rustc_version": "the toolchain version it pins",
        "outputs": "dict: output group name -> File",
    },
)

def _member_of(path, members):
    for m in members:
        if path.startswith(m + "/"):
            return m
    return None

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

def group_name(kind, *parts):
    return kind + "__" + "__".join([p.replace("/", "_") for p in parts])

def _declare(ctx, groups, outputs, group, rel):
    f = ctx.actions.declare_file(ctx.label.name + "/" + rel)
    groups[group] = f
    outputs.append(f)
    return f

def _cargo_workspace_impl(ctx):
    dev = ctx.var.get("ferrule_dev", "0") == "1"
    manifest = ctx.file.manifest
    ws_dir = manifest.dirname
    ws_rel = manifest.short_path.rsplit("/", 1)[0] if "/" in manifest.short_path else ""
    if ws_rel.startswith("../"):
        ws_rel = "external/" + ws_rel[3:]
    groups = {}
    outputs = []

    # Test executables, derived from the sources each member ships.
    tests = []
    prefix = "" if ws_dir in ("", ".") else ws_dir + "/"
    src_paths = [f.path[len(prefix):] for f in ctx.files.srcs if f.path.startswith(prefix)]
    for member, package in ctx.attr.test_members.items():
        lib = (member + "/" if member else "") + "src/lib.rs"
        if lib in src_paths:
            crate = package.replace("-", "_")
            out = _declare(ctx, groups, outputs, group_name("test", member, "lib"), "tests/%s/lib" % member)
            tests.append({"member": member or ".", "kind": "lib", "name": crate, "out": out.path})
        for name in test_targets(src_paths, member):
            out = _declare(ctx, groups, outputs, group_name("test", member, name), "tests/%s/%s" % (member, name))
            tests.append({"member": member or ".", "kind": "test", "name": name, "out": out.path})
    for member, bins in ctx.attr.bin_tests.items():
        for b in bins:
            out = _declare(ctx, groups, outputs, group_name("test", member, "bin", b), "tests/%s/bin-%s" % (member, b))
            tests.append({"member": member or ".", "kind": "bin", "name": b, "out": out.path})

    bins = [{"name": b, "out": _declare(ctx, groups, outputs, group_name("bin", b), "bin/" + b).path} for b in ctx.attr.bins]
    cdylibs = [{"name": c, "out": _declare(ctx, groups, outputs, group_name("cdylib", c), "lib/lib%s.so" % c).path} for c in ctx.attr.cdylibs]

    inputs = [manifest] + ctx.files.srcs + [ctx.file.vendor_tar, ctx.file.vendor_sha, ctx.file._driver]
    wheel = None
    if ctx.attr.wheel_name:
        out = _declare(ctx, groups, outputs, "wheel", "wheel/" + ctx.attr.wheel_name)
        wheel = {
            "maturin": ctx.file.maturin.path,
            "manifest": ctx.attr.wheel_manifest,
            "compatibility": ctx.attr.wheel_compatibility,
            "out": out.path,
        }
        inputs += [ctx.file.maturin] + ctx.files.python_lock

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
        "bin_flags": ctx.attr.bin_flags,
        "bins": bins,
        "cdylibs": cdylibs,
        "tests": tests,
        "wheel": wheel,
        "env": ctx.attr.env,
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
        OutputGroupInfo(**{k: depset([v]) for k, v in groups.items()}),
        CargoWorkspaceInfo(argv = argv, rustc_version = HOST["RUSTC_VERSION"], outputs = groups),
    ]

cargo_workspace = rule(
    implementation = _cargo_workspace_impl,
    doc = "Builds a whole cargo workspace in one action; see the file docstring.",
    attrs = {
        "manifest": attr.label(allow_single_file = ["Cargo.toml"], mandatory = True),
        "srcs": attr.label_list(allow_files = True, doc = "Every file cargo reads (manifests, lock, sources)."),
        "vendor_tar": attr.label(allow_single_file = [".tar"], mandatory = True),
        "vendor_sha": attr.label(allow_single_file = True, mandatory = True),
        "select": attr.string_list(default = ["--workspace"], doc = "Package selection for cargo build/test."),
        "bins": attr.string_list(),
        "bin_flags": attr.bool(default = False, doc = "Pass --bin for each of bins (build only those)."),
        "cdylibs": attr.string_list(doc = "lib names of cdylib crates (lib<name>.so)."),
        "test_members": attr.string_dict(doc = "member dir -> package name, whose lib and tests/ run as Bazel tests."),
        "bin_tests": attr.string_list_dict(doc = "member dir -> binaries whose unit tests run as Bazel tests."),
        "wheel_name": attr.string(doc = "File name of the wheel maturin must produce (empty: no wheel)."),
        "wheel_manifest": attr.string(),
        "wheel_compatibility": attr.string(default = "manylinux_2_34"),
        "maturin": attr.label(allow_single_file = True),
        "python_lock": attr.label(allow_files = True),
        "env": attr.string_dict(),
        "rustflags": attr.string_list(doc = "Extra rustc flags for every crate compiled for the target (e.g. coverage instrumentation)."),
        "host_target": attr.bool(
            default = False,
            doc = "Build for an explicit --target (the host's triple), so rustflags reach the target's crates " +
                  "but not build scripts and proc macros, which run on the host.",
        ),
        "_driver": attr.label(default = "//build/rules:cargo_driver.py", allow_single_file = True),
    },
)

def _cargo_artifact_impl(ctx):
    files = ctx.attr.workspace[OutputGroupInfo][ctx.attr.group].to_list()
    if len(files) != 1:
        fail("output group %s of %s has %d files" % (ctx.attr.group, ctx.attr.workspace.label, len(files)))
    src = files[0]
    if not ctx.attr.executable:
        return [DefaultInfo(files = depset([src]), runfiles = ctx.runfiles(files = [src]))]
    out = ctx.actions.declare_file(ctx.label.name)
    ctx.actions.symlink(output = out, target_file = src, is_executable = True)
    return [DefaultInfo(files = depset([out]), executable = out, runfiles = ctx.runfiles(files = [out, src]))]

_artifact_attrs = {
    "workspace": attr.label(mandatory = True, providers = [CargoWorkspaceInfo]),
    "group": attr.string(mandatory = True),
}

cargo_artifact = rule(
    implementation = _cargo_artifact_impl,
    doc = "One declared output of a cargo_workspace (a wheel, a cdylib, a binary).",
    attrs = dict(_artifact_attrs, executable = attr.bool(default = False)),
)

cargo_binary = rule(
    implementation = _cargo_artifact_impl,
    doc = "A binary of a cargo_workspace, runnable with `bazel run`.",
    attrs = dict(_artifact_attrs, executable = attr.bool(default = True)),
    executable = True,
)

def _sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"

def _cargo_test_impl(ctx):
    exe = ctx.attr.workspace[OutputGroupInfo][ctx.attr.group].to_list()[0]
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
    doc = "Runs one test executable built by a cargo_workspace as a Bazel test.",
    attrs = dict(
        _artifact_attrs,
        data = attr.label_list(allow_files = True),
        env = attr.string_dict(),
        runfiles_env = attr.string_dict(doc = "env var -> path relative to the runfiles root (made absolute)."),
    ),
    test = True,
)

def cargo_tests(member, workspace = "//:cargo", bins = [], **kwargs):
    """One cargo_test per integration test of `member` (this package), plus its unit tests.

    Must agree with cargo_workspace's derivation (test_targets): both read tests/<n>.rs and
    tests/<n>/main.rs.
    """
    paths = native.glob(["tests/*.rs", "tests/*/main.rs", "src/lib.rs"])
    if "src/lib.rs" in paths:
        cargo_test(name = "unit_tests", workspace = workspace, group = group_name("test", member, "lib"), **kwargs)
    for b in bins:
        cargo_test(name = "bin_%s_tests" % b.replace("-", "_"), workspace = workspace, group = group_name("test", member, "bin", b), **kwargs)
    for name in test_targets(paths, ""):
        cargo_test(name = name, workspace = workspace, group = group_name("test", member, name), **kwargs)
