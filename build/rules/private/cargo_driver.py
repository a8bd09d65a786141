#!/usr/bin/env python3
"""Runs one cargo workspace build inside a Bazel action (see build/rules/cargo.bzl).

One invocation builds every artifact of a workspace in ONE target dir, so no crate graph is
compiled twice per `bazel build`:
  1. `maturin build` (optional): the Python wheel; its cargo run fills the target dir;
  2. `cargo build --release --frozen`: binaries and cdylibs (reusing step 1's units);
  3. `cargo test --release --frozen --no-run`: the test executables (located through
     --message-format=json);
then copies each artifact to the output Bazel declared for it.

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
        tail = package_id.rsplit("#", 1)[1]
        return tail.split("@")[0] if "@" in tail else tail
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
        if os.environ.get("FERRULE_CARGO_JOBS"):
            env["CARGO_BUILD_JOBS"] = os.environ["FERRULE_CARGO_JOBS"]

        steps = []
        wheel = spec.get("wheel")
        if wheel:
            # Exactly what maturin sets for pyo3's build script, so the cargo steps below
            # reuse the pyo3 units maturin compiled instead of rebuilding them.
            py = spec["python"]
            env.update({
                "PYO3_PYTHON": py,
                "PYTHON_SYS_EXECUTABLE": py,
                "PYO3_BUILD_EXTENSION_MODULE": "1",
                "PYO3_ENVIRONMENT_SIGNATURE": "cpython-%s-64bit" % ".".join(spec["python_version"].split(".")[:2]),
            })
            wheel_dir = os.path.join(scratch, "wheel")
            # Relative to the execroot, which is not the working directory in dev mode.
            cmd = [os.path.join(execroot, wheel["maturin"]), "build", "--release", "--frozen", "--manifest-path",
                   os.path.join(workspace_dir, wheel["manifest"]), "--interpreter", py,
                   "--compatibility", wheel["compatibility"], "--out", wheel_dir]
            maturin_env = dict(env)
            _, out, secs = run(cmd, maturin_env, workspace_dir)
            compiled = re.findall(r"^\s*Compiling (\S+) v", out, re.M)
            steps.append(("maturin build", [(c, "", "", False) for c in compiled], secs))
            config = [p for p in os.listdir(os.path.join(target_dir, "maturin")) if p.startswith("pyo3-config-")] \
                if os.path.isdir(os.path.join(target_dir, "maturin")) else []
            if config:
                env["PYO3_CONFIG_FILE"] = os.path.join(target_dir, "maturin", sorted(config)[0])
            wheels = [w for w in os.listdir(wheel_dir) if w.endswith(".whl")]
            if wheels != [os.path.basename(wheel["out"])]:
                die("maturin built %s, the build graph declares %s (update //bindings/python:BUILD.bazel)"
                    % (wheels, os.path.basename(wheel["out"])))
            copy_out(os.path.join(wheel_dir, wheels[0]), wheel["out"])

        select = list(spec["select"])
        if spec.get("host_target"):
            # With --target, RUSTFLAGS apply to the target's crates only, not to build scripts
            # and proc macros (which would not load with instrumentation they cannot link).
            host = [l.split(":", 1)[1].strip() for l in
                    subprocess.run([rustc, "-vV"], stdout=subprocess.PIPE, text=True).stdout.splitlines()
                    if l.startswith("host:")]
            if not host:
                die("rustc -vV names no host triple")
            select += ["--target", host[0]]
        if spec["bins"] or spec["cdylibs"] or spec.get("build_all"):
            cmd = [cargo, "build", "--release", "--frozen", "--manifest-path", manifest,
                   "--message-format=json-render-diagnostics"] + select
            for b in spec["bins"]:
                if spec.get("bin_flags"):
                    cmd += ["--bin", b["name"]]
            msgs, _, secs = run(cmd, env, workspace_dir, capture_json=True)
            steps.append(("cargo build", compiled_units(msgs), secs))
            by_name = {}
            for m in msgs:
                if m.get("reason") == "compiler-artifact":
                    for fn in m.get("filenames", []):
                        by_name[os.path.basename(fn)] = fn
                    if m.get("executable"):
                        by_name[os.path.basename(m["executable"])] = m["executable"]
            for b in spec["bins"]:
                src = by_name.get(b["name"])
                if not src:
                    die("cargo built no binary named %s" % b["name"])
                copy_out(src, b["out"])
            for c in spec["cdylibs"]:
                src = by_name.get("lib%s.so" % c["name"])
                if not src:
                    die("cargo built no cdylib named lib%s.so" % c["name"])
                copy_out(src, c["out"])

        if spec["tests"]:
            cmd = [cargo, "test", "--release", "--frozen", "--no-run", "--manifest-path", manifest,
                   "--message-format=json-render-diagnostics"] + select
            msgs, _, secs = run(cmd, env, workspace_dir, capture_json=True)
            steps.append(("cargo test --no-run", compiled_units(msgs), secs))
            found = {}
            for m in msgs:
                if m.get("reason") != "compiler-artifact" or not m.get("executable") or not m["profile"].get("test"):
                    continue
                member = os.path.relpath(os.path.dirname(m["manifest_path"]), workspace_dir)
                kinds = m["target"]["kind"]
                kind = "lib" if ("lib" in kinds or "cdylib" in kinds or "rlib" in kinds) else kinds[0]
                found[(member, kind, m["target"]["name"])] = m["executable"]
            for t in spec["tests"]:
                key = (t["member"], t["kind"], t["name"])
                if key not in found:
                    die("cargo built no test executable for %s (found: %s)" % (key, sorted(found)))
                copy_out(found[key], t["out"])

        # What was compiled where: the maturin and cargo steps share one target dir, so a
        # crate compiled by two steps means its features (or env) differ between them.
        seen = {}
        report = []
        for name, units, secs in steps:
            again = []
            for u in units:
                crate = package_name(u[0]) if u[1] else u[0]
                if u[3]:
                    continue  # test harness units exist only in the test step
                if crate in seen and seen[crate] != name:
                    again.append(crate)
                seen.setdefault(crate, name)
            report.append("%s: %d units compiled in %.0fs; crates an earlier step also compiled (other features, or host build-deps): %s"
                          % (name, len(units), secs, ", ".join(sorted(set(again))) or "none"))
        for line in report:
            log(line)
    finally:
        if args.mode == "hermetic" or os.environ.get("FERRULE_KEEP_SCRATCH") != "1":
            subprocess.run(["chmod", "-R", "u+w", scratch], stderr=subprocess.DEVNULL)
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
