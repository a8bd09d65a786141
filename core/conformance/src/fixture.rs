//! The fixture file format (see fixtures/README.md and fixtures/fixture.schema.json).
//!
//! Routes and the app configuration stay JSON here: each language's test builds its app from
//! them with its own API (the Rust test deserialises them into `RouteSpec`/`AppConfig`).

use serde::Deserialize;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureFile {
    #[serde(rename = "$schema", default)]
    pub _schema: Option<String>,
    pub category: String,
    #[allow(dead_code)] // documentation for readers of the fixture
    pub description: String,
    #[serde(default)]
    pub app: Option<Json>,
    /// Hook setups the app registers, in order (fixtures/README.md, "Hooks"): each language
    /// implements them in its own idiom.
    #[serde(default)]
    pub hooks: Vec<String>,
    pub routes: Vec<FixtureRoute>,
    pub cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
pub struct FixtureRoute {
    /// One of the handler kinds of fixtures/README.md (`echo`, `status`, …).
    pub handler: String,
    /// The rest of the route: `RouteSpec` fields (method, path, query, body, …).
    #[serde(flatten)]
    pub spec: serde_json::Map<String, Json>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub name: String,
    #[serde(default)]
    #[allow(dead_code)]
    pub description: Option<String>,
    pub request: Request,
    pub expect: Expect,
    /// A WebSocket case: the request is sent as an upgrade, and after a 101 this script runs.
    #[serde(default)]
    pub socket: Option<Vec<Json>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    pub method: String,
    pub path: String,
    #[serde(default)]
    pub headers: BTreeMap<String, Json>,
    #[serde(default)]
    pub body: Option<Json>,
    #[serde(default)]
    pub content_type: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    pub status: u16,
    pub json: Option<Json>,
    pub json_contains: Option<Json>,
    pub decoded_json_contains: Option<Json>,
    pub text: Option<String>,
    pub body_empty: Option<bool>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub header_patterns: BTreeMap<String, String>,
    #[serde(default)]
    pub headers_absent: Vec<String>,
    #[serde(default)]
    pub body_excludes: Vec<String>,
    /// Whether the body breaks off before its end (HTTP/1.1: no last chunk). Unless given, a
    /// cut-off body fails the case.
    pub cut_off: Option<bool>,
}

impl FixtureFile {
    /// The cases as a language that labels its JSON `json_type` expects them: an exact
    /// `content-type: application/json` becomes `json_type` (fixtures/README.md, "Expectations").
    pub fn with_json_type(mut self, json_type: &str) -> FixtureFile {
        for case in &mut self.cases {
            for (name, value) in &mut case.expect.headers {
                if name.eq_ignore_ascii_case("content-type") && value == "application/json" {
                    *value = json_type.to_owned();
                }
            }
        }
        self
    }
}

/// Headers that describe a connection, not the response it carries (RFC 9110 §7.6.1): a
/// socket's framing (`Transfer-Encoding: chunked` for a streamed body) has no meaning for an
/// in-process client, which gets the message without a wire.
const CONNECTION_HEADERS: [&str; 3] = ["transfer-encoding", "connection", "keep-alive"];

impl Expect {
    /// These expectations without those on connection headers, for an in-process client.
    pub fn message_only(&self) -> Expect {
        let kept = |name: &String| !CONNECTION_HEADERS.contains(&name.to_ascii_lowercase().as_str());
        let mut expect = self.clone();
        expect.headers.retain(|name, _| kept(name));
        expect.header_patterns.retain(|name, _| kept(name));
        expect.headers_absent.retain(kept);
        expect
    }
}

/// `FERRULE_FIXTURES_DIR` (set by Bazel to the runfiles copy), else the source tree.
pub fn fixtures_dir() -> PathBuf {
    match std::env::var_os("FERRULE_FIXTURES_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures"),
    }
}

/// The categories on disk: `conformance/<category>.json`, sorted.
pub fn categories(fixtures: &Path) -> Result<Vec<String>, String> {
    let dir = fixtures.join("conformance");
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".json").map(str::to_owned))
        .collect();
    names.sort();
    Ok(names)
}

pub fn load(fixtures: &Path, category: &str) -> Result<FixtureFile, String> {
    let path = fixtures.join("conformance").join(format!("{category}.json"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let file: FixtureFile = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if file.category != category {
        return Err(format!("{}: category {:?} must match the file name", path.display(), file.category));
    }
    Ok(file)
}
