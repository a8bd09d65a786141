use crate::request::RequestData;
use crate::spec::{RouteSpec, StaticSpec};
use crate::App;
use http::{header, Request, StatusCode};
use http_body_util::BodyExt;
use tower::ServiceExt;

/// A directory of its own for one test: `public/` with files, and a secret beside it.
fn scratch(name: &str) -> crate::static_files::ScratchDir {
    let dir = crate::static_files::ScratchDir::new(&format!("ferrule-static-{name}"));
    std::fs::create_dir_all(dir.join("public/docs")).unwrap();
    std::fs::create_dir_all(dir.join("public/.git")).unwrap();
    std::fs::write(dir.join("public/app.js"), "console.log('hi');\n".repeat(10)).unwrap();
    std::fs::write(dir.join("public/docs/index.html"), "<h1>docs</h1>").unwrap();
    std::fs::write(dir.join("public/.env"), "SECRET=1").unwrap();
    std::fs::write(dir.join("public/.git/config"), "[core]").unwrap();
    std::fs::write(dir.join("secret.txt"), "do not serve").unwrap();
    std::os::unix::fs::symlink(dir.join("secret.txt"), dir.join("public/escape.txt")).unwrap();
    std::os::unix::fs::symlink(dir.join("public/app.js"), dir.join("public/alias.js")).unwrap();
    dir
}

fn router(dir: &std::path::Path, prefix: &str) -> axum::Router {
    let mut app = App::new().route(RouteSpec::get("/hello"), |_: RequestData| async { "from a route" });
    let spec = StaticSpec { cache_control: Some("public, max-age=60".into()), ..StaticSpec::new(prefix, dir.join("public").to_string_lossy()) };
    app.mount_static(spec).unwrap();
    app.into_router().unwrap()
}

async fn send(router: &axum::Router, request: Request<axum::body::Body>) -> (StatusCode, http::HeaderMap, Vec<u8>) {
    let response = router.clone().oneshot(request).await.unwrap();
    let (parts, body) = response.into_parts();
    (parts.status, parts.headers, body.collect().await.unwrap().to_bytes().to_vec())
}

fn get(path: &str) -> Request<axum::body::Body> {
    Request::get(path).body(axum::body::Body::empty()).unwrap()
}

#[tokio::test]
async fn a_file_is_served_with_its_type_validators_and_caching() {
    let dir = scratch("file");
    let router = router(&dir, "/assets");
    let (status, headers, body) = send(&router, get("/assets/app.js")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body.len(), 190);
    assert_eq!(headers[header::CONTENT_TYPE], "text/javascript; charset=utf-8");
    assert_eq!(headers[header::CACHE_CONTROL], "public, max-age=60");
    assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    let etag = headers[header::ETAG].clone();
    assert!(headers.contains_key(header::LAST_MODIFIED));
    let again = Request::get("/assets/app.js").header(header::IF_NONE_MATCH, etag).body(axum::body::Body::empty()).unwrap();
    let (status, _, body) = send(&router, again).await;
    assert_eq!((status, body.len()), (StatusCode::NOT_MODIFIED, 0));
    assert_eq!(send(&router, get("/hello")).await.2, b"from a route", "routes are untouched");
}

#[tokio::test]
async fn ranges_and_unsatisfiable_ranges() {
    let dir = scratch("range");
    let router = router(&dir, "/assets");
    let ranged = Request::get("/assets/app.js").header(header::RANGE, "bytes=0-6").body(axum::body::Body::empty()).unwrap();
    let (status, headers, body) = send(&router, ranged).await;
    assert_eq!((status, &body[..]), (StatusCode::PARTIAL_CONTENT, &b"console"[..]));
    assert_eq!(headers[header::CONTENT_RANGE], "bytes 0-6/190");
    let beyond = Request::get("/assets/app.js").header(header::RANGE, "bytes=500-600").body(axum::body::Body::empty()).unwrap();
    let (status, headers, body) = send(&router, beyond).await;
    assert_eq!(status, StatusCode::RANGE_NOT_SATISFIABLE);
    assert_eq!(headers[header::CONTENT_TYPE], crate::PROBLEM_JSON);
    assert_eq!(headers[header::CONTENT_RANGE], "bytes */190");
    assert!(String::from_utf8_lossy(&body).contains("\"status\":416"));
    // Past the end is cut to the file (RFC 9110 §14.1.2): a suffix longer than the file is all
    // of it, a last position past the end (even past u64) the last byte (found by a probe: 416s).
    for (range, content_range, length) in [("bytes=-3000", "bytes 0-189/190", 190), ("bytes=180-99999999999999999999", "bytes 180-189/190", 10), ("bytes=180-500", "bytes 180-189/190", 10)] {
        let request = Request::get("/assets/app.js").header(header::RANGE, range).body(axum::body::Body::empty()).unwrap();
        let (status, headers, body) = send(&router, request).await;
        assert_eq!((status, headers[header::CONTENT_RANGE].to_str().unwrap(), body.len()), (StatusCode::PARTIAL_CONTENT, content_range, length), "{range}");
    }
    for range in ["bytes=-0", "bytes=190-", "bytes=abc"] {
        let request = Request::get("/assets/app.js").header(header::RANGE, range).body(axum::body::Body::empty()).unwrap();
        assert_eq!(send(&router, request).await.0, StatusCode::RANGE_NOT_SATISFIABLE, "{range}");
    }
}

#[tokio::test]
async fn a_precompressed_sibling_goes_to_a_client_that_accepts_it() {
    let dir = scratch("precompressed");
    std::fs::write(dir.join("public/app.js.gz"), b"pretend gzip").unwrap();
    let router = router(&dir, "/assets");
    let gzip = Request::get("/assets/app.js").header(header::ACCEPT_ENCODING, "gzip").body(axum::body::Body::empty()).unwrap();
    let (_, headers, body) = send(&router, gzip).await;
    assert_eq!((headers[header::CONTENT_ENCODING].to_str().unwrap(), &body[..]), ("gzip", &b"pretend gzip"[..]));
    assert_eq!(headers[header::CONTENT_TYPE], "text/javascript; charset=utf-8");
    let (_, headers, body) = send(&router, get("/assets/app.js")).await;
    assert!(!headers.contains_key(header::CONTENT_ENCODING));
    assert_eq!(body.len(), 190);
}

#[tokio::test]
async fn a_directory_answers_with_its_index() {
    let dir = scratch("index");
    let router = router(&dir, "/assets");
    let (status, _, body) = send(&router, get("/assets/docs/")).await;
    assert_eq!((status, &body[..]), (StatusCode::OK, &b"<h1>docs</h1>"[..]));
}

#[tokio::test]
async fn traversal_in_every_encoding_and_hidden_files_are_refused() {
    let dir = scratch("traversal");
    let router = router(&dir, "/assets");
    for path in [
        "/assets/../secret.txt",
        "/assets/%2e%2e/secret.txt",
        "/assets/%2E%2E%2Fsecret.txt",
        "/assets/%252e%252e/secret.txt",
        "/assets/..%5csecret.txt",
        "/assets/..%255csecret.txt",
        "/assets/app.js%00.png",
        "/assets/escape.txt",
        "/assets/.env",
        "/assets/.git/config",
        "/assets/%2egit/config",
    ] {
        let (status, headers, body) = send(&router, get(path)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(headers[header::CONTENT_TYPE], crate::PROBLEM_JSON, "{path}");
        assert!(!String::from_utf8_lossy(&body).contains("do not serve") && !String::from_utf8_lossy(&body).contains("SECRET"), "{path}");
    }
    let (status, _, _) = send(&router, get("/assets/alias.js")).await;
    assert_eq!(status, StatusCode::OK, "a symlink that stays inside is served");
}

#[tokio::test]
async fn only_get_and_head_and_a_missing_file_is_the_apps_404() {
    let dir = scratch("methods");
    let router = router(&dir, "/assets");
    let post = Request::post("/assets/app.js").body(axum::body::Body::from("x")).unwrap();
    let (status, headers, _) = send(&router, post).await;
    assert_eq!((status, headers[header::ALLOW].to_str().unwrap()), (StatusCode::METHOD_NOT_ALLOWED, "GET, HEAD"));
    let head = Request::head("/assets/app.js").body(axum::body::Body::empty()).unwrap();
    let (status, headers, body) = send(&router, head).await;
    assert_eq!((status, body.len(), headers[header::CONTENT_LENGTH].to_str().unwrap()), (StatusCode::OK, 0, "190"));
    let (status, headers, _) = send(&router, get("/assets/missing.js")).await;
    assert_eq!((status, headers[header::CONTENT_TYPE].to_str().unwrap()), (StatusCode::NOT_FOUND, crate::PROBLEM_JSON));
}

#[tokio::test]
async fn a_directory_at_the_root_answers_what_no_route_takes() {
    let dir = scratch("root");
    let router = router(&dir, "/");
    assert_eq!(send(&router, get("/hello")).await.2, b"from a route");
    assert_eq!(send(&router, get("/app.js")).await.0, StatusCode::OK);
    assert_eq!(send(&router, get("/nothing")).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn following_symlinks_anywhere_is_a_choice_made_explicitly() {
    let dir = scratch("follow");
    let mut app = App::new();
    app.mount_static(StaticSpec { follow_symlinks: true, ..StaticSpec::new("/assets", dir.join("public").to_string_lossy()) }).unwrap();
    let router = app.into_router().unwrap();
    let (status, _, body) = send(&router, get("/assets/escape.txt")).await;
    assert_eq!((status, &body[..]), (StatusCode::OK, &b"do not serve"[..]));
    assert_eq!(send(&router, get("/assets/%2e%2e/secret.txt")).await.0, StatusCode::NOT_FOUND, "`..` stays refused");
}

#[test]
fn a_mount_that_cannot_work_is_refused_where_it_is_declared() {
    let dir = scratch("refused");
    let mut app = App::new();
    let missing = app.mount_static(StaticSpec::new("/a", dir.join("nope").to_string_lossy())).unwrap_err();
    assert!(missing.0.contains("cannot open directory"), "{missing}");
    let file = app.mount_static(StaticSpec::new("/a", dir.join("secret.txt").to_string_lossy())).unwrap_err();
    assert!(file.0.contains("is not a directory"), "{file}");
    let pattern = app.mount_static(StaticSpec::new("/{x}", dir.join("public").to_string_lossy())).unwrap_err();
    assert!(pattern.0.contains("plain path"), "{pattern}");
    app.mount_static(StaticSpec::new("/a", dir.join("public").to_string_lossy())).unwrap();
    assert!(app.mount_static(StaticSpec::new("/a", dir.join("public").to_string_lossy())).unwrap_err().0.contains("twice"));
}

#[test]
fn traversal_is_seen_through_any_number_of_encodings() {
    for path in ["/a/../b", "/%2e%2e/", "/%252E%252E/x", "/x%5c..", "/x%00", "/a\\\\b"] {
        assert!(super::is_traversal(path), "{path}");
    }
    for path in ["/a/b.c", "/a..b/c", "/%2e/x", "/.../x"] {
        assert!(!super::is_traversal(path), "{path}");
    }
}

// Found by a README-driven probe: `ServeDir` sees the path below the mount, so its redirect of
// a directory to its slash left the mount (`/assets/docs` → `/docs/`, a 404).
#[tokio::test]
async fn a_directory_without_its_slash_is_sent_to_it_under_the_mount() {
    let dir = scratch("slash");
    let router = router(&dir, "/assets");
    let (status, headers, _) = send(&router, get("/assets/docs?x=1")).await;
    assert_eq!((status, headers[header::LOCATION].to_str().unwrap()), (StatusCode::TEMPORARY_REDIRECT, "/assets/docs/?x=1"));
    std::fs::write(dir.join("public/index.html"), "<a href=app.js>").unwrap();
    let (status, headers, _) = send(&router, get("/assets")).await;
    assert_eq!((status, headers[header::LOCATION].to_str().unwrap()), (StatusCode::TEMPORARY_REDIRECT, "/assets/"));
    assert_eq!(send(&router, get("/assets/")).await.2, b"<a href=app.js>");
}

// Found by the same probe: several satisfiable ranges were a 416, and If-Range was not read,
// so a resumed download of a changed file got the new file's bytes spliced into the old.
#[tokio::test]
async fn several_ranges_or_a_stale_if_range_get_the_whole_file() {
    let dir = scratch("if-range");
    let router = router(&dir, "/assets");
    let ranged = |range: &str, if_range: Option<&str>| {
        let mut request = Request::get("/assets/app.js").header(header::RANGE, range);
        if let Some(validator) = if_range {
            request = request.header(header::IF_RANGE, validator);
        }
        request.body(axum::body::Body::empty()).unwrap()
    };
    let (status, _, body) = send(&router, ranged("bytes=0-1,5-6", None)).await;
    assert_eq!((status, body.len()), (StatusCode::OK, 190));
    let (_, headers, _) = send(&router, get("/assets/app.js")).await;
    let (etag, modified) = (headers[header::ETAG].to_str().unwrap().to_owned(), headers[header::LAST_MODIFIED].to_str().unwrap().to_owned());
    for current in [etag.as_str(), modified.as_str()] {
        let (status, _, body) = send(&router, ranged("bytes=0-6", Some(current))).await;
        assert_eq!((status, &body[..]), (StatusCode::PARTIAL_CONTENT, &b"console"[..]), "{current}");
    }
    for stale in ["\"stale\"", "W/\"weak\"", "Thu, 01 Jan 1970 00:00:00 GMT"] {
        let (status, _, body) = send(&router, ranged("bytes=0-6", Some(stale))).await;
        assert_eq!((status, body.len()), (StatusCode::OK, 190), "{stale}");
    }
}

/// Before, every file a mount served was counted as `route="unmatched"`, as if nothing took it.
#[tokio::test]
async fn the_metrics_count_a_mounts_files_under_its_prefix_and_a_missing_one_as_unmatched() {
    let dir = scratch("metrics");
    for (prefix, label) in [("/assets", "/assets/{*path}"), ("/", "/{*path}")] {
        let mut app = App::with_config(crate::spec::AppConfig { metrics_url: Some("/metrics".into()), ..Default::default() });
        app.mount_static(StaticSpec::new(prefix, dir.join("public").to_string_lossy())).unwrap();
        let router = app.into_router().unwrap();
        let file = format!("{}/app.js", prefix.trim_end_matches('/'));
        let missing = format!("{}/missing.js", prefix.trim_end_matches('/'));
        assert_eq!(send(&router, get(&file)).await.0, StatusCode::OK);
        assert_eq!(send(&router, get(&file)).await.0, StatusCode::OK);
        assert_eq!(send(&router, get(&missing)).await.0, StatusCode::NOT_FOUND);
        let hidden = format!("{}/.env", prefix.trim_end_matches('/'));
        assert_eq!(send(&router, get(&hidden)).await.0, StatusCode::NOT_FOUND);
        let text = String::from_utf8(send(&router, get("/metrics")).await.2).unwrap();
        assert!(text.contains(&format!(r#"ferrule_requests_total{{route="{label}",method="GET",status="200"}} 2"#)), "{prefix}: {text}");
        // The missing file and the refused hidden one alike.
        assert!(text.contains(r#"ferrule_requests_total{route="unmatched",method="GET",status="404"} 2"#), "{prefix}: {text}");
    }
}

// Found by an attack probe: `Bytes=0-3` and `items=0-3` were 416s (a unit's name is
// case-insensitive, an unknown unit is ignored: RFC 9110 §14.1-14.2), and a HEAD of a missing
// file said `content-length: 0` where the GET's problem is longer (RFC 9110 §8.6).
#[tokio::test]
async fn a_range_units_case_is_ignored_an_unknown_unit_is_ignored_and_a_head_says_the_gets_length() {
    let dir = scratch("range-units");
    let router = router(&dir, "/assets");
    let ranged = |range: &str| Request::get("/assets/app.js").header(header::RANGE, range).body(axum::body::Body::empty()).unwrap();
    let (status, _, body) = send(&router, ranged("Bytes=0-6")).await;
    assert_eq!((status, body.as_slice()), (StatusCode::PARTIAL_CONTENT, &b"console"[..]));
    let (status, _, body) = send(&router, ranged("items=0-3")).await;
    assert_eq!((status, body.len()), (StatusCode::OK, 190));
    let (_, got, body) = send(&router, get("/assets/missing.txt")).await;
    let head = Request::head("/assets/missing.txt").body(axum::body::Body::empty()).unwrap();
    let (status, headers, empty) = send(&router, head).await;
    assert_eq!((status, empty.len()), (StatusCode::NOT_FOUND, 0));
    assert_eq!(headers[header::CONTENT_LENGTH], body.len().to_string().as_str(), "{}", String::from_utf8_lossy(&body));
    assert_eq!(got.get(header::CONTENT_LENGTH).map_or(body.len().to_string(), |v| v.to_str().unwrap().to_owned()), body.len().to_string());
}

// Found on review: a HEAD answered 304 said `content-length: 0` (RFC 9110 §8.6: a 304 says
// the length a 200 would, or none).
#[tokio::test]
async fn a_head_answered_304_says_no_length() {
    let dir = scratch("head-304");
    let router = router(&dir, "/assets");
    let (_, headers, _) = send(&router, get("/assets/app.js")).await;
    let etag = headers[header::ETAG].clone();
    let head = Request::head("/assets/app.js").header(header::IF_NONE_MATCH, etag).body(axum::body::Body::empty()).unwrap();
    let (status, headers, _) = send(&router, head).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);
    assert!(!headers.contains_key(header::CONTENT_LENGTH), "{headers:?}");
}

#[tokio::test]
async fn a_compressed_file_is_not_compressed_again() {
    // Found by a probe: a `.gz` download a handler sent (FileResponse, sendFile, send_file)
    // went out gzipped a second time, 43 bytes larger.
    let dir = scratch("coded");
    let archive: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    std::fs::write(dir.join("public/data.tar.gz"), &archive).unwrap();
    std::fs::write(dir.join("public/font.woff2"), &archive).unwrap();
    std::fs::write(dir.join("public/big.js"), "console.log('hi');\n".repeat(100)).unwrap();
    let config = crate::spec::AppConfig { compression: Some(crate::spec::CompressionConfig::default()), ..Default::default() };
    let public = dir.join("public");
    let router = App::with_config(config)
        .route(RouteSpec::get("/files/{name}"), move |request: RequestData| {
            let path = public.join(request.path_params.get("name").and_then(|name| name.as_str()).unwrap());
            async move { crate::Response::file(path) }
        })
        .into_router()
        .unwrap();
    let gzip = |path: &str| Request::get(path).header(header::ACCEPT_ENCODING, "gzip, br").body(axum::body::Body::empty()).unwrap();
    for (path, kind) in [("/files/data.tar.gz", "application/gzip"), ("/files/font.woff2", "font/woff2")] {
        let (status, headers, body) = send(&router, gzip(path)).await;
        assert_eq!((status, headers[header::CONTENT_TYPE].to_str().unwrap()), (StatusCode::OK, kind), "{path}");
        assert!(!headers.contains_key(header::CONTENT_ENCODING), "{path}: {headers:?}");
        assert_eq!(body, archive, "{path}: the file's own bytes");
    }
    let (_, headers, _) = send(&router, gzip("/files/big.js")).await;
    assert!(headers.contains_key(header::CONTENT_ENCODING), "text is still compressed: {headers:?}");
}
