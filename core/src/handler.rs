//! The one handler trait every language implements.

use crate::problem::Problem;
use crate::request::RequestData;
use crate::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use std::future::Future;
use std::pin::Pin;

pub type HandlerFuture = Pin<Box<dyn Future<Output = Result<Response, HandlerError>> + Send + 'static>>;

/// Called with fully validated request data; knows nothing of HTTP parsing.
///
/// Bindings implement it on their own handler objects (a Python callable, a JS function, a Ruby
/// block); Rust closures `Fn(RequestData) -> impl Future<Output = impl IntoResponse>` get it for free.
pub trait Handler: Send + Sync + 'static {
    fn call(&self, request: RequestData) -> HandlerFuture;

    /// The status this handler's plain results are sent with, for the OpenAPI document; `None`
    /// for handlers that choose it with each response (Rust's), documented as 200.
    fn documented_status(&self) -> Option<http::StatusCode> {
        None
    }

    /// Whether a request refused with `status` before any handler ran — its route's checks
    /// failed (422, 415, 413, 400), or, for an app's fallback, no route takes it (404, 405) —
    /// goes to [`Handler::rejected`] instead of being answered by the core with its problem.
    /// `path` is the request's. No by default: the core answers, and no interpreter is entered.
    fn takes_rejection(&self, _status: StatusCode, _path: &str) -> bool {
        false
    }

    /// Answers a refused request (see [`Handler::takes_rejection`]): `request` carries what was
    /// sent (method, path, raw headers, query and the body if it was read), with no typed
    /// values; `rejection` is the core's own answer.
    fn rejected(&self, _request: RequestData, rejection: Rejection) -> HandlerFuture {
        Box::pin(std::future::ready(Ok(rejection.response())))
    }
}

/// The core's answer to a request it refused: the problem, and headers that go with it (a
/// 405's `Allow`).
#[derive(Debug, Clone)]
pub struct Rejection {
    pub problem: Problem,
    pub headers: HeaderMap,
}

impl Rejection {
    pub fn new(problem: Problem) -> Self {
        Rejection { problem, headers: HeaderMap::new() }
    }

    /// The response the core sends when nobody else answers.
    pub fn response(&self) -> Response {
        let mut response = Response::problem(&self.problem);
        for (name, value) in &self.headers {
            response.headers.append(name.clone(), value.clone());
        }
        response
    }
}

impl<F, Fut, R> Handler for F
where
    F: Fn(RequestData) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoResponse,
{
    fn call(&self, request: RequestData) -> HandlerFuture {
        let future = self(request);
        Box::pin(async move { future.await.into_response() })
    }
}

/// A handler failure. The client gets a bare 500 (503 when the interpreter was too busy to
/// take the request); the message is for the server's log only.
#[derive(Debug)]
pub struct HandlerError {
    kind: HandlerErrorKind,
    message: String,
    /// The binding has logged the failure already, with what only it has (the exception's
    /// traceback or stack): the core writes no second line for it.
    reported: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandlerErrorKind {
    /// The handler raised, returned something unusable, or its interpreter stopped: 500.
    Failed,
    /// The handler's interpreter already had `max_queued_requests` waiting: 503, try later.
    Overloaded,
}

impl HandlerError {
    pub fn new(message: impl Into<String>) -> Self {
        HandlerError { kind: HandlerErrorKind::Failed, message: message.into(), reported: false }
    }

    /// A failure the binding has logged itself (an exception, with its traceback): a 500, and
    /// no line of the core's beside the binding's (every failure was logged twice before).
    pub fn reported(message: impl Into<String>) -> Self {
        HandlerError { kind: HandlerErrorKind::Failed, message: message.into(), reported: true }
    }

    pub fn overloaded(message: impl Into<String>) -> Self {
        HandlerError { kind: HandlerErrorKind::Overloaded, message: message.into(), reported: false }
    }

    pub fn is_reported(&self) -> bool {
        self.reported
    }

    pub fn kind(&self) -> HandlerErrorKind {
        self.kind
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for HandlerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl<E: std::error::Error> From<E> for HandlerError {
    fn from(error: E) -> Self {
        HandlerError::new(error.to_string())
    }
}
