//! jsonschema validates a [`Document`] where it lies: the tape as one of jsonschema's JSON
//! representations (its `json::Json` trait), so a valid body is never copied into a serde_json
//! tree to be checked.
//!
//! Only the hot question, "is it valid?", is asked of the document. A body that fails is the cold
//! path: its issues come from the serde_json tree (`CompiledSchema::issues`), so a refusal reads
//! exactly as before and the error mapping exists once.

use super::{Document, Items, Members, Node as TapeNode, NodeRef, View};
use jsonschema::json::{Array, Json, Node, NodeIdentity, Object};
use jsonschema::types::JsonType;
use std::borrow::Cow;

/// The document's tape as a jsonschema representation.
pub struct Tape;

impl Json for Tape {
    type Node<'a> = NodeRef<'a>;
    type PreparedKey = String;
    type StringBuffer = Document;

    // A member lookup scans the object's members in sent order, so one pass over the members
    // never costs more than the lookups it replaces.
    const KEYS_PER_LOOKUP: usize = usize::MAX / 1024;
    // A document is a tree: no node contains itself.
    const ACYCLIC: bool = true;

    fn prepare_key(key: &str) -> String {
        key.to_owned()
    }

    // `propertyNames`: each name as a one-string document, in a buffer reused across names.
    fn with_string_node<T>(buffer: &mut Document, string: &str, f: impl FnOnce(NodeRef<'_>) -> T) -> T {
        buffer.nodes.clear();
        buffer.text.clear();
        buffer.text.push_str(string);
        buffer.nodes.push(TapeNode::Str { start: 0, len: string.len() as u32 });
        f(buffer.root())
    }
}

impl<'a> Node<'a, Tape> for NodeRef<'a> {
    type Object = Members<'a>;
    type Array = Items<'a>;
    type Number = serde_json::Number;

    fn as_object(&self) -> Option<Members<'a>> {
        NodeRef::as_object(*self)
    }

    fn as_array(&self) -> Option<Items<'a>> {
        NodeRef::as_array(*self)
    }

    fn as_string(&self) -> Option<Cow<'a, str>> {
        NodeRef::as_str(*self).map(Cow::Borrowed)
    }

    fn as_number(&self) -> Option<serde_json::Number> {
        match self.view() {
            View::Int(i) => Some(i.into()),
            View::UInt(u) => Some(u.into()),
            View::Float(f) => serde_json::Number::from_f64(f),
            _ => None,
        }
    }

    fn as_boolean(&self) -> Option<bool> {
        match self.view() {
            View::Bool(b) => Some(b),
            _ => None,
        }
    }

    fn is_null(&self) -> bool {
        matches!(self.view(), View::Null)
    }

    fn is_number(&self) -> bool {
        matches!(self.view(), View::Int(_) | View::UInt(_) | View::Float(_))
    }

    fn json_type(&self) -> JsonType {
        match self.view() {
            View::Null => JsonType::Null,
            View::Bool(_) => JsonType::Boolean,
            View::Int(_) | View::UInt(_) | View::Float(_) => JsonType::Number,
            View::Str(_) => JsonType::String,
            View::Array(_) => JsonType::Array,
            View::Object(_) => JsonType::Object,
        }
    }

    fn to_value(&self) -> Cow<'a, serde_json::Value> {
        Cow::Owned(self.to_tree())
    }

    // The document and the node's place in its tape: unique among the nodes of one validation.
    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::tagged(std::ptr::from_ref::<Document>(self.document) as usize, self.index()))
    }
}

impl<'a> Object<'a, Tape> for Members<'a> {
    type Node = NodeRef<'a>;
    type MemberName = &'a str;
    type MembersIter = Members<'a>;

    fn len(&self) -> usize {
        ExactSizeIterator::len(self)
    }

    fn get(&self, key: &String) -> Option<NodeRef<'a>> {
        self.value_of(key)
    }

    fn members(&self) -> Members<'a> {
        *self
    }
}

impl<'a> Array<'a, Tape> for Items<'a> {
    type Node = NodeRef<'a>;
    type ElementsIter = Items<'a>;

    fn len(&self) -> usize {
        ExactSizeIterator::len(self)
    }

    fn elements(&self) -> Items<'a> {
        *self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_the_contract_jsonschema_relies_on() {
        let document = Document::from_tree(&jsonschema::json::conformance::document());
        jsonschema::json::conformance::assert_conformance::<Tape>(&document.root());
    }

    /// The same verdict as the serde_json tree, schema by schema and instance by instance.
    #[test]
    fn judges_as_the_tree_does() {
        let schemas = [
            json!({"type": "object", "required": ["id", "name"], "properties": {
                "id": {"type": "integer", "minimum": 1}, "name": {"type": "string", "minLength": 2, "maxLength": 4},
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "maxItems": 3},
                "kind": {"enum": ["a", "b"]}, "ratio": {"type": "number", "exclusiveMaximum": 1.5},
                "when": {"type": "string", "format": "date-time"}, "id2": {"type": "string", "format": "uuid"}},
                "additionalProperties": false}),
            json!({"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}, "additionalProperties": {"type": ["integer", "null"]}}),
            json!({"$ref": "#/$defs/Node", "$defs": {"Node": {"type": "object", "properties": {
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}, "v": {"const": 2}}}}}),
            json!({"oneOf": [{"type": "integer", "multipleOf": 3}, {"type": "string"}], "not": {"const": 9}}),
        ];
        let instances = [
            json!({"id": 1, "name": "ab"}), json!({"id": 0, "name": "ab"}), json!({"id": 1.0, "name": "ab"}),
            json!({"id": 1, "name": "héllo"}), json!({"id": 1, "name": "hé"}), json!({"id": 1}), json!({"name": "ab", "x": 1}),
            json!({"id": 1, "name": "ab", "tags": ["x", "x"]}), json!({"id": 1, "name": "ab", "tags": ["x", 1]}),
            json!({"id": 1, "name": "ab", "kind": "c"}), json!({"id": 1, "name": "ab", "ratio": 1.5}),
            json!({"id": 1, "name": "ab", "when": "2024-01-15T10:30:00Z"}), json!({"id": 1, "name": "ab", "when": "yesterday"}),
            json!({"id": 1, "name": "ab", "id2": "7d1f3f4e-4b0a-4f3e-9a51-2f6c1e9b8a10"}), json!({"id": 1, "name": "ab", "id2": "nope"}),
            json!({"abc": 1, "de": null}), json!({"aBc": 1}), json!({"abc": "x"}), json!({"children": [{"v": 2}, {"children": [{"v": 3}]}]}),
            json!(3), json!(9), json!(4), json!("s"), json!(null), json!([1, 2]), json!(18446744073709551615u64), json!(-7),
        ];
        for schema in &schemas {
            let tree_validator = jsonschema::options().should_validate_formats(true).build(schema).unwrap();
            let doc_validator = jsonschema::options_for::<Tape>().should_validate_formats(true).build(schema).unwrap();
            for instance in &instances {
                let document = Document::from_tree(instance);
                assert_eq!(doc_validator.is_valid(document.root()), tree_validator.is_valid(instance), "{schema} on {instance}");
            }
        }
    }
}
