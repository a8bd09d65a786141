//! The one error shape: RFC 9457 `application/problem+json`.
//!
//! Validation failures carry FastAPI-style `errors: [{type, loc, msg, input, ctx}]` so clients
//! written against FastAPI read them unchanged.

use bytes::Bytes;
use http::{header, HeaderValue, StatusCode};
use serde::Serialize;
use serde_json::Value as Json;

pub const PROBLEM_JSON: &str = "application/problem+json";

/// The `type` URI of a validation problem; other problems use `about:blank` (RFC 9457 §4.2.1).
pub const VALIDATION_PROBLEM_TYPE: &str = "urn:ferrule:problem:validation-error";

/// One element of a location: a source (`"query"`), a field name, or an index/byte offset.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum LocSegment {
    Key(String),
    Index(usize),
}

impl From<&str> for LocSegment {
    fn from(key: &str) -> Self {
        LocSegment::Key(key.to_owned())
    }
}

impl From<String> for LocSegment {
    fn from(key: String) -> Self {
        LocSegment::Key(key)
    }
}

impl From<usize> for LocSegment {
    fn from(index: usize) -> Self {
        LocSegment::Index(index)
    }
}

/// One validation failure, named like pydantic's error types (`int_parsing`, `missing`, …).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Issue {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub loc: Vec<LocSegment>,
    pub msg: String,
    pub input: Json,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ctx: Option<Json>,
}

impl Issue {
    pub fn new(kind: &'static str, loc: Vec<LocSegment>, msg: impl Into<String>, input: Json) -> Self {
        Issue { kind, loc, msg: msg.into(), input, ctx: None }
    }

    pub fn with_ctx(mut self, ctx: Json) -> Self {
        self.ctx = Some(ctx);
        self
    }

    pub fn missing(loc: Vec<LocSegment>) -> Self {
        Issue::new("missing", loc, "Field required", Json::Null)
    }

    /// A whole number past 64 bits, where an integer is wanted: pydantic's error, in a JSON body
    /// (as a literal or as a whole float such as `1e20`) and in a parameter alike.
    pub fn int_parsing_size(loc: Vec<LocSegment>, input: Json) -> Self {
        Issue::new("int_parsing_size", loc, "Unable to parse input string as an integer, exceeded maximum size", input)
    }
}

/// An RFC 9457 problem document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    #[serde(rename = "type")]
    pub problem_type: String,
    pub title: String,
    pub status: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<Issue>,
    /// The response also closes the connection (`Connection: close`): the client cannot be
    /// trusted to send a next request that the server will read in time.
    #[serde(skip)]
    pub close_connection: bool,
    /// The request's own stream broke while its body was read: over HTTP/2 the stream is reset
    /// with the protocol's reason instead of answered (see `server::StreamError`).
    #[serde(skip)]
    pub stream_error: Option<crate::server::StreamError>,
}

impl Problem {
    /// A problem whose meaning is fully given by the status code.
    pub fn status(status: StatusCode) -> Self {
        Problem {
            problem_type: "about:blank".into(),
            title: status.canonical_reason().unwrap_or("Error").into(),
            status: status.as_u16(),
            detail: None,
            instance: None,
            errors: Vec::new(),
            close_connection: false,
            stream_error: None,
        }
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// Answers with `Connection: close`.
    pub fn closing(mut self) -> Self {
        self.close_connection = true;
        self
    }

    /// [`Self::closing`] when `close`.
    pub fn closing_if(mut self, close: bool) -> Self {
        self.close_connection |= close;
        self
    }

    /// 422 with every issue found in the request.
    pub fn validation(issues: Vec<Issue>) -> Self {
        let detail = match issues.len() {
            1 => "1 validation error".to_owned(),
            n => format!("{n} validation errors"),
        };
        Problem {
            problem_type: VALIDATION_PROBLEM_TYPE.into(),
            title: "Unprocessable Content".into(),
            status: 422,
            detail: Some(detail),
            instance: None,
            errors: issues,
            close_connection: false,
            stream_error: None,
        }
    }

    /// 500 that says nothing about what went wrong inside.
    pub fn internal() -> Self {
        Problem::status(StatusCode::INTERNAL_SERVER_ERROR)
            .with_detail("The server could not complete the request.")
    }

    pub fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// The problem's `application/problem+json` body, written by the core's JSON writer: the
    /// one way every answer and every binding (an `HTTPException`'s body) writes a problem.
    pub fn body(&self) -> Vec<u8> {
        // Every member is a string, a number or JSON already, under string keys: nothing here
        // can be refused.
        crate::json_text::to_vec(self).unwrap_or_default()
    }

    /// The body with `detail` given as JSON text, any JSON value: FastAPI lets an
    /// `HTTPException`'s detail be an object or a list, and its clients read it back as one.
    /// (RFC 9457 §3.1 asks a consumer to ignore a `detail` that is not a string.)
    pub fn body_with_detail_json(&self, detail: &[u8]) -> Vec<u8> {
        let mut body = Problem { detail: None, stream_error: None, ..self.clone() }.body();
        if body.last() == Some(&b'}') {
            body.pop();
            body.extend_from_slice(b",\"detail\":");
            body.extend_from_slice(detail);
            body.push(b'}');
        }
        body
    }

    pub fn into_http(self) -> http::Response<axum::body::Body> {
        let status = self.status_code();
        let body = Bytes::from(self.body());
        let mut response = http::Response::new(axum::body::Body::from(body));
        *response.status_mut() = status;
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        if self.close_connection {
            response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        if let Some(error) = self.stream_error {
            response.extensions_mut().insert(error);
        }
        response
    }
}

impl axum::response::IntoResponse for Problem {
    fn into_response(self) -> axum::response::Response {
        self.into_http()
    }
}
