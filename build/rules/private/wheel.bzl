"""py_wheel: a Python wheel packed from a compiled extension and Python sources (stands in for
rules_python's py_wheel; replaces building the extension a second time with maturin).

The extension is the crate's cdylib from the one cargo action, so the wheel costs a zip, not a
compile. Metadata comes from the project's pyproject.toml (`[project]`); the file name and tag
are declared here, and wheel.py refuses an extension that needs a newer glibc than the tag's
manylinux version promises. Byte-reproducible: sorted entries, fixed timestamps.
"""

load("@ferrule_host//:toolchain.bzl", "HOST")

def _py_wheel_impl(ctx):
    tag = "%s-%s-%s" % (ctx.attr.python_tag, ctx.attr.abi_tag, ctx.attr.platform_tag)
    out = ctx.actions.declare_file("%s-%s-%s.whl" % (ctx.attr.distribution, HOST["FERRULE_VERSION"], tag))
    args = ctx.actions.args()
    args.add("--out", out)
    args.add("--pyproject", ctx.file.pyproject)
    args.add("--distribution", ctx.attr.distribution)
    args.add("--version", HOST["FERRULE_VERSION"])
    args.add("--tag", tag)
    args.add("--extension", ctx.file.extension)
    args.add("--extension-module", ctx.attr.extension_module)
    args.add("--strip-prefix", ctx.attr.strip_prefix or ctx.label.package)
    args.add_all(ctx.files.srcs)
    ctx.actions.run(
        mnemonic = "PyWheel",
        progress_message = "packing %s" % out.basename,
        executable = HOST["PYTHON"],
        arguments = [ctx.file._packer.path, args],
        inputs = [ctx.file._packer, ctx.file.pyproject, ctx.file.extension] + ctx.files.srcs,
        outputs = [out],
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

py_wheel = rule(
    implementation = _py_wheel_impl,
    attrs = {
        "distribution": attr.string(mandatory = True),
        "pyproject": attr.label(allow_single_file = ["pyproject.toml"], mandatory = True),
        "extension": attr.label(allow_single_file = True, mandatory = True, doc = "The compiled module (a cargo_artifact cdylib)."),
        "extension_module": attr.string(mandatory = True, doc = "Its dotted name, e.g. ferrule._ferrule."),
        "srcs": attr.label_list(allow_files = True, doc = "The package's Python files (and stubs, py.typed)."),
        "strip_prefix": attr.string(doc = "Removed from the sources' paths (default: this package)."),
        "python_tag": attr.string(default = "cp310"),
        "abi_tag": attr.string(default = "abi3"),
        "platform_tag": attr.string(mandatory = True, doc = "e.g. manylinux_2_34_x86_64"),
        "_packer": attr.label(default = "//build/rules/private:wheel.py", allow_single_file = True),
    },
)
