"""Promises of the cargo rule layer, checked on a tiny crate with no dependencies (seconds).

1. Reproducible: the same sources built in two different execroots give identical bytes.
2. An edited Rust source changes the output.
3. The driver refuses to run when the toolchain on disk is not the pinned one, so a
   toolchain upgrade cannot hide behind a cached action key.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

driver, tiny_dir, host_env = [os.path.abspath(a) for a in sys.argv[1:4]]
host = dict(line.split("=", 1) for line in open(host_env).read().splitlines() if "=" in line)
failures = []


def build(source_text, rustc_version=None, expect_fail=False):
    root = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    shutil.copytree(tiny_dir, os.path.join(root, "tiny"))
    if source_text is not None:
        with open(os.path.join(root, "tiny", "src", "main.rs"), "w") as f:
            f.write(source_text)
    os.makedirs(os.path.join(root, "vendor"))
    with tarfile.open(os.path.join(root, "vendor.tar"), "w") as t:
        t.add(os.path.join(root, "vendor"), arcname="vendor")
    with open(os.path.join(root, "vendor.sha256"), "w") as f:
        f.write("0\n")
    out = os.path.join(root, "out", "tiny")
    spec = {
        "name": "tiny", "manifest": "tiny/Cargo.toml", "workspace_rel": "tiny",
        "vendor_tar": "vendor.tar", "vendor_sha": "vendor.sha256",
        "cargo": host["CARGO"], "rustc": host["RUSTC"], "sysroot": host["RUST_SYSROOT"],
        "python": host["PYTHON"], "python_version": host["PYTHON_VERSION"], "tool_dirs": [],
        "cache_dir": os.path.join(root, "cache"), "select": ["--locked"], "only_bins": ["tiny"],
        "artifacts": [{"crate": "tiny", "kind": "bin", "target_kind": "bin", "target": "tiny", "out": out}], "env": {},
    }
    with open(os.path.join(root, "spec.json"), "w") as f:
        json.dump(spec, f)
    proc = subprocess.run(
        [sys.executable, driver, "--spec=spec.json", "--rustc-version=" + (rustc_version or host["RUSTC_VERSION"])],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if expect_fail:
        return proc
    if proc.returncode != 0:
        print(proc.stdout)
        raise SystemExit("driver failed on the tiny crate")
    with open(out, "rb") as f:
        data = f.read()
    return root, data


original = open(os.path.join(tiny_dir, "src", "main.rs")).read()
root_a, a = build(None)
root_b, b = build(None)
if a != b:
    failures.append("two builds of the same source differ (sha256 %s vs %s)"
                    % (hashlib.sha256(a).hexdigest(), hashlib.sha256(b).hexdigest()))
for root in (root_a, root_b):
    if root.encode() in a or root.encode() in b:
        failures.append("the binary embeds its build directory %s (path remapping broken)" % root)

_, edited = build(original.replace("original", "edited"))
if edited == a:
    failures.append("editing src/main.rs did not change the binary")
if b"tiny says: edited" not in edited:
    failures.append("the edited binary does not contain the edited string")

proc = build(None, rustc_version="0.0.0", expect_fail=True)
if proc.returncode == 0 or "0.0.0 expected" not in proc.stdout:
    failures.append("the driver accepted a toolchain that is not the pinned one:\n" + proc.stdout)

for f in failures:
    print("FAIL:", f)
passed = 4 - len(failures)
print("%d passed, %d failed" % (passed, len(failures)))
sys.exit(1 if failures else 0)
