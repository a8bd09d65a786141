//! Runs the shared fixture corpus against the Rust API: one test per category file, each
//! serving that file's app on 127.0.0.1 and checking every case with the shared checker
//! (`ferrule-conformance`, a real HTTP client) that the other languages' tests run too.

mod handlers;

/// The `hooks` category judges the language bindings: hooks are functions of their languages
/// (Rust's are tower layers). Against the Rust API, which registers none, its cases must fail
/// (all but the two that hold without hooks): proof that they need the hooks to pass.
#[test]
fn hooks() {
    let file = ferrule_conformance::load(&ferrule_conformance::fixtures_dir(), "hooks").unwrap_or_else(|e| panic!("{e}"));
    assert!(!file.hooks.is_empty(), "the hooks category declares its hook setups");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let server = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        handlers::build_app(&file, |_| true).serve(listener).await.unwrap()
    });
    let results = ferrule_conformance::check_category(&format!("http://{}", server.local_addr()), &file);
    runtime.block_on(server.shutdown()).expect("clean shutdown");
    let passed: Vec<&str> = results.iter().filter(|r| r.problems.is_empty()).map(|r| r.name.as_str()).collect();
    assert_eq!(passed, ["a_failing_handler_is_still_a_bare_500", "a_websocket_handshake_the_hooks_let_through_is_upgraded"], "cases that pass without any hook");
}

fn run_category(category: &str) {
    let file = ferrule_conformance::load(&ferrule_conformance::fixtures_dir(), category).unwrap_or_else(|e| panic!("{e}"));
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let server = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        handlers::build_app(&file, |_| true).serve(listener).await.unwrap_or_else(|e| panic!("{category}: app does not build: {e}"))
    });
    let results = ferrule_conformance::check_category(&format!("http://{}", server.local_addr()), &file);
    let failures = ferrule_conformance::report(category, &results, &mut std::io::stdout());
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
    streaming,
    websocket,
    openapi,
    response_schemas,
    response_validation,
    trailing_slashes,
    files,
    trusted_hosts,
    trusted_proxies,
    untrusted_proxies,
    pattern_routes,
);

/// Every category: those run above, and those with a test of their own (`hooks`).
fn all_categories() -> Vec<&'static str> {
    CATEGORIES.iter().copied().chain(["hooks"]).collect()
}

#[test]
fn every_fixture_file_has_a_test() {
    let on_disk = ferrule_conformance::categories(&ferrule_conformance::fixtures_dir()).unwrap();
    let mut listed: Vec<String> = all_categories().iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "fixture files and test functions differ");
}

#[test]
fn corpus_is_large_enough() {
    let fixtures = ferrule_conformance::fixtures_dir();
    let total: usize = all_categories().iter().map(|c| ferrule_conformance::load(&fixtures, c).unwrap().cases.len()).sum();
    assert!(total >= 200, "the corpus has {total} cases; at least 200 are required");
}

/// The corpus follows `fixtures/fixture.schema.json`, and that schema follows the core: its
/// app and route properties are exactly the fields of `AppConfig` and `RouteSpec` (plus the
/// route's `handler`), so neither a fixture nor the schema can name an option the core lacks,
/// and a new core option must be added to the schema to be used in a fixture.
#[test]
fn fixtures_follow_their_schema_and_the_schema_follows_the_core() {
    let dir = ferrule_conformance::fixtures_dir();
    let read = |path: std::path::PathBuf| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
    };
    let schema = read(dir.join("fixture.schema.json"));
    let validator = jsonschema::validator_for(&schema).expect("the fixture schema compiles");
    let mut files = 0;
    for entry in std::fs::read_dir(dir.join("conformance")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let errors: Vec<String> = validator.iter_errors(&read(path.clone())).map(|e| format!("{} at {}", e, e.instance_path())).collect();
            assert!(errors.is_empty(), "{}: {}", path.display(), errors.join("; "));
            files += 1;
        }
    }
    assert_eq!(files, all_categories().len(), "every category file is run by this suite");

    let keys = |value: &serde_json::Value| -> std::collections::BTreeSet<String> { value.as_object().unwrap().keys().cloned().collect() };
    let app_in_schema = keys(&schema["properties"]["app"]["properties"]);
    let app_in_core = keys(&serde_json::to_value(ferrule_core::AppConfig::default()).unwrap());
    assert_eq!(app_in_schema, app_in_core, "fixture.schema.json's app properties against AppConfig");
    let mut route_in_schema = keys(&schema["$defs"]["route"]["properties"]);
    assert!(route_in_schema.remove("handler"));
    let mut full = ferrule_core::RouteSpec::get("/x");
    full.path_params.push(ferrule_core::ParamSpec::new("p", serde_json::json!({})));
    full.query = full.path_params.clone();
    full.headers = full.path_params.clone();
    full.cookies = full.path_params.clone();
    full.body = Some(ferrule_core::BodySpec::json(serde_json::json!({})));
    full.pattern = Some("/x".into());
    full.keep_undeclared_query = true;
    full.formats_as_sent = true;
    full.refuse_undeclared = vec!["query".into()];
    full.object_rules.insert("query".into(), serde_json::json!({}));
    full.cors = Some(Default::default());
    full.compression = Some(Default::default());
    full.body_limit = Some(1);
    full.timeout_ms = Some(1);
    full.websocket = Some(Default::default());
    full.summary = Some("s".into());
    full.description = Some("d".into());
    full.operation_id = Some("o".into());
    full.tags = vec!["t".into()];
    full.deprecated = true;
    full.include_in_schema = false;
    full = full.response("200", serde_json::json!({}));
    full = full.documented_response("404", serde_json::json!({"description": "d"}));
    full.security = Some(vec![]);
    full.security_schemes.insert("s".into(), serde_json::json!({"type": "mutualTLS"}));
    assert_eq!(route_in_schema, keys(&serde_json::to_value(&full).unwrap()), "fixture.schema.json's route properties against RouteSpec");
}
