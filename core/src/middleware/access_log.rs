//! The access log: one line per request, written when the response head is ready —
//! `GET /users/7 200 15B 0.42ms id=3f2… trace=4bf9…` (method, path, status, body bytes when
//! known, time to the response head, request id, and the W3C trace id when the request carried
//! a `traceparent`). Off by default (`access_log`), and then it is not in the
//! stack at all; on, it costs a clock read and one record per request (`ferrule::access`, with
//! each value as a field), which goes where the app's log records go (`crate::log`): standard
//! error, or the language's logger.

use http::{header, Request, Response};
use hyper::body::Body;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;
use tower::{Layer, Service};

#[derive(Clone, Copy, Default)]
pub(crate) struct AccessLogLayer;

impl<S> Layer<S> for AccessLogLayer {
    type Service = AccessLog<S>;

    fn layer(&self, inner: S) -> Self::Service {
        AccessLog { inner }
    }
}

#[derive(Clone)]
pub(crate) struct AccessLog<S> {
    inner: S,
}

impl<S, B, R> Service<Request<B>> for AccessLog<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
    R: Body,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let started = Instant::now();
        let method = request.method().clone();
        let path = request.uri().path().to_owned();
        let trace_id = crate::trace::TraceContext::of(request.headers()).map(|t| t.trace_id_hex());
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await?;
            let entry = Entry::of(&response, started.elapsed());
            tracing::info!(
                target: "ferrule::access",
                method = method.as_str(),
                path = path.as_str(),
                status = entry.status,
                bytes = entry.bytes,
                duration_ms = entry.duration_ms,
                request_id = entry.request_id.as_deref().unwrap_or(""),
                trace_id = trace_id.as_deref().unwrap_or(""),
                "{}",
                entry.line(&method, &path, trace_id.as_deref())
            );
            Ok(response)
        })
    }
}

/// What the access log says of one response.
struct Entry {
    status: u16,
    /// Body bytes when known (Content-Length or an exact size hint).
    bytes: Option<u64>,
    duration_ms: f64,
    request_id: Option<String>,
}

impl Entry {
    fn of<R: Body>(response: &Response<R>, took: std::time::Duration) -> Entry {
        let bytes = response
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
            .or_else(|| response.body().size_hint().exact());
        let request_id = super::request_id_in(response.headers()).map(str::to_owned);
        Entry { status: response.status().as_u16(), bytes, duration_ms: took.as_secs_f64() * 1000.0, request_id }
    }

    fn line(&self, method: &http::Method, path: &str, trace_id: Option<&str>) -> String {
        let bytes = self.bytes.map_or_else(|| "-".to_owned(), |n| format!("{n}B"));
        // The client chose its ID: one with a space, a quote or `=` is written quoted, so it
        // cannot pass for more fields of the line (found by an attack probe: `1 trace=beef
        // ferrule: GET /admin 200` forged a trace and a second request).
        let id: std::borrow::Cow<'_, str> = match self.request_id.as_deref() {
            None => "-".into(),
            Some(id) if id.bytes().all(|b| b.is_ascii_graphic() && b != b'"' && b != b'=') => id.into(),
            Some(id) => format!("{id:?}").into(),
        };
        let trace = trace_id.map_or_else(String::new, |t| format!(" trace={t}"));
        format!("{method} {path} {} {bytes} {:.2}ms id={id}{trace}", self.status, self.duration_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_method_path_status_bytes_time_and_id() {
        let response = Response::builder().status(201).header("x-request-id", "abc").body(http_body_util::Full::new(bytes::Bytes::from_static(b"hello"))).unwrap();
        let entry = Entry::of(&response, std::time::Duration::from_micros(1500));
        assert_eq!(entry.line(&http::Method::POST, "/items", None), "POST /items 201 5B 1.50ms id=abc");
        assert_eq!(entry.line(&http::Method::POST, "/items", Some("4bf9")), "POST /items 201 5B 1.50ms id=abc trace=4bf9");
        assert_eq!((entry.status, entry.bytes, entry.request_id.as_deref()), (201, Some(5), Some("abc")));
        let unknown = Response::builder().status(200).body(http_body_util::StreamBody::new(futures_util::stream::empty::<Result<hyper::body::Frame<bytes::Bytes>, std::io::Error>>())).unwrap();
        assert_eq!(Entry::of(&unknown, std::time::Duration::ZERO).line(&http::Method::GET, "/", None), "GET / 200 - 0.00ms id=-");
    }

    #[test]
    fn an_id_that_could_pass_for_more_fields_is_quoted() {
        let entry = |id: &str| Entry { status: 200, bytes: None, duration_ms: 0.0, request_id: Some(id.to_owned()) };
        let forged = entry("1 trace=beef ferrule: GET /admin 200").line(&http::Method::GET, "/u", None);
        assert_eq!(forged, r#"GET /u 200 - 0.00ms id="1 trace=beef ferrule: GET /admin 200""#);
        assert_eq!(entry("a\"b").line(&http::Method::GET, "/", None), r#"GET / 200 - 0.00ms id="a\"b""#);
        assert_eq!(entry("req-7/a.b").line(&http::Method::GET, "/", None), "GET / 200 - 0.00ms id=req-7/a.b");
    }
}
