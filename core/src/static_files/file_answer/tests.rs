use crate::request::RequestData;
use crate::spec::RouteSpec;
use crate::{App, Response};
use http::{header, HeaderValue, Request, StatusCode};
use http_body_util::BodyExt;
use tower::ServiceExt;

/// A directory of its own for one test, with `report.txt` (190 bytes) and a directory.
fn scratch(name: &str) -> crate::static_files::ScratchDir {
    let dir = crate::static_files::ScratchDir::new(&format!("ferrule-file-answer-{name}"));
    std::fs::create_dir_all(dir.join("folder")).unwrap();
    std::fs::write(dir.join("report.txt"), "0123456789abcdefghi\n".repeat(10)[..190].to_owned()).unwrap();
    dir
}

/// Routes that answer with files: `/report` the file as it is, `/download` with a type and a
/// disposition of its own, `/created` with 201, `/gone` a missing file, `/folder` a directory.
fn router(dir: &std::path::Path) -> axum::Router {
    let at = |name: &str| dir.join(name);
    let (report, download, created, gone, folder) = (at("report.txt"), at("report.txt"), at("report.txt"), at("gone.txt"), at("folder"));
    App::new()
        .route(RouteSpec::get("/report"), move |_: RequestData| {
            let path = report.clone();
            async move { Response::file(path) }
        })
        .route(RouteSpec::get("/download"), move |_: RequestData| {
            let path = download.clone();
            async move {
                Response::file(path)
                    .with_header(header::CONTENT_TYPE, HeaderValue::from_static("application/x-report"))
                    .with_header(header::CONTENT_DISPOSITION, HeaderValue::from_static("attachment; filename=\"r.txt\""))
                    .with_header(header::CONTENT_LENGTH, HeaderValue::from_static("3"))
            }
        })
        .route(RouteSpec::post("/created"), move |_: RequestData| {
            let path = created.clone();
            async move { Response::file(path).with_status(StatusCode::CREATED) }
        })
        .route(RouteSpec::get("/gone"), move |_: RequestData| {
            let path = gone.clone();
            async move { Response::file(path) }
        })
        .route(RouteSpec::get("/folder"), move |_: RequestData| {
            let path = folder.clone();
            async move { Response::file(path) }
        })
        .into_router()
        .unwrap()
}

async fn send(router: &axum::Router, request: Request<axum::body::Body>) -> (StatusCode, http::HeaderMap, Vec<u8>) {
    let response = router.clone().oneshot(request).await.unwrap();
    let (parts, body) = response.into_parts();
    (parts.status, parts.headers, body.collect().await.unwrap().to_bytes().to_vec())
}

fn ask(method: &str, path: &str, headers: &[(header::HeaderName, &str)]) -> Request<axum::body::Body> {
    let mut request = Request::builder().method(method).uri(path);
    for (name, value) in headers {
        request = request.header(name, *value);
    }
    request.body(axum::body::Body::empty()).unwrap()
}

#[tokio::test]
async fn a_routes_file_is_sent_whole_with_its_type_length_and_validators() {
    let dir = scratch("whole");
    let (status, headers, body) = send(&router(&dir), ask("GET", "/report", &[])).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, std::fs::read(dir.join("report.txt")).unwrap());
    assert_eq!(headers[header::CONTENT_TYPE], "text/plain; charset=utf-8");
    assert_eq!(headers[header::CONTENT_LENGTH], "190");
    assert_eq!(headers[header::ACCEPT_RANGES], "bytes");
    assert!(headers.contains_key(header::ETAG) && headers.contains_key(header::LAST_MODIFIED));
}

#[tokio::test]
async fn a_range_is_answered_206_and_one_beyond_the_file_416() {
    let dir = scratch("range");
    let router = router(&dir);
    let (status, headers, body) = send(&router, ask("GET", "/report", &[(header::RANGE, "bytes=10-14")])).await;
    assert_eq!((status, &body[..]), (StatusCode::PARTIAL_CONTENT, &b"abcde"[..]));
    assert_eq!(headers[header::CONTENT_RANGE], "bytes 10-14/190");
    assert_eq!(headers[header::CONTENT_LENGTH], "5");
    // A unit's name in any case, as for a mount.
    let (status, _, body) = send(&router, ask("GET", "/report", &[(header::RANGE, "Bytes=-3")])).await;
    assert_eq!((status, &body[..]), (StatusCode::PARTIAL_CONTENT, &b"789"[..]));
    let (status, headers, body) = send(&router, ask("GET", "/report", &[(header::RANGE, "bytes=500-")])).await;
    assert_eq!(status, StatusCode::RANGE_NOT_SATISFIABLE);
    assert_eq!(headers[header::CONTENT_RANGE], "bytes */190");
    assert!(String::from_utf8_lossy(&body).contains("\"status\":416"));
    // Several ranges: the whole file.
    let (status, _, body) = send(&router, ask("GET", "/report", &[(header::RANGE, "bytes=0-1,5-6")])).await;
    assert_eq!((status, body.len()), (StatusCode::OK, 190));
}

#[tokio::test]
async fn validators_the_client_holds_get_304_and_a_stale_if_range_the_whole_file() {
    let dir = scratch("conditional");
    let router = router(&dir);
    let (_, headers, _) = send(&router, ask("GET", "/report", &[])).await;
    let etag = headers[header::ETAG].to_str().unwrap().to_owned();
    let modified = headers[header::LAST_MODIFIED].to_str().unwrap().to_owned();
    let (status, headers, body) = send(&router, ask("GET", "/report", &[(header::IF_NONE_MATCH, &etag)])).await;
    assert_eq!((status, body.len()), (StatusCode::NOT_MODIFIED, 0));
    assert_eq!(headers[header::ETAG], etag.as_str());
    let (status, _, _) = send(&router, ask("GET", "/report", &[(header::IF_MODIFIED_SINCE, &modified)])).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);
    let (status, _, body) = send(&router, ask("GET", "/report", &[(header::RANGE, "bytes=0-1"), (header::IF_RANGE, &etag)])).await;
    assert_eq!((status, &body[..]), (StatusCode::PARTIAL_CONTENT, &b"01"[..]));
    let (status, _, body) = send(&router, ask("GET", "/report", &[(header::RANGE, "bytes=0-1"), (header::IF_RANGE, "\"another\"")])).await;
    assert_eq!((status, body.len()), (StatusCode::OK, 190));
    let (status, _, _) = send(&router, ask("GET", "/report", &[(header::IF_MATCH, "\"another\"")])).await;
    assert_eq!(status, StatusCode::PRECONDITION_FAILED);
}

#[tokio::test]
async fn the_handlers_headers_stand_but_not_over_the_length_it_sends() {
    let dir = scratch("headers");
    let router = router(&dir);
    let (status, headers, body) = send(&router, ask("GET", "/download", &[(header::RANGE, "bytes=0-3")])).await;
    assert_eq!((status, &body[..]), (StatusCode::PARTIAL_CONTENT, &b"0123"[..]));
    assert_eq!(headers[header::CONTENT_TYPE], "application/x-report");
    assert_eq!(headers[header::CONTENT_DISPOSITION], "attachment; filename=\"r.txt\"");
    assert_eq!(headers[header::CONTENT_LENGTH], "4");
}

#[tokio::test]
async fn a_status_other_than_200_sends_the_whole_file_with_it() {
    let dir = scratch("status");
    let (status, headers, body) = send(&router(&dir), ask("POST", "/created", &[(header::RANGE, "bytes=0-3")])).await;
    assert_eq!((status, body.len()), (StatusCode::CREATED, 190));
    assert_eq!(headers[header::CONTENT_LENGTH], "190");
}

#[tokio::test]
async fn a_head_says_the_gets_length_and_sends_nothing() {
    let dir = scratch("head");
    let (status, headers, body) = send(&router(&dir), ask("HEAD", "/report", &[])).await;
    assert_eq!((status, body.len()), (StatusCode::OK, 0));
    assert_eq!(headers[header::CONTENT_LENGTH], "190");
}

#[tokio::test]
async fn a_missing_file_is_404_and_a_directory_the_handlers_failure() {
    let dir = scratch("missing");
    let router = router(&dir);
    let (status, headers, _) = send(&router, ask("GET", "/gone", &[])).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(headers[header::CONTENT_TYPE], crate::PROBLEM_JSON);
    let (status, _, body) = send(&router, ask("GET", "/folder", &[])).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert!(!String::from_utf8_lossy(&body).contains("folder"), "the path stays in the log");
}

#[test]
fn only_a_get_or_a_head_keeps_what_it_asks_and_only_when_it_asks_it() {
    let parts = |method: &str, headers: &[(header::HeaderName, &str)]| ask(method, "/", headers).into_parts().0;
    assert!(super::FileAsk::of(&parts("GET", &[(header::ACCEPT, "*/*")])).0.is_none());
    let ranged = super::FileAsk::of(&parts("GET", &[(header::ACCEPT, "*/*"), (header::RANGE, "bytes=0-1"), (header::IF_NONE_MATCH, "\"a\"")])).0.unwrap();
    assert!(!ranged.head && ranged.conditions.len() == 2);
    let head = super::FileAsk::of(&parts("HEAD", &[])).0.unwrap();
    assert!(head.head && head.conditions.is_empty());
    assert!(super::FileAsk::of(&parts("POST", &[(header::RANGE, "bytes=0-1")])).0.is_none());
}

