//! Form and multipart bodies against their whole schema. Each declared field is coerced and
//! checked like a query parameter (`ParamSet`); what a schema says of the object as a whole
//! (`additionalProperties`, `dependentRequired`, `oneOf`, `minProperties`, …) is checked here
//! with every keyword JSON bodies support, on an object of the fields as sent (declared ones
//! typed, the rest as text); and a file field's `contentMediaType` is checked against each
//! uploaded file's own type.
//!
//! Cost: nothing for a schema of properties and `required` only (the common form); otherwise
//! one validation of a small object per request.

use crate::params::{RawPairs, RawValue};
use crate::problem::{Issue, LocSegment};
use crate::validation::{CompiledSchema, SchemaError};
use crate::value::{Params, Value};
use serde_json::{Map, Value as Json};

/// Keywords that say nothing beyond the fields' own checks.
const FIELD_LEVEL: &[&str] = &["type", "properties", "required", "title", "description", "$schema", "$id", "$defs", "definitions", "examples", "default", "deprecated"];

#[derive(Debug)]
pub(super) struct FormRules {
    /// The schema with its properties' own checks left to the fields, when it says more.
    whole: Option<CompiledSchema>,
    /// File fields that accept only some content types: (field, accepted types).
    media_types: Vec<(String, Vec<String>)>,
}

impl FormRules {
    pub fn compile(schema: &Json) -> Result<Option<FormRules>, SchemaError> {
        let Some(object) = schema.as_object() else { return Ok(None) };
        let whole = if object.keys().any(|key| !FIELD_LEVEL.contains(&key.as_str())) {
            let mut whole = object.clone();
            // Each property is checked as its field; `additionalProperties` still needs the names.
            if let Some(Json::Object(properties)) = whole.get_mut("properties") {
                properties.values_mut().for_each(|property| *property = Json::Bool(true));
            }
            // A missing field is already reported by its field.
            whole.remove("required");
            Some(CompiledSchema::compile(&Json::Object(whole))?)
        } else {
            None
        };
        let media_types: Vec<(String, Vec<String>)> = object
            .get("properties")
            .and_then(Json::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(name, property)| {
                let file = property.get("items").unwrap_or(property);
                let accepted = file.get("contentMediaType")?.as_str()?;
                let accepted = accepted.split(',').map(|t| t.trim().to_ascii_lowercase()).filter(|t| !t.is_empty()).collect();
                Some((name.clone(), accepted))
            })
            .collect();
        Ok((whole.is_some() || !media_types.is_empty()).then_some(FormRules { whole, media_types }))
    }

    /// Checks `fields` (as the field checks made them) and `sent` (the body as parsed).
    pub fn check(&self, fields: &Params, sent: &RawPairs<'_>, issues: &mut Vec<Issue>) {
        for (name, accepted) in &self.media_types {
            let files: Vec<&crate::value::UploadedFile> = match fields.get(name) {
                Some(Value::File(file)) => vec![file],
                Some(Value::Array(items)) => items.iter().filter_map(|item| if let Value::File(f) = item { Some(f) } else { None }).collect(),
                _ => Vec::new(),
            };
            let many = matches!(fields.get(name), Some(Value::Array(_)));
            for (index, file) in files.into_iter().enumerate() {
                let actual = file.content_type.as_deref().unwrap_or("").split(';').next().unwrap_or("").trim().to_ascii_lowercase();
                if accepted.iter().any(|a| media_type_matches(a, &actual)) {
                    continue;
                }
                let mut loc = vec![LocSegment::Key("body".into()), LocSegment::Key(name.clone())];
                if many {
                    loc.push(LocSegment::Index(index));
                }
                let expected = accepted.join(", ");
                let msg = format!("File content type should be {expected}, not {}", if actual.is_empty() { "unstated" } else { &actual });
                issues.push(Issue::new("file_content_type", loc, msg, Json::String(actual)).with_ctx(serde_json::json!({ "expected": expected })));
            }
        }
        let Some(whole) = &self.whole else { return };
        let mut instance = Map::new();
        for (key, value) in sent.iter() {
            if instance.contains_key(key) {
                continue;
            }
            let typed = fields.get(key).filter(|v| !v.is_null()).map(crate::params::to_instance);
            let as_sent = || match value {
                RawValue::Text(text) => Json::String(text.to_string()),
                RawValue::File(file) => Json::String(file.filename.clone().unwrap_or_default()),
                RawValue::Invalid(bytes) => Json::String(String::from_utf8_lossy(bytes).into_owned()),
            };
            // A bracketed array (`tag[]`) is the field `tag`.
            let name = key.strip_suffix("[]").filter(|bare| fields.get(bare).is_some()).unwrap_or(key);
            let typed = typed.or_else(|| fields.get(name).filter(|v| !v.is_null()).map(crate::params::to_instance));
            instance.insert(name.to_owned(), typed.unwrap_or_else(as_sent));
        }
        issues.extend(whole.issues(&Json::Object(instance), &[LocSegment::Key("body".into())]));
    }
}

/// `image/png` against `image/png`, `image/*` or `*/*`.
fn media_type_matches(accepted: &str, actual: &str) -> bool {
    match accepted.strip_suffix("/*") {
        Some("*") => true,
        Some(kind) => actual.split('/').next() == Some(kind) && actual.contains('/'),
        None => accepted == actual,
    }
}

#[cfg(test)]
mod tests {
    use super::media_type_matches;

    #[test]
    fn media_types_match_exactly_or_by_wildcard() {
        assert!(media_type_matches("image/png", "image/png"));
        assert!(media_type_matches("image/*", "image/jpeg"));
        assert!(media_type_matches("*/*", "text/plain"));
        assert!(!media_type_matches("image/*", "text/plain"));
        assert!(!media_type_matches("image/*", ""));
        assert!(!media_type_matches("image/png", "image/pngx"));
    }
}
