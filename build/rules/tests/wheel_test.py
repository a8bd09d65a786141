"""The wheel packer (build/rules/private/wheel.py) on a made-up package (well under a second).

1. Reproducible: two packs of the same inputs are the same bytes.
2. The wheel is what pip reads: the package and the extension at their paths, every RECORD
   hash right, METADATA from pyproject.toml's [project], WHEEL with the tag.
3. An extension that needs a newer glibc than the manylinux tag promises is refused.
"""

import base64
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile

packer = os.path.abspath(sys.argv[1])
root = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
failures = []


def write(rel, data):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return path


pyproject = write("pkg/pyproject.toml", b'[project]\nname = "demo"\ndescription = "A demo."\nrequires-python = ">=3.10"\n'
                  b'license = { text = "MIT" }\nclassifiers = ["Programming Language :: Rust"]\ndynamic = ["version"]\n')
sources = [write("pkg/demo/__init__.py", b"from ._native import x\n"), write("pkg/demo/py.typed", b"")]
old_glibc = write("old.so", b"\x7fELF...GLIBC_2.17\x00GLIBC_2.34\x00...")
new_glibc = write("new.so", b"\x7fELF...GLIBC_2.39\x00...")


def pack(extension, out):
    return subprocess.run(
        [sys.executable, packer, "--out", out, "--pyproject", pyproject, "--distribution", "demo", "--version", "1.2.3",
         "--tag", "cp310-abi3-manylinux_2_34_x86_64", "--extension", extension, "--extension-module", "demo._native",
         "--strip-prefix", os.path.join(root, "pkg")] + sources,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


a, b = os.path.join(root, "a.whl"), os.path.join(root, "b.whl")
for out in (a, b):
    proc = pack(old_glibc, out)
    if proc.returncode != 0:
        raise SystemExit("the packer failed:\n" + proc.stdout)
if open(a, "rb").read() != open(b, "rb").read():
    failures.append("two packs of the same inputs differ")

with zipfile.ZipFile(a) as wheel:
    names = sorted(wheel.namelist())
    want = ["demo-1.2.3.dist-info/METADATA", "demo-1.2.3.dist-info/RECORD", "demo-1.2.3.dist-info/WHEEL",
            "demo/__init__.py", "demo/_native.abi3.so", "demo/py.typed"]
    if names != want:
        failures.append("entries %s, expected %s" % (names, want))
    for line in wheel.read("demo-1.2.3.dist-info/RECORD").decode().splitlines():
        name, digest, size = line.split(",")
        if name.endswith("RECORD"):
            continue
        data = wheel.read(name)
        expected = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        if digest != expected or int(size) != len(data):
            failures.append("RECORD is wrong for %s" % name)
    metadata = wheel.read("demo-1.2.3.dist-info/METADATA").decode()
    for field in ["Name: demo", "Version: 1.2.3", "Summary: A demo.", "Requires-Python: >=3.10", "License: MIT"]:
        if field not in metadata.splitlines():
            failures.append("METADATA lacks %r:\n%s" % (field, metadata))
    if "Tag: cp310-abi3-manylinux_2_34_x86_64" not in wheel.read("demo-1.2.3.dist-info/WHEEL").decode():
        failures.append("WHEEL lacks the tag")

proc = pack(new_glibc, os.path.join(root, "c.whl"))
if proc.returncode == 0 or "needs GLIBC_2.39, newer than manylinux_2_34_x86_64 promises" not in proc.stdout:
    failures.append("an extension needing GLIBC_2.39 was packed as manylinux_2_34:\n" + proc.stdout)

for f in failures:
    print("FAIL:", f)
print("%d passed, %d failed" % (3 - min(3, len(failures)), min(3, len(failures))))
sys.exit(1 if failures else 0)
