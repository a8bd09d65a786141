//! Request bodies: limits (413), content types (415), then parsing and validation (422).

mod json;
mod multipart;

use crate::params::{ParamSet, RawPairs};
use crate::problem::{Issue, Problem};
use crate::request::Body;
use crate::spec::{BodyKind, BodySpec, ParamSpec};
use crate::validation::{CompiledSchema, SchemaError};
use http::{header, HeaderMap, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value as Json;

/// A route's body rules, compiled once.
#[derive(Debug)]
pub struct BodyReader {
    kind: BodyKind,
    required: bool,
    limit: usize,
    max_file_size: Option<usize>,
    /// JSON bodies: the compiled schema, when it constrains anything.
    schema: Option<CompiledSchema>,
    /// Form and multipart bodies: fields coerced and validated like query parameters.
    fields: Option<ParamSet>,
}

impl BodyReader {
    pub fn compile(spec: &BodySpec, limit: usize) -> Result<Self, SchemaError> {
        let (schema, fields) = match (spec.kind, &spec.schema) {
            (BodyKind::Json, Some(schema)) if crate::params::has_constraints(schema) || schema.get("type").is_some() => {
                (Some(CompiledSchema::compile(schema)?), None)
            }
            (BodyKind::Form | BodyKind::Multipart, Some(schema)) => (None, Some(ParamSet::compile("body", &form_fields(schema))?)),
            _ => (None, None),
        };
        Ok(BodyReader { kind: spec.kind, required: spec.required, limit, max_file_size: spec.max_file_size, schema, fields })
    }

    /// Reads and checks the body. `Err` is a request-ending problem (413, 415); issues that
    /// belong in a 422 next to parameter issues are pushed to `issues`.
    pub async fn read(&self, headers: &HeaderMap, body: axum::body::Body, issues: &mut Vec<Issue>) -> Result<Body, Problem> {
        if let Some(length) = content_length(headers) {
            if length > self.limit as u64 {
                return Err(too_large(self.limit));
            }
        }
        let bytes = match http_body_util::Limited::new(body, self.limit).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(error) if error.is::<http_body_util::LengthLimitError>() => return Err(too_large(self.limit)),
            Err(_) => {
                return Err(Problem::status(StatusCode::BAD_REQUEST).with_detail("The request body could not be read."))
            }
        };
        if bytes.is_empty() {
            if self.required {
                issues.push(Issue::missing(vec!["body".into()]));
            }
            return Ok(Body::None);
        }
        let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
        let essence = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        if !self.accepts(&essence) {
            return Err(unsupported(self.kind, content_type));
        }
        Ok(match self.kind {
            BodyKind::Json => match json::parse(&bytes) {
                Ok(value) => {
                    if let Some(schema) = &self.schema {
                        issues.extend(schema.issues(&value, &["body".into()]));
                    }
                    Body::Json(value)
                }
                Err(issue) => {
                    issues.push(issue);
                    Body::None
                }
            },
            BodyKind::Form => Body::Form(self.fields(&RawPairs::from_urlencoded(&bytes), issues)),
            BodyKind::Multipart => {
                let pairs = multipart::parse(content_type, bytes, self.max_file_size).await?;
                Body::Form(self.fields(&pairs, issues))
            }
            BodyKind::Text => match String::from_utf8(bytes.to_vec()) {
                Ok(text) => Body::Text(text),
                Err(_) => {
                    issues.push(Issue::new(
                        "string_unicode",
                        vec!["body".into()],
                        "Input should be a valid string, unable to parse raw data as a unicode string",
                        Json::Null,
                    ));
                    Body::None
                }
            },
            BodyKind::Bytes => Body::Bytes(bytes),
        })
    }

    fn fields(&self, pairs: &RawPairs<'_>, issues: &mut Vec<Issue>) -> crate::value::Params {
        match &self.fields {
            Some(fields) => fields.extract(pairs, issues),
            // No schema: every field as text, last value wins.
            None => {
                let mut out = crate::value::Params::new();
                for (key, value) in pairs.iter() {
                    let value = match value {
                        crate::params::RawValue::Text(t) => crate::value::Value::Str(t.to_string()),
                        crate::params::RawValue::File(f) => crate::value::Value::File(f.clone()),
                        crate::params::RawValue::Invalid(b) => crate::value::Value::Str(String::from_utf8_lossy(b).into_owned()),
                    };
                    out.push(std::sync::Arc::from(key), value);
                }
                out
            }
        }
    }

    fn accepts(&self, essence: &str) -> bool {
        match self.kind {
            BodyKind::Json => essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json")),
            BodyKind::Form => essence == "application/x-www-form-urlencoded",
            BodyKind::Multipart => essence == "multipart/form-data",
            BodyKind::Text => essence.starts_with("text/"),
            BodyKind::Bytes => true,
        }
    }
}

/// The object schema of a form body as one parameter per property.
fn form_fields(schema: &Json) -> Vec<ParamSpec> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Json::as_array)
        .map(|r| r.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    schema
        .get("properties")
        .and_then(Json::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(name, prop)| ParamSpec {
                    name: name.clone(),
                    schema: prop.clone(),
                    required: Some(required.contains(&name.as_str())),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers.get(header::CONTENT_LENGTH)?.to_str().ok()?.parse().ok()
}

fn too_large(limit: usize) -> Problem {
    Problem::status(StatusCode::PAYLOAD_TOO_LARGE).with_detail(format!("The request body exceeds the limit of {limit} bytes."))
}

fn unsupported(kind: BodyKind, got: &str) -> Problem {
    let expected = match kind {
        BodyKind::Json => "application/json",
        BodyKind::Form => "application/x-www-form-urlencoded",
        BodyKind::Multipart => "multipart/form-data",
        BodyKind::Text => "text/*",
        BodyKind::Bytes => "any",
    };
    let got = if got.is_empty() { "none".to_owned() } else { format!("`{got}`") };
    Problem::status(StatusCode::UNSUPPORTED_MEDIA_TYPE)
        .with_detail(format!("Expected a body of type {expected}, got {got}."))
}
