//! The typed values a request carries after parsing and coercion.
//!
//! Every binding converts these into native objects (Python `int`, `uuid.UUID`,
//! `datetime.date`, …) directly, so nothing crosses the language boundary as JSON text.

use bytes::Bytes;
use chrono::{DateTime, FixedOffset, NaiveDate, NaiveDateTime, SecondsFormat};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use uuid::Uuid;

/// A parsed, coerced and validated value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Uuid(Uuid),
    Date(NaiveDate),
    DateTime(DateTimeValue),
    File(UploadedFile),
    Array(Vec<Value>),
    /// Structured data that came from JSON (a `deepObject` parameter, an object-valued default),
    /// in the core's one JSON representation, so a binding has one converter for it and bodies.
    Json(crate::document::Document),
}

/// A date-time with or without a UTC offset, as clients send both.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DateTimeValue {
    Offset(DateTime<FixedOffset>),
    Naive(NaiveDateTime),
}

impl DateTimeValue {
    /// ISO 8601 text: `2024-01-15T10:30:00+00:00`, or without offset when naive.
    pub fn to_iso8601(&self) -> String {
        match self {
            DateTimeValue::Offset(dt) => dt.to_rfc3339_opts(SecondsFormat::AutoSi, false),
            DateTimeValue::Naive(dt) => dt.format("%Y-%m-%dT%H:%M:%S%.f").to_string(),
        }
    }
}

/// An uploaded multipart file: bytes kept exactly as sent.
#[derive(Debug, Clone, PartialEq)]
pub struct UploadedFile {
    pub field: String,
    pub filename: Option<String>,
    pub content_type: Option<String>,
    /// Every header of the file's part as sent (names in lower case), in order:
    /// `content-disposition`, `content-type`, and any other (`content-id`, …).
    pub headers: Vec<(String, String)>,
    pub data: Bytes,
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The JSON form used in responses and in JSON Schema validation.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Int(i) => serializer.serialize_i64(*i),
            Value::Float(f) => serializer.serialize_f64(*f),
            Value::Str(s) => serializer.serialize_str(s),
            Value::Uuid(u) => serializer.collect_str(&u.hyphenated()),
            // chrono's Display is YYYY-MM-DD, written directly (`format` parses a pattern each time).
            Value::Date(d) => serializer.collect_str(d),
            Value::DateTime(dt) => serializer.serialize_str(&dt.to_iso8601()),
            Value::File(file) => {
                let mut map = serializer.serialize_map(Some(3))?;
                map.serialize_entry("filename", &file.filename)?;
                map.serialize_entry("content_type", &file.content_type)?;
                map.serialize_entry("size", &file.data.len())?;
                map.end()
            }
            Value::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Value::Json(json) => json.serialize(serializer),
        }
    }
}

/// Named values from one request source (path, query, headers, cookies, form body).
///
/// Kept in declaration order; a route declares few parameters, so a vector beats a map.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params(Vec<(std::sync::Arc<str>, Value)>);

impl Params {
    pub fn new() -> Self {
        Params(Vec::new())
    }

    pub fn with_capacity(capacity: usize) -> Self {
        Params(Vec::with_capacity(capacity))
    }

    pub fn push(&mut self, name: std::sync::Arc<str>, value: Value) {
        self.0.push((name, value));
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.iter().find(|(n, _)| &**n == name).map(|(_, v)| v)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> + Clone {
        self.0.iter().map(|(n, v)| (&**n, v))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Params {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(&**name, value)?;
        }
        map.end()
    }
}
