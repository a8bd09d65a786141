//! What a parameter's text is coerced into, decided once from its schema.

use serde_json::Value as Json;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarKind {
    Int,
    Float,
    Bool,
    Str,
    Uuid,
    Date,
    DateTime,
    /// A multipart file (`format: binary`).
    Binary,
    /// `type: number, format: decimal` (Python's `Decimal`): checked as a number, handed over
    /// as the text it was sent, so no digit goes through a float.
    Decimal,
    /// `anyOf`/`oneOf` of integer, number and boolean branches (Fastify's `anyOf: [{type:
    /// integer}, {type: boolean}]`): the text becomes the first of them it reads as, in this
    /// order, and the union's schema then judges it.
    Union { int: bool, float: bool, bool: bool },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    Scalar(ScalarKind),
    /// Repeated keys (`?id=1&id=2`), each coerced to the item kind.
    Array(ScalarKind),
}

impl ScalarKind {
    /// The scalar a schema describes; anything unrecognised stays a string.
    pub fn from_schema(schema: &Json) -> ScalarKind {
        if schema.get("type").is_none() {
            if let Some(branches) = schema.get("anyOf").or_else(|| schema.get("oneOf")).and_then(Json::as_array) {
                return ScalarKind::of_branches(branches);
            }
        }
        // `type: ['integer', 'boolean']` is the union of its types, as `anyOf` of them is (it
        // read as its first, so `true` was an `int_parsing`: found beside Fastify).
        if let Some(Json::Array(names)) = schema.get("type") {
            let kinds: Vec<&str> = names.iter().filter_map(Json::as_str).filter(|name| *name != "null").collect();
            if kinds.len() > 1 && kinds.iter().all(|name| matches!(*name, "integer" | "number" | "boolean")) {
                let branches: Vec<Json> = kinds.iter().map(|name| serde_json::json!({"type": name})).collect();
                return ScalarKind::of_branches(&branches);
            }
        }
        let ty = schema.get("type").and_then(|t| match t {
            Json::String(s) => Some(s.as_str()),
            // `["integer", "null"]` (an Optional[int]): the non-null member decides.
            Json::Array(items) => items.iter().filter_map(Json::as_str).find(|t| *t != "null"),
            _ => None,
        });
        match ty {
            Some("integer") => ScalarKind::Int,
            Some("number") if schema.get("format").and_then(Json::as_str) == Some("decimal") => ScalarKind::Decimal,
            Some("number") => ScalarKind::Float,
            Some("boolean") => ScalarKind::Bool,
            _ => match schema.get("format").and_then(Json::as_str) {
                Some("uuid") => ScalarKind::Uuid,
                Some("date") => ScalarKind::Date,
                Some("date-time") => ScalarKind::DateTime,
                Some("binary") => ScalarKind::Binary,
                _ => ScalarKind::Str,
            },
        }
    }

    /// A union's kind: its one kind once `null` branches are left out (`Optional[int]` written
    /// as `anyOf`); text kept when a branch takes text (a string branch judges it as sent, as
    /// pydantic's smart union keeps a `str`); else the numbers and booleans it may be.
    fn of_branches(branches: &[Json]) -> ScalarKind {
        let is_null = |branch: &&Json| branch.get("type").and_then(Json::as_str) == Some("null");
        let kinds: Vec<ScalarKind> = branches.iter().filter(|branch| !is_null(branch)).map(ScalarKind::from_schema).collect();
        match kinds.as_slice() {
            [] => ScalarKind::Str,
            [first, rest @ ..] if rest.iter().all(|kind| kind == first) => *first,
            _ if kinds.iter().all(|kind| matches!(kind, ScalarKind::Int | ScalarKind::Float | ScalarKind::Bool)) => ScalarKind::Union {
                int: kinds.contains(&ScalarKind::Int),
                float: kinds.contains(&ScalarKind::Float),
                bool: kinds.contains(&ScalarKind::Bool),
            },
            _ => ScalarKind::Str,
        }
    }

    /// The path-template type names: `{id:int}`, `{day:date}`, …
    pub fn from_template(name: &str) -> Option<ScalarKind> {
        Some(match name {
            "int" => ScalarKind::Int,
            "float" => ScalarKind::Float,
            "bool" => ScalarKind::Bool,
            "uuid" => ScalarKind::Uuid,
            "date" => ScalarKind::Date,
            "datetime" => ScalarKind::DateTime,
            "str" | "path" => ScalarKind::Str,
            _ => return None,
        })
    }

    /// The JSON Schema equivalent of a path-template type.
    pub fn schema(self) -> Json {
        match self {
            ScalarKind::Int => serde_json::json!({"type": "integer"}),
            ScalarKind::Float => serde_json::json!({"type": "number"}),
            ScalarKind::Decimal => serde_json::json!({"type": "number", "format": "decimal"}),
            ScalarKind::Bool => serde_json::json!({"type": "boolean"}),
            ScalarKind::Str => serde_json::json!({"type": "string"}),
            ScalarKind::Uuid => serde_json::json!({"type": "string", "format": "uuid"}),
            ScalarKind::Date => serde_json::json!({"type": "string", "format": "date"}),
            ScalarKind::DateTime => serde_json::json!({"type": "string", "format": "date-time"}),
            ScalarKind::Binary => serde_json::json!({"type": "string", "format": "binary"}),
            ScalarKind::Union { int, float, bool } => {
                let kinds = [(int, ScalarKind::Int), (float, ScalarKind::Float), (bool, ScalarKind::Bool)];
                serde_json::json!({"anyOf": kinds.iter().filter(|(on, _)| *on).map(|(_, kind)| kind.schema()).collect::<Vec<_>>()})
            }
        }
    }
}

impl FieldType {
    pub fn from_schema(schema: &Json) -> FieldType {
        let is_array = match schema.get("type") {
            Some(Json::String(s)) => s == "array",
            Some(Json::Array(items)) => items.iter().any(|t| t == "array"),
            _ => false,
        };
        if is_array {
            let items = schema.get("items").unwrap_or(&Json::Null);
            FieldType::Array(ScalarKind::from_schema(items))
        } else {
            FieldType::Scalar(ScalarKind::from_schema(schema))
        }
    }

    pub fn scalar(self) -> ScalarKind {
        match self {
            FieldType::Scalar(kind) | FieldType::Array(kind) => kind,
        }
    }
}

/// Keywords that only describe the type (already enforced by coercion) or annotate.
const TYPE_ONLY_KEYWORDS: &[&str] = &[
    "type", "default", "title", "description", "examples", "deprecated", "$schema",
    "contentMediaType",
];

/// Whether validating after coercion can still fail, i.e. the value must go through a validator.
pub fn has_constraints(schema: &Json) -> bool {
    constrained_at(schema, true)
}

/// [`has_constraints`] of a parameter's schema (`top`) or of its items.
fn constrained_at(schema: &Json, top: bool) -> bool {
    match schema {
        Json::Object(map) => map.iter().any(|(key, value)| match key.as_str() {
            "items" => constrained_at(value, false),
            // Coercion into a UUID, date or date-time already proves the format; an email
            // or any other format is only a string until the validator checks it.
            "format" => ScalarKind::from_schema(schema) == ScalarKind::Str,
            "type" => !coercion_makes(value, top),
            k => !TYPE_ONLY_KEYWORDS.contains(&k),
        }),
        Json::Bool(allowed) => !allowed,
        _ => false,
    }
}

/// Whether the value coercion makes of a parameter's text always has the type `types` names:
/// one of the scalars it makes (and, for the parameter itself, an array of them), `null`
/// aside. A type it cannot make (an object, an array of arrays or of objects, `null` alone, a
/// choice of two scalars) is left to the validator, which refuses the text as Fastify does.
/// Found by a probe: `?filter=x` for `{type: 'object'}` reached the handler as `"x"`.
fn coercion_makes(types: &Json, top: bool) -> bool {
    let made = |name: &Json| matches!(name.as_str(), Some("integer" | "number" | "boolean" | "string")) || (top && name.as_str() == Some("array"));
    match types {
        Json::Array(names) => {
            let mut not_null = names.iter().filter(|name| name.as_str() != Some("null"));
            not_null.next().is_some_and(made) && not_null.next().is_none()
        }
        name => made(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn optional_int_is_an_int() {
        assert_eq!(ScalarKind::from_schema(&json!({"type": ["integer", "null"]})), ScalarKind::Int);
        assert_eq!(ScalarKind::from_schema(&json!({"anyOf": [{"type": "integer"}, {"type": "null"}]})), ScalarKind::Int);
    }

    #[test]
    fn unions_of_numbers_and_booleans_are_tried_in_turn_and_text_stays_text() {
        let int_or_bool = json!({"anyOf": [{"type": "integer"}, {"type": "boolean"}]});
        assert_eq!(ScalarKind::from_schema(&int_or_bool), ScalarKind::Union { int: true, float: false, bool: true });
        assert_eq!(ScalarKind::from_schema(&json!({"oneOf": [{"type": "integer"}, {"type": "string"}]})), ScalarKind::Str);
        // A list of types is the same union (it was its first type).
        assert_eq!(ScalarKind::from_schema(&json!({"type": ["integer", "boolean", "null"]})), ScalarKind::Union { int: true, float: false, bool: true });
        assert_eq!(ScalarKind::from_schema(&json!({"type": ["integer", "string"]})), ScalarKind::Int);
    }

    #[test]
    fn only_formats_that_coercion_proves_need_no_validator() {
        assert!(!has_constraints(&json!({"type": "string", "format": "uuid"})));
        assert!(!has_constraints(&json!({"type": "array", "items": {"type": "string", "format": "date"}})));
        assert!(has_constraints(&json!({"type": "string", "format": "email"})));
        assert!(has_constraints(&json!({"type": "integer", "minimum": 1})));
        assert!(!has_constraints(&json!({"type": "integer", "title": "Page"})));
    }

    #[test]
    fn a_type_coercion_cannot_make_is_left_to_the_validator() {
        for made in [json!({"type": "string"}), json!({"type": ["integer", "null"]}), json!({"type": "array", "items": {"type": "number"}}), json!({"type": "array"})] {
            assert!(!has_constraints(&made), "{made}");
        }
        for left in [
            json!({"type": "object"}),
            json!({"type": "null"}),
            json!({"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}),
            json!({"type": "array", "items": {"type": "object"}}),
            json!({"type": ["integer", "string"]}),
        ] {
            assert!(has_constraints(&left), "{left}");
        }
    }

    #[test]
    fn array_of_uuids() {
        let schema = json!({"type": "array", "items": {"type": "string", "format": "uuid"}});
        assert_eq!(FieldType::from_schema(&schema), FieldType::Array(ScalarKind::Uuid));
    }

    #[test]
    fn only_constraint_keywords_need_a_validator() {
        assert!(!has_constraints(&json!({"type": "integer", "default": 3, "title": "n"})));
        assert!(has_constraints(&json!({"type": "integer", "minimum": 1})));
        assert!(has_constraints(&json!({"type": "array", "items": {"enum": ["a"]}})));
        assert!(!has_constraints(&json!({"type": "array", "items": {"type": "integer"}})));
    }
}
