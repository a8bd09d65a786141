//! OpenAPI 3.0's `nullable: true`, which Ajv takes and Fastify schemas use
//! (`{ type: 'string', nullable: true }`), read as JSON Schema's own way to allow `null`
//! (`type: ["string", "null"]`), once, when a route is declared. Without it the keyword was
//! ignored: a `null` its schema allows was a 422. OpenAPI 3.1, which the document is, has no
//! `nullable` either, so the rewritten schema is also what the document should say.

use serde_json::{Map, Value as Json};

/// Rewrites every `nullable` in `schema` and the schemas inside it. Values that are data
/// (`enum`, `const`, `default`, `examples`) and property names are left alone.
pub fn rewrite(schema: &mut Json) {
    match schema {
        Json::Object(map) => {
            if let Some(&Json::Bool(allowed)) = map.get("nullable") {
                map.shift_remove("nullable");
                if allowed {
                    allow_null(map);
                }
            }
            for (key, value) in map.iter_mut() {
                match key.as_str() {
                    "enum" | "const" | "default" | "examples" | "example" => {}
                    "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                        if let Json::Object(named) = value {
                            named.values_mut().for_each(rewrite);
                        }
                    }
                    _ => rewrite(value),
                }
            }
        }
        Json::Array(items) => items.iter_mut().for_each(rewrite),
        _ => {}
    }
}

fn allow_null(map: &mut Map<String, Json>) {
    let null = Json::String("null".into());
    match map.get_mut("type") {
        Some(Json::String(one)) => {
            let one = Json::String(std::mem::take(one));
            map.insert("type".into(), Json::Array(vec![one, null]));
        }
        Some(Json::Array(types)) => {
            if !types.contains(&null) {
                types.push(null);
            }
        }
        _ => {
            // A `$ref` or a combination (`anyOf`, `allOf`, …) without a type: the schema as it
            // was, or null. A schema with no keyword that could refuse null allows it already.
            if ["$ref", "allOf", "anyOf", "oneOf", "enum", "const"].iter().any(|k| map.contains_key(*k)) {
                let rest = std::mem::take(map);
                map.insert("anyOf".into(), Json::Array(vec![Json::Object(rest), serde_json::json!({"type": "null"})]));
                return;
            }
        }
    }
    if let Some(Json::Array(values)) = map.get_mut("enum") {
        if !values.contains(&Json::Null) {
            values.push(Json::Null);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::rewrite;
    use serde_json::json;

    fn rewritten(mut schema: serde_json::Value) -> serde_json::Value {
        rewrite(&mut schema);
        schema
    }

    #[test]
    fn nullable_true_allows_null_wherever_it_is_and_false_is_dropped() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "nullable": true},
                "nullable": {"type": "boolean", "nullable": false},
                "tags": {"type": "array", "items": {"type": ["string"], "nullable": true}},
                "kind": {"type": "string", "enum": ["a", "b"], "nullable": true},
                "owner": {"$ref": "#/$defs/Owner", "nullable": true}
            },
            "default": {"name": {"nullable": true}},
            "$defs": {"Owner": {"type": "object", "nullable": true}}
        });
        assert_eq!(rewritten(schema), json!({
            "type": "object",
            "properties": {
                "name": {"type": ["string", "null"]},
                "nullable": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": ["string", "null"]}},
                "kind": {"type": ["string", "null"], "enum": ["a", "b", null]},
                "owner": {"anyOf": [{"$ref": "#/$defs/Owner"}, {"type": "null"}]}
            },
            "default": {"name": {"nullable": true}},
            "$defs": {"Owner": {"type": ["object", "null"]}}
        }));
    }

    #[test]
    fn a_schema_without_nullable_is_unchanged() {
        let schema = json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}, "required": ["a"]});
        assert_eq!(rewritten(schema.clone()), schema);
    }
}
