//! The docs page at `docs_url` (`/docs` by default, as FastAPI serves it): Swagger UI on the
//! app's own OpenAPI document, from files the build embedded in the core (build.rs), so the
//! page works with no network at all: no CDN, and no request leaves the server it came from.
//!
//! `GET {docs_url}` is a small HTML page of our own with no inline script, so its
//! Content-Security-Policy lets scripts come from the server alone. Its script and style and
//! Swagger UI's files are served under `{docs_url}/assets/{revision}/`, where the revision
//! changes whenever their bytes do: they are cached for a year as immutable, with an ETag for
//! the revalidations that happen anyway, while the page itself is `no-cache`. Every URL in the
//! page is relative to the page, so it also works behind a proxy that adds a path prefix.
//!
//! Everything is made when the app starts; a request only clones `Bytes`.

use crate::problem::Problem;
use crate::spec::AppConfig;
use axum::body::Body;
use axum::routing::MethodRouter;
use bytes::Bytes;
use http::{header, HeaderMap, HeaderValue, Response, StatusCode};

/// A file build.rs embedded: served at `{docs_url}/assets/{REVISION}/{name}`.
pub(crate) struct EmbeddedFile {
    name: &'static str,
    bytes: &'static [u8],
    /// FNV-1a of the bytes, in hex: the file's ETag.
    digest: &'static str,
}

mod embedded {
    use super::EmbeddedFile;
    include!(concat!(env!("OUT_DIR"), "/docs_assets.rs"));
}

/// The version of Swagger UI this build serves at `docs_url`, or `None` when it was compiled
/// without swagger-ui-dist (its docs page then answers 503).
pub fn swagger_ui_version() -> Option<&'static str> {
    embedded::SWAGGER_UI_VERSION
}

/// The path segment every asset URL carries; a new one for new bytes.
pub(crate) fn revision() -> &'static str {
    embedded::REVISION
}

const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// Scripts, styles and images from the server only (Swagger UI's icons are data: URIs, and it
/// styles its elements inline); "Try it out" may call any server the document names.
const PAGE_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; \
                           connect-src *; object-src 'none'; base-uri 'self'; frame-ancestors 'self'";

/// The page and its assets, each with its path, or nothing when `docs_url` is `None` or there
/// is no document to show (`openapi_url` is `None`: FastAPI serves no docs then either).
pub(crate) fn routes(config: &AppConfig) -> Vec<(String, MethodRouter)> {
    let (Some(page), Some(openapi)) = (config.docs_url.as_deref(), config.openapi_url.as_deref()) else {
        return Vec::new();
    };
    if embedded::FILES.is_empty() {
        return vec![(page.to_owned(), axum::routing::get(|| async { unavailable() }))];
    }
    let assets = format!("{}/assets/{}", page.trim_end_matches('/'), revision());
    let redirect = oauth2_redirect_path(page);
    let html = Bytes::from(page_html(&config.title, &relative_to(page, &assets), &relative_to(page, openapi), &relative_to(page, &redirect)));
    let redirect_html = Bytes::from(redirect_html(&config.title, &relative_to(&redirect, &assets)));
    let mut routes = vec![
        (page.to_owned(), axum::routing::get(move || std::future::ready(page_response(html.clone())))),
        (redirect, axum::routing::get(move || std::future::ready(page_response(redirect_html.clone())))),
    ];
    for file in embedded::FILES {
        routes.push((format!("{assets}/{}", file.name), asset_route(file)));
    }
    routes
}

/// Where an OAuth2 provider sends the browser back to after the Authorize button's
/// authorization-code or implicit flow: FastAPI's `{docs_url}/oauth2-redirect`, a path that
/// stays the same across upgrades, as a provider's registered redirect URL must.
pub(crate) fn oauth2_redirect_path(page: &str) -> String {
    format!("{}/oauth2-redirect", page.trim_end_matches('/'))
}

/// `assets`, `openapi` and `redirect` are relative to the page (see `relative_to`).
fn page_html(title: &str, assets: &str, openapi: &str, redirect: &str) -> String {
    let (title, assets, openapi, redirect) = (escape_html(title), escape_html(assets), escape_html(openapi), escape_html(redirect));
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} - Swagger UI</title>
<link rel="stylesheet" href="{assets}/swagger-ui.css">
<link rel="stylesheet" href="{assets}/docs.css">
<link rel="icon" type="image/png" href="{assets}/favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="{assets}/favicon-16x16.png" sizes="16x16">
</head>
<body>
<div id="swagger-ui" data-openapi-url="{openapi}" data-oauth2-redirect-url="{redirect}"></div>
<script src="{assets}/swagger-ui-bundle.js"></script>
<script src="{assets}/docs.js"></script>
</body>
</html>
"#
    )
}

/// The page the provider redirects to: Swagger UI's own script hands the code or token in
/// its URL to the docs page that opened it, and closes it. No inline script, as on the page.
fn redirect_html(title: &str, assets: &str) -> String {
    let (title, assets) = (escape_html(title), escape_html(assets));
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title} - Swagger UI: OAuth2 redirect</title>
</head>
<body>
<script src="{assets}/oauth2-redirect.js"></script>
</body>
</html>
"#
    )
}

fn page_response(html: Bytes) -> Response<Body> {
    let mut response = Response::new(Body::from(html));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    // The page names the assets' revision: a browser must ask again after an upgrade.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(PAGE_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

fn asset_route(file: &'static EmbeddedFile) -> MethodRouter {
    // Weak: with compression on, the bytes sent differ per encoding under one tag.
    let etag = HeaderValue::from_str(&format!("W/\"{}\"", file.digest)).expect("a hex digest is a valid header value");
    axum::routing::get(move |request: HeaderMap| std::future::ready(asset_response(file, &etag, &request)))
}

fn asset_response(file: &'static EmbeddedFile, etag: &HeaderValue, request: &HeaderMap) -> Response<Body> {
    let fresh = request.get_all(header::IF_NONE_MATCH).iter().any(|value| matches_etag(value, etag));
    let mut response = if fresh {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        response
    } else {
        let mut response = Response::new(Body::from(Bytes::from_static(file.bytes)));
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type(file.name)));
        response
    };
    let headers = response.headers_mut();
    headers.insert(header::ETAG, etag.clone());
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(IMMUTABLE));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// An If-None-Match value (`*`, or a list of tags, weak or strong) against our tag, compared
/// weakly as RFC 9110 says for If-None-Match.
fn matches_etag(value: &HeaderValue, etag: &HeaderValue) -> bool {
    let opaque = |tag: &str| tag.trim().trim_start_matches("W/").to_owned();
    let ours = opaque(etag.to_str().unwrap_or_default());
    let Ok(value) = value.to_str() else { return false };
    value.trim() == "*" || value.split(',').any(|tag| opaque(tag) == ours)
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit_once('.').map(|(_, extension)| extension) {
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("png") => "image/png",
        _ => "text/plain; charset=utf-8", // LICENSE, NOTICE, *.txt
    }
}

fn unavailable() -> Response<Body> {
    Problem::status(StatusCode::SERVICE_UNAVAILABLE)
        .with_detail(
            "This build of Ferrule has no docs page: Swagger UI's files (the npm package swagger-ui-dist) were not found \
             when the core was compiled. Build with Bazel, or run `npm ci` in third_party/node before cargo (see core/build.rs).",
        )
        .into_http()
}

/// `target` (an absolute path) as a URL relative to a page at `page` (an absolute path), so
/// the page finds it under whatever prefix a proxy serves it at. It starts with `./`, so a
/// first segment with a colon is never read as a scheme.
fn relative_to(page: &str, target: &str) -> String {
    let page: Vec<&str> = page.split('/').skip(1).collect();
    let page_dir = &page[..page.len().saturating_sub(1)];
    let target: Vec<&str> = target.split('/').skip(1).collect();
    let (target_dir, name) = target.split_at(target.len().saturating_sub(1));
    let common = page_dir.iter().zip(target_dir).take_while(|(a, b)| a == b).count();
    let mut url = String::from("./");
    for _ in common..page_dir.len() {
        url.push_str("../");
    }
    for segment in &target_dir[common..] {
        url.push_str(segment);
        url.push('/');
    }
    url.push_str(name.first().copied().unwrap_or_default());
    url
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
