//! What a valid JSON body is given before a handler sees it: the schema's `default`s, and
//! integers where the schema says `integer`.
//!
//! A FastAPI handler receives a pydantic model, so a property the client left out already
//! holds its declared default, and an `int` field sent as `2.0` holds `2` (JSON Schema and
//! pydantic both accept a whole float as an integer). Ferrule hands handlers plain JSON in
//! every language; finishing the document here, once, keeps both promises without each binding
//! re-walking the schema (Ruby and Python would otherwise hand out the Float `2.0`).
//!
//! Cost: a route whose schema has neither defaults nor integers compiles to nothing. Integers
//! are looked for only when the body holds a whole float at all (the parser notes where),
//! only inside containers that hold one of them, and are changed in place. json-large's body
//! has 3 whole floats, all prices: the walk steps over its items up to the last of them and
//! enters 3, 1.1 µs a request beside its 14 µs parse (one core, release build). Defaults are
//! looked for by one read-only walk, and only a body that misses one is written again.

use crate::document::{Builder as Tape, Document, NodeRef, View};
use crate::problem::{Issue, LocSegment};
use serde_json::Value as Json;
use std::collections::HashMap;

/// Where defaults and integers live in a schema, found once when the route is compiled. Nodes
/// sit in an arena so a local `$ref` (pydantic's nested and recursive models) is compiled once
/// and shared.
#[derive(Debug, Default)]
pub struct Completion {
    nodes: Vec<Node>,
    root: Option<usize>,
    has_defaults: bool,
    has_integers: bool,
}

#[derive(Debug, Default, Clone)]
struct Node {
    /// Object properties: name, its own default (ready to insert into a body), and the node for
    /// its value. When `values` is set, every declared property is listed, so a declared name
    /// never falls back to `values`.
    properties: Vec<(String, Option<Document>, Option<usize>)>,
    /// The node for members no property declares (`additionalProperties`: a `dict[str, Item]`).
    values: Option<usize>,
    /// The nodes for the first array items, by position (`prefixItems`: a tuple).
    prefix: Vec<Option<usize>>,
    /// The node for every other array item.
    items: Option<usize>,
    /// The schema admits integers and no other numbers: a whole float here becomes an integer.
    integer: bool,
    /// `anyOf`/`oneOf` with one branch that can hold an object (`Optional[Item]`): an object
    /// value is finished by that branch. None when no branch or several could (a union of
    /// models, which only validation could tell apart).
    object_branch: Option<usize>,
    /// The same for an array value (`Optional[list[int]]`).
    array_branch: Option<usize>,
}

impl Node {
    /// Adds what `part` finishes that this node does not: a property it lacks, a default or
    /// an inner node a property of both lacks here, and its integer rule.
    fn merge(&mut self, part: Node) {
        for (name, default, inner) in part.properties {
            match self.properties.iter_mut().find(|(kept, _, _)| *kept == name) {
                Some((_, kept_default, kept_inner)) => {
                    if kept_default.is_none() {
                        *kept_default = default;
                    }
                    if kept_inner.is_none() {
                        *kept_inner = inner;
                    }
                }
                None => self.properties.push((name, default, inner)),
            }
        }
        self.values = self.values.or(part.values);
        if self.prefix.is_empty() {
            self.prefix = part.prefix;
        }
        self.items = self.items.or(part.items);
        self.integer |= part.integer;
        self.object_branch = self.object_branch.or(part.object_branch);
        self.array_branch = self.array_branch.or(part.array_branch);
    }

    fn is_empty(&self) -> bool {
        self.properties.is_empty()
            && self.values.is_none()
            && self.prefix.iter().all(Option::is_none)
            && self.items.is_none()
            && !self.integer
            && self.object_branch.is_none()
            && self.array_branch.is_none()
    }

    /// The node for the member named `key`.
    fn member(&self, key: &str) -> Option<usize> {
        match self.properties.iter().find(|(name, ..)| name == key) {
            Some((_, _, inner)) => *inner,
            None => self.values,
        }
    }

    /// The node for the item at `index`.
    fn item(&self, index: usize) -> Option<usize> {
        self.prefix.get(index).copied().unwrap_or(self.items)
    }

    fn has_items(&self) -> bool {
        self.items.is_some() || self.prefix.iter().any(Option::is_some)
    }
}

/// The keywords [`Builder::build`] finishes a value by.
const FINISHING: [&str; 8] = ["properties", "additionalProperties", "prefixItems", "items", "type", "anyOf", "oneOf", "allOf"];

/// JSON types as bits, for what a schema admits.
const OBJECT: u8 = 1;
const ARRAY: u8 = 2;
const INTEGER: u8 = 4;
const NUMBER: u8 = 8;
const OTHER: u8 = 16;

fn type_bits(name: &str) -> u8 {
    match name {
        "object" => OBJECT,
        "array" => ARRAY,
        "integer" => INTEGER,
        "number" => NUMBER,
        _ => OTHER,
    }
}

struct Builder<'a> {
    root: &'a Json,
    nodes: Vec<Node>,
    refs: HashMap<&'a str, usize>,
}

impl<'a> Builder<'a> {
    /// The node for `schema`, or `None` when nothing inside it is finished.
    fn node(&mut self, schema: &'a Json) -> Option<usize> {
        let map = schema.as_object()?;
        // A `$ref` beside keywords that finish values is one part of the schema's, as an
        // `allOf` part is (see `build`); alone (or with annotations) it is the referenced node.
        let alone = map.keys().all(|keyword| keyword == "$ref" || !FINISHING.contains(&keyword.as_str()));
        if let Some(reference) = map.get("$ref").and_then(Json::as_str).filter(|_| alone) {
            return self.reference(reference);
        }
        let node = self.build(schema);
        if node.is_empty() {
            return None;
        }
        let id = self.reserve();
        self.nodes[id] = node;
        Some(id)
    }

    /// The node of the schema `reference` points at, built once.
    fn reference(&mut self, reference: &'a str) -> Option<usize> {
        if let Some(id) = self.refs.get(reference) {
            return Some(*id);
        }
        let target = self.resolve(reference)?;
        // Registered before it is built, so a recursive model refers to itself.
        let id = self.reserve();
        self.refs.insert(reference, id);
        self.nodes[id] = self.build(target);
        Some(id)
    }

    fn build(&mut self, schema: &'a Json) -> Node {
        let mut node = Node::default();
        node.values = schema.get("additionalProperties").and_then(|values| self.node(values));
        if let Some(props) = schema.get("properties").and_then(Json::as_object) {
            for (name, prop) in props {
                let inner = self.node(prop);
                let default = prop.get("default").map(Document::from_tree);
                if default.is_some() || inner.is_some() || node.values.is_some() {
                    node.properties.push((name.clone(), default, inner));
                }
            }
        }
        if let Some(prefix) = schema.get("prefixItems").and_then(Json::as_array) {
            node.prefix = prefix.iter().map(|item| self.node(item)).collect();
        }
        node.items = schema.get("items").and_then(|items| self.node(items));
        node.integer = self.admitted(schema, 0).is_some_and(|bits| bits & INTEGER != 0 && bits & NUMBER == 0);
        if let Some(branches) = schema.get("anyOf").or_else(|| schema.get("oneOf")).and_then(Json::as_array) {
            node.object_branch = self.only_branch(branches, OBJECT).and_then(|branch| self.node(branch));
            node.array_branch = self.only_branch(branches, ARRAY).and_then(|branch| self.node(branch));
        }
        // A value matches every `allOf` part (and a `$ref` beside other keywords), so each
        // part's defaults and integers finish it too, as Ajv's `useDefaults` fills them (found
        // beside Fastify: `allOf: [{properties: {a: {default: 5}}}]` gave `{}` for `{}`).
        let parts: Vec<usize> = schema.get("allOf").and_then(Json::as_array).into_iter().flatten().filter_map(|part| self.node(part)).collect();
        let referenced = schema.get("$ref").and_then(Json::as_str).and_then(|reference| self.reference(reference));
        for id in parts.into_iter().chain(referenced) {
            // A part still being built (a model that includes itself) adds nothing yet.
            let built = self.nodes[id].clone();
            node.merge(built);
        }
        node
    }

    /// The one branch that can hold a value of `kind`, if exactly one can.
    fn only_branch(&self, branches: &'a [Json], kind: u8) -> Option<&'a Json> {
        let mut able = branches.iter().filter(|branch| self.admitted(branch, 0).map_or(true, |bits| bits & kind != 0));
        let first = able.next()?;
        able.next().is_none().then_some(first)
    }

    /// The JSON types `schema` admits as far as `type`, `$ref`, `anyOf` and `oneOf` say, as
    /// bits; `None` when it may admit any.
    fn admitted(&self, schema: &'a Json, depth: u8) -> Option<u8> {
        if depth > 16 {
            return None;
        }
        let map = match schema {
            Json::Bool(false) => return Some(0),
            Json::Object(map) => map,
            _ => return None,
        };
        match map.get("type") {
            Some(Json::String(name)) => return Some(type_bits(name)),
            Some(Json::Array(names)) => return Some(names.iter().filter_map(Json::as_str).fold(0, |bits, name| bits | type_bits(name))),
            _ => {}
        }
        if let Some(reference) = map.get("$ref").and_then(Json::as_str) {
            return self.admitted(self.resolve(reference)?, depth + 1);
        }
        let branches = map.get("anyOf").or_else(|| map.get("oneOf")).and_then(Json::as_array)?;
        branches.iter().try_fold(0, |bits, branch| Some(bits | self.admitted(branch, depth + 1)?))
    }

    fn resolve(&self, reference: &str) -> Option<&'a Json> {
        self.root.pointer(reference.strip_prefix('#')?)
    }

    fn reserve(&mut self) -> usize {
        self.nodes.push(Node::default());
        self.nodes.len() - 1
    }
}

impl Completion {
    pub fn compile(schema: &Json) -> Completion {
        let mut builder = Builder { root: schema, nodes: Vec::new(), refs: HashMap::new() };
        let root = builder.node(schema);
        let nodes = builder.nodes;
        let has_defaults = nodes.iter().any(|node| node.properties.iter().any(|(_, default, _)| default.is_some()));
        let has_integers = nodes.iter().any(|node| node.integer);
        Completion { nodes, root, has_defaults, has_integers }
    }

    pub fn is_empty(&self) -> bool {
        self.root.is_none()
    }

    /// Whether the schema gives any property a default.
    pub fn has_defaults(&self) -> bool {
        self.has_defaults
    }

    /// Finishes a valid body: whole floats where the schema says `integer` become integers (in
    /// place), then every missing property that has a default is inserted; present values (even
    /// `null`) stay. A filled object lists the members that were sent, in their order, then the
    /// defaults, in the order the schema declares them (as a pydantic model or a JS object would).
    ///
    /// A whole float there that no 64-bit integer holds (`1e20`) is refused, `int_parsing_size`
    /// at its place below `loc`, as pydantic refuses it and as the parser refuses the same number
    /// written out in digits. JSON Schema calls it an integer, so validation passed it, and a
    /// Python or Ruby handler would otherwise have been given the float its README promises
    /// never to give.
    pub fn apply(&self, document: &mut Document, loc: &[LocSegment]) -> Result<(), Vec<Issue>> {
        let Some(root) = self.root else { return Ok(()) };
        if self.has_integers {
            let whole = document.whole_floats();
            if !whole.is_empty() {
                let mut found = Vec::new();
                self.integers(root, document.root(), whole, &mut found);
                let oversized: Vec<u32> = found.into_iter().filter(|&index| !document.make_integer(index)).collect();
                if !oversized.is_empty() {
                    return Err(oversized.into_iter().map(|index| oversized_issue(document, index, loc)).collect());
                }
            }
        }
        // A document is a tape, so filling writes a new one. It is first read for whether any
        // default is missing at all: a body that sent every property costs one read-only walk.
        if self.has_defaults && self.wanted(root, document.root()) {
            let mut out = Tape::with_capacity(0);
            self.fill(root, document.root(), &mut out);
            *document = out.finish();
        }
        Ok(())
    }

    /// The node that finishes `value`: a union's branch for the value's kind, when the node
    /// itself says nothing about values of that kind.
    fn at(&self, id: usize, value: &View<'_>) -> &Node {
        let mut node = &self.nodes[id];
        // Bounded: a chain of unions each nested in the last, at most one step per node.
        for _ in 0..self.nodes.len() {
            let branch = match value {
                View::Object(_) if node.properties.is_empty() && node.values.is_none() => node.object_branch,
                View::Array(_) if !node.has_items() => node.array_branch,
                _ => None,
            };
            match branch {
                Some(branch) => node = &self.nodes[branch],
                None => break,
            }
        }
        node
    }

    /// Collects the whole floats at `integer` positions in `value` or below it. `whole`: the
    /// sorted indices of the whole floats inside `value`, none elsewhere; a member or item
    /// that holds none is passed over, and the walk stops once none are left.
    fn integers(&self, id: usize, value: NodeRef<'_>, whole: &[u32], found: &mut Vec<u32>) {
        let view = value.view();
        let node = self.at(id, &view);
        let mut rest = whole;
        match view {
            View::Float(_) if node.integer => found.push(value.index()),
            View::Object(members) => {
                for (key, member) in members {
                    let theirs = take_inside(&mut rest, member);
                    if let (false, Some(inner)) = (theirs.is_empty(), node.member(key)) {
                        self.integers(inner, member, theirs, found);
                    }
                    if rest.is_empty() {
                        break;
                    }
                }
            }
            View::Array(items) => {
                for (index, item) in items.enumerate() {
                    let theirs = take_inside(&mut rest, item);
                    if let (false, Some(inner)) = (theirs.is_empty(), node.item(index)) {
                        self.integers(inner, item, theirs, found);
                    }
                    if rest.is_empty() {
                        break;
                    }
                }
            }
            _ => {}
        }
    }

    /// Whether a default is missing in `value` or below it.
    fn wanted(&self, id: usize, value: NodeRef<'_>) -> bool {
        let view = value.view();
        let node = self.at(id, &view);
        match view {
            View::Object(members) => {
                node.properties.iter().any(|(name, default, _)| default.is_some() && value.get(name).is_none())
                    || members.into_iter().any(|(key, member)| node.member(key).is_some_and(|inner| self.wanted(inner, member)))
            }
            View::Array(items) => items.enumerate().any(|(index, item)| node.item(index).is_some_and(|inner| self.wanted(inner, item))),
            _ => false,
        }
    }

    /// Writes `value` with its defaults filled in.
    fn fill(&self, id: usize, value: NodeRef<'_>, out: &mut Tape) {
        let view = value.view();
        let node = self.at(id, &view);
        match view {
            View::Object(members) => {
                let mut open = out.open_object();
                for (key, member) in members {
                    out.str(key);
                    match node.member(key) {
                        Some(inner) => self.fill(inner, member, out),
                        None => out.copy(member),
                    }
                    out.counted(&mut open);
                }
                for (name, default, inner) in &node.properties {
                    if let (Some(default), None) = (default, value.get(name)) {
                        out.str(name);
                        // A default is finished as a sent value is: `{"inner": {}}` given for a
                        // missing object gets the defaults of the object's own properties (ajv's
                        // useDefaults does the same).
                        match inner {
                            Some(inner) => self.fill(*inner, default.root(), out),
                            None => out.copy(default.root()),
                        }
                        out.counted(&mut open);
                    }
                }
                out.close(open);
            }
            View::Array(items) if node.has_items() => {
                let mut open = out.open_array();
                for (index, item) in items.enumerate() {
                    match node.item(index) {
                        Some(inner) => self.fill(inner, item, out),
                        None => out.copy(item),
                    }
                    out.counted(&mut open);
                }
                out.close(open);
            }
            _ => out.copy(value),
        }
    }
}

/// `int_parsing_size` for the whole float at `index`, located by a walk from the root: a refusal
/// is rare, so the integer walk keeps no path on its way down.
fn oversized_issue(document: &Document, index: u32, loc: &[LocSegment]) -> Issue {
    let mut loc = loc.to_vec();
    let mut value = document.root();
    let holds = |node: NodeRef<'_>| node.span().contains(&index);
    while value.index() != index {
        let inner = match value.view() {
            View::Object(members) => members.into_iter().find(|&(_, member)| holds(member)).map(|(key, member)| (LocSegment::Key(key.to_owned()), member)),
            View::Array(items) => items.enumerate().find(|&(_, item)| holds(item)).map(|(at, item)| (LocSegment::Index(at), item)),
            _ => None,
        };
        let Some((segment, inner)) = inner else { break };
        loc.push(segment);
        value = inner;
    }
    let input = match value.view() {
        View::Float(f) => serde_json::Number::from_f64(f).map_or(Json::Null, Json::Number),
        _ => Json::Null,
    };
    Issue::int_parsing_size(loc, input)
}

/// The first of `rest` (sorted indices, none before `child`) that lie inside `child`; `rest`
/// keeps those after it.
fn take_inside<'w>(rest: &mut &'w [u32], child: NodeRef<'_>) -> &'w [u32] {
    let cut = rest.partition_point(|&at| at < child.span().end);
    let (inside, after) = rest.split_at(cut);
    *rest = after;
    inside
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn filled(schema: Json, value: Json) -> Json {
        let mut document = Document::from_tree(&value);
        Completion::compile(&schema).apply(&mut document, &[]).unwrap();
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
        Completion::compile(&schema).apply(&mut document, &[]).unwrap();
        assert_eq!(document, sent);
        assert_eq!(keys(&document), ["zed", "qty", "inner"]);
    }

    #[test]
    fn sent_members_keep_their_order_and_defaults_follow_in_declaration_order() {
        let schema = json!({"type": "object", "properties": {"d": {"default": 2}, "b": {"default": 1}, "a": {}}});
        let mut document = super::super::json::parse(br#"{"e": 0, "a": 0, "c": 0}"#, 127).unwrap();
        Completion::compile(&schema).apply(&mut document, &[]).unwrap();
        assert_eq!(keys(&document), ["e", "a", "c", "d", "b"]);
    }

    #[test]
    fn schemas_without_defaults_compile_to_nothing() {
        assert!(Completion::compile(&json!({"type": "object", "properties": {"a": {"type": "string"}}})).is_empty());
    }

    /// What a reader sees at `pointer`: the node's kind is the point, not its value.
    fn view_at(document: &Document, pointer: &[&str]) -> String {
        let mut node = document.root();
        for step in pointer {
            node = match step.parse::<usize>() {
                Ok(index) => node.as_array().and_then(|mut items| items.nth(index)),
                Err(_) => node.get(step),
            }
            .unwrap();
        }
        format!("{:?}", node.view())
    }

    fn finished(schema: &Json, body: &str) -> Document {
        let mut document = super::super::json::parse(body.as_bytes(), 127).unwrap();
        Completion::compile(schema).apply(&mut document, &[]).unwrap();
        document
    }

    #[test]
    fn whole_floats_become_integers_where_the_schema_says_integer() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer"},
            "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "either": {"type": ["integer", "number"]},
            "price": {"type": "number"},
            "ns": {"type": "array", "items": {"type": "integer"}},
            "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "number"}]},
            "counts": {"type": "object", "properties": {"fixed": {"type": "number"}}, "additionalProperties": {"type": "integer"}},
            "item": {"anyOf": [{"$ref": "#/$defs/Item"}, {"type": "null"}]},
            "big": {"type": "integer"},
            "low": {"type": "integer"},
            "float": {"type": "number"}},
            "$defs": {"Item": {"type": "object", "properties": {"qty": {"type": "integer"}}}}});
        let document = finished(&schema, r#"{"n": 2.0, "maybe": -3.0, "either": 4.0, "price": 5.0, "ns": [1.0, 2, 3.0],
            "pair": [6.0, 7.0], "counts": {"a": 8.0, "fixed": 9.0}, "item": {"qty": 10.0},
            "big": 1e19, "low": -9.223372036854775808e18, "float": 1e30}"#);
        for (pointer, seen) in [
            (&["n"][..], "Int(2)"),
            (&["maybe"], "Int(-3)"),
            (&["either"], "Float(4.0)"),
            (&["price"], "Float(5.0)"),
            (&["ns", "0"], "Int(1)"),
            (&["ns", "2"], "Int(3)"),
            (&["pair", "0"], "Int(6)"),
            (&["pair", "1"], "Float(7.0)"),
            (&["counts", "a"], "Int(8)"),
            (&["counts", "fixed"], "Float(9.0)"),
            (&["item", "qty"], "Int(10)"),
            (&["big"], "UInt(10000000000000000000)"),
            (&["low"], "Int(-9223372036854775808)"),
            (&["float"], "Float(1e30)"),
        ] {
            assert_eq!(view_at(&document, pointer), seen, "{pointer:?}");
        }
    }

    #[test]
    fn a_whole_float_past_64_bits_where_the_schema_says_integer_is_refused_where_it_is() {
        // Found by reading the README against the code: `1e20` reached Python and Ruby handlers
        // as the float 1e20, where pydantic answers `int_parsing_size`, as the core does for
        // the same number in digits.
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer"},
            "lines": {"type": "array", "items": {"type": "object", "properties": {"qty": {"type": "integer"}}}},
            "price": {"type": "number"}}});
        let mut document = super::super::json::parse(br#"{"price": 1e30, "n": 2.0, "lines": [{"qty": 1.0}, {"qty": -1e19}, {"qty": 1.8446744073709552e19}]}"#, 127).unwrap();
        let refused = Completion::compile(&schema).apply(&mut document, &["body".into()]).unwrap_err();
        let found: Vec<Json> = refused.iter().map(|issue| serde_json::to_value(issue).unwrap()).collect();
        assert_eq!(
            found,
            [
                json!({"type": "int_parsing_size", "loc": ["body", "lines", 1, "qty"], "msg": "Unable to parse input string as an integer, exceeded maximum size", "input": -1e19}),
                json!({"type": "int_parsing_size", "loc": ["body", "lines", 2, "qty"], "msg": "Unable to parse input string as an integer, exceeded maximum size", "input": 1.8446744073709552e19}),
            ]
        );
        // Up to 2^64 an integer node holds it, as it holds the same number in digits.
        let mut fits = super::super::json::parse(br#"{"n": 1.8446744073709550e19}"#, 127).unwrap();
        Completion::compile(&schema).apply(&mut fits, &[]).unwrap();
        assert_eq!(view_at(&fits, &["n"]), "UInt(18446744073709549568)");
    }

    #[test]
    fn recursive_models_and_unions_of_models() {
        let schema = json!({"$ref": "#/$defs/Node", "$defs": {
            "Node": {"type": "object", "properties": {"v": {"type": "integer"}, "next": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}}},
            "A": {"type": "object", "properties": {"x": {"type": "integer"}}},
            "B": {"type": "object", "properties": {"x": {"type": "number"}}}}});
        let document = finished(&schema, r#"{"v": 1.0, "next": {"v": 2.0, "next": {"v": 3.0, "next": null}}}"#);
        assert_eq!(view_at(&document, &["next", "next", "v"]), "Int(3)");
        // Two models could take the object: only validation could choose, so it is left as sent.
        let union = json!({"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}], "$defs": schema["$defs"]});
        assert_eq!(view_at(&finished(&union, r#"{"x": 1.0}"#), &["x"]), "Float(1.0)");
    }

    #[test]
    fn defaults_reach_optional_models_and_dict_values() {
        let schema = json!({"type": "object", "properties": {
            "item": {"anyOf": [{"$ref": "#/$defs/Item"}, {"type": "null"}], "default": null},
            "by_name": {"type": "object", "additionalProperties": {"$ref": "#/$defs/Item"}}},
            "$defs": {"Item": {"type": "object", "properties": {"qty": {"type": "integer", "default": 1}}}}});
        assert_eq!(
            finished(&schema, r#"{"item": {}, "by_name": {"a": {}, "b": {"qty": 2.0}}}"#).to_tree(),
            json!({"item": {"qty": 1}, "by_name": {"a": {"qty": 1}, "b": {"qty": 2}}})
        );
        assert_eq!(finished(&schema, "{}").to_tree(), json!({"item": null}));
    }

    #[test]
    fn all_of_parts_and_a_ref_beside_keywords_finish_the_value_too() {
        // Found beside Fastify: Ajv's useDefaults fills `{"a": 5, "inner": {"d": "dd"}, "b": "x"}`
        // for `{}` here; the core filled nothing.
        let schema = json!({"type": "object", "allOf": [
            {"properties": {"a": {"type": "integer", "default": 5}, "inner": {"type": "object", "default": {}, "properties": {"d": {"default": "dd"}}}}},
            {"properties": {"b": {"type": "string", "default": "x"}}}]});
        assert_eq!(filled(schema.clone(), json!({})), json!({"a": 5, "inner": {"d": "dd"}, "b": "x"}));
        assert_eq!(view_at(&finished(&schema, r#"{"a": 2.0}"#), &["a"]), "Int(2)");
        // A `$ref` with properties of its own beside it, and a reference to a reference.
        let beside = json!({"$ref": "#/$defs/Base", "properties": {"own": {"default": 1}}, "$defs": {
            "Base": {"type": "object", "properties": {"n": {"type": "integer"}, "base": {"default": 0}}},
            "Alias": {"$ref": "#/$defs/Base"}}});
        assert_eq!(filled(beside.clone(), json!({"n": 3})), json!({"n": 3, "own": 1, "base": 0}));
        assert_eq!(view_at(&finished(&beside, r#"{"n": 3.0}"#), &["n"]), "Int(3)");
        let alias = json!({"type": "object", "properties": {"item": {"$ref": "#/$defs/Alias"}}, "$defs": beside["$defs"]});
        assert_eq!(filled(alias, json!({"item": {}})), json!({"item": {"base": 0}}));
        // A model that includes itself through `allOf` ends.
        let recursive = json!({"$ref": "#/$defs/Node", "$defs": {"Node": {"allOf": [{"$ref": "#/$defs/Node"}], "properties": {"v": {"default": 1}, "next": {"$ref": "#/$defs/Node"}}}}});
        assert_eq!(filled(recursive, json!({"next": {}})), json!({"next": {"v": 1}, "v": 1}));
    }

    #[test]
    fn an_inserted_default_gets_the_defaults_inside_it() {
        // Found running Fastify's schema tests: ajv fills `{"inner": {"d": "dd"}}` here.
        let schema = json!({"type": "object", "properties": {"inner": {"type": "object", "default": {}, "properties": {"d": {"default": "dd"}}}}});
        assert_eq!(finished(&schema, "{}").to_tree(), json!({"inner": {"d": "dd"}}));
    }

    #[test]
    fn a_body_without_whole_floats_is_not_walked_for_integers() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        let completion = Completion::compile(&schema);
        assert!(completion.has_integers && !completion.has_defaults);
        let mut document = super::super::json::parse(br#"{"n": 2, "x": 2.5}"#, 127).unwrap();
        assert!(document.whole_floats().is_empty());
        let sent = document.clone();
        completion.apply(&mut document, &[]).unwrap();
        assert_eq!(document, sent);
    }
}
