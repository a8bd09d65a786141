//! JSON Schema → [`CompiledShape`]. Each schema becomes a [`Part`]: what it keeps of an object
//! and of an array, and whether a value of either kind can match it at all (so the `null`
//! branch of an `Optional[UserOut]` says nothing about objects). Parts combine two ways:
//! `allOf` and a `$ref` with sibling keywords as [`all`], `anyOf`/`oneOf` as [`any`].

use super::{ArrayNode, CompiledShape, Node, ObjectNode, INDEXED_FROM};
use regex::Regex;
use serde_json::{Map, Value as Json};
use std::collections::HashMap;

pub(super) fn compile(schema: &Json) -> Result<CompiledShape, String> {
    let mut compiler = Compiler { root: schema, nodes: vec![None], refs: HashMap::new() };
    let part = compiler.part(schema)?;
    compiler.nodes[0] = Some(part.into_node());
    // A slot still empty belongs to a reference that was only ever combined with itself
    // (`A = allOf[A]`): it constrains nothing.
    let nodes = compiler.nodes.into_iter().map(|node| node.unwrap_or(Node { object: None, array: None })).collect();
    Ok(CompiledShape { nodes })
}

struct Compiler<'s> {
    root: &'s Json,
    /// `None` while a referenced schema is being compiled, so a reference back to it (a
    /// recursive model) gets its index rather than compiling it again.
    nodes: Vec<Option<Node>>,
    refs: HashMap<&'s str, usize>,
}

/// What one schema keeps.
#[derive(Clone)]
struct Part {
    object: Option<ObjectNode>,
    array: Option<ArrayNode>,
    may_be_object: bool,
    may_be_array: bool,
}

impl Part {
    fn any() -> Self {
        Part { object: None, array: None, may_be_object: true, may_be_array: true }
    }

    fn into_node(self) -> Node {
        Node { object: self.object, array: self.array }
    }
}

impl<'s> Compiler<'s> {
    /// The node of a schema inside another (a property's, an array's items): a plain `$ref`
    /// is the referenced schema's own node, shared by every place that refers to it.
    fn node(&mut self, schema: &'s Json) -> Result<usize, String> {
        if let Some(reference) = plain_ref(schema) {
            return self.referenced(reference);
        }
        let part = self.part(schema)?;
        self.nodes.push(Some(part.into_node()));
        Ok(self.nodes.len() - 1)
    }

    fn referenced(&mut self, reference: &'s str) -> Result<usize, String> {
        if let Some(&at) = self.refs.get(reference) {
            return Ok(at);
        }
        let target = resolve(self.root, reference)?;
        let at = self.nodes.len();
        self.nodes.push(None);
        self.refs.insert(reference, at);
        let part = self.part(target)?;
        self.nodes[at] = Some(part.into_node());
        Ok(at)
    }

    /// A referenced schema's part, to combine with others; one still being compiled (a
    /// schema that includes itself) constrains nothing more.
    fn referenced_part(&mut self, reference: &'s str) -> Result<Part, String> {
        let at = self.referenced(reference)?;
        Ok(match &self.nodes[at] {
            Some(node) => Part { object: node.object.clone(), array: node.array.clone(), ..Part::any() },
            None => Part::any(),
        })
    }

    fn part(&mut self, schema: &'s Json) -> Result<Part, String> {
        let map = match schema {
            Json::Bool(true) => return Ok(Part::any()),
            Json::Bool(false) => return Ok(Part { may_be_object: false, may_be_array: false, ..Part::any() }),
            Json::Object(map) => map,
            other => return Err(format!("a schema is an object or a boolean, not {other}")),
        };
        let mut part = self.own_part(map)?;
        if let Some(reference) = map.get("$ref").and_then(Json::as_str) {
            part = all(part, self.referenced_part(reference)?);
        }
        if let Some(parts) = map.get("allOf").and_then(Json::as_array) {
            for schema in parts {
                let other = self.part(schema)?;
                part = all(part, other);
            }
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(branches) = map.get(keyword).and_then(Json::as_array) {
                let branches = branches.iter().map(|schema| self.part(schema)).collect::<Result<Vec<_>, _>>()?;
                part = all(part, any(branches));
            }
        }
        Ok(part)
    }

    /// What the schema's own keywords keep (`type`, the object and array keywords).
    fn own_part(&mut self, map: &'s Map<String, Json>) -> Result<Part, String> {
        let mut part = Part::any();
        match map.get("type") {
            Some(Json::String(kind)) => (part.may_be_object, part.may_be_array) = (kind == "object", kind == "array"),
            Some(Json::Array(kinds)) => {
                let has = |name: &str| kinds.iter().any(|kind| kind.as_str() == Some(name));
                (part.may_be_object, part.may_be_array) = (has("object"), has("array"));
            }
            _ => {}
        }
        let properties = map.get("properties").and_then(Json::as_object);
        let patterns = map.get("patternProperties").and_then(Json::as_object);
        let additional = map.get("additionalProperties");
        if properties.is_some() || patterns.is_some() || additional.is_some_and(|a| a != &Json::Bool(true)) {
            let mut fields = Vec::new();
            for (name, schema) in properties.into_iter().flatten() {
                fields.push((name.as_str().into(), self.node(schema)?));
            }
            let mut compiled = Vec::new();
            for (pattern, schema) in patterns.into_iter().flatten() {
                let regex = Regex::new(pattern).map_err(|e| format!("patternProperties {pattern:?}: {e}"))?;
                compiled.push((regex, self.node(schema)?));
            }
            let others = match additional {
                None | Some(Json::Bool(false)) => None,
                Some(schema) => Some(self.node(schema)?),
            };
            part.object = Some(ObjectNode::new(fields, compiled, others));
        }
        let prefix = map.get("prefixItems").and_then(Json::as_array);
        let items = map.get("items").filter(|items| items.is_object() || items == &&Json::Bool(false));
        if prefix.is_some() || items.is_some() {
            let prefix = prefix.into_iter().flatten().map(|schema| self.node(schema)).collect::<Result<Vec<_>, _>>()?;
            let items = match items {
                Some(schema) => self.node(schema)?,
                None => self.any_node(),
            };
            part.array = Some(ArrayNode { prefix, items });
        }
        Ok(part)
    }

    fn any_node(&mut self) -> usize {
        self.nodes.push(Some(Node { object: None, array: None }));
        self.nodes.len() - 1
    }
}

/// A schema that is only a `$ref` (and words for people: `title`, `description`, …).
fn plain_ref(schema: &Json) -> Option<&str> {
    let map = schema.as_object()?;
    let reference = map.get("$ref")?.as_str()?;
    const ANNOTATIONS: [&str; 6] = ["$ref", "title", "description", "examples", "deprecated", "$comment"];
    map.keys().all(|key| ANNOTATIONS.contains(&key.as_str())).then_some(reference)
}

/// A reference within the schema (`#`, `#/$defs/User`, `#/definitions/User`).
fn resolve<'s>(root: &'s Json, reference: &str) -> Result<&'s Json, String> {
    let unresolved = || format!("$ref {reference:?} does not point into the schema (only references within it, such as \"#/$defs/Name\", are followed)");
    let pointer = reference.strip_prefix('#').ok_or_else(unresolved)?;
    let decoded = percent_encoding::percent_decode_str(pointer).decode_utf8().map_err(|_| unresolved())?;
    root.pointer(&decoded).ok_or_else(unresolved)
}

/// A value must match both: a key either declares is kept, others only if both allow them.
fn all(a: Part, b: Part) -> Part {
    Part {
        object: match (a.object, b.object) {
            (Some(a), Some(b)) => Some(a.union(b, false)),
            (a, b) => a.or(b),
        },
        array: a.array.or(b.array),
        may_be_object: a.may_be_object && b.may_be_object,
        may_be_array: a.may_be_array && b.may_be_array,
    }
}

/// A value matches one of the branches: of the branches that an object could match, a key any
/// of them declares is kept; one that constrains nothing keeps everything. Arrays alike.
fn any(branches: Vec<Part>) -> Part {
    let mut object: Option<Option<ObjectNode>> = None;
    let mut array: Option<Option<ArrayNode>> = None;
    let (mut may_be_object, mut may_be_array) = (false, false);
    for branch in branches {
        if branch.may_be_object {
            may_be_object = true;
            object = Some(match (object, branch.object) {
                (None, this) => this,
                (Some(Some(kept)), Some(this)) => Some(kept.union(this, true)),
                _ => None,
            });
        }
        if branch.may_be_array {
            may_be_array = true;
            array = Some(match (array, branch.array) {
                (None, this) => this,
                (Some(Some(kept)), Some(_)) => Some(kept),
                _ => None,
            });
        }
    }
    Part { object: object.flatten(), array: array.flatten(), may_be_object, may_be_array }
}

impl ObjectNode {
    fn new(fields: Vec<(Box<str>, usize)>, patterns: Vec<(Regex, usize)>, others: Option<usize>) -> Self {
        let index = (fields.len() >= INDEXED_FROM).then(|| fields.iter().cloned().collect());
        ObjectNode { fields, index, patterns, others }
    }

    /// The fields of both (the first's shape for a name both declare); keys neither declares
    /// are kept if both allow them (`all`) or either does (`any`).
    fn union(self, other: ObjectNode, either_allows: bool) -> ObjectNode {
        let mut fields = self.fields;
        for (name, at) in other.fields {
            if !fields.iter().any(|(kept, _)| *kept == name) {
                fields.push((name, at));
            }
        }
        let mut patterns = self.patterns;
        patterns.extend(other.patterns);
        let others = if either_allows { self.others.or(other.others) } else { self.others.and(other.others) };
        ObjectNode::new(fields, patterns, others)
    }
}
