//! What a file's answer needs around tower-http's service, whichever asks: a mount
//! (`ServeDir`) or a handler that answers with a file (`ServeFile`, [`super::file_answer`]).
//! Range units read as RFC 9110 reads them, several ranges answered with the whole file,
//! `If-Range`, refusals as the core's problems, `nosniff`, and a HEAD answered as its GET is.

use crate::problem::Problem;
use axum::body::Body;
use bytes::Bytes;
use http::{header, HeaderValue, Method, Request, Response, StatusCode};
use std::future::Future;
use std::io;

/// Answers `request` with what `call` (the file service) gives; `missing` answers for no file.
pub(super) async fn served<C, Fut, B>(mut request: Request<Body>, mut call: C, missing: fn() -> Response<Body>) -> Response<Body>
where
    C: FnMut(Request<Body>) -> Fut,
    Fut: Future<Output = io::Result<Response<B>>>,
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    let method = request.method().clone();
    if method == Method::HEAD {
        // Answered as the GET is, its body left out below: `ServeDir` hands a missing file's
        // GET to the routes behind it but answers a HEAD itself, so the two differed. (The
        // routes behind a mount see such a HEAD as the GET it is answered as: axum empties a
        // HEAD's body before the length could be read from it.)
        *request.method_mut() = Method::GET;
    }
    // A range unit's name is case-insensitive, and a Range in a unit the server does not know
    // is ignored (RFC 9110 §14.1, §14.2); `ServeDir` knows `bytes=` as written only (found by
    // an attack probe: `Bytes=0-3` and `items=0-3` were 416s).
    if let Some(range) = request.headers().get(header::RANGE) {
        let text = range.as_bytes();
        match text.iter().position(|&b| b == b'=') {
            Some(eq) if text[..eq].eq_ignore_ascii_case(b"bytes") => {
                if &text[..eq] != b"bytes" {
                    let mut lower = b"bytes".to_vec();
                    lower.extend_from_slice(&text[eq..]);
                    if let Ok(value) = HeaderValue::from_bytes(&lower) {
                        request.headers_mut().insert(header::RANGE, value);
                    }
                }
            }
            _ => {
                request.headers_mut().remove(header::RANGE);
            }
        }
    }
    // Several ranges would be a multipart/byteranges answer, which `ServeDir` refuses with 416
    // although the ranges are satisfiable; RFC 9110 §14.2 lets a server ignore Range instead.
    if request.headers().get_all(header::RANGE).iter().count() > 1 || request.headers().get(header::RANGE).is_some_and(|range| range.as_bytes().contains(&b',')) {
        request.headers_mut().remove(header::RANGE);
    }
    // `ServeDir` does not read If-Range: a range is only for the representation the client
    // already holds part of, so keep the request to ask again for the whole when it is not.
    let whole = request.headers().get(header::IF_RANGE).cloned().filter(|_| request.headers().contains_key(header::RANGE)).map(|validator| (validator, without_range(&request)));
    // `ServeDir` refuses a range that runs past the end (`bytes=-3000` of a 2,800-byte file, a
    // last position past the end or past u64): RFC 9110 §14.1.2 uses what there is. Such a
    // 416 is asked again with the range cut to the file (found by a probe; Starlette and
    // Sinatra answer 206).
    let asked = request.headers().get(header::RANGE).cloned().map(|range| (range, copy_of(&request)));
    let mut response = match call(request).await {
        Ok(response) => response.map(Body::new),
        Err(error) => {
            tracing::error!(target: "ferrule::static", "static file: {error}");
            return Problem::internal().into_http();
        }
    };
    if let Some((range, mut again)) = asked.filter(|_| response.status() == StatusCode::RANGE_NOT_SATISFIABLE) {
        let length = response.headers().get(header::CONTENT_RANGE).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("bytes */")).and_then(|n| n.parse::<u64>().ok());
        if let Some(cut) = length.and_then(|length| within(range.as_bytes(), length)) {
            again.headers_mut().insert(header::RANGE, cut);
            response = match call(again).await {
                Ok(response) => response.map(Body::new),
                Err(error) => {
                    tracing::error!(target: "ferrule::static", "static file: {error}");
                    return Problem::internal().into_http();
                }
            };
        }
    }
    if let Some((validator, whole)) = whole {
        if response.status() == StatusCode::PARTIAL_CONTENT && !if_range_holds(&validator, response.headers()) {
            response = match call(whole).await {
                Ok(response) => response.map(Body::new),
                Err(error) => {
                    tracing::error!(target: "ferrule::static", "static file: {error}");
                    return Problem::internal().into_http();
                }
            };
        }
    }
    let mut response = match response.status() {
        StatusCode::NOT_FOUND if is_empty(&response) => missing(),
        StatusCode::METHOD_NOT_ALLOWED => {
            let mut refused = Problem::status(StatusCode::METHOD_NOT_ALLOWED).with_detail("Files are read with GET or HEAD.").into_http();
            refused.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            refused
        }
        StatusCode::RANGE_NOT_SATISFIABLE => {
            let range = response.headers().get(header::CONTENT_RANGE).cloned();
            let mut refused = Problem::status(StatusCode::RANGE_NOT_SATISFIABLE).with_detail("The range is not within the file.").into_http();
            if let Some(range) = range {
                refused.headers_mut().insert(header::CONTENT_RANGE, range);
            }
            refused
        }
        // Any other refusal of `ServeDir`'s (412 for a failed `If-Match`, 400) is a problem too,
        // with the validators it carried.
        status if status.is_client_error() && is_empty(&response) => {
            let mut refused = Problem::status(status).into_http();
            for name in [header::ETAG, header::LAST_MODIFIED] {
                if let Some(value) = response.headers().get(&name) {
                    refused.headers_mut().insert(name, value.clone());
                }
            }
            refused
        }
        _ => {
            with_utf8_charset(&mut response);
            response
        }
    };
    response.headers_mut().insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if method == Method::HEAD {
        // A HEAD's Content-Length is what a GET would send (RFC 9110 §8.6): the problems made
        // here carry none of their own, so the empty body would have said 0 (found by an
        // attack probe: a 404 that is 94 bytes to a GET).
        let bodiless = matches!(response.status(), StatusCode::NO_CONTENT | StatusCode::NOT_MODIFIED) || response.status().is_informational();
        if !bodiless && !response.headers().contains_key(header::CONTENT_LENGTH) {
            if let Some(length) = hyper::body::Body::size_hint(response.body()).exact().filter(|&n| n > 0) {
                response.headers_mut().insert(header::CONTENT_LENGTH, HeaderValue::from(length));
            }
        }
        *response.body_mut() = Body::empty();
    }
    response
}

/// A text file's type with `charset=utf-8`, as Starlette, Fastify's `send` and Sinatra send it:
/// without one, a browser reads an `index.html` holding "café" in its legacy encoding.
pub(super) fn with_utf8_charset(response: &mut Response<Body>) {
    let Some(value) = response.headers().get(header::CONTENT_TYPE) else { return };
    let Ok(text) = value.to_str() else { return };
    if text.starts_with("text/") && !text.to_ascii_lowercase().contains("charset=") {
        if let Ok(typed) = HeaderValue::from_str(&format!("{text}; charset=utf-8")) {
            response.headers_mut().insert(header::CONTENT_TYPE, typed);
        }
    }
}

/// The same request without its range: what is sent when `If-Range` does not hold.
fn without_range(request: &Request<Body>) -> Request<Body> {
    let mut whole = copy_of(request);
    whole.headers_mut().remove(header::RANGE);
    whole.headers_mut().remove(header::IF_RANGE);
    whole
}

/// The request's head again, with no body (a file's GET has none).
fn copy_of(request: &Request<Body>) -> Request<Body> {
    let mut copy = Request::new(Body::empty());
    *copy.method_mut() = request.method().clone();
    *copy.uri_mut() = request.uri().clone();
    *copy.headers_mut() = request.headers().clone();
    copy
}

/// `range` (one `bytes=` range that `ServeDir` refused) cut to a file of `length` bytes, when
/// RFC 9110 §14.1.2 satisfies it so: a suffix longer than the file is the whole file, and a
/// last position at or past the end (however many digits it has) is the last byte. `None` when
/// it starts past the end, or is no range at all: then it stays refused.
fn within(range: &[u8], length: u64) -> Option<HeaderValue> {
    let spec = range.strip_prefix(b"bytes=")?;
    let text = std::str::from_utf8(spec).ok()?.trim();
    let (first, last) = text.split_once('-')?;
    let (first, last) = (first.trim(), last.trim());
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if length == 0 || !digits(last) && !last.is_empty() {
        return None;
    }
    let cut = if first.is_empty() {
        // A suffix: `-0` is unsatisfiable; any other longer than the file is all of it.
        if !digits(last) || last.bytes().all(|b| b == b'0') {
            return None;
        }
        format!("bytes=0-{}", length - 1)
    } else {
        let first: u64 = first.parse().ok()?;
        if first >= length {
            return None;
        }
        // What is left is a last position past the end (a longer one overflows u64).
        format!("bytes={first}-{}", length - 1)
    };
    HeaderValue::from_str(&cut).ok()
}

/// Whether an `If-Range` validator names the representation being sent (RFC 9110 §13.1.5): a
/// strong entity tag equal to its `ETag`, or a date equal to its `Last-Modified`.
fn if_range_holds(validator: &HeaderValue, sent: &http::HeaderMap) -> bool {
    let validator = validator.as_bytes();
    if validator.starts_with(b"W/") {
        return false;
    }
    let against = if validator.starts_with(b"\"") { header::ETAG } else { header::LAST_MODIFIED };
    sent.get(against).is_some_and(|value| !value.as_bytes().starts_with(b"W/") && value.as_bytes() == validator)
}

/// An empty body: `ServeDir`'s own 404 (a problem from `next` has one).
fn is_empty(response: &Response<Body>) -> bool {
    axum::body::HttpBody::size_hint(response.body()).exact() == Some(0)
}

