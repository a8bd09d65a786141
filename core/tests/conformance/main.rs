//! Runs the shared fixture corpus against the Rust API: one test per category file, each
//! serving that file's app on 127.0.0.1 and checking every case with the shared checker
//! (`ferrule-conformance`, a real HTTP client) that the other languages' tests run too.

mod handlers;

fn run_category(category: &str) {
    let file = ferrule_conformance::load(&ferrule_conformance::fixtures_dir(), category).unwrap_or_else(|e| panic!("{e}"));
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let server = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        handlers::build_app(&file, |_| true).serve(listener).await.unwrap_or_else(|e| panic!("{category}: app does not build: {e}"))
    });
    let results = ferrule_conformance::check_category(&format!("http://{}", server.local_addr()), &file);
    let failures = ferrule_conformance::report(category, &results);
    runtime.block_on(server.shutdown()).expect("clean shutdown");
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), results.len(), failures.join("\n"));
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
    raw_inputs,
);

#[test]
fn every_fixture_file_has_a_test() {
    let on_disk = ferrule_conformance::categories(&ferrule_conformance::fixtures_dir()).unwrap();
    let mut listed: Vec<String> = CATEGORIES.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "fixture files and test functions differ");
}

#[test]
fn corpus_is_large_enough() {
    let fixtures = ferrule_conformance::fixtures_dir();
    let total: usize = CATEGORIES.iter().map(|c| ferrule_conformance::load(&fixtures, c).unwrap().cases.len()).sum();
    assert!(total >= 200, "the corpus has {total} cases; at least 200 are required");
}
