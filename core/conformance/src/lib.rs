//! # ferrule-conformance
//!
//! The checking half of the shared fixture corpus (`fixtures/conformance/*.json`): it sends
//! every case of a category to a server that some language built from the same file, with a
//! real HTTP client, and reports each unmet expectation. The Rust core's test calls it as a
//! library; the Python, Node and Ruby test suites start their server and run the
//! `ferrule-conformance` binary against it, so every language is judged by the same code.

pub mod client;
pub mod expect;
pub mod fixture;
pub mod socket;

pub use fixture::{categories, fixtures_dir, load, Case, FixtureFile, FixtureRoute};

use std::time::Duration;

/// The outcome of one case.
pub struct CaseResult {
    pub name: String,
    /// Every unmet expectation; empty when the case passed.
    pub problems: Vec<String>,
}

/// Sends every case of `file` to the server at `base` (`http://127.0.0.1:PORT`).
pub fn check_category(base: &str, file: &FixtureFile) -> Vec<CaseResult> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    file.cases
        .iter()
        .map(|case| {
            let problems = match &case.socket {
                Some(script) => socket::converse(base, &case.request, &case.expect, script),
                None => match client::send(&agent, base, &case.request) {
                    Ok(reply) => expect::check(&case.expect, &reply),
                    Err(e) => vec![e],
                },
            };
            CaseResult { name: case.name.clone(), problems }
        })
        .collect()
}

/// Prints `ok`/`FAIL` per case and returns the failures, formatted for an assertion message.
pub fn report(category: &str, results: &[CaseResult]) -> Vec<String> {
    let mut failures = Vec::new();
    for result in results {
        if result.problems.is_empty() {
            println!("ok   {category}/{}", result.name);
        } else {
            println!("FAIL {category}/{}", result.name);
            failures.push(format!("{category}/{}:\n    {}", result.name, result.problems.join("\n    ")));
        }
    }
    failures
}
