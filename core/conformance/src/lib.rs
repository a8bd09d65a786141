//! # ferrule-conformance
//!
//! The checking half of the shared fixture corpus (`fixtures/conformance/*.json`): it sends
//! every case of a category to a server that some language built from the same file, with a
//! real HTTP client, and reports each unmet expectation. The Rust core's test calls it as a
//! library; the Python, Node and Ruby test suites start their server and run the
//! `ferrule-conformance` binary against it, so every language is judged by the same code. The
//! same cases also go through each language's in-process test client ([`stdio`]: the checker
//! hands each request to the test and judges the answer), so both paths meet one judge.

pub mod client;
pub mod expect;
pub mod fixture;
pub mod socket;
pub mod stdio;
pub mod traversal;

pub use fixture::{categories, fixtures_dir, load, Case, FixtureFile, FixtureRoute};

use std::time::Duration;

/// The outcome of one case.
pub struct CaseResult {
    pub name: String,
    /// Every unmet expectation; empty when the case passed.
    pub problems: Vec<String>,
    /// Not checked: a WebSocket case, sent where there is no socket.
    pub skipped: bool,
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
            CaseResult { name: case.name.clone(), problems, skipped: false }
        })
        .collect()
}

/// Sends every case of `file` through `send` (an in-process test client, see [`stdio`]),
/// except those `skip` names; WebSocket cases are skipped, since they need a socket, and so
/// are expectations on a
/// connection's own headers ([`fixture::Expect::message_only`]).
pub fn check_category_with(
    file: &FixtureFile,
    skip: impl Fn(&Case) -> bool,
    mut send: impl FnMut(&fixture::Request) -> Result<client::Reply, String>,
) -> Vec<CaseResult> {
    file.cases
        .iter()
        .map(|case| match &case.socket {
            _ if skip(case) => CaseResult { name: case.name.clone(), problems: Vec::new(), skipped: true },
            Some(_) => CaseResult { name: case.name.clone(), problems: Vec::new(), skipped: true },
            None => {
                let problems = match send(&case.request) {
                    Ok(reply) => expect::check(&case.expect.message_only(), &reply),
                    Err(e) => vec![e],
                };
                CaseResult { name: case.name.clone(), problems, skipped: false }
            }
        })
        .collect()
}

/// Writes `ok`/`skip`/`FAIL` per case to `out` and returns the failures, formatted for an
/// assertion message.
pub fn report(category: &str, results: &[CaseResult], out: &mut dyn std::io::Write) -> Vec<String> {
    let mut failures = Vec::new();
    for result in results {
        let verdict = match (result.skipped, result.problems.is_empty()) {
            (true, _) => "skip",
            (false, true) => "ok  ",
            (false, false) => "FAIL",
        };
        let _ = writeln!(out, "{verdict} {category}/{}", result.name);
        if !result.skipped && !result.problems.is_empty() {
            failures.push(format!("{category}/{}:\n    {}", result.name, result.problems.join("\n    ")));
        }
    }
    failures
}
