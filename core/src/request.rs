//! What a handler receives: every declared input already parsed, coerced and validated.

use crate::value::{Params, Value};
use bytes::Bytes;
use http::{HeaderMap, Method};
use serde::de::DeserializeOwned;

/// A request body after content-type checks, parsing and validation.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    None,
    Json(serde_json::Value),
    /// Url-encoded or multipart fields, coerced by the body schema (files as [`Value::File`]).
    Form(Params),
    Bytes(Bytes),
    Text(String),
}

impl Body {
    pub fn is_none(&self) -> bool {
        matches!(self, Body::None)
    }

    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Body::None => serde_json::Value::Null,
            Body::Json(json) => json.clone(),
            Body::Form(fields) => serde_json::to_value(fields).unwrap_or_default(),
            Body::Bytes(bytes) => serde_json::Value::String(String::from_utf8_lossy(bytes).into_owned()),
            Body::Text(text) => serde_json::Value::String(text.clone()),
        }
    }
}

/// The language-neutral request every handler (Rust, Python, Node, Ruby) is called with.
#[derive(Debug, Clone)]
pub struct RequestData {
    pub method: Method,
    /// The request path as sent (percent-encoded).
    pub path: String,
    pub path_params: Params,
    pub query: Params,
    /// Declared headers, under their declared (lower-case) names.
    pub headers: Params,
    pub cookies: Params,
    pub body: Body,
    pub request_id: Option<String>,
    /// All request headers, for handlers that need undeclared ones.
    pub raw_headers: HeaderMap,
    /// When the handler's time limit (`timeout_ms`) runs out: the core answers 504 then, and a
    /// binding cancels what it can (a Python task, a Node `AbortSignal`). `None`: no limit.
    pub deadline: Option<std::time::Instant>,
}

/// A typed view that did not fit the handler's Rust type.
#[derive(Debug)]
pub struct ExtractError(pub String);

impl std::fmt::Display for ExtractError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ExtractError {}

impl RequestData {
    pub fn path_param(&self, name: &str) -> Option<&Value> {
        self.path_params.get(name)
    }

    pub fn query_param(&self, name: &str) -> Option<&Value> {
        self.query.get(name)
    }

    pub fn header(&self, name: &str) -> Option<&Value> {
        self.headers.get(name)
    }

    pub fn cookie(&self, name: &str) -> Option<&Value> {
        self.cookies.get(name)
    }

    /// The path parameters as a Rust type (`#[derive(Deserialize)] struct UserPath { id: i64 }`).
    pub fn path_as<T: DeserializeOwned>(&self) -> Result<T, ExtractError> {
        from_json(serde_json::to_value(&self.path_params))
    }

    pub fn query_as<T: DeserializeOwned>(&self) -> Result<T, ExtractError> {
        from_json(serde_json::to_value(&self.query))
    }

    /// The validated body as a Rust type.
    pub fn body_as<T: DeserializeOwned>(&self) -> Result<T, ExtractError> {
        match &self.body {
            Body::Json(json) => T::deserialize(json).map_err(|e| ExtractError(e.to_string())),
            other => from_json(Ok(other.to_json())),
        }
    }
}

fn from_json<T: DeserializeOwned>(json: serde_json::Result<serde_json::Value>) -> Result<T, ExtractError> {
    json.and_then(serde_json::from_value).map_err(|e| ExtractError(e.to_string()))
}
