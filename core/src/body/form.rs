//! Form and multipart bodies against their whole schema. Each declared field is coerced and
//! checked like a query parameter (`ParamSet`); what a schema says of the object as a whole
//! (`additionalProperties`, `dependentRequired`, `oneOf`, `minProperties`, …) is checked here
//! with every keyword JSON bodies support, on an object of the fields as sent (declared ones
//! typed, the rest as text); and a file field's `contentMediaType` is checked against each
//! uploaded file's own type. A file field whose schema says `"x-sniff": true` is also read for
//! its real type (its first bytes' signature, by the `infer` crate): a file whose bytes are a
//! known type other than the one it claims (a GIF sent as `image/png`, an executable as
//! `image/jpeg`) is refused. A file whose bytes match no known signature (text, CSV, JSON) is
//! taken at its word: there is nothing to compare.
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
    /// File fields whose bytes are checked against the type they claim.
    sniffed: Vec<String>,
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
            whole.shift_remove("required");
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
        let sniffed: Vec<String> = object
            .get("properties")
            .and_then(Json::as_object)
            .into_iter()
            .flatten()
            .filter(|(_, property)| property.get("items").unwrap_or(property).get("x-sniff") == Some(&Json::Bool(true)))
            .map(|(name, _)| name.clone())
            .collect();
        let needed = whole.is_some() || !media_types.is_empty() || !sniffed.is_empty();
        Ok(needed.then_some(FormRules { whole, media_types, sniffed }))
    }

    /// Checks `fields` (as the field checks made them) and `sent` (the body as parsed).
    pub fn check(&self, fields: &Params, sent: &RawPairs<'_>, issues: &mut Vec<Issue>) {
        for (name, accepted) in &self.media_types {
            for (loc, file) in files(fields, name) {
                let actual = claimed_type(file);
                if accepted.iter().any(|a| media_type_matches(a, &actual)) {
                    continue;
                }
                let expected = accepted.join(", ");
                let msg = format!("File content type should be {expected}, not {}", if actual.is_empty() { "unstated" } else { &actual });
                issues.push(Issue::new("file_content_type", loc, msg, Json::String(actual)).with_ctx(serde_json::json!({ "expected": expected })));
            }
        }
        for name in &self.sniffed {
            for (loc, file) in files(fields, name) {
                let Some(found) = infer::get(&file.data) else { continue };
                let claimed = claimed_type(file);
                if same_type(found.mime_type(), &claimed) {
                    continue;
                }
                let msg = format!("File content is {}, not the {} it claims", found.mime_type(), if claimed.is_empty() { "unstated type" } else { &claimed });
                let ctx = serde_json::json!({ "claimed": claimed, "found": found.mime_type() });
                issues.push(Issue::new("file_content_mismatch", loc, msg, Json::String(claimed)).with_ctx(ctx));
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

/// The uploaded files of field `name` (one, or each of a list), with their locations.
fn files<'f>(fields: &'f Params, name: &str) -> Vec<(Vec<LocSegment>, &'f crate::value::UploadedFile)> {
    let loc = |index: Option<usize>| {
        let mut loc = vec![LocSegment::Key("body".into()), LocSegment::Key(name.to_owned())];
        loc.extend(index.map(LocSegment::Index));
        loc
    };
    match fields.get(name) {
        Some(Value::File(file)) => vec![(loc(None), file)],
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .filter_map(|(index, item)| if let Value::File(file) = item { Some((loc(Some(index)), file)) } else { None })
            .collect(),
        _ => Vec::new(),
    }
}

/// The media type a file's part states, without parameters, in lower case (`""` if none).
fn claimed_type(file: &crate::value::UploadedFile) -> String {
    file.content_type.as_deref().unwrap_or("").split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

/// Whether a file found to be `found` is what it claims, allowing the names clients commonly
/// use for the same type.
fn same_type(found: &str, claimed: &str) -> bool {
    const ALIASES: &[(&str, &str)] = &[("image/jpeg", "image/jpg"), ("image/jpeg", "image/pjpeg"), ("application/zip", "application/x-zip-compressed")];
    found == claimed || ALIASES.iter().any(|(name, alias)| found == *name && claimed == *alias)
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
    use super::*;
    use crate::value::UploadedFile;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
    const GIF: &[u8] = b"GIF89a\x01\0\x01\0";

    fn sniffing(content_type: &str, data: &'static [u8]) -> Vec<(&'static str, serde_json::Value)> {
        let schema = serde_json::json!({"properties": {"photo": {"type": "string", "format": "binary", "x-sniff": true}}});
        let rules = FormRules::compile(&schema).unwrap().unwrap();
        let file = UploadedFile { field: "photo".into(), filename: Some("a".into()), content_type: Some(content_type.into()), headers: Vec::new(), data: data.into() };
        let mut fields = Params::default();
        fields.push("photo".into(), Value::File(file));
        let mut issues = Vec::new();
        rules.check(&fields, &RawPairs::new(), &mut issues);
        issues.into_iter().map(|i| (i.kind, i.ctx.unwrap_or_default())).collect()
    }

    #[test]
    fn a_sniffed_file_must_be_what_it_claims() {
        assert!(sniffing("image/png", PNG).is_empty());
        assert!(sniffing("image/png; charset=binary", PNG).is_empty());
        assert_eq!(sniffing("image/png", GIF), [("file_content_mismatch", serde_json::json!({"claimed": "image/png", "found": "image/gif"}))]);
        assert_eq!(sniffing("", GIF)[0].0, "file_content_mismatch");
        // No known signature: nothing to compare, the claim stands.
        assert!(sniffing("image/png", b"name,price\nkettle,12\n").is_empty());
        assert!(sniffing("image/jpg", b"\xff\xd8\xff\xe0\0\x10JFIF\0").is_empty(), "a common alias");
    }

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
