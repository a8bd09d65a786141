//! The fixture file format (see fixtures/README.md and fixtures/fixture.schema.json).

use ferrule_core::{AppConfig, RouteSpec};
use serde::Deserialize;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureFile {
    #[serde(rename = "$schema", default)]
    pub _schema: Option<String>,
    pub category: String,
    #[allow(dead_code)] // documentation for readers of the fixture
    pub description: String,
    #[serde(default)]
    pub app: Option<AppConfig>,
    pub routes: Vec<FixtureRoute>,
    pub cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
pub struct FixtureRoute {
    pub handler: String,
    #[serde(flatten)]
    pub spec: RouteSpec,
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

#[derive(Debug, Deserialize)]
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
}

/// `FERRULE_FIXTURES_DIR` (set by Bazel to the runfiles copy), else the source tree.
pub fn fixtures_dir() -> PathBuf {
    match std::env::var_os("FERRULE_FIXTURES_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures"),
    }
}

pub fn load(category: &str) -> FixtureFile {
    let path = fixtures_dir().join("conformance").join(format!("{category}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let file: FixtureFile = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(file.category, category, "{}: category must match the file name", path.display());
    file
}
