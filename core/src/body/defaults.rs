//! Schema `default`s filled into valid JSON bodies.
//!
//! A FastAPI handler receives a pydantic model, so a property the client left out already
//! holds its declared default. Ferrule hands handlers plain JSON in every language; filling the
//! defaults here, once, keeps that promise without each binding re-walking the schema.

use serde_json::{Map, Value as Json};
use std::collections::HashMap;

/// Where defaults live in a schema, found once when the route is compiled. Nodes sit in an
/// arena so a local `$ref` (pydantic's nested and recursive models) is compiled once and shared.
#[derive(Debug, Default)]
pub struct Defaults {
    nodes: Vec<Node>,
    root: Option<usize>,
}

#[derive(Debug, Default)]
struct Node {
    /// Object properties: name, its own default, and the node for its value.
    properties: Vec<(String, Option<Json>, Option<usize>)>,
    /// The node for every array item.
    items: Option<usize>,
}

impl Node {
    fn is_empty(&self) -> bool {
        self.properties.is_empty() && self.items.is_none()
    }
}

struct Builder<'a> {
    root: &'a Json,
    nodes: Vec<Node>,
    refs: HashMap<&'a str, usize>,
}

impl<'a> Builder<'a> {
    /// The node for `schema`, or `None` when nothing inside it has a default.
    fn node(&mut self, schema: &'a Json) -> Option<usize> {
        let map = schema.as_object()?;
        if let Some(reference) = map.get("$ref").and_then(Json::as_str) {
            if let Some(id) = self.refs.get(reference) {
                return Some(*id);
            }
            let target = self.root.pointer(reference.strip_prefix('#')?)?;
            // Registered before it is built, so a recursive model refers to itself.
            let id = self.reserve();
            self.refs.insert(reference, id);
            self.nodes[id] = self.build(target);
            return Some(id);
        }
        let node = self.build(schema);
        if node.is_empty() {
            return None;
        }
        let id = self.reserve();
        self.nodes[id] = node;
        Some(id)
    }

    fn build(&mut self, schema: &'a Json) -> Node {
        let mut node = Node::default();
        if let Some(props) = schema.get("properties").and_then(Json::as_object) {
            for (name, prop) in props {
                let inner = self.node(prop);
                let default = prop.get("default").cloned();
                if default.is_some() || inner.is_some() {
                    node.properties.push((name.clone(), default, inner));
                }
            }
        }
        node.items = schema.get("items").and_then(|items| self.node(items));
        node
    }

    fn reserve(&mut self) -> usize {
        self.nodes.push(Node::default());
        self.nodes.len() - 1
    }
}

impl Defaults {
    pub fn compile(schema: &Json) -> Defaults {
        let mut builder = Builder { root: schema, nodes: Vec::new(), refs: HashMap::new() };
        let root = builder.node(schema);
        Defaults { nodes: builder.nodes, root }
    }

    pub fn is_empty(&self) -> bool {
        self.root.is_none()
    }

    /// Inserts every missing property that has a default; present values (even `null`) stay.
    pub fn apply(&self, value: &mut Json) {
        if let Some(root) = self.root {
            self.apply_node(root, value);
        }
    }

    fn apply_node(&self, id: usize, value: &mut Json) {
        let node = &self.nodes[id];
        match value {
            Json::Object(map) => self.apply_to_object(node, map),
            Json::Array(items) => {
                if let Some(inner) = node.items {
                    items.iter_mut().for_each(|item| self.apply_node(inner, item));
                }
            }
            _ => {}
        }
    }

    fn apply_to_object(&self, node: &Node, map: &mut Map<String, Json>) {
        for (name, default, inner) in &node.properties {
            match (map.get_mut(name), inner) {
                (Some(present), Some(inner)) => self.apply_node(*inner, present),
                (Some(_), None) => {}
                (None, _) => {
                    if let Some(default) = default {
                        map.insert(name.clone(), default.clone());
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn filled(schema: Json, mut value: Json) -> Json {
        Defaults::compile(&schema).apply(&mut value);
        value
    }

    #[test]
    fn missing_properties_get_their_default_and_null_stays() {
        let schema = json!({"type": "object", "properties": {
            "qty": {"type": "integer", "default": 1},
            "note": {"type": ["string", "null"], "default": "none"}}});
        assert_eq!(filled(schema.clone(), json!({})), json!({"qty": 1, "note": "none"}));
        assert_eq!(filled(schema, json!({"qty": 5, "note": null})), json!({"qty": 5, "note": null}));
    }

    #[test]
    fn nested_objects_array_items_and_refs() {
        let schema = json!({
            "type": "object",
            "properties": {"lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}}},
            "$defs": {"Line": {"type": "object", "properties": {"qty": {"default": 1}}}}
        });
        assert_eq!(filled(schema, json!({"lines": [{}, {"qty": 3}]})), json!({"lines": [{"qty": 1}, {"qty": 3}]}));
    }

    #[test]
    fn recursive_refs_fill_every_level() {
        let schema = json!({"$ref": "#/$defs/Node", "$defs": {"Node": {"type": "object", "properties": {
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            "label": {"default": "x"}}}}});
        let value = filled(schema, json!({"children": [{"children": [{}]}]}));
        assert_eq!(value, json!({"label": "x", "children": [{"label": "x", "children": [{"label": "x"}]}]}));
    }

    #[test]
    fn schemas_without_defaults_compile_to_nothing() {
        assert!(Defaults::compile(&json!({"type": "object", "properties": {"a": {"type": "string"}}})).is_empty());
    }
}
