"""Language packages from the cargo workspace's artifacts.

  npm_package  `npm pack` of a napi-rs addon + JS/TS files (stands in for rules_nodejs'
               pkg_npm / napi-rs' own `napi build` packaging)
  ruby_gem     `gem build` of a magnus/rb-sys extension + lib/ (stands in for rules_ruby's
               rb_gem_build / rake-compiler packaging)

Both run offline with Debian's / the checked host's npm and RubyGems, and both produce
byte-reproducible archives (npm pack fixes mtimes; gem build honours SOURCE_DATE_EPOCH).
"""

load("@ferrule_host//:toolchain.bzl", "HOST")

def _tool_path():
    dirs = []
    for p in [HOST["NODE"], HOST["RUBY"], HOST["NPM"], HOST["GEM"]]:
        d = p.rsplit("/", 1)[0]
        if d not in dirs:
            dirs.append(d)
    return ":".join(dirs + ["/usr/bin", "/bin"])

def _npm_package_impl(ctx):
    out = ctx.actions.declare_file("%s-%s.tgz" % (ctx.attr.package_name, HOST["FERRULE_VERSION"]))
    args = [out.path, ctx.file.addon.path, ctx.attr.addon_name] + [f.path for f in ctx.files.srcs]
    ctx.actions.run(
        mnemonic = "NpmPack",
        progress_message = "npm pack %s" % ctx.label,
        executable = ctx.file._script,
        arguments = args,
        inputs = [ctx.file.addon] + ctx.files.srcs,
        outputs = [out],
        env = {"PATH": _tool_path(), "NODE_VERSION": HOST["NODE_VERSION"], "NPM": HOST["NPM"]},
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

npm_package = rule(
    implementation = _npm_package_impl,
    attrs = {
        "package_name": attr.string(mandatory = True),
        "addon": attr.label(allow_single_file = True, mandatory = True),
        "addon_name": attr.string(default = "ferrule.node"),
        "srcs": attr.label_list(allow_files = True, doc = "package.json and the JS/TS files, packed at the package root."),
        "_script": attr.label(default = "//build/rules/private:npm_pack.sh", allow_single_file = True, executable = True, cfg = "host"),
    },
)

def _ruby_gem_impl(ctx):
    out = ctx.actions.declare_file("%s-%s-%s.gem" % (ctx.attr.gem_name, HOST["FERRULE_VERSION"], HOST["RUBY_PLATFORM"]))
    args = [out.path, ctx.file.gemspec.path, ctx.file.extension.path, ctx.attr.extension_path, ctx.attr.strip_prefix, HOST["FERRULE_VERSION"]]
    args += [f.path for f in ctx.files.srcs]
    ctx.actions.run(
        mnemonic = "GemBuild",
        progress_message = "gem build %s" % ctx.label,
        executable = ctx.file._script,
        arguments = args,
        inputs = [ctx.file.gemspec, ctx.file.extension] + ctx.files.srcs,
        outputs = [out],
        env = {"PATH": _tool_path(), "RUBY_VERSION": HOST["RUBY_VERSION"], "GEM": HOST["GEM"]},
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

ruby_gem = rule(
    implementation = _ruby_gem_impl,
    attrs = {
        "gem_name": attr.string(mandatory = True),
        "gemspec": attr.label(allow_single_file = [".gemspec"], mandatory = True),
        "extension": attr.label(allow_single_file = True, mandatory = True),
        "extension_path": attr.string(mandatory = True, doc = "Where the extension goes in the gem, e.g. lib/ferrule/ferrule.so."),
        "strip_prefix": attr.string(doc = "Package path stripped from srcs (they keep the rest)."),
        "srcs": attr.label_list(allow_files = True),
        "_script": attr.label(default = "//build/rules/private:gem_build.sh", allow_single_file = True, executable = True, cfg = "host"),
    },
)
