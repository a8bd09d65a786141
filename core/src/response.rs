//! What a handler returns, in a form every binding can build without going through JSON text.

use crate::handler::HandlerError;
use crate::problem::Problem;
use bytes::Bytes;
use http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use serde::Serialize;

/// A status a handler may send: a final status, 200–599. Anything else (a 1xx, which is
/// never a final answer; 0; 65736, which a 16-bit cast would wrap to 200) is the handler's
/// mistake, decided here once for every language.
pub(crate) fn status_code(code: i64) -> Result<StatusCode, String> {
    u16::try_from(code)
        .ok()
        .filter(|c| (200..=599).contains(c))
        .and_then(|c| StatusCode::from_u16(c).ok())
        .ok_or_else(|| format!("{code} is not an HTTP status a response can have (200-599)"))
}

/// A complete response: status, headers and body bytes.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Response {
    pub fn new(status: StatusCode) -> Self {
        Response { status, headers: HeaderMap::new(), body: Bytes::new() }
    }

    /// Already-serialised JSON (bindings serialise native objects straight into bytes).
    pub fn json_bytes(body: impl Into<Bytes>) -> Self {
        Response::new(StatusCode::OK)
            .with_body(body)
            .with_header(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))
    }

    pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<Self, HandlerError> {
        let bytes = serde_json::to_vec(value).map_err(|e| HandlerError::new(format!("response is not JSON-serialisable: {e}")))?;
        Ok(Response::json_bytes(bytes))
    }

    pub fn text(body: impl Into<String>) -> Self {
        Response::new(StatusCode::OK)
            .with_body(body.into())
            .with_header(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"))
    }

    pub fn bytes(body: impl Into<Bytes>) -> Self {
        Response::new(StatusCode::OK)
            .with_body(body)
            .with_header(header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"))
    }

    pub fn problem(problem: &Problem) -> Self {
        let body = serde_json::to_vec(problem).unwrap_or_default();
        Response::new(problem.status_code())
            .with_body(body)
            .with_header(header::CONTENT_TYPE, HeaderValue::from_static(crate::problem::PROBLEM_JSON))
    }

    pub fn with_status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }

    pub fn with_body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.insert(name, value);
        self
    }

    /// Adds a header given as text, refusing names or values HTTP cannot carry.
    pub fn try_header(mut self, name: &str, value: &str) -> Result<Self, HandlerError> {
        let name = HeaderName::try_from(name).map_err(|_| HandlerError::new(format!("invalid header name {name:?}")))?;
        let value = HeaderValue::try_from(value).map_err(|_| HandlerError::new(format!("invalid value for header {name}")))?;
        self.headers.append(name, value);
        Ok(self)
    }

    pub(crate) fn into_http(self) -> http::Response<axum::body::Body> {
        // 204 and 304 never carry a body (RFC 9110 §15.3.5, §15.4.5).
        let body = if self.status == StatusCode::NO_CONTENT || self.status == StatusCode::NOT_MODIFIED {
            Bytes::new()
        } else {
            self.body
        };
        let mut response = http::Response::new(axum::body::Body::from(body));
        *response.status_mut() = self.status;
        *response.headers_mut() = self.headers;
        response
    }
}

/// Anything a Rust handler may return.
pub trait IntoResponse {
    fn into_response(self) -> Result<Response, HandlerError>;
}

impl IntoResponse for Response {
    fn into_response(self) -> Result<Response, HandlerError> {
        Ok(self)
    }
}

impl IntoResponse for serde_json::Value {
    fn into_response(self) -> Result<Response, HandlerError> {
        Response::json(&self)
    }
}

/// A serialisable Rust value sent as JSON.
pub struct Json<T>(pub T);

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Result<Response, HandlerError> {
        Response::json(&self.0)
    }
}

impl IntoResponse for String {
    fn into_response(self) -> Result<Response, HandlerError> {
        Ok(Response::text(self))
    }
}

impl IntoResponse for &'static str {
    fn into_response(self) -> Result<Response, HandlerError> {
        Ok(Response::text(self))
    }
}

impl IntoResponse for Bytes {
    fn into_response(self) -> Result<Response, HandlerError> {
        Ok(Response::bytes(self))
    }
}

impl IntoResponse for StatusCode {
    fn into_response(self) -> Result<Response, HandlerError> {
        Ok(Response::new(self))
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Result<Response, HandlerError> {
        Ok(Response::problem(&self))
    }
}

impl<T: IntoResponse> IntoResponse for (StatusCode, T) {
    fn into_response(self) -> Result<Response, HandlerError> {
        Ok(self.1.into_response()?.with_status(self.0))
    }
}

impl<T: IntoResponse, E: Into<HandlerError>> IntoResponse for Result<T, E> {
    fn into_response(self) -> Result<Response, HandlerError> {
        self.map_err(Into::into)?.into_response()
    }
}
