"""`go_tool`: a command-line tool published as a Go module, built in the fetch phase.

Stands in for **rules_go**'s `go_repository` + `go_binary` for tools the tests run (h2spec):
`go install module/cmd@version` through the Go module proxy (the module and its dependencies
are checked against the checksum database, as `go install` always does), with -trimpath and no
VCS stamp so the same Go version gives the same bytes on every machine.
"""

load(":common.bzl", "run")

def _go_tool_impl(rctx):
    go = rctx.which("go")
    if not go:
        fail("ferrule: go not found (./bazelw installs Debian's golang-go)")
    home = rctx.path("home")
    env = {
        "HOME": str(home),
        "GOPATH": str(rctx.path("gopath")),
        "GOBIN": str(rctx.path("bin")),
        "GOCACHE": str(rctx.path("gocache")),
        "GOFLAGS": "-modcacherw -trimpath -buildvcs=false",
        "GOTOOLCHAIN": "local",
        "CGO_ENABLED": "0",
        "PATH": rctx.os.environ.get("PATH", "/usr/bin:/bin"),
    }
    version = run(rctx, [go, "env", "GOVERSION"], "go env GOVERSION", env = env).stdout.strip()
    run(rctx, [go, "install", "%s@%s" % (rctx.attr.package, rctx.attr.version)], "go install " + rctx.attr.package, env = env, timeout = 900)
    # Only the binary stays: the module and build caches are large and not needed again.
    rctx.delete("gopath")
    rctx.delete("gocache")
    rctx.delete("home")
    rctx.file("BUILD.bazel", """# %s@%s, built by %s (build/rules/private/go.bzl).
exports_files(["bin/%s"])
""" % (rctx.attr.package, rctx.attr.version, version, rctx.attr.binary))

go_tool = repository_rule(
    implementation = _go_tool_impl,
    attrs = {
        "package": attr.string(mandatory = True, doc = "the main package, e.g. github.com/summerwind/h2spec/cmd/h2spec"),
        "version": attr.string(mandatory = True, doc = "an exact module version"),
        "binary": attr.string(mandatory = True, doc = "the installed binary's name"),
    },
    environ = ["PATH"],
)
