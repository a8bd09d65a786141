#!/usr/bin/env python3
"""Packs a wheel (PEP 427) from a compiled extension module and Python sources (see wheel.bzl).

Metadata (PEP 621 `[project]` of pyproject.toml) becomes the core metadata file; the extension
is installed as `<package>/<module>.abi3.so`. The zip is byte-reproducible: entries sorted,
every timestamp 1980-01-01, fixed permissions. A `manylinux_X_Y` tag is a promise about glibc:
an extension that asks for a newer symbol version than GLIBC_X.Y is refused.
"""

import argparse
import base64
import hashlib
import os
import re
import sys
import tomllib
import zipfile

EPOCH = (1980, 1, 1, 0, 0, 0)


def die(message):
    print("ferrule: py_wheel: " + message, file=sys.stderr)
    sys.exit(1)


def metadata(project, distribution, version):
    """Core metadata 2.1 from pyproject's [project] table (the fields Ferrule uses)."""
    known = {"name", "description", "requires-python", "license", "classifiers", "dynamic", "dependencies", "readme"}
    unknown = sorted(set(project) - known)
    if unknown:
        die("pyproject.toml [project] has fields this packer does not write: %s" % ", ".join(unknown))
    if project.get("name") != distribution:
        die("pyproject.toml names the project %r, the build declares %r" % (project.get("name"), distribution))
    lines = ["Metadata-Version: 2.1", "Name: " + distribution, "Version: " + version]
    if "description" in project:
        lines.append("Summary: " + project["description"])
    license_ = project.get("license")
    if isinstance(license_, dict) and "text" in license_:
        lines.append("License: " + license_["text"])
    for classifier in project.get("classifiers", []):
        lines.append("Classifier: " + classifier)
    if "requires-python" in project:
        lines.append("Requires-Python: " + project["requires-python"])
    for dependency in project.get("dependencies", []):
        lines.append("Requires-Dist: " + dependency)
    return "\n".join(lines) + "\n"


def newest_glibc(data):
    """The newest GLIBC_X.Y symbol version named in an ELF file's version strings."""
    versions = [(int(a), int(b)) for a, b in re.findall(rb"GLIBC_(\d+)\.(\d+)", data)]
    return max(versions) if versions else None


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--pyproject", required=True)
    ap.add_argument("--distribution", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--tag", required=True, help="python-abi-platform, e.g. cp310-abi3-manylinux_2_34_x86_64")
    ap.add_argument("--extension", required=True)
    ap.add_argument("--extension-module", required=True)
    ap.add_argument("--strip-prefix", required=True)
    ap.add_argument("srcs", nargs="*")
    args = ap.parse_args()

    with open(args.pyproject, "rb") as f:
        project = tomllib.load(f).get("project", {})
    python_tag, abi_tag, platform_tag = args.tag.split("-", 2)
    if abi_tag != "abi3":
        die("only abi3 extension modules are packed (tag %s)" % args.tag)

    with open(args.extension, "rb") as f:
        extension = f.read()
    wanted = re.match(r"manylinux_(\d+)_(\d+)_", platform_tag)
    needed = newest_glibc(extension)
    if wanted and needed and needed > (int(wanted.group(1)), int(wanted.group(2))):
        die("the extension needs GLIBC_%d.%d, newer than %s promises" % (needed + (platform_tag,)))

    files = {}
    prefix = args.strip_prefix.rstrip("/") + "/"
    for src in args.srcs:
        # Sources may come from the output tree too (bazel-out/.../<package>/...).
        rel = src[src.index(prefix) + len(prefix):] if prefix in src else None
        if rel is None:
            die("%s is not under %s" % (src, prefix))
        if rel.endswith((".pyc", "/")) or "__pycache__" in rel:
            continue
        with open(src, "rb") as f:
            files[rel] = f.read()
    module_path = args.extension_module.replace(".", "/") + ".abi3.so"
    files[module_path] = extension

    dist_info = "%s-%s.dist-info" % (args.distribution, args.version)
    files[dist_info + "/METADATA"] = metadata(project, args.distribution, args.version).encode()
    files[dist_info + "/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: ferrule py_wheel (build/rules/private/wheel.py)\n"
                                   "Root-Is-Purelib: false\nTag: %s\n" % args.tag).encode()
    record = "".join("%s,%s,%d\n" % (name, record_hash(data), len(data)) for name, data in sorted(files.items()))
    files[dist_info + "/RECORD"] = (record + dist_info + "/RECORD,,\n").encode()

    tmp = args.out + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=EPOCH)
            info.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, files[name])
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
