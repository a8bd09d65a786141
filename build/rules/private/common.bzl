"""Helpers shared by Ferrule's repository rules."""

def host_values(rctx):
    """Reads @ferrule_host's toolchain.env (KEY=value lines) into a dict."""
    values = {}
    for line in rctx.read(Label("@ferrule_host//:toolchain.env")).split("\n"):
        if "=" in line:
            k, v = line.split("=", 1)
            values[k] = v
    return values

def run(rctx, args, what, env = {}, cwd = None, timeout = 3600):
    """Runs a command in the fetch phase; stops with one line naming it if it fails."""
    kwargs = {"environment": env, "timeout": timeout, "quiet": True}
    if cwd:
        kwargs["working_directory"] = str(cwd)
    res = rctx.execute([str(a) for a in args], **kwargs)
    if res.return_code != 0:
        fail("ferrule: %s failed (exit %d): %s" % (what, res.return_code, (res.stderr + res.stdout).strip()[-2000:]))
    return res

def try_run(rctx, args, env = {}, cwd = None, timeout = 3600):
    kwargs = {"environment": env, "timeout": timeout, "quiet": True}
    if cwd:
        kwargs["working_directory"] = str(cwd)
    return rctx.execute([str(a) for a in args], **kwargs).return_code == 0

# Deterministic tar: same bytes for the same tree on every machine, so the archive's digest
# (an input of every cargo action) is stable and remote cache keys match across machines.
TAR_FLAGS = ["--sort=name", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner", "--format=gnu", "--mode=a+rX,u+w,go-w"]

def deterministic_tar(rctx, out, dir_name, cwd):
    run(rctx, ["tar"] + TAR_FLAGS + ["-cf", out, dir_name], "tar " + dir_name, cwd = cwd)
    sha = run(rctx, ["sha256sum", out], "sha256sum", cwd = cwd).stdout.split(" ")[0]
    return sha
