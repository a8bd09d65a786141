//! One fuzz input through the router, and what must hold of any answer.

#[path = "../../tests/conformance/handlers.rs"]
mod handlers;

use crate::input;
use crate::target::Target;
use ferrule_conformance::traversal::Traversal;
use axum::Router;
use std::path::Path;
use tower::ServiceExt;

/// Inputs longer than this are cut by libFuzzer (`-max_len`); seeds longer are left out. Body
/// limits are already covered by the fixtures; long inputs only slow every mutation down.
pub const MAX_LEN: usize = 16 * 1024;

/// The routers of one target's fixture categories, and the runtime that drives them.
pub struct Harness {
    runtime: tokio::runtime::Runtime,
    apps: Vec<Router>,
    /// The `static` target's: what must never be in an answer.
    secret: Option<String>,
}

impl Harness {
    pub fn new(fixtures: &Path, target: &Target) -> Result<Self, String> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
        if target.files {
            let traversal = Traversal::load(fixtures)?;
            let base = std::env::var_os("TEST_TMPDIR").map(std::path::PathBuf::from).unwrap_or_else(std::env::temp_dir);
            let public = traversal.make_tree(&base.join(format!("ferrule-fuzz-files-{}", std::process::id()))).map_err(|e| e.to_string())?;
            let mut app = without_docs_page(ferrule_core::App::new());
            app.mount_static(ferrule_core::StaticSpec::new("/files", public.to_string_lossy())).map_err(|e| e.to_string())?;
            let apps = vec![app.into_router().map_err(|e| e.to_string())?];
            return Ok(Harness { runtime, apps, secret: Some(traversal.secret) });
        }
        let mut apps = Vec::new();
        for category in target.categories {
            let file = ferrule_conformance::load(fixtures, category)?;
            // Handlers that answer with what they received; the others (`sleep`, `repeat`,
            // `fail`, `status`) fail or wait by design and would hide real findings.
            let app = without_docs_page(handlers::build_app(&file, |route| matches!(route.handler.as_str(), "echo" | "text")));
            apps.push(app.into_router().map_err(|e| format!("{category}: {e}"))?);
        }
        Ok(Harness { runtime, apps, secret: None })
    }

    /// Serves one input; panics (a finding) when the answer breaks an invariant.
    pub fn run(&self, data: &[u8]) {
        let Some((app, request)) = input::decode(data) else { return };
        let router = self.apps[app % self.apps.len()].clone();
        let head = request.method() == http::Method::HEAD;
        let request = request.map(axum::body::Body::from);
        let (parts, body) = self.runtime.block_on(async move {
            let response = router.oneshot(request).await.unwrap_or_else(|e| match e {});
            let (parts, body) = response.into_parts();
            (parts, axum::body::to_bytes(body, usize::MAX).await.expect("a response body that can be read"))
        });
        check(&parts, &body, head);
        if let Some(secret) = &self.secret {
            assert!(!body.windows(secret.len()).any(|w| w == secret.as_bytes()), "the secret beside the served directory was sent ({})", parts.status);
        }
    }
}

/// `app` without the docs page. The fuzz build embeds no Swagger UI files (BUILD.bazel:
/// `FERRULE_DOCS_ASSETS` is empty), so its docs page answers 503 by design, saying so; no
/// target fuzzes that page, and a mutation that reached `/docs` was reported as a finding.
fn without_docs_page(mut app: ferrule_core::App) -> ferrule_core::App {
    app.config_mut().docs_url = None;
    app
}

/// What any answer of the fixture apps must be: never a server error (their handlers cannot
/// fail, so a 5xx is a caught panic or a broken core), a refusal is an RFC 9457 problem of
/// the same status, and a JSON answer is JSON.
fn check(parts: &http::response::Parts, body: &[u8], head: bool) {
    let status = parts.status;
    assert!(!status.is_server_error(), "server error {status}: {}", String::from_utf8_lossy(body));
    let content_type = parts.headers.get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    if head {
        assert!(body.is_empty(), "HEAD answered with a body");
        return;
    }
    if status.is_client_error() {
        assert_eq!(content_type, ferrule_core::PROBLEM_JSON, "{status} is not a problem");
        let problem: serde_json::Value = serde_json::from_slice(body).expect("a problem body is JSON");
        assert_eq!(problem["status"].as_u64(), Some(status.as_u16() as u64), "problem status differs: {problem}");
        for issue in problem.get("errors").and_then(|e| e.as_array()).into_iter().flatten() {
            assert!(issue["type"].is_string() && issue["loc"].is_array() && issue["msg"].is_string(), "bad issue {issue}");
        }
    } else if content_type.starts_with("application/json") {
        serde_json::from_slice::<serde_json::Value>(body).expect("a JSON answer is JSON");
    }
}

/// The seed inputs of `target`: every case of its categories, encoded (named `<category>-<n>`).
pub fn seeds(fixtures: &Path, target: &Target) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut seeds = Vec::new();
    if target.files {
        let traversal = Traversal::load(fixtures)?;
        let paths = traversal.served.iter().map(|(path, _)| path).chain(&traversal.refused);
        for (n, path) in paths.enumerate() {
            // Written as the input format writes a request line: the path's bytes as they are.
            let mut bytes = vec![0u8];
            bytes.extend_from_slice(format!("GET {path}\n\n").as_bytes());
            seeds.push((format!("static-{n:03}"), bytes));
        }
        return Ok(seeds);
    }
    for (index, category) in target.categories.iter().enumerate() {
        let file = ferrule_conformance::load(fixtures, category)?;
        for (n, case) in file.cases.iter().enumerate() {
            let request = ferrule_conformance::client::build("", &case.request).map_err(|e| format!("{category}: {}: {e}", case.name))?;
            let bytes = input::encode(index as u8, &request);
            if bytes.len() <= MAX_LEN {
                seeds.push((format!("{category}-{n:03}"), bytes));
            }
        }
    }
    Ok(seeds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(status: u16, content_type: &str) -> http::response::Parts {
        let (parts, ()) = http::Response::builder().status(status).header("content-type", content_type).body(()).unwrap().into_parts();
        parts
    }

    #[test]
    fn a_refusal_that_is_a_problem_of_its_status_passes() {
        let body = br#"{"status": 422, "errors": [{"type": "int_parsing", "loc": ["query", "n"], "msg": "not an integer"}]}"#;
        check(&parts(422, ferrule_core::PROBLEM_JSON), body, false);
        check(&parts(200, "application/json"), b"{}", false);
    }

    #[test]
    #[should_panic(expected = "server error")]
    fn a_server_error_is_a_finding() {
        check(&parts(500, ferrule_core::PROBLEM_JSON), br#"{"status": 500}"#, false);
    }

    #[test]
    #[should_panic(expected = "problem status differs")]
    fn a_problem_of_another_status_is_a_finding() {
        check(&parts(400, ferrule_core::PROBLEM_JSON), br#"{"status": 422}"#, false);
    }

    #[test]
    #[should_panic(expected = "is not a problem")]
    fn a_plain_text_refusal_is_a_finding() {
        check(&parts(404, "text/plain"), b"not found", false);
    }

    // Found by //bench:fuzz_test's `static` target once the core's code changed its path:
    // `GET /docs` reached the docs page of a build with no Swagger UI files, a 503.
    #[test]
    fn the_docs_page_of_a_build_without_it_is_no_finding() {
        let fixtures = ferrule_conformance::fixtures_dir();
        let found = b"\0GET /docs#\0\0\0\xbd\xef\xbf\xbd\xef\xbb\xbd\xef\xbf\xbd/s.txtvt.\n\n";
        for target in crate::TARGETS {
            Harness::new(&fixtures, target).unwrap().run(found);
        }
    }

    #[test]
    fn every_fixture_case_is_served_without_a_finding() {
        let fixtures = ferrule_conformance::fixtures_dir();
        for target in crate::TARGETS {
            let harness = Harness::new(&fixtures, target).unwrap();
            let seeds = seeds(&fixtures, target).unwrap();
            assert!(seeds.len() >= 5, "{}: only {} seeds", target.name, seeds.len());
            for (_, input) in seeds {
                harness.run(&input);
            }
        }
    }
}
