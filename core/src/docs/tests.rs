use super::*;
use crate::request::RequestData;
use crate::spec::{CompressionConfig, CorsConfig, RouteSpec};
use crate::App;
use axum::Router;
use http_body_util::BodyExt;
use tower::ServiceExt;

fn shop(config: AppConfig) -> Router {
    let app = App::with_config(AppConfig { title: "Shop <&>".into(), ..config });
    app.route(RouteSpec::get("/items/{id:int}"), |_: RequestData| async { "item" }).into_router().unwrap()
}

async fn get(router: &Router, path: &str, headers: &[(&str, &str)]) -> (StatusCode, HeaderMap, Bytes) {
    let mut request = http::Request::get(path);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = router.clone().oneshot(request.body(Body::empty()).unwrap()).await.unwrap();
    let (parts, body) = response.into_parts();
    (parts.status, parts.headers, body.collect().await.unwrap().to_bytes())
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers.get(name).map_or("", |v| v.to_str().unwrap())
}

#[tokio::test]
async fn the_page_loads_its_assets_and_the_document_relative_to_itself() {
    let router = shop(AppConfig::default());
    let (status, headers, body) = get(&router, "/docs", &[]).await;
    if embedded::FILES.is_empty() {
        // A build without swagger-ui-dist says so, and still builds and serves.
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(String::from_utf8_lossy(&body).contains("swagger-ui-dist"));
        assert_eq!(swagger_ui_version(), None);
        return;
    }
    assert_eq!(status, StatusCode::OK);
    assert_eq!(header(&headers, "content-type"), "text/html; charset=utf-8");
    assert_eq!(header(&headers, "cache-control"), "no-cache");
    assert!(header(&headers, "content-security-policy").contains("script-src 'self';"));
    let html = String::from_utf8(body.to_vec()).unwrap();
    assert!(html.contains("<title>Shop &lt;&amp;&gt; - Swagger UI</title>"), "{html}");
    let assets = format!("./docs/assets/{}", revision());
    for file in ["swagger-ui-bundle.js", "docs.js"] {
        assert!(html.contains(&format!(r#"<script src="{assets}/{file}"></script>"#)), "{html}");
    }
    assert!(html.contains(r#"data-openapi-url="./openapi.json""#), "{html}");
    assert!(!html.contains("<script>"), "no inline script: {html}");
    assert!(revision().starts_with(&format!("{}-", swagger_ui_version().unwrap())));
}

#[tokio::test]
async fn the_oauth2_redirect_page_is_served_where_the_page_sends_the_provider() {
    // Found by a probe: the Authorize button's authorization-code and implicit flows ended on
    // a 404, at Swagger UI's default `oauth2-redirect.html` beside the page.
    if embedded::FILES.is_empty() {
        return; // nothing embedded: see the_page_loads_its_assets_and_the_document_relative_to_itself
    }
    for (page, redirect, script) in [("/docs", "/docs/oauth2-redirect", "./assets"), ("/api/docs/", "/api/docs/oauth2-redirect", "./assets")] {
        let router = shop(AppConfig { docs_url: Some(page.into()), ..Default::default() });
        let html = String::from_utf8(get(&router, page, &[]).await.2.to_vec()).unwrap();
        let relative = relative_to(page, redirect);
        assert!(html.contains(&format!(r#"data-oauth2-redirect-url="{relative}""#)), "{html}");
        let (status, headers, body) = get(&router, redirect, &[]).await;
        assert_eq!((status, header(&headers, "content-type")), (StatusCode::OK, "text/html; charset=utf-8"), "{redirect}");
        assert!(header(&headers, "content-security-policy").contains("script-src 'self';"));
        let html = String::from_utf8(body.to_vec()).unwrap();
        let src = format!("{script}/{}/oauth2-redirect.js", revision());
        assert!(html.contains(&format!(r#"<script src="{src}"></script>"#)) && !html.contains("<script>"), "{html}");
        // The script it names is served, from where the page's URL resolves it.
        let asset = format!("{}/assets/{}/oauth2-redirect.js", page.trim_end_matches('/'), revision());
        let (status, headers, body) = get(&router, &asset, &[]).await;
        assert_eq!((status, header(&headers, "content-type")), (StatusCode::OK, "text/javascript; charset=utf-8"));
        assert!(String::from_utf8_lossy(&body).contains("swaggerUIRedirectOauth2"));
    }
    assert_eq!(relative_to("/docs", "/docs/oauth2-redirect"), "./docs/oauth2-redirect");
}

#[tokio::test]
async fn assets_are_immutable_with_an_etag_and_a_304_for_a_match() {
    if embedded::FILES.is_empty() {
        return; // nothing embedded: see the_page_loads_its_assets_and_the_document_relative_to_itself
    }
    let router = shop(AppConfig::default());
    for (name, kind) in [
        ("swagger-ui-bundle.js", "text/javascript; charset=utf-8"),
        ("swagger-ui.css", "text/css; charset=utf-8"),
        ("favicon-32x32.png", "image/png"),
        ("docs.js", "text/javascript; charset=utf-8"),
        ("LICENSE", "text/plain; charset=utf-8"),
    ] {
        let path = format!("/docs/assets/{}/{name}", revision());
        let (status, headers, body) = get(&router, &path, &[]).await;
        assert_eq!((status, header(&headers, "content-type")), (StatusCode::OK, kind), "{path}");
        assert_eq!(header(&headers, "cache-control"), "public, max-age=31536000, immutable");
        let file = embedded::FILES.iter().find(|f| f.name == name).unwrap();
        assert_eq!(body, Bytes::from_static(file.bytes));
        let etag = header(&headers, "etag").to_owned();
        assert_eq!(etag, format!("W/\"{}\"", file.digest));

        // Compared weakly (RFC 9110): our tag, its strong form, `*`, or ours in a list.
        let strong = etag.trim_start_matches("W/").to_owned();
        let listed = format!("\"other\", {etag}");
        for sent in [etag.as_str(), strong.as_str(), "*", listed.as_str()] {
            let (status, headers, body) = get(&router, &path, &[("if-none-match", sent)]).await;
            assert_eq!(status, StatusCode::NOT_MODIFIED, "{sent}");
            assert!(body.is_empty());
            assert_eq!((header(&headers, "etag"), header(&headers, "cache-control")), (etag.as_str(), IMMUTABLE));
        }
        assert_eq!(get(&router, &path, &[("if-none-match", "\"other\", W/\"x\"")]).await.0, StatusCode::OK);
    }
    let stale = get(&router, "/docs/assets/0.0.0-000000000000/swagger-ui.css", &[]).await;
    assert_eq!(stale.0, StatusCode::NOT_FOUND, "only the current revision is served");
}

#[tokio::test]
async fn docs_url_moves_or_switches_off_the_page_and_so_does_openapi_url() {
    let moved = shop(AppConfig { docs_url: Some("/api/docs/".into()), openapi_url: Some("/api/openapi.json".into()), ..Default::default() });
    assert_eq!(get(&moved, "/docs", &[]).await.0, StatusCode::NOT_FOUND);
    let (status, _, body) = get(&moved, "/api/docs/", &[]).await;
    if !embedded::FILES.is_empty() {
        assert_eq!(status, StatusCode::OK);
        let html = String::from_utf8(body.to_vec()).unwrap();
        assert!(html.contains(&format!(r#"src="./assets/{}/docs.js""#, revision())), "{html}");
        assert!(html.contains(r#"data-openapi-url="./../openapi.json""#), "{html}");
        let asset = format!("/api/docs/assets/{}/swagger-ui.css", revision());
        assert_eq!(get(&moved, &asset, &[]).await.0, StatusCode::OK);
    }

    let off = shop(AppConfig { docs_url: None, ..Default::default() });
    assert_eq!(get(&off, "/docs", &[]).await.0, StatusCode::NOT_FOUND);
    assert_eq!(get(&off, "/openapi.json", &[]).await.0, StatusCode::OK);

    // FastAPI's rule: no document, no docs page (a page with nothing to show).
    let no_document = shop(AppConfig { openapi_url: None, ..Default::default() });
    assert_eq!(get(&no_document, "/docs", &[]).await.0, StatusCode::NOT_FOUND);
    let asset = format!("/docs/assets/{}/swagger-ui.css", revision());
    assert_eq!(get(&no_document, &asset, &[]).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_route_of_the_apps_own_at_docs_url_wins() {
    let app = App::new().route(RouteSpec::get("/docs"), |_: RequestData| async { "mine" });
    let router = app.into_router().unwrap();
    let (status, _, body) = get(&router, "/docs", &[]).await;
    assert_eq!((status, &body[..]), (StatusCode::OK, &b"mine"[..]));

    // Routes of the app's own under docs_url or beside it are no conflict: each path goes to
    // the most specific route, the assets' static paths included.
    let app = App::new().route(RouteSpec::get("/docs/{rest:path}"), |_: RequestData| async { "rest" });
    let router = app.route(RouteSpec::get("/{name}"), |_: RequestData| async { "name" }).into_router().unwrap();
    assert_eq!(&get(&router, "/docs/other", &[]).await.2[..], b"rest");
    assert_eq!(&get(&router, "/other", &[]).await.2[..], b"name");
    if !embedded::FILES.is_empty() {
        assert_eq!(header(&get(&router, "/docs", &[]).await.1, "content-type"), "text/html; charset=utf-8");
        let asset = format!("/docs/assets/{}/docs.js", revision());
        assert_eq!(header(&get(&router, &asset, &[]).await.1, "content-type"), "text/javascript; charset=utf-8");
    }
}

#[tokio::test]
async fn the_page_and_assets_get_the_apps_cors_and_compression() {
    if embedded::FILES.is_empty() {
        return;
    }
    let cors = CorsConfig { allow_origins: vec!["https://portal.example.com".into()], ..Default::default() };
    let compression = CompressionConfig { min_size: 10, ..Default::default() };
    let router = shop(AppConfig { cors: Some(cors), compression: Some(compression), ..Default::default() });
    let path = format!("/docs/assets/{}/swagger-ui.css", revision());
    let (status, headers, _) = get(&router, &path, &[("accept-encoding", "gzip"), ("origin", "https://portal.example.com")]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(header(&headers, "content-encoding"), "gzip");
    assert_eq!(header(&headers, "access-control-allow-origin"), "https://portal.example.com");
    let (_, headers, _) = get(&router, "/docs", &[("origin", "https://portal.example.com")]).await;
    assert_eq!(header(&headers, "access-control-allow-origin"), "https://portal.example.com");
}

#[test]
fn a_bad_docs_url_is_refused_by_name() {
    let relative = AppConfig { docs_url: Some("docs".into()), ..Default::default() };
    assert_eq!(relative.check().unwrap_err(), "docs_url must be a path starting with `/`, not `docs`");
    let same = AppConfig { docs_url: Some("/openapi.json".into()), ..Default::default() };
    assert_eq!(same.check().unwrap_err(), "docs_url and openapi_url are the same path, `/openapi.json`");
}

#[test]
fn urls_are_relative_to_the_page() {
    assert_eq!(relative_to("/docs", "/openapi.json"), "./openapi.json");
    assert_eq!(relative_to("/docs", "/docs/assets/r/a.js"), "./docs/assets/r/a.js");
    assert_eq!(relative_to("/docs/", "/docs/assets/r/a.js"), "./assets/r/a.js");
    assert_eq!(relative_to("/api/v1/docs", "/api/openapi.json"), "./../openapi.json");
    assert_eq!(relative_to("/a/docs", "/b/c/openapi.json"), "./../b/c/openapi.json");
    assert_eq!(relative_to("/docs", "/x:y.json"), "./x:y.json");
}
