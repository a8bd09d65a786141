//! Response shapes: which parts of a handler's result a declared response schema lets out.
//!
//! A route may declare the schema of what it answers, per status (`RouteSpec::responses`):
//! Python's `-> UserOut`, Fastify's `response: {200: schema}`, Ruby's `response:`. As FastAPI
//! and fast-json-stringify do, an object's properties that the schema does not declare are
//! left out of the response, so a `password` in the dict a handler returns never reaches the
//! client. The schema is compiled here, once, into a [`Shape`]: each binding's JSON writer
//! asks it, key by key, while it walks its language's objects, so nothing is written twice
//! and no binding decides on its own what a schema keeps.
//!
//! What a schema keeps:
//! - an object with `properties`: those properties, each with its own shape; any other key
//!   only if `additionalProperties` (or a `patternProperties` pattern it matches) allows it;
//! - an object with none of those keywords (`{"type": "object"}`, a Python `dict`): all;
//! - an array: each item with the shape of `items` (`prefixItems` per position);
//! - `$ref` to the schema's `$defs`/`definitions` (recursive models included), `allOf`
//!   (the fields of every part), and `anyOf`/`oneOf` whose branches are objects (the fields
//!   of each branch: an `Optional[UserOut]` keeps UserOut's); a union of an object with a
//!   non-object keeps whatever the value has, since only validation could choose a branch;
//! - anything else (strings, numbers, `true`, `{}`): the value as it is.
//!
//! What a schema refuses: where it keeps some of an object's or an array's parts, a value of
//! the other kind when its `type` does not admit that kind (a list returned for a `UserOut`),
//! which written as it is would carry everything ([`Shape::admits`]); the response is a 500.
//!
//! What a schema adds, once an object's own members are written (FastAPI's `response_model`
//! and fast-json-stringify both do this): a declared property with a `default` that the result
//! lacks is written with that default (filtered by the property's own shape, its own defaults
//! filled), and a `required` one it lacks fails the response, which is then a 500 as in both
//! (under `validate_responses` the validator reports it instead, with where it is missing).
//!
//! Cost: the writer asks one question per key of an object that has a shape, a comparison
//! against the few declared names (a map past [`INDEXED_FROM`] names); routes without a
//! response schema ask nothing. An object whose schema has a default or a required property
//! also sets a bit in a [`Written`] for each declared key it writes (the lookup that finds the
//! key's shape finds its bit) and is checked once at its end; other objects pay a load per key
//! and one at their end.

mod compile;
mod filter;
mod rules;
#[cfg(test)]
mod tests;

pub use filter::filter_json;
pub(crate) use filter::ShapedNode;
pub(crate) use rules::ResponseRules;
pub use written::{Container, Incomplete, Scalar, Written};

mod written;

use regex::Regex;
use std::collections::HashMap;

/// Objects with this many declared properties or more look keys up in a map.
const INDEXED_FROM: usize = 12;

/// A compiled response schema: its nodes, the root first. Recursive schemas refer back to
/// a node instead of repeating it.
#[derive(Debug)]
pub struct CompiledShape {
    nodes: Vec<Node>,
}

/// What a schema keeps of a value, by the value's kind: `None` keeps a value of that kind
/// (and everything in it) as it is.
#[derive(Debug, Clone)]
struct Node {
    object: Option<ObjectNode>,
    array: Option<ArrayNode>,
    /// Whether the schema's `type` lets a value of each kind match it at all.
    admits_object: bool,
    admits_array: bool,
    /// Whether `null` can match it (its `type`, `enum` or `const` allow it, or a union's branch
    /// does): see [`Shape::admits_null`].
    admits_null: bool,
    /// The [`Scalar`] kinds that can match it, a bit each (as `admits_null`): see
    /// [`Shape::admits_scalar`].
    scalars: u8,
}

impl Node {
    /// A node that keeps everything.
    const ANY: Node = Node { object: None, array: None, admits_object: true, admits_array: true, admits_null: true, scalars: Scalar::ALL };
}

#[derive(Debug, Clone)]
struct ObjectNode {
    /// The declared properties: name and node.
    fields: Vec<(Box<str>, usize)>,
    /// Name → position in `fields`, past [`INDEXED_FROM`] of them.
    index: Option<HashMap<Box<str>, usize>>,
    patterns: Vec<(Regex, usize)>,
    /// The shape of keys neither declared nor matched by a pattern; `None` leaves them out.
    others: Option<usize>,
    /// The properties a result must end up with (defaults and required), if any.
    completion: Option<Box<[Completed]>>,
    /// With a completion: each declared property's bit in a [`Written`] ([`NO_BIT`] for one
    /// that is neither defaulted nor required), so the lookup that finds a key's shape notes it.
    field_bits: Option<Box<[u32]>>,
    /// A required name no property declares, noted by name whether or not it is kept.
    undeclared_required: bool,
    /// The bits of the required ones, so the end of an object checks them with one compare
    /// (unless one is past the first 64: `required_wide`); and whether any has a default.
    required_bits: u64,
    required_wide: bool,
    has_defaults: bool,
    /// Made only to check `required` (no keyword that keeps or drops keys): it keeps all.
    only_checks: bool,
}

/// A declared property's bit when it completes nothing.
const NO_BIT: u32 = u32::MAX;

/// A property an object is completed with when the result lacks it.
#[derive(Debug, Clone)]
struct Completed {
    name: Box<str>,
    /// Its bit in a [`Written`]: its position among the object's completed properties.
    bit: usize,
    /// Whether `properties` declares it (else it is a required name only, noted by name).
    declared: bool,
    fill: Fill,
}

#[derive(Debug, Clone)]
enum Fill {
    /// The response fails without it.
    Required,
    /// Written with the schema's default: `value` as declared, `written` as it is written (its
    /// property's shape applied, its objects' defaults filled) and `text` that as JSON; both
    /// made once the whole shape is compiled.
    Default { value: serde_json::Value, written: serde_json::Value, text: Box<[u8]> },
}

#[derive(Debug, Clone)]
struct ArrayNode {
    /// `prefixItems`: the shapes of the first items, by position.
    prefix: Vec<usize>,
    items: usize,
}

static ANY: [Node; 1] = [Node::ANY];

/// Where a writer is in a compiled shape: the shape of the value it is about to write.
#[derive(Debug, Clone, Copy)]
pub struct Shape<'a> {
    nodes: &'a [Node],
    at: usize,
}

impl Shape<'static> {
    /// The shape that keeps everything: what an undeclared response, or a value under a key
    /// the schema says nothing about, is written with.
    pub fn any() -> Self {
        Shape { nodes: &ANY, at: 0 }
    }
}

impl<'a> Shape<'a> {
    /// Whether this value and everything in it is written as it is: a writer takes its plain
    /// path from here on.
    pub fn keeps_everything(self) -> bool {
        let node = &self.nodes[self.at];
        node.object.is_none() && node.array.is_none()
    }

    /// Whether a value of `kind` may be written with this shape. Where the schema filters what
    /// it keeps (its objects' fields, its arrays' items) but its `type` does not admit `kind`,
    /// such a value is refused: an array a handler returns for a `UserOut`, written as it is,
    /// would carry every field the schema leaves out. FastAPI's validation and
    /// fast-json-stringify's required fields refuse it too, with a 500. A schema that filters
    /// nothing keeps a value of any kind, as it did.
    #[inline]
    pub fn admits(self, kind: Container) -> Result<(), Incomplete> {
        let node = &self.nodes[self.at];
        let admitted = match kind {
            Container::Object => node.admits_object,
            Container::Array => node.admits_array,
        };
        if admitted || node.object.is_none() && node.array.is_none() {
            return Ok(());
        }
        Err(Incomplete::Kind { found: kind, declared: if node.admits_object { Container::Object } else { Container::Array } })
    }

    /// Whether `null` may be written here: a writer whose language's peer refuses a result
    /// that does not match its declared type asks it for each null it writes under a shape.
    /// Python does (FastAPI validates a result against its response model: `None` for a `str`
    /// or for the model itself is a 500); fast-json-stringify writes the type's empty value
    /// (`""`, `0`, `{}`) instead, so Node, like Ruby and Rust, writes the null as it is.
    #[inline]
    pub fn admits_null(self) -> Result<(), Incomplete> {
        if self.nodes[self.at].admits_null {
            Ok(())
        } else {
            Err(Incomplete::Null)
        }
    }

    /// Whether a scalar of `kind` may be written here, asked as [`Self::admits_null`] is: by a
    /// writer whose language's peer validates a result against its declared type (Python's
    /// FastAPI). A `"number"` admits an integer; an `"integer"` does not admit a float, as
    /// pydantic writes `2.0` for an `int` as `2` and refuses `2.5`. What the writer does about a
    /// kind not admitted is its own (Python's makes the result into its model, as FastAPI does).
    #[inline]
    pub fn admits_scalar(self, kind: Scalar) -> Result<(), Incomplete> {
        if self.nodes[self.at].scalars & kind.bit() != 0 {
            Ok(())
        } else {
            Err(Incomplete::Scalar(kind))
        }
    }

    /// The shape of an object's member `key`, or `None` when the schema leaves it out. A value
    /// whose shape is not an object's keeps all its keys.
    pub fn field(self, key: &str) -> Option<Shape<'a>> {
        self.member(key, &mut Written::default())
    }

    /// [`Self::field`], noting in `written` that the member is written when the object is
    /// completed ([`Self::complete`]): the one lookup serves both.
    pub fn member(self, key: &str, written: &mut Written) -> Option<Shape<'a>> {
        let Some(object) = &self.nodes[self.at].object else { return Some(Shape::any()) };
        let declared = match &object.index {
            Some(index) => index.get(key).copied(),
            None => object.fields.iter().position(|(name, _)| &**name == key),
        };
        if let Some(position) = declared {
            if let Some(bits) = &object.field_bits {
                if bits[position] != NO_BIT {
                    written.set(bits[position] as usize);
                }
            }
            return Some(Shape { nodes: self.nodes, at: object.fields[position].1 });
        }
        if object.undeclared_required {
            // Present, so not missing, even when the schema leaves it out of what is sent.
            if let Some(field) = object.completion.iter().flatten().find(|field| !field.declared && &*field.name == key) {
                written.set(field.bit);
            }
        }
        let at = object.patterns.iter().find(|(pattern, _)| pattern.is_match(key)).map(|(_, at)| *at).or(object.others)?;
        Some(Shape { nodes: self.nodes, at })
    }

    /// The names an object's schema declares (`properties`), in their order; none when this
    /// is not an object's shape. What a writer reads from a value that holds its members as
    /// attributes rather than keys (an ORM row under a Python response model): only what the
    /// schema declares is read, so nothing else can go out.
    pub fn declared_names(self) -> impl Iterator<Item = &'a str> {
        let nodes = self.nodes;
        nodes[self.at].object.iter().flat_map(|object| object.fields.iter().map(|(name, _)| &**name))
    }

    /// Whether this is an array's shape (its items are shaped): what lets a writer write an
    /// iterable it does not otherwise know (a database cursor) as the array the schema declares.
    pub fn is_array(self) -> bool {
        self.nodes[self.at].array.is_some()
    }

    /// The shape of an array's item at `position`. A value whose shape is not an array's
    /// keeps its items as they are.
    pub fn item(self, position: usize) -> Shape<'a> {
        match &self.nodes[self.at].array {
            Some(array) => Shape { nodes: self.nodes, at: array.prefix.get(position).copied().unwrap_or(array.items) },
            None => Shape::any(),
        }
    }

    /// Whether an object written with this shape is completed: its schema gives a property a
    /// default or requires one.
    #[inline]
    pub fn completes(self) -> bool {
        self.completion().is_some()
    }

    /// Ends an object whose members were looked up with [`Self::member`]: writes
    /// `"name":default` for each defaulted property not `written`, after a comma when the
    /// object `has_member`s already. A required one not written is the error.
    pub fn complete(self, written: &Written, out: &mut Vec<u8>, mut has_member: bool) -> Result<(), Incomplete> {
        for (name, _, text) in self.unwritten_defaults(written)? {
            if std::mem::replace(&mut has_member, true) {
                out.push(b',');
            }
            crate::json_text::string(out, name);
            out.push(b':');
            out.extend_from_slice(text);
        }
        Ok(())
    }

    /// What [`Self::complete`] adds to an object whose members were looked up with
    /// [`Self::member`]: each defaulted property not `written`, by name, as a value and as its
    /// JSON text. A required one not written is the error.
    pub(crate) fn unwritten_defaults<'w>(self, written: &'w Written) -> Result<impl Iterator<Item = (&'a str, &'a serde_json::Value, &'a [u8])> + 'w, Incomplete>
    where
        'a: 'w,
    {
        let object = self.nodes[self.at].object.as_ref();
        let fields = object.and_then(|object| object.completion.as_deref()).unwrap_or(&[]);
        if object.is_some_and(|object| object.required_wide || !written.covers(object.required_bits)) {
            if let Some(field) = fields.iter().find(|field| matches!(field.fill, Fill::Required) && !written.has(field.bit)) {
                return Err(Incomplete::Missing(field.name.clone()));
            }
        }
        let has_defaults = object.is_some_and(|object| object.has_defaults);
        Ok(fields.iter().take_while(move |_| has_defaults).filter_map(move |field| match &field.fill {
            Fill::Default { written: value, text, .. } if !written.has(field.bit) => Some((&*field.name, value, &**text)),
            _ => None,
        }))
    }

    fn completion(self) -> Option<&'a [Completed]> {
        self.nodes[self.at].object.as_ref()?.completion.as_deref()
    }
}

/// What a JSON writer asks of a value as it walks it: a [`Shape`] for a route that declares its
/// response, [`Everything`] for one that does not. A writer generic over this compiles twice,
/// and the `Everything` copy is the plain writer: every answer is a constant, so a response
/// without a schema pays nothing for the feature (measured: json-large in Python paid 2–3 ns
/// per value when the shape was passed as a value and asked at run time).
pub trait Fields: Copy {
    /// `true` only for [`Everything`], known when compiled.
    const PLAIN: bool;
    fn keeps_everything(self) -> bool;
    fn field(self, key: &str) -> Option<Self>;
    /// [`Shape::member`].
    fn member(self, key: &str, written: &mut Written) -> Option<Self>;
    fn item(self, position: usize) -> Self;
    /// [`Shape::admits`]: asked as each object or array begins.
    fn admits(self, kind: Container) -> Result<(), Incomplete>;
    /// [`Shape::admits_null`], for a writer that refuses a null its shape does not admit.
    fn admits_null(self) -> Result<(), Incomplete>;
    /// [`Shape::admits_scalar`].
    fn admits_scalar(self, kind: Scalar) -> Result<(), Incomplete>;
    fn complete(self, written: &Written, out: &mut Vec<u8>, has_member: bool) -> Result<(), Incomplete>;
    /// [`Shape::declared_names`], for a writer's slow path (none for [`Everything`]).
    fn declared_names(self) -> Vec<Box<str>> {
        Vec::new()
    }
    /// [`Shape::is_array`] (never for [`Everything`]).
    fn is_array(self) -> bool {
        false
    }
}

/// Keeps every member of every value.
#[derive(Debug, Clone, Copy)]
pub struct Everything;

impl Fields for Everything {
    const PLAIN: bool = true;
    #[inline(always)]
    fn keeps_everything(self) -> bool {
        true
    }
    #[inline(always)]
    fn field(self, _key: &str) -> Option<Self> {
        Some(self)
    }
    #[inline(always)]
    fn item(self, _position: usize) -> Self {
        self
    }
    #[inline(always)]
    fn member(self, _key: &str, _written: &mut Written) -> Option<Self> {
        Some(self)
    }
    #[inline(always)]
    fn admits(self, _kind: Container) -> Result<(), Incomplete> {
        Ok(())
    }
    #[inline(always)]
    fn admits_null(self) -> Result<(), Incomplete> {
        Ok(())
    }
    #[inline(always)]
    fn admits_scalar(self, _kind: Scalar) -> Result<(), Incomplete> {
        Ok(())
    }
    #[inline(always)]
    fn complete(self, _written: &Written, _out: &mut Vec<u8>, _has_member: bool) -> Result<(), Incomplete> {
        Ok(())
    }
}

impl Fields for Shape<'_> {
    const PLAIN: bool = false;
    fn keeps_everything(self) -> bool {
        Shape::keeps_everything(self)
    }
    fn field(self, key: &str) -> Option<Self> {
        Shape::field(self, key)
    }
    fn item(self, position: usize) -> Self {
        Shape::item(self, position)
    }
    fn member(self, key: &str, written: &mut Written) -> Option<Self> {
        Shape::member(self, key, written)
    }
    fn admits(self, kind: Container) -> Result<(), Incomplete> {
        Shape::admits(self, kind)
    }
    fn admits_null(self) -> Result<(), Incomplete> {
        Shape::admits_null(self)
    }
    fn admits_scalar(self, kind: Scalar) -> Result<(), Incomplete> {
        Shape::admits_scalar(self, kind)
    }
    fn complete(self, written: &Written, out: &mut Vec<u8>, has_member: bool) -> Result<(), Incomplete> {
        Shape::complete(self, written, out, has_member)
    }
    fn declared_names(self) -> Vec<Box<str>> {
        Shape::declared_names(self).map(Box::from).collect()
    }
    fn is_array(self) -> bool {
        Shape::is_array(self)
    }
}

impl CompiledShape {
    /// Compiles a response schema; a `$ref` that points nowhere is an error, found when the
    /// route is declared. A result that lacks a required property fails when it is written.
    pub fn compile(schema: &serde_json::Value) -> Result<Self, String> {
        compile::compile(schema, Required::Fail)
    }

    pub fn root(&self) -> Shape<'_> {
        Shape { nodes: &self.nodes, at: 0 }
    }
}

/// Something declared per response status: `"200"`, a class `"2XX"`, or `"default"`; the
/// most specific that matches a response's status is its (OpenAPI's order).
#[derive(Debug)]
pub struct ByStatus<T> {
    exact: Vec<(u16, T)>,
    classes: Vec<(u16, T)>,
    default: Option<T>,
}

impl<T> Default for ByStatus<T> {
    fn default() -> Self {
        ByStatus { exact: Vec::new(), classes: Vec::new(), default: None }
    }
}

impl<T> ByStatus<T> {
    /// `make`s each `(status key, schema)` pair's value, refusing a key that is not a status,
    /// a class or `default`.
    pub fn compile<'s>(
        responses: impl IntoIterator<Item = (&'s str, &'s serde_json::Value)>,
        mut make: impl FnMut(&'s serde_json::Value) -> Result<T, String>,
    ) -> Result<Self, String> {
        let mut by_status = ByStatus::default();
        for (key, schema) in responses {
            let value = make(schema).map_err(|e| format!("response {key}: {e}"))?;
            match status_key(key)? {
                StatusKey::Exact(code) => by_status.exact.push((code, value)),
                StatusKey::Class(class) => by_status.classes.push((class, value)),
                StatusKey::Default => by_status.default = Some(value),
            }
        }
        Ok(by_status)
    }

    pub fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.classes.is_empty() && self.default.is_none()
    }

    /// What is declared for `status`, if anything.
    pub fn get(&self, status: u16) -> Option<&T> {
        let exact = self.exact.iter().find(|(code, _)| *code == status);
        let class = || self.classes.iter().find(|(class, _)| *class == status / 100);
        exact.or_else(class).map(|(_, value)| value).or(self.default.as_ref())
    }
}

/// A route's compiled response shapes.
#[derive(Debug, Default)]
pub struct ResponseShapes(ByStatus<CompiledShape>);

/// What a shape does with a result that lacks a required property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Required {
    /// The response fails (a 500), as FastAPI's and Fastify's do.
    Fail,
    /// Left to the validator (`validate_responses`), which says where.
    Validated,
}

impl Required {
    pub fn for_config(config: &crate::spec::AppConfig) -> Self {
        if config.validate_responses {
            Required::Validated
        } else {
            Required::Fail
        }
    }
}

impl ResponseShapes {
    pub fn compile(spec: &crate::spec::RouteSpec, required: Required) -> Result<Self, String> {
        let declared = spec.responses.iter().map(|(key, response)| (key.as_str(), &response.schema));
        ByStatus::compile(declared, |schema| compile::compile(schema, required)).map(ResponseShapes)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The shape a response with `status` is written with; `None` when nothing is declared
    /// for it (the value is written as it is).
    pub fn for_status(&self, status: u16) -> Option<Shape<'_>> {
        self.0.get(status).map(CompiledShape::root)
    }
}

#[derive(Debug, PartialEq)]
pub(crate) enum StatusKey {
    Exact(u16),
    Class(u16),
    Default,
}

/// `"200"` → 200, `"2XX"` (or `"2xx"`, as Fastify writes it) → class 2, `"default"`.
pub(crate) fn status_key(key: &str) -> Result<StatusKey, String> {
    let refused = || format!("response status {key:?} is not a status (100-599), a class such as \"2XX\", or \"default\"");
    if key == "default" {
        return Ok(StatusKey::Default);
    }
    let bytes = key.as_bytes();
    if bytes.len() == 3 && (b'1'..=b'5').contains(&bytes[0]) && bytes[1..].eq_ignore_ascii_case(b"XX") {
        return Ok(StatusKey::Class(u16::from(bytes[0] - b'0')));
    }
    match key.parse::<u16>() {
        Ok(code) if (100..=599).contains(&code) && bytes.len() == 3 => Ok(StatusKey::Exact(code)),
        _ => Err(refused()),
    }
}
