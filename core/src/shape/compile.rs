//! JSON Schema → [`CompiledShape`]. Each schema becomes a [`Part`]: what it keeps of an object
//! and of an array, and whether a value of either kind can match it at all (so the `null`
//! branch of an `Optional[UserOut]` says nothing about objects). Parts combine two ways:
//! `allOf` and a `$ref` with sibling keywords as [`all`], `anyOf`/`oneOf` as [`any`].

use super::{filter::shape_default, ArrayNode, CompiledShape, Completed, Fill, Node, ObjectNode, Required, Scalar, Shape, INDEXED_FROM, NO_BIT};
use regex::Regex;
use serde_json::{Map, Value as Json};
use std::collections::HashMap;

pub(super) fn compile(schema: &Json, required: Required) -> Result<CompiledShape, String> {
    let mut compiler = Compiler { root: schema, nodes: vec![None], refs: HashMap::new(), required, or_null: Vec::new() };
    let part = compiler.part(schema)?;
    compiler.nodes[0] = Some(part.into_node());
    // An `Optional[Model]` is the model's node that also admits null: copied only now, since
    // the model may still have been compiling where it was met (`parent: Optional["Node"]`).
    for (slot, model) in std::mem::take(&mut compiler.or_null) {
        let node = compiler.nodes[model].clone().map(|node| Node { admits_null: true, ..node });
        compiler.nodes[slot] = node;
    }
    // A slot still empty belongs to a reference that was only ever combined with itself
    // (`A = allOf[A]`): it constrains nothing.
    let nodes = compiler.nodes.into_iter().map(|node| node.unwrap_or(Node::ANY)).collect();
    let mut shape = CompiledShape { nodes };
    write_defaults(&mut shape)?;
    Ok(shape)
}

/// Each default as a writer writes it: through its property's shape, so what the schema would
/// leave out of a result is left out of a default too, and a default object gets its own
/// properties' defaults. Done once the whole shape exists, since a property's shape may be any
/// node (a recursive model's included).
fn write_defaults(shape: &mut CompiledShape) -> Result<(), String> {
    let mut made = Vec::new();
    for (at, node) in shape.nodes.iter().enumerate() {
        let Some(fields) = node.object.as_ref().and_then(|object| object.completion.as_deref()) else { continue };
        for (position, field) in fields.iter().enumerate() {
            let Fill::Default { value, .. } = &field.fill else { continue };
            let mut value = value.clone();
            if let Some(inner) = (Shape { nodes: &shape.nodes, at }).field(&field.name) {
                shape_default(&mut value, inner, (at, field.bit));
            }
            let text = serde_json::to_vec(&value).map_err(|e| e.to_string())?.into_boxed_slice();
            made.push((at, position, value, text));
        }
    }
    for (at, position, value, made_text) in made {
        let object = shape.nodes[at].object.as_mut().expect("a node with a default is an object's");
        let fields = object.completion.as_mut().expect("a node with a default is completed");
        if let Fill::Default { written, text, .. } = &mut fields[position].fill {
            (*written, *text) = (value, made_text);
        }
    }
    Ok(())
}

struct Compiler<'s> {
    root: &'s Json,
    /// `None` while a referenced schema is being compiled, so a reference back to it (a
    /// recursive model) gets its index rather than compiling it again.
    nodes: Vec<Option<Node>>,
    refs: HashMap<&'s str, usize>,
    required: Required,
    /// `(slot, model)`: the slot of an `Optional[Model]`, to be the model's node admitting null.
    or_null: Vec<(usize, usize)>,
}

/// What one schema keeps.
#[derive(Clone)]
struct Part {
    object: Option<ObjectNode>,
    array: Option<ArrayNode>,
    may_be_object: bool,
    may_be_array: bool,
    may_be_null: bool,
    /// The [`Scalar`] kinds it admits, a bit each.
    scalars: u8,
}

impl Part {
    fn any() -> Self {
        Part { object: None, array: None, may_be_object: true, may_be_array: true, may_be_null: true, scalars: Scalar::ALL }
    }

    fn into_node(self) -> Node {
        Node { object: self.object, array: self.array, admits_object: self.may_be_object, admits_array: self.may_be_array, admits_null: self.may_be_null, scalars: self.scalars }
    }
}

/// The scalar kinds a `type` names (an integer is a `"number"` too).
fn scalars_of_type(kind: &str) -> u8 {
    match kind {
        "boolean" => Scalar::Bool.bit(),
        "integer" => Scalar::Integer.bit(),
        "number" => Scalar::Integer.bit() | Scalar::Float.bit(),
        "string" => Scalar::String.bit(),
        _ => 0,
    }
}

/// The scalar kind of a value an `enum` or `const` lists (none for null or a container).
fn scalar_of_value(value: &Json) -> u8 {
    match value {
        Json::Bool(_) => Scalar::Bool.bit(),
        Json::Number(number) if number.is_f64() => Scalar::Float.bit(),
        Json::Number(_) => Scalar::Integer.bit(),
        Json::String(_) => Scalar::String.bit(),
        _ => 0,
    }
}

impl<'s> Compiler<'s> {
    /// The node of a schema inside another (a property's, an array's items): a plain `$ref`
    /// is the referenced schema's own node, shared by every place that refers to it.
    fn node(&mut self, schema: &'s Json) -> Result<usize, String> {
        if let Some(reference) = plain_ref(schema) {
            return self.referenced(reference);
        }
        if let Some(reference) = nullable_ref(schema) {
            let model = self.referenced(reference)?;
            self.nodes.push(None);
            self.or_null.push((self.nodes.len() - 1, model));
            return Ok(self.nodes.len() - 1);
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
            Some(node) => Part {
                object: node.object.clone(),
                array: node.array.clone(),
                may_be_object: node.admits_object,
                may_be_array: node.admits_array,
                may_be_null: node.admits_null,
                scalars: node.scalars,
            },
            None => Part::any(),
        })
    }

    fn part(&mut self, schema: &'s Json) -> Result<Part, String> {
        let map = match schema {
            Json::Bool(true) => return Ok(Part::any()),
            Json::Bool(false) => return Ok(Part { may_be_object: false, may_be_array: false, may_be_null: false, scalars: 0, ..Part::any() }),
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
            Some(Json::String(kind)) => {
                (part.may_be_object, part.may_be_array, part.may_be_null) = (kind == "object", kind == "array", kind == "null");
                part.scalars = scalars_of_type(kind);
            }
            Some(Json::Array(kinds)) => {
                let has = |name: &str| kinds.iter().any(|kind| kind.as_str() == Some(name));
                (part.may_be_object, part.may_be_array, part.may_be_null) = (has("object"), has("array"), has("null"));
                part.scalars = kinds.iter().filter_map(Json::as_str).fold(0, |scalars, kind| scalars | scalars_of_type(kind));
            }
            _ => {}
        }
        // `Literal[...]` and enums: null only if listed, and only the kinds listed.
        if let Some(Json::Array(values)) = map.get("enum") {
            part.may_be_null &= values.contains(&Json::Null);
            part.scalars &= values.iter().fold(0, |scalars, value| scalars | scalar_of_value(value));
        }
        if let Some(value) = map.get("const") {
            part.may_be_null &= value.is_null();
            part.scalars &= scalar_of_value(value);
        }
        let properties = map.get("properties").and_then(Json::as_object);
        let patterns = map.get("patternProperties").and_then(Json::as_object);
        let additional = map.get("additionalProperties");
        let keeps_some = properties.is_some() || patterns.is_some() || additional.is_some_and(|a| a != &Json::Bool(true));
        let completion = self.completion(map);
        // An object schema that only requires (`{"required": ["id"]}`) keeps every key and
        // still fails without one, as Fastify's serialiser does.
        if keeps_some || !completion.is_empty() {
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
                Some(Json::Bool(false)) => None,
                None if keeps_some => None,
                None => Some(self.any_node()),
                Some(schema) => Some(self.node(schema)?),
            };
            let mut object = ObjectNode::new(fields, compiled, others, completion);
            object.only_checks = !keeps_some;
            part.object = Some(object);
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

    /// The properties an object of this schema is completed with: each with a `default`, in
    /// the order of `properties`, then each `required` one without a default (unless the
    /// validator checks those).
    fn completion(&self, map: &Map<String, Json>) -> Vec<Completed> {
        let mut completed = Vec::new();
        for (name, schema) in map.get("properties").and_then(Json::as_object).into_iter().flatten() {
            if let Some(value) = schema.get("default") {
                let fill = Fill::Default { value: value.clone(), written: Json::Null, text: Box::default() };
                completed.push(Completed { name: name.as_str().into(), bit: 0, declared: true, fill });
            }
        }
        if self.required == Required::Fail {
            for name in map.get("required").and_then(Json::as_array).into_iter().flatten().filter_map(Json::as_str) {
                if !completed.iter().any(|field| &*field.name == name) {
                    completed.push(Completed { name: name.into(), bit: 0, declared: false, fill: Fill::Required });
                }
            }
        }
        completed
    }

    fn any_node(&mut self) -> usize {
        self.nodes.push(Some(Node::ANY));
        self.nodes.len() - 1
    }
}

/// A schema that is only a `$ref` (and words for people: `title`, `description`, …; and a
/// `default`, which completes the object that holds the property, not the property's shape).
fn plain_ref(schema: &Json) -> Option<&str> {
    let map = schema.as_object()?;
    let reference = map.get("$ref")?.as_str()?;
    const ANNOTATIONS: [&str; 7] = ["$ref", "title", "description", "examples", "deprecated", "$comment", "default"];
    map.keys().all(|key| ANNOTATIONS.contains(&key.as_str())).then_some(reference)
}

/// The reference of an `Optional[Model]` (`anyOf`/`oneOf` of a plain `$ref` and `null`), taken
/// as the model's own node: combining parts would lose a model still being compiled (a model
/// with an optional field of its own type, `parent: Optional["Node"]`).
fn nullable_ref(schema: &Json) -> Option<&str> {
    let map = schema.as_object()?;
    const OTHERS: [&str; 7] = ["anyOf", "oneOf", "title", "description", "default", "examples", "deprecated"];
    if !map.keys().all(|key| OTHERS.contains(&key.as_str())) || map.contains_key("anyOf") == map.contains_key("oneOf") {
        return None;
    }
    let branches = map.get("anyOf").or_else(|| map.get("oneOf"))?.as_array()?;
    let [a, b] = branches.as_slice() else { return None };
    let null = |branch: &Json| branch == &serde_json::json!({"type": "null"});
    match (plain_ref(a), plain_ref(b)) {
        (Some(reference), None) if null(b) => Some(reference),
        (None, Some(reference)) if null(a) => Some(reference),
        _ => None,
    }
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
        may_be_null: a.may_be_null && b.may_be_null,
        scalars: a.scalars & b.scalars,
    }
}

/// A value matches one of the branches: of the branches that an object could match, a key any
/// of them declares is kept; one that constrains nothing keeps everything. Arrays alike.
fn any(branches: Vec<Part>) -> Part {
    let mut object: Option<Option<ObjectNode>> = None;
    let mut array: Option<Option<ArrayNode>> = None;
    let (mut may_be_object, mut may_be_array, mut may_be_null, mut scalars) = (false, false, false, 0);
    for branch in branches {
        may_be_null |= branch.may_be_null;
        scalars |= branch.scalars;
        if branch.may_be_object {
            may_be_object = true;
            // A branch that only requires keeps everything, as it did before it required: in a
            // union nothing is completed, so it would only shape keys another branch declares.
            let branch_object = branch.object.filter(|object| !object.only_checks);
            object = Some(match (object, branch_object) {
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
    Part { object: object.flatten(), array: array.flatten(), may_be_object, may_be_array, may_be_null, scalars }
}

impl ObjectNode {
    fn new(fields: Vec<(Box<str>, usize)>, patterns: Vec<(Regex, usize)>, others: Option<usize>, mut completion: Vec<Completed>) -> Self {
        let index = (fields.len() >= INDEXED_FROM).then(|| fields.iter().enumerate().map(|(position, (name, _))| (name.clone(), position)).collect());
        let mut field_bits = vec![NO_BIT; fields.len()];
        for (bit, field) in completion.iter_mut().enumerate() {
            field.bit = bit;
            let position = fields.iter().position(|(name, _)| *name == field.name);
            field.declared = position.is_some();
            if let Some(position) = position {
                field_bits[position] = u32::try_from(bit).unwrap_or(NO_BIT);
            }
        }
        let required = || completion.iter().filter(|field| matches!(field.fill, Fill::Required));
        let required_bits = required().filter(|field| field.bit < 64).fold(0, |bits, field| bits | 1 << field.bit);
        let required_wide = required().any(|field| field.bit >= 64);
        let undeclared_required = required().any(|field| !field.declared);
        let has_defaults = completion.iter().any(|field| matches!(field.fill, Fill::Default { .. }));
        let field_bits = (!completion.is_empty()).then(|| field_bits.into_boxed_slice());
        let completion = (!completion.is_empty()).then(|| completion.into_boxed_slice());
        ObjectNode { fields, index, patterns, others, completion, field_bits, undeclared_required, required_bits, required_wide, has_defaults, only_checks: false }
    }

    /// The fields of both (the first's shape for a name both declare); keys neither declares
    /// are kept if both allow them (`all`) or either does (`any`). A value that must match both
    /// is completed by both (a default before a requirement); one that matches either is
    /// completed by neither, since only validation could say which branch it is.
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
        let mut completion = Vec::new();
        if !either_allows {
            for field in self.completion.into_iter().chain(other.completion).flat_map(Vec::from) {
                match completion.iter_mut().find(|kept: &&mut Completed| kept.name == field.name) {
                    Some(kept) if matches!(kept.fill, Fill::Required) => *kept = field,
                    Some(_) => {}
                    None => completion.push(field),
                }
            }
        }
        let mut union = ObjectNode::new(fields, patterns, others, completion);
        union.only_checks = self.only_checks && other.only_checks;
        union
    }
}
