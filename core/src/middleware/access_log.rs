//! The access log: one line per request, written when the response head is ready —
//! `GET /users/7 200 15B 0.42ms id=3f2…` (method, path, status, body bytes when known, time to
//! the response head, request id). Off by default (`access_log`), and then it is not in the
//! stack at all; on, it costs a clock read and one formatted line per request. Lines go to the
//! server's standard error, where the startup line goes.

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
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await?;
            eprintln!("{}", line(&method, &path, &response, started.elapsed()));
            Ok(response)
        })
    }
}

fn line<R: Body>(method: &http::Method, path: &str, response: &Response<R>, took: std::time::Duration) -> String {
    let bytes = response
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| response.body().size_hint().exact().map(|n| n.to_string()))
        .map_or_else(|| "-".to_owned(), |n| format!("{n}B"));
    let id = response.headers().get("x-request-id").and_then(|v| v.to_str().ok()).unwrap_or("-");
    format!("ferrule: {method} {path} {} {bytes} {:.2}ms id={id}", response.status().as_u16(), took.as_secs_f64() * 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_method_path_status_bytes_time_and_id() {
        let response = Response::builder().status(201).header("x-request-id", "abc").body(http_body_util::Full::new(bytes::Bytes::from_static(b"hello"))).unwrap();
        let written = line(&http::Method::POST, "/items", &response, std::time::Duration::from_micros(1500));
        assert_eq!(written, "ferrule: POST /items 201 5B 1.50ms id=abc");
        let unknown = Response::builder().status(200).body(http_body_util::StreamBody::new(futures_util::stream::empty::<Result<hyper::body::Frame<bytes::Bytes>, std::io::Error>>())).unwrap();
        assert_eq!(line(&http::Method::GET, "/", &unknown, std::time::Duration::ZERO), "ferrule: GET / 200 - 0.00ms id=-");
    }
}
