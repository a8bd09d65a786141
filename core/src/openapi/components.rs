//! Named schemas: what a language calls a model (a Python dataclass, TypedDict, msgspec Struct
//! or pydantic class; a schema's `title` or `$id` in Node, Ruby and Rust) becomes one entry of
//! `components.schemas`, referred to wherever it is used, as FastAPI's documents do.

use serde_json::{Map, Value as Json};

#[derive(Default)]
pub(super) struct Components {
    schemas: Map<String, Json>,
}

const REF_PREFIX: &str = "#/components/schemas/";

impl Components {
    /// `schema` as the document holds it: its `$defs` moved into the components (their
    /// `$ref`s rewritten), and itself replaced by a `$ref` when it is a named object.
    pub fn body_schema(&mut self, schema: &Json) -> Json {
        let schema = self.hoist(schema);
        self.named(schema)
    }

    /// A parameter's schema: its `$defs` and named objects hoisted, never itself a component.
    pub fn param_schema(&mut self, schema: &Json) -> Json {
        self.hoist(schema)
    }

    /// A `$ref` to `schema`'s component when it is a named object, else `schema`.
    fn named(&mut self, schema: Json) -> Json {
        match model_name(&schema) {
            Some(name) => {
                let name = self.insert(name, schema);
                serde_json::json!({ "$ref": format!("{REF_PREFIX}{name}") })
            }
            None => schema,
        }
    }

    pub fn insert_fixed(&mut self, name: &str, schema: Json) {
        self.schemas.insert(name.to_owned(), schema);
    }

    /// The components by name, as FastAPI lists them (its `sorted(definitions)`).
    pub fn into_json(mut self) -> Json {
        self.schemas.sort_keys();
        Json::Object(self.schemas)
    }

    /// Adds `schema` under `name`; another schema of the same name gets a numbered one.
    fn insert(&mut self, name: String, schema: Json) -> String {
        let mut candidate = name.clone();
        let mut n = 2;
        loop {
            match self.schemas.get(&candidate) {
                None => {
                    self.schemas.insert(candidate.clone(), schema);
                    return candidate;
                }
                Some(existing) if *existing == schema => return candidate,
                Some(_) => {
                    candidate = format!("{name}{n}");
                    n += 1;
                }
            }
        }
    }

    /// `schema` with its `$defs` moved into the components (their `$ref`s rewritten), and every
    /// named object below its root (a nested model) replaced by a `$ref` to its component.
    fn hoist(&mut self, schema: &Json) -> Json {
        let Json::Object(object) = schema else { return schema.clone() };
        let mut out = Map::with_capacity(object.len());
        // The definitions first, wherever they stand: Python writes `$defs` last, and a nested
        // object titled like one of them (another class of the same name) met before them
        // would take the name, and the `$ref`s to the definition would point at it.
        let defs = object.iter().filter(|(key, _)| matches!(key.as_str(), "$defs" | "definitions"));
        for (name, def) in defs.flat_map(|(_, value)| value.as_object().into_iter().flatten()) {
            let def = self.hoist(def);
            self.schemas.entry(name.clone()).or_insert(def);
        }
        for (key, value) in object {
            match key.as_str() {
                "$defs" | "definitions" => {}
                "$ref" => {
                    out.insert(key.clone(), rewritten_ref(value));
                }
                // OpenAPI's discriminator (pydantic writes one for a tagged union): its mapping's
                // values are references too, found by a FastAPI port pointing at `#/$defs/Cat`.
                "discriminator" => {
                    let mut discriminator = value.clone();
                    if let Some(Json::Object(mapping)) = discriminator.get_mut("mapping") {
                        mapping.values_mut().for_each(|target| *target = rewritten_ref(target));
                    }
                    out.insert(key.clone(), discriminator);
                }
                // Values, not schemas: left as they are.
                "default" | "examples" | "example" | "enum" | "const" => {
                    out.insert(key.clone(), value.clone());
                }
                // Maps of names to schemas.
                "properties" | "patternProperties" | "dependentSchemas" => {
                    let map = value.as_object().into_iter().flatten().map(|(name, sub)| (name.clone(), self.nested(sub))).collect();
                    out.insert(key.clone(), Json::Object(map));
                }
                _ => {
                    let hoisted = match value {
                        Json::Object(_) => self.nested(value),
                        Json::Array(items) => Json::Array(items.iter().map(|item| if item.is_object() { self.nested(item) } else { item.clone() }).collect()),
                        other => other.clone(),
                    };
                    out.insert(key.clone(), hoisted);
                }
            }
        }
        Json::Object(out)
    }

    fn nested(&mut self, schema: &Json) -> Json {
        let hoisted = self.hoist(schema);
        self.named(hoisted)
    }
}

/// `#/$defs/User` (and draft 7's `#/definitions/User`) → `#/components/schemas/User`.
fn rewritten_ref(reference: &Json) -> Json {
    let Some(text) = reference.as_str() else { return reference.clone() };
    for local in ["#/$defs/", "#/definitions/"] {
        if let Some(name) = text.strip_prefix(local) {
            return Json::String(format!("{REF_PREFIX}{name}"));
        }
    }
    reference.clone()
}

/// The component name of a named object schema: its `title`, else the last segment of its
/// `$id`; `None` for anything else (an anonymous object, a scalar, a list).
fn model_name(schema: &Json) -> Option<String> {
    let object = schema.as_object()?;
    let is_object = object.get("type").and_then(Json::as_str) == Some("object") || object.contains_key("properties");
    if !is_object {
        return None;
    }
    let from_id = || {
        let id = object.get("$id")?.as_str()?;
        let last = id.trim_end_matches(".json").rsplit(['/', '#', ':']).find(|s| !s.is_empty())?;
        Some(last.to_owned())
    };
    let name = object.get("title").and_then(Json::as_str).map(str::to_owned).or_else(from_id)?;
    let name: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect();
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::Components;
    use serde_json::json;

    #[test]
    fn a_titled_body_becomes_a_component_and_its_defs_join_it() {
        let mut components = Components::default();
        let schema = json!({
            "title": "Order", "type": "object",
            "properties": {"item": {"$ref": "#/$defs/Item"}},
            "$defs": {"Item": {"title": "Item", "type": "object", "properties": {"sku": {"type": "string"}}}}
        });
        assert_eq!(components.body_schema(&schema), json!({"$ref": "#/components/schemas/Order"}));
        let all = components.into_json();
        assert_eq!(all["Order"]["properties"]["item"], json!({"$ref": "#/components/schemas/Item"}));
        assert!(all["Order"].get("$defs").is_none());
        assert_eq!(all["Item"]["properties"]["sku"], json!({"type": "string"}));
    }

    // Found on review once schemas kept their order: with `$defs` written last (as Python writes
    // them), a nested class titled like a definition took its name, and the `$ref` to the
    // definition pointed at that class; the definition itself was lost.
    #[test]
    fn definitions_keep_their_names_wherever_they_stand_in_the_schema() {
        let mut components = Components::default();
        let schema = json!({
            "title": "Order", "type": "object",
            "properties": {"item": {"$ref": "#/$defs/Item"}, "other": {"title": "Item", "type": "object", "properties": {"x": {}}}},
            "$defs": {"Item": {"title": "Item", "type": "object", "properties": {"sku": {"type": "string"}}}}
        });
        components.body_schema(&schema);
        let all = components.into_json();
        assert_eq!(all["Order"]["properties"]["item"], json!({"$ref": "#/components/schemas/Item"}));
        assert_eq!(all["Item"]["properties"]["sku"], json!({"type": "string"}));
        assert_eq!(all["Order"]["properties"]["other"], json!({"$ref": "#/components/schemas/Item2"}));
        assert_eq!(all.as_object().unwrap().keys().collect::<Vec<_>>(), ["Item", "Item2", "Order"], "by name, as FastAPI lists them");
    }

    // Found by a FastAPI port: a tagged union's mapping still pointed at `#/$defs/Cat`, which
    // the document does not have; client generators failed on it.
    #[test]
    fn a_discriminators_mapping_points_at_the_components() {
        let mut components = Components::default();
        let schema = json!({
            "title": "Owner", "type": "object",
            "properties": {"pet": {
                "oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}],
                "discriminator": {"propertyName": "kind", "mapping": {"cat": "#/$defs/Cat", "dog": "#/$defs/Dog"}}
            }},
            "$defs": {"Cat": {"title": "Cat", "type": "object"}, "Dog": {"title": "Dog", "type": "object"}}
        });
        components.body_schema(&schema);
        let all = components.into_json();
        let discriminator = &all["Owner"]["properties"]["pet"]["discriminator"];
        assert_eq!(discriminator, &json!({"propertyName": "kind", "mapping": {"cat": "#/components/schemas/Cat", "dog": "#/components/schemas/Dog"}}));
    }

    #[test]
    fn a_named_model_nested_in_a_property_or_a_list_is_a_component_too() {
        let mut components = Components::default();
        let tag = json!({"title": "Tag", "type": "object", "properties": {"name": {"type": "string"}}});
        let post = json!({"title": "Post", "type": "object", "properties": {"tags": {"type": "array", "items": tag}, "main": tag, "n": {"type": "integer", "default": {"title": "x", "type": "object"}}}});
        assert_eq!(components.body_schema(&post), json!({"$ref": "#/components/schemas/Post"}));
        let all = components.into_json();
        assert_eq!(all["Post"]["properties"]["tags"]["items"], json!({"$ref": "#/components/schemas/Tag"}));
        assert_eq!(all["Post"]["properties"]["main"], json!({"$ref": "#/components/schemas/Tag"}));
        assert_eq!(all["Post"]["properties"]["n"]["default"], json!({"title": "x", "type": "object"}), "a value, not a schema");
        assert_eq!(all.as_object().unwrap().len(), 2);
    }

    #[test]
    fn names_come_from_the_id_when_there_is_no_title_and_clashes_are_numbered() {
        let mut components = Components::default();
        let a = json!({"$id": "https://example.com/schemas/user.json", "type": "object", "properties": {"a": {}}});
        let b = json!({"title": "user", "type": "object", "properties": {"b": {}}});
        assert_eq!(components.body_schema(&a), json!({"$ref": "#/components/schemas/user"}));
        assert_eq!(components.body_schema(&b), json!({"$ref": "#/components/schemas/user2"}));
        assert_eq!(components.body_schema(&a), json!({"$ref": "#/components/schemas/user"}), "the same schema, the same name");
        assert_eq!(components.body_schema(&json!({"type": "array"})), json!({"type": "array"}));
    }
}
