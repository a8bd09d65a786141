//! Embeds the docs page's files into the core (see src/docs/mod.rs): Swagger UI's built files
//! from the npm package swagger-ui-dist (pinned in third_party/node/package-lock.json) and the
//! page's own script and style from src/docs/. They are copied into OUT_DIR and included with
//! `include_bytes!` by the generated `docs_assets.rs`, together with a digest of each (its
//! ETag) and one of them all (the versioned path they are served under): decided here, so a
//! running server hashes nothing.
//!
//! Where swagger-ui-dist is read from:
//! * `FERRULE_DOCS_ASSETS` set and not empty: that directory. The Bazel build points it at the
//!   copy in @ferrule_npm, whose files are declared inputs of the cargo action; a file missing
//!   there fails the build.
//! * `FERRULE_DOCS_ASSETS` set and empty: nowhere (a build that needs no docs page).
//! * unset (plain cargo, maturin): `<repo>/third_party/node/node_modules/swagger-ui-dist` when
//!   `npm ci` has been run in third_party/node, else nowhere.
//!
//! Without the files the core still builds; its `/docs` then answers 503 saying why.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::{env, fs};

/// What the page needs of swagger-ui-dist, with the licence texts that must travel with it
/// (Apache-2.0: LICENSE and NOTICE; the bundle's first line points at its LICENSE.txt). The
/// Bazel build declares the same files as the cargo action's inputs (`:swagger_ui_dist` in
/// build/rules/private/node.bzl); one missing there fails that build here, never silently.
const SWAGGER_UI_FILES: &[&str] = &[
    "swagger-ui-bundle.js",
    "swagger-ui.css",
    "favicon-32x32.png",
    "favicon-16x16.png",
    "swagger-ui-bundle.js.LICENSE.txt",
    // Run by the page an OAuth2 provider sends the browser back to (`{docs_url}/oauth2-redirect`).
    "oauth2-redirect.js",
    "LICENSE",
    "NOTICE",
];

/// The page's own script and style (src/docs/), served beside Swagger UI's files.
const OWN_FILES: &[&str] = &["docs.js", "docs.css"];

const ASSETS_ENV: &str = "FERRULE_DOCS_ASSETS";

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed={ASSETS_ENV}");
    for name in OWN_FILES {
        println!("cargo:rerun-if-changed=src/docs/{name}");
    }

    let generated = match swagger_ui_dir(&manifest_dir) {
        Some(dir) => {
            for name in SWAGGER_UI_FILES.iter().chain(["package.json"].iter()) {
                println!("cargo:rerun-if-changed={}", dir.join(name).display());
            }
            let version = package_version(&dir.join("package.json"));
            let mut files: Vec<(String, Vec<u8>)> = SWAGGER_UI_FILES.iter().map(|name| (name.to_string(), read(&dir.join(name)))).collect();
            files.extend(OWN_FILES.iter().map(|name| (name.to_string(), read(&manifest_dir.join("src/docs").join(name)))));
            embed(&out_dir, &version, &files)
        }
        None => "pub(crate) const SWAGGER_UI_VERSION: Option<&str> = None;\n\
                 pub(crate) const REVISION: &str = \"\";\n\
                 pub(crate) const FILES: &[EmbeddedFile] = &[];\n"
            .to_owned(),
    };
    fs::write(out_dir.join("docs_assets.rs"), generated).expect("cannot write docs_assets.rs to OUT_DIR");
}

/// The swagger-ui-dist directory to embed, if any (see the file's comment).
fn swagger_ui_dir(manifest_dir: &Path) -> Option<PathBuf> {
    match env::var_os(ASSETS_ENV) {
        Some(dir) if dir.is_empty() => None,
        Some(dir) => {
            let dir = PathBuf::from(dir);
            if !dir.join("package.json").is_file() {
                panic!("{ASSETS_ENV}={} holds no swagger-ui-dist package (no package.json)", dir.display());
            }
            Some(dir)
        }
        None => {
            let node = manifest_dir.parent().unwrap_or(manifest_dir).join("third_party/node");
            let dir = node.join("node_modules/swagger-ui-dist");
            if dir.join("package.json").is_file() {
                Some(dir)
            } else {
                // Watched so that a later `npm ci` there is noticed.
                println!("cargo:rerun-if-changed={}", node.display());
                None
            }
        }
    }
}

/// Copies the files into OUT_DIR and returns the Rust source that includes them.
fn embed(out_dir: &Path, version: &str, files: &[(String, Vec<u8>)]) -> String {
    let copies = out_dir.join("docs-assets");
    fs::create_dir_all(&copies).expect("cannot create OUT_DIR/docs-assets");
    let mut all = Fnv1a::default();
    let mut table = String::new();
    for (name, bytes) in files {
        fs::write(copies.join(name), bytes).unwrap_or_else(|e| panic!("cannot copy {name} into OUT_DIR: {e}"));
        let mut one = Fnv1a::default();
        one.write(bytes);
        all.write(name.as_bytes());
        all.write(&(bytes.len() as u64).to_le_bytes());
        all.write(bytes);
        writeln!(table, "    EmbeddedFile {{ name: {name:?}, bytes: include_bytes!(\"docs-assets/{name}\"), digest: \"{:016x}\" }},", one.0)
            .expect("writing to a String");
    }
    // The version first, so a path says which Swagger UI it serves; the digest covers the
    // page's own files too, which change without a new Swagger UI.
    let revision = format!("{version}-{:012x}", all.0 >> 16);
    format!(
        "pub(crate) const SWAGGER_UI_VERSION: Option<&str> = Some({version:?});\n\
         pub(crate) const REVISION: &str = {revision:?};\n\
         pub(crate) const FILES: &[EmbeddedFile] = &[\n{table}];\n"
    )
}

fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// `"version": "5.35.0"` of a package.json, found without a JSON parser (a build dependency
/// would be compiled a second time, for the host).
fn package_version(path: &Path) -> String {
    let text = String::from_utf8(read(path)).unwrap_or_else(|_| panic!("{} is not UTF-8", path.display()));
    let after_key = text.split_once("\"version\"").map(|(_, rest)| rest);
    let value = after_key.and_then(|rest| rest.trim_start().strip_prefix(':')).and_then(|rest| rest.trim_start().strip_prefix('"'));
    let version = value.and_then(|rest| rest.split_once('"')).map(|(version, _)| version);
    match version {
        Some(v) if !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || ".-+".contains(c)) => v.to_owned(),
        _ => panic!("{} names no version", path.display()),
    }
}

/// FNV-1a, 64 bits: a stable digest for ETags and cache-busting paths (not a security measure).
struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv1a {
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}
