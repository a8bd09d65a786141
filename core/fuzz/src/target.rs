//! The fuzz targets: one per surface that parses client bytes, each served by the routes of
//! the fixture categories that exercise that surface (their cases are its seeds).

pub struct Target {
    pub name: &'static str,
    /// What the target's inputs reach, in a few words (printed in campaign reports).
    pub surface: &'static str,
    /// Fixture categories whose routes are served; byte 0 of an input picks one.
    pub categories: &'static [&'static str],
    /// Serves the static directory of `fixtures/traversal.json` at `/files` instead, seeded with
    /// its paths; an answer that holds the secret beside the directory is a finding.
    pub files: bool,
}

pub const TARGETS: &[Target] = &[
    Target { name: "path", surface: "path matching, typed path parameters", categories: &["path_params"], files: false },
    Target { name: "query", surface: "query strings, typed query parameters", categories: &["query_params"], files: false },
    Target { name: "urlencoded", surface: "url-encoded bodies", categories: &["url_encoded"], files: false },
    Target { name: "multipart", surface: "multipart bodies, uploads", categories: &["multipart"], files: false },
    Target { name: "cookies", surface: "Cookie headers, typed cookies", categories: &["cookies"], files: false },
    Target {
        name: "json",
        surface: "JSON bodies, schema validation",
        categories: &["json_bodies", "validation_errors"],
        files: false,
    },
    Target {
        name: "headers",
        surface: "header values, content types, body limits",
        categories: &["headers", "content_types", "edge_cases", "body_limits"],
        files: false,
    },
    Target { name: "static", surface: "static file paths: climbing out in every encoding", categories: &[], files: true },
];

pub fn find(name: &str) -> Result<&'static Target, String> {
    TARGETS.iter().find(|t| t.name == name).ok_or_else(|| {
        let names: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
        format!("unknown fuzz target {name:?} (targets: {})", names.join(", "))
    })
}
