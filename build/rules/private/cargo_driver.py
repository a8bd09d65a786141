#!/usr/bin/env python3
"""Runs one cargo workspace build inside a Bazel action (see build/rules/private/cargo.bzl).

One invocation builds every artifact of a workspace: `cargo build --release --frozen
--all-targets` (or `--bin NAME` for a tool such as oha) in ONE target dir, so every crate is
compiled once, with one feature set, for binaries, cdylibs and test executables alike. Each
artifact is found in cargo's --message-format=json messages by crate and kind and copied to
the output Bazel declared for it. (The Python wheel is packed from the cdylib by wheel.py, in
an action of its own.)

The spec (a JSON file written at analysis time) names inputs and outputs; the toolchain's
rustc version is also on the command line, so a toolchain upgrade changes the action key.
Cargo runs offline against the vendored crates (a `[source]` replacement in a scratch
CARGO_HOME); --remap-path-prefix (CARGO_ENCODED_RUSTFLAGS, which cc-rs maps to
-ffile-prefix-map for C code) keeps the outputs byte-identical wherever the action runs.

Modes: "hermetic" (default): a fresh target dir, deleted afterwards. "dev" (--config=dev):
a persistent target dir and vendor copy under the user's cache, run unsandboxed with stable
paths, so an edit rebuilds in about a second.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

# Zip (wheel) timestamps cannot predate 1980-01-01.
SOURCE_DATE_EPOCH = "315532800"


def log(msg):
    print("cargo-driver: " + msg, file=sys.stderr, flush=True)


def die(msg):
    print("ferrule: " + msg, file=sys.stderr, flush=True)
    sys.exit(1)


def run(cmd, env, cwd, capture_json=False):
    """Runs a command; with capture_json, returns the parsed JSON messages of its stdout."""
    started = time.monotonic()
    if not capture_json:
        proc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out = proc.stdout
        messages = []
    else:
        proc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out = proc.stderr
        messages = []
        for line in proc.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    messages.append(json.loads(line))
                except ValueError:
                    pass
    if proc.returncode != 0:
        sys.stderr.write("$ " + " ".join(cmd) + "\n" + out)
        die("%s failed (exit %d)" % (" ".join(cmd[:2]), proc.returncode))
    return messages, out, time.monotonic() - started


def extract_vendor(tar, dest):
    os.makedirs(dest, exist_ok=True)
    subprocess.run(["tar", "-xf", tar, "-C", dest], check=True)


def stable_vendor(tar, sha, cache):
    """--config=dev: one extracted copy per vendor digest, reused by every build."""
    root = os.path.join(cache, "vendor", sha)
    if not os.path.isdir(os.path.join(root, "vendor")):
        tmp = root + ".tmp.%d" % os.getpid()
        shutil.rmtree(tmp, ignore_errors=True)
        extract_vendor(tar, tmp)
        os.makedirs(os.path.dirname(root), exist_ok=True)
        try:
            os.rename(tmp, root)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
    return os.path.join(root, "vendor")


def compiled_units(messages):
    """(package, target, kinds) of every unit cargo actually compiled (not fresh)."""
    units = []
    for m in messages:
        if m.get("reason") == "compiler-artifact" and not m.get("fresh", True):
            pkg = m["package_id"]
            units.append((pkg, m["target"]["name"], ",".join(m["target"]["kind"]), bool(m["profile"].get("test"))))
    return units


def package_name(package_id):
    # "path+file:///x/core#ferrule-core@0.1.0" or "registry+...#serde@1.0.0" or old "serde 1.0.0 (...)"
    if "#" in package_id:
        url, tail = package_id.rsplit("#", 1)
        if "@" in tail:
            return tail.split("@")[0]
        # "path+file:///x/tiny#0.1.0": the name is the directory's when they agree.
        return url.rstrip("/").rsplit("/", 1)[-1] if tail[:1].isdigit() else tail
    return package_id.split(" ")[0]


def copy_out(src, dst):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if os.path.exists(dst):
        os.chmod(dst, 0o755)
        os.unlink(dst)
    shutil.copyfile(src, dst)
    os.chmod(dst, 0o755)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", required=True)
    ap.add_argument("--rustc-version", required=True, help="the pinned toolchain version (part of the action key)")
    ap.add_argument("--mode", choices=["hermetic", "dev"], default="hermetic")
    args = ap.parse_args()

    with open(args.spec) as f:
        spec = json.load(f)
    execroot = os.getcwd()
    cargo, rustc = spec["cargo"], spec["rustc"]

    # The toolchain on disk must still be the one Bazel was analysed with.
    actual = subprocess.run([rustc, "--version"], stdout=subprocess.PIPE, text=True).stdout.split()
    if len(actual) < 2 or actual[1] != args.rustc_version:
        die("rustc %s found at %s, %s expected — re-run bazel so @ferrule_host re-checks the toolchain"
            % (actual[1] if len(actual) > 1 else "?", rustc, args.rustc_version))

    manifest = os.path.join(execroot, spec["manifest"])
    if args.mode == "dev":
        # Stable paths: the real source tree (not the execroot's symlink forest) and a
        # persistent target dir, so cargo's fingerprints survive between builds.
        manifest = os.path.realpath(manifest)
    workspace_dir = os.path.dirname(manifest)

    if args.mode == "dev":
        # A fixed path: it is remapped in RUSTFLAGS, and a new path each time would change
        # them and make cargo rebuild every crate.
        scratch = os.path.join(spec["cache_dir"], "dev-scratch", spec["name"])
        if os.path.isdir(scratch):
            subprocess.run(["chmod", "-R", "u+w", scratch], stderr=subprocess.DEVNULL)
            shutil.rmtree(scratch)
        os.makedirs(scratch)
    else:
        scratch = tempfile.mkdtemp(prefix="ferrule-cargo-")
    try:
        home = os.path.join(scratch, "home")
        os.makedirs(home)
        if args.mode == "dev":
            cache = spec["cache_dir"]
            target_dir = os.path.join(cache, "cargo-target", spec["name"])
            cargo_home = os.path.join(cache, "dev-cargo-home", spec["name"])
            with open(spec["vendor_sha"]) as f:
                vendor = stable_vendor(spec["vendor_tar"], f.read().strip(), cache)
        else:
            target_dir = os.path.join(scratch, "target")
            cargo_home = os.path.join(scratch, "cargo-home")
            vendor = os.path.join(scratch, "vendor-root", "vendor")
            extract_vendor(spec["vendor_tar"], os.path.join(scratch, "vendor-root"))
        os.makedirs(cargo_home, exist_ok=True)
        with open(os.path.join(cargo_home, "config.toml"), "w") as f:
            f.write('[source.crates-io]\nreplace-with = "ferrule-vendored"\n\n'
                    '[source.ferrule-vendored]\ndirectory = "%s"\n\n[net]\noffline = true\n' % vendor)

        remaps = [
            (execroot, "/ferrule"),
            (workspace_dir, "/ferrule/" + spec["workspace_rel"]) if spec["workspace_rel"] else (workspace_dir, "/ferrule"),
            (os.path.dirname(vendor), "/cargo"),
            (cargo_home, "/cargo/home"),
            (target_dir, "/cargo/target"),
            (scratch, "/cargo/scratch"),
        ]
        rustflags = ["--remap-path-prefix=%s=%s" % (a, b) for a, b in remaps] + spec.get("rustflags", [])
        cflags = " ".join("-ffile-prefix-map=%s=%s" % (a, b) for a, b in remaps)

        path_dirs = [os.path.join(spec["sysroot"], "bin")]
        for tool in spec["tool_dirs"]:
            if tool not in path_dirs:
                path_dirs.append(tool)
        path_dirs += ["/usr/local/bin", "/usr/bin", "/bin"]
        env = {
            "PATH": ":".join(path_dirs),
            "HOME": home,
            "CARGO_HOME": cargo_home,
            "CARGO_TARGET_DIR": target_dir,
            "RUSTC": rustc,
            "CARGO": cargo,
            "CARGO_TERM_COLOR": "never",
            "CARGO_INCREMENTAL": "0" if args.mode == "hermetic" else "1",
            "CARGO_ENCODED_RUSTFLAGS": "\x1f".join(rustflags),
            "CFLAGS": cflags,
            "CXXFLAGS": cflags,
            "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH,
            "TMPDIR": os.path.join(scratch),
            "LANG": "C.UTF-8",
        }
        for k, v in spec.get("env", {}).items():
            env[k] = v
        # Directories of declared inputs that build scripts read (core/build.rs: Swagger UI's
        # files), by absolute path: a build script runs in its crate's directory.
        for k, v in spec.get("env_dirs", {}).items():
            env[k] = os.path.join(execroot, v)
        if os.environ.get("FERRULE_CARGO_JOBS"):
            env["CARGO_BUILD_JOBS"] = os.environ["FERRULE_CARGO_JOBS"]

        # pyo3's build script (the Python binding): which interpreter, and that the module is
        # an extension (no libpython link). Crates that do not read them are not affected.
        env["PYO3_PYTHON"] = spec["python"]
        env["PYO3_BUILD_EXTENSION_MODULE"] = "1"

        # ONE cargo invocation for every artifact: one feature resolution (with the
        # dev-dependencies that test targets need), one profile, each crate compiled once.
        cmd = [cargo, "build", "--release", "--frozen", "--manifest-path", manifest,
               "--message-format=json-render-diagnostics"] + list(spec["select"])
        if spec.get("host_target"):
            # With --target, RUSTFLAGS apply to the target's crates only, not to build scripts
            # and proc macros (which would not load with instrumentation they cannot link).
            host = [l.split(":", 1)[1].strip() for l in
                    subprocess.run([rustc, "-vV"], stdout=subprocess.PIPE, text=True).stdout.splitlines()
                    if l.startswith("host:")]
            if not host:
                die("rustc -vV names no host triple")
            cmd += ["--target", host[0]]
        if spec["only_bins"]:
            for name in spec["only_bins"]:
                cmd += ["--bin", name]
        else:
            cmd += ["--all-targets"]
        msgs, _, secs = run(cmd, env, workspace_dir, capture_json=True)
        steps = [("cargo build", compiled_units(msgs), secs)]
        found = {}
        for m in msgs:
            if m.get("reason") != "compiler-artifact":
                continue
            crate = package_name(m["package_id"])
            kinds = m["target"]["kind"]
            if m["profile"].get("test"):
                if m.get("executable"):
                    kind = "lib" if ("lib" in kinds or "cdylib" in kinds or "rlib" in kinds) else kinds[0]
                    found[(crate, "test", kind, "lib" if kind == "lib" else m["target"]["name"])] = m["executable"]
            elif "cdylib" in kinds:
                so = [f for f in m.get("filenames", []) if f.endswith(".so")]
                if so:
                    found[(crate, "cdylib", "cdylib", None)] = so[0]
            elif "bin" in kinds and m.get("executable"):
                found[(crate, "bin", "bin", m["target"]["name"])] = m["executable"]
        for a in spec["artifacts"]:
            key = (a["crate"], a["kind"], a["target_kind"], None if a["kind"] == "cdylib" else a["target"])
            if key not in found:
                die("cargo built no %s %s of crate %s (built: %s)" % (a["target_kind"], a["target"], a["crate"], sorted(k for k in found if k[0] == a["crate"])))
            copy_out(found[key], a["out"])

        # What was compiled: a crate whose library appears twice (outside test harnesses) was
        # built with two feature sets or for the host as well (a build dependency).
        for name, units, secs in steps:
            libs = [package_name(u[0]) for u in units if not u[3] and "custom-build" not in u[2]]
            twice = sorted({c for c in libs if libs.count(c) > 1})
            log("%s: %d units compiled in %.0fs; crates compiled twice (other features, or host build-deps): %s"
                % (name, len(units), secs, ", ".join(twice) or "none"))
    finally:
        if args.mode == "hermetic" or os.environ.get("FERRULE_KEEP_SCRATCH") != "1":
            subprocess.run(["chmod", "-R", "u+w", scratch], stderr=subprocess.DEVNULL)
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
