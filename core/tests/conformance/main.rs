//! Runs the shared fixture corpus against the Rust API: one test per category file, each
//! serving that file's app on 127.0.0.1 and checking every case with a real HTTP client.

mod client;
mod fixture;
mod handlers;

use ferrule_core::{App, RouteSpec};
use std::sync::Arc;

fn build_app(file: &fixture::FixtureFile) -> App {
    let mut app = App::with_config(file.app.clone().unwrap_or_default());
    for route in &file.routes {
        let kind: Arc<str> = Arc::from(route.handler.as_str());
        let spec: RouteSpec = route.spec.clone();
        app.add_route(spec, Arc::new(move |request| handlers::handle(&kind, request)));
    }
    app
}

fn run_category(category: &str) {
    let file = fixture::load(category);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let server = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        build_app(&file).serve(listener).await.unwrap_or_else(|e| panic!("{category}: app does not build: {e}"))
    });
    let base = format!("http://{}", server.local_addr());
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(std::time::Duration::from_secs(10)))
        .build()
        .into();
    let mut failures = Vec::new();
    for case in &file.cases {
        let problems = match client::send(&agent, &base, &case.request) {
            Ok(reply) => client::check(&case.expect, &reply),
            Err(e) => vec![e],
        };
        if problems.is_empty() {
            println!("ok   {category}/{}", case.name);
        } else {
            println!("FAIL {category}/{}", case.name);
            failures.push(format!("{category}/{}:\n    {}", case.name, problems.join("\n    ")));
        }
    }
    runtime.block_on(server.shutdown()).expect("clean shutdown");
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), file.cases.len(), failures.join("\n"));
}

macro_rules! categories {
    ($($name:ident),* $(,)?) => {
        $( #[test] fn $name() { run_category(stringify!($name)); } )*
        const CATEGORIES: &[&str] = &[$(stringify!($name)),*];
    };
}

categories!(
    path_params,
    query_params,
    headers,
    cookies,
    json_bodies,
    url_encoded,
    multipart,
    content_types,
    body_limits,
    status_codes,
    validation_errors,
    cors,
    compression,
    request_id,
    http_methods,
    edge_cases,
);

#[test]
fn every_fixture_file_has_a_test() {
    let dir = fixture::fixtures_dir().join("conformance");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".json").map(str::to_owned))
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = CATEGORIES.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "fixture files and test functions differ");
}

#[test]
fn corpus_is_large_enough() {
    let total: usize = CATEGORIES.iter().map(|c| fixture::load(c).cases.len()).sum();
    assert!(total >= 200, "the corpus has {total} cases; at least 200 are required");
}
