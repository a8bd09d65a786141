//! Schema `default`s filled into valid JSON bodies.
//!
//! A FastAPI handler receives a pydantic model, so a property the client left out already
//! holds its declared default. Ferrule hands handlers plain JSON in every language; filling the
//! defaults here, once, keeps that promise without each binding re-walking the schema.

use crate::document::{Builder as Tape, Document, NodeRef, View};
use serde_json::Value as Json;
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
    /// Object properties: name, its own default (ready to insert into a body), and the node for
    /// its value.
    properties: Vec<(String, Option<Document>, Option<usize>)>,
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
                let default = prop.get("default").map(Document::from_tree);
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
    /// A filled object lists the members that were sent, in their order, then the defaults, by
    /// name (the compiled schema's order: serde_json keeps an object's keys sorted).
    ///
    /// A document is a tape, so filling writes a new one. It is first read for whether any
    /// default is missing at all: a body that sent every property costs one read-only walk.
    pub fn apply(&self, document: &mut Document) {
        let Some(root) = self.root else { return };
        if !self.wanted(root, document.root()) {
            return;
        }
        let mut out = Tape::with_capacity(0);
        self.fill(root, document.root(), &mut out);
        *document = out.finish();
    }

    /// Whether a default is missing in `value` or below it.
    fn wanted(&self, id: usize, value: NodeRef<'_>) -> bool {
        let node = &self.nodes[id];
        match value.view() {
            View::Object(_) => node.properties.iter().any(|(name, default, inner)| match (value.get(name), inner) {
                (Some(present), Some(inner)) => self.wanted(*inner, present),
                (Some(_), None) => false,
                (None, _) => default.is_some(),
            }),
            View::Array(mut items) => node.items.is_some_and(|inner| items.any(|item| self.wanted(inner, item))),
            _ => false,
        }
    }

    /// Writes `value` with its defaults filled in.
    fn fill(&self, id: usize, value: NodeRef<'_>, out: &mut Tape) {
        let node = &self.nodes[id];
        match value.view() {
            View::Object(members) => {
                let mut open = out.open_object();
                for (key, member) in members {
                    out.str(key);
                    match node.properties.iter().find(|(name, ..)| name == key).and_then(|(_, _, inner)| *inner) {
                        Some(inner) => self.fill(inner, member, out),
                        None => out.copy(member),
                    }
                    out.counted(&mut open);
                }
                for (name, default, _) in &node.properties {
                    if let (Some(default), None) = (default, value.get(name)) {
                        out.str(name);
                        out.copy(default.root());
                        out.counted(&mut open);
                    }
                }
                out.close(open);
            }
            View::Array(items) if node.items.is_some() => {
                let inner = node.items.unwrap_or(id);
                let mut open = out.open_array();
                for item in items {
                    self.fill(inner, item, out);
                    out.counted(&mut open);
                }
                out.close(open);
            }
            _ => out.copy(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn filled(schema: Json, value: Json) -> Json {
        let mut document = Document::from_tree(&value);
        Defaults::compile(&schema).apply(&mut document);
        document.to_tree()
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

    fn keys(document: &Document) -> Vec<&str> {
        document.root().as_object().unwrap().keys().collect()
    }

    #[test]
    fn a_complete_body_is_left_as_it_was_sent() {
        let schema = json!({"type": "object", "properties": {"qty": {"default": 1}, "inner": {"type": "object", "properties": {"x": {"default": 0}}}}});
        let mut document = super::super::json::parse(br#"{"zed": 1, "qty": 2, "inner": {"x": 5, "a": 1}}"#, 127).unwrap();
        let sent = document.clone();
        Defaults::compile(&schema).apply(&mut document);
        assert_eq!(document, sent);
        assert_eq!(keys(&document), ["zed", "qty", "inner"]);
    }

    #[test]
    fn sent_members_keep_their_order_and_defaults_follow_by_name() {
        let schema = json!({"type": "object", "properties": {"d": {"default": 2}, "b": {"default": 1}, "a": {}}});
        let mut document = super::super::json::parse(br#"{"e": 0, "a": 0, "c": 0}"#, 127).unwrap();
        Defaults::compile(&schema).apply(&mut document);
        assert_eq!(keys(&document), ["e", "a", "c", "b", "d"]);
    }

    #[test]
    fn schemas_without_defaults_compile_to_nothing() {
        assert!(Defaults::compile(&json!({"type": "object", "properties": {"a": {"type": "string"}}})).is_empty());
    }
}
