//! The one JSON representation of request bodies: a body is parsed once into a [`Document`],
//! validated where it lies ([`walk_validator`], else jsonschema through [`schema`]), given its
//! defaults, and each binding builds its native objects by one walk of it. serde_json's tree
//! remains where a typed Rust API wants one ([`Document::to_tree`]) and on cold paths (a failed
//! validation's issues).
//!
//! A document is a tape: one vector of fixed-size nodes in document order, with every string
//! (keys and values) in one text buffer. A container's node records its member count and where
//! its subtree ends, so a reader skips a member in one step. A body is two allocations, where
//! serde_json's tree is one per node, string and B-tree leaf.
//!
//! Why a tape of our own, measured on the json-large workload's 15 KB body (one core, mimalloc,
//! parse and free, one codegen unit; `walk` reads every node once, as a binding does):
//!
//! | representation | parse | walk |
//! |---|---:|---:|
//! | serde_json `Value` | 45.5 µs | 1.8 µs |
//! | sonic-rs `Value` (SIMD) | 8.9 µs | 12.6 µs |
//! | simd-json tape (no DOM) | 14.6 µs | – |
//! | this tape, built by serde_json's parser | 18.6 µs | 0.8 µs |
//!
//! sonic-rs parses fastest but its accessors are not inlined across crates: a request reads the
//! body three times (strictness, validation, the binding), and a sonic-rs build of this engine
//! made Node json-large 9.6% slower. The tape is written by `body::json`: a one-pass scan for
//! bodies it can accept outright (a third cheaper than serde_json's parser), and serde_json's
//! parser for the rest, which stays the judge of what is refused; the two are compared on
//! generated bodies in tests and on every body the fuzz build serves.

pub mod schema;
pub mod walk_validator;

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use std::fmt;

/// A parsed JSON value (see the module documentation for its layout).
#[derive(Clone, Default)]
pub struct Document {
    nodes: Vec<Node>,
    /// Every string's text. A scanned body's begins with the body itself, whose plain strings
    /// are read where they lie ([`Builder::over`]); decoded and built strings follow it.
    text: String,
    /// Where numbers were written as floats with no fractional part (`2.0`), in order: noted
    /// as they are built, so finding them costs no pass over the nodes (see
    /// [`Document::whole_floats`]). Empty, and unallocated, for most bodies.
    whole: Vec<u32>,
    /// Whether a key is `__proto__` or `constructor` (see [`Document::has_prototype_keys`]).
    prototype_keys: bool,
}

/// One tape entry. Offsets are `u32`: a body is read whole into memory within its limit, and a
/// tape whose text could pass 4 GiB is refused when it is built ([`Builder::fits`]).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Node {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str { start: u32, len: u32 },
    /// `len` items follow; the subtree ends before node `end`.
    Array { len: u32, end: u32 },
    /// `len` members follow, each a `Str` key node and then its value.
    Object { len: u32, end: u32 },
}

/// What a node holds, for a reader to match on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum View<'a> {
    Null,
    Bool(bool),
    /// An integer that fits `i64`.
    Int(i64),
    /// An integer above `i64::MAX`.
    UInt(u64),
    Float(f64),
    Str(&'a str),
    Array(Items<'a>),
    Object(Members<'a>),
}

/// A node of a document; copying it is free.
#[derive(Clone, Copy)]
pub struct NodeRef<'a> {
    document: &'a Document,
    at: u32,
}

impl Document {
    /// The top-level value. An empty document (only from `Default`) reads as `null`.
    #[inline]
    pub fn root(&self) -> NodeRef<'_> {
        NodeRef { document: self, at: 0 }
    }

    /// The serde_json tree of this document: for a typed Rust API and cold paths. Costs a tree
    /// build; never on the path of a valid body to a binding.
    pub fn to_tree(&self) -> serde_json::Value {
        self.root().to_tree()
    }

    /// The document of a serde_json tree (schema defaults, `deepObject` parameters).
    pub fn from_tree(tree: &serde_json::Value) -> Document {
        let mut builder = Builder::with_capacity(0);
        builder.tree(tree);
        builder.finish()
    }

    /// Where numbers were sent as floats with no fractional part (`2.0`), in document order:
    /// the only floats a schema's `integer` admits.
    pub fn whole_floats(&self) -> &[u32] {
        &self.whole
    }

    /// Whether an object key is `__proto__` or `constructor`, as the parser noted
    /// ([`Builder::key`]): where prototype keys might be, found without a walk.
    pub fn has_prototype_keys(&self) -> bool {
        self.prototype_keys
    }

    /// Makes the whole float at `index` ([`NodeRef::index`]) the integer it equals, when an
    /// integer node can hold it; false when it cannot (a fraction, or beyond 64 bits), and it
    /// stays a float.
    pub(crate) fn make_integer(&mut self, index: u32) -> bool {
        const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
        let Some(node) = self.nodes.get_mut(index as usize) else { return false };
        let Node::Float(f) = *node else { return false };
        if f.fract() != 0.0 {
            return false;
        }
        if (-TWO_POW_63..TWO_POW_63).contains(&f) {
            *node = Node::Int(f as i64);
        } else if (0.0..2.0 * TWO_POW_63).contains(&f) {
            *node = Node::UInt(f as u64);
        } else {
            return false;
        }
        true
    }

    /// By reference: readers look at one field of a node. Returning a copy of the whole 16
    /// bytes, some builds (`--config=dev`) sent every step of a member walk through the stack:
    /// Rust json-large 83 → 67 CPU-µs there. The shipped build, measured with the scan that
    /// came next (66 → 58), gained about what the scan alone gave the dev build.
    #[inline]
    fn node(&self, at: u32) -> &Node {
        self.nodes.get(at as usize).unwrap_or(&Node::Null)
    }

    #[inline]
    fn str_at(&self, start: u32, len: u32) -> &str {
        &self.text[start as usize..(start + len) as usize]
    }

    /// The index just past the value at `at`.
    #[inline]
    fn skip(&self, at: u32) -> u32 {
        match *self.node(at) {
            Node::Array { end, .. } | Node::Object { end, .. } => end,
            _ => at + 1,
        }
    }
}

impl<'a> NodeRef<'a> {
    #[inline]
    pub fn view(self) -> View<'a> {
        let document = self.document;
        match *document.node(self.at) {
            Node::Null => View::Null,
            Node::Bool(b) => View::Bool(b),
            Node::Int(i) => View::Int(i),
            Node::UInt(u) => View::UInt(u),
            Node::Float(f) => View::Float(f),
            Node::Str { start, len } => View::Str(document.str_at(start, len)),
            Node::Array { len, .. } => View::Array(Items { document, next: self.at + 1, remaining: len }),
            Node::Object { len, .. } => View::Object(Members { document, next: self.at + 1, remaining: len }),
        }
    }

    #[inline]
    pub fn as_str(self) -> Option<&'a str> {
        match self.view() {
            View::Str(s) => Some(s),
            _ => None,
        }
    }

    #[inline]
    pub fn as_object(self) -> Option<Members<'a>> {
        match self.view() {
            View::Object(members) => Some(members),
            _ => None,
        }
    }

    #[inline]
    pub fn as_array(self) -> Option<Items<'a>> {
        match self.view() {
            View::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The value of member `key`, when this is an object that has it.
    #[inline]
    pub fn get(self, key: &str) -> Option<NodeRef<'a>> {
        self.as_object()?.value_of(key)
    }

    /// Where this node sits in its document: unique among the nodes of one document.
    #[inline]
    pub(crate) fn index(self) -> u32 {
        self.at
    }

    /// The indices this node's subtree spans: its own and every node below it.
    #[inline]
    pub(crate) fn span(self) -> std::ops::Range<u32> {
        self.at..self.document.skip(self.at)
    }

    pub fn to_tree(self) -> serde_json::Value {
        use serde_json::Value as J;
        match self.view() {
            View::Null => J::Null,
            View::Bool(b) => J::Bool(b),
            View::Int(i) => J::from(i),
            View::UInt(u) => J::from(u),
            View::Float(f) => serde_json::Number::from_f64(f).map_or(J::Null, J::Number),
            View::Str(s) => J::String(s.to_owned()),
            View::Array(items) => J::Array(items.map(NodeRef::to_tree).collect()),
            View::Object(members) => J::Object(members.map(|(key, value)| (key.to_owned(), value.to_tree())).collect()),
        }
    }
}

/// An array's items in order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Items<'a> {
    document: &'a Document,
    next: u32,
    remaining: u32,
}

impl<'a> Iterator for Items<'a> {
    type Item = NodeRef<'a>;

    #[inline]
    fn next(&mut self) -> Option<NodeRef<'a>> {
        if self.remaining == 0 {
            return None;
        }
        let item = NodeRef { document: self.document, at: self.next };
        self.next = self.document.skip(self.next);
        self.remaining -= 1;
        Some(item)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining as usize, Some(self.remaining as usize))
    }
}

impl ExactSizeIterator for Items<'_> {}

/// An object's members in the order they were sent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Members<'a> {
    document: &'a Document,
    next: u32,
    remaining: u32,
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, NodeRef<'a>);

    #[inline]
    fn next(&mut self) -> Option<(&'a str, NodeRef<'a>)> {
        let document = self.document;
        let (key, value) = self.advance()?;
        let key = match key {
            Node::Str { start, len } => document.str_at(start, len),
            _ => "",
        };
        Some((key, value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining as usize, Some(self.remaining as usize))
    }
}

impl ExactSizeIterator for Members<'_> {}

impl<'a> Members<'a> {
    /// The next member with its key as bytes: [`Iterator::next`] without making a `&str` of
    /// the key (a char-boundary check), for readers that only compare keys.
    #[inline]
    pub fn next_raw(&mut self) -> Option<(&'a [u8], NodeRef<'a>)> {
        let document = self.document;
        let (key, value) = self.advance()?;
        let key = match key {
            Node::Str { start, len } => document.text.as_bytes().get(start as usize..(start + len) as usize).unwrap_or_default(),
            _ => &[],
        };
        Some((key, value))
    }

    /// Steps past the next member: its key's node and its value.
    #[inline]
    fn advance(&mut self) -> Option<(Node, NodeRef<'a>)> {
        if self.remaining == 0 {
            return None;
        }
        let document = self.document;
        let key = *document.node(self.next);
        let value_at = self.next + 1;
        self.next = document.skip(value_at);
        self.remaining -= 1;
        Some((key, NodeRef { document, at: value_at }))
    }

    /// The keys alone, in order (restartable: the iterator is `Copy`).
    #[inline]
    pub fn keys(self) -> impl Iterator<Item = &'a str> + Clone {
        self.map(|(key, _)| key)
    }

    /// The value of the first member named `key`, from here on. Validation asks this once per
    /// declared property of every object, so it compares raw key bytes, length first, without
    /// making a `&str` of each key it passes.
    #[inline]
    pub fn value_of(self, key: &str) -> Option<NodeRef<'a>> {
        let Members { document, mut next, remaining } = self;
        let text = document.text.as_bytes();
        for _ in 0..remaining {
            let value_at = next + 1;
            if let Node::Str { start, len } = *document.node(next) {
                if len as usize == key.len() && text.get(start as usize..(start + len) as usize) == Some(key.as_bytes()) {
                    return Some(NodeRef { document, at: value_at });
                }
            }
            next = document.skip(value_at);
        }
        None
    }
}


/// Writes a document's tape, node by node. Containers are opened before their contents and
/// closed after them; the caller keeps what [`Builder::open`] returned.
pub struct Builder {
    document: Document,
}

/// Where a string lies in a tape's text.
#[derive(Clone, Copy, Debug, Default)]
pub struct Span {
    start: u32,
    len: u32,
}

/// An open container: where its node is and how many values it has so far.
#[derive(Debug)]
pub struct Open {
    at: u32,
    len: u32,
}

impl Open {
    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Builder {
    /// `bytes`: the size of the JSON text this tape will hold, to size its buffers once (a
    /// node per 8 bytes is about what record-shaped bodies need).
    pub fn with_capacity(bytes: usize) -> Builder {
        Builder { document: Document { nodes: Vec::with_capacity(bytes / 8 + 1), text: String::with_capacity(bytes), whole: Vec::new(), prototype_keys: false } }
    }

    /// A tape for the JSON `source`, whose text begins with a copy of it, so that a string with
    /// no escapes is recorded where it lies ([`Builder::str_of_source`]) instead of copied on its
    /// own. One copy of the body replaces one per string: served Rust json-large (1,177
    /// strings) went from 979,565 to 934,503 instructions a request (callgrind, 600 requests),
    /// the strings' part of the scan from 151,947 to 107,221.
    pub fn over(source: &str) -> Builder {
        let mut builder = Builder::with_capacity(source.len());
        builder.document.text.push_str(source);
        builder
    }

    /// Whether the offsets of a tape for `bytes` of JSON text fit its `u32`s: its text holds
    /// the body ([`Builder::over`]) and at most as much again in decoded strings, each shorter
    /// than the escaped text it came from.
    pub fn fits(bytes: usize) -> bool {
        bytes < (u32::MAX / 2) as usize
    }

    pub fn null(&mut self) {
        self.document.nodes.push(Node::Null);
    }

    pub fn bool(&mut self, value: bool) {
        self.document.nodes.push(Node::Bool(value));
    }

    pub fn int(&mut self, value: i64) {
        self.document.nodes.push(Node::Int(value));
    }

    pub fn uint(&mut self, value: u64) {
        match i64::try_from(value) {
            Ok(small) => self.int(small),
            Err(_) => self.document.nodes.push(Node::UInt(value)),
        }
    }

    pub fn float(&mut self, value: f64) {
        if value.fract() == 0.0 {
            self.document.whole.push(self.document.nodes.len() as u32);
        }
        self.document.nodes.push(Node::Float(value));
    }

    /// Notes the key just written at `span` when it is one a JavaScript reader must be wary of
    /// (see [`Document::has_prototype_keys`]): a length compare per key.
    #[inline]
    pub fn key(&mut self, span: Span) {
        if (span.len == 9 || span.len == 11) && matches!(self.bytes(span), b"__proto__" | b"constructor") {
            self.document.prototype_keys = true;
        }
    }

    /// A string value, or the key of the next member of an open object; returns where its text
    /// lies (to compare keys).
    #[inline]
    pub fn str(&mut self, value: &str) -> Span {
        let span = Span { start: self.document.text.len() as u32, len: value.len() as u32 };
        self.document.text.push_str(value);
        self.document.nodes.push(Node::Str { start: span.start, len: span.len });
        span
    }

    /// A string with no escapes at `start..start + len` of the source this tape was made
    /// [`over`](Builder::over): recorded where it lies. Both ends must be character boundaries
    /// of the source (the bytes around a plain string are ASCII quotes).
    #[inline]
    pub fn str_of_source(&mut self, start: usize, len: usize) -> Span {
        debug_assert!(self.document.text.is_char_boundary(start) && self.document.text.is_char_boundary(start + len));
        let span = Span { start: start as u32, len: len as u32 };
        self.document.nodes.push(Node::Str { start: span.start, len: span.len });
        span
    }

    pub fn open_array(&mut self) -> Open {
        self.open(Node::Array { len: 0, end: 0 })
    }

    pub fn open_object(&mut self) -> Open {
        self.open(Node::Object { len: 0, end: 0 })
    }

    fn open(&mut self, node: Node) -> Open {
        let at = self.document.nodes.len() as u32;
        self.document.nodes.push(node);
        Open { at, len: 0 }
    }

    /// Counts one more item (array) or member (object, after its key and value).
    pub fn counted(&mut self, open: &mut Open) {
        open.len += 1;
    }

    pub fn close(&mut self, open: Open) {
        let end = self.document.nodes.len() as u32;
        let node = &mut self.document.nodes[open.at as usize];
        *node = match node {
            Node::Array { .. } => Node::Array { len: open.len, end },
            _ => Node::Object { len: open.len, end },
        };
    }

    /// The index of the node written last (a key, just after [`Builder::str`]).
    pub fn last(&self) -> u32 {
        self.document.nodes.len().saturating_sub(1) as u32
    }

    /// Where the string of the node at `index` lies in the text (empty when it is not a
    /// string): a handle that stays valid as the tape grows.
    #[inline]
    pub fn span_at(&self, index: u32) -> Span {
        match *self.document.node(index) {
            Node::Str { start, len } => Span { start, len },
            _ => Span { start: 0, len: 0 },
        }
    }

    #[inline]
    pub fn text(&self, span: Span) -> &str {
        self.document.str_at(span.start, span.len)
    }

    /// The bytes of `text(span)`: comparing keys needs no character boundaries checked.
    #[inline]
    pub fn bytes(&self, span: Span) -> &[u8] {
        self.document.text.as_bytes().get(span.start as usize..(span.start + span.len) as usize).unwrap_or_default()
    }

    /// Copies a value of another document.
    pub fn copy(&mut self, node: NodeRef<'_>) {
        match node.view() {
            View::Null => self.null(),
            View::Bool(b) => self.bool(b),
            View::Int(i) => self.int(i),
            View::UInt(u) => self.uint(u),
            View::Float(f) => self.float(f),
            View::Str(s) => {
                self.str(s);
            }
            View::Array(items) => {
                let mut open = self.open_array();
                for item in items {
                    self.copy(item);
                    self.counted(&mut open);
                }
                self.close(open);
            }
            View::Object(members) => {
                let mut open = self.open_object();
                for (key, value) in members {
                    self.str(key);
                    self.copy(value);
                    self.counted(&mut open);
                }
                self.close(open);
            }
        }
    }

    /// Writes a serde_json tree.
    pub fn tree(&mut self, tree: &serde_json::Value) {
        use serde_json::Value as J;
        match tree {
            J::Null => self.null(),
            J::Bool(b) => self.bool(*b),
            J::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => self.int(i),
                (None, Some(u)) => self.uint(u),
                _ => self.float(n.as_f64().unwrap_or(f64::NAN)),
            },
            J::String(s) => {
                self.str(s);
            }
            J::Array(items) => {
                let mut open = self.open_array();
                for item in items {
                    self.tree(item);
                    self.counted(&mut open);
                }
                self.close(open);
            }
            J::Object(map) => {
                let mut open = self.open_object();
                for (key, value) in map {
                    self.str(key);
                    self.tree(value);
                    self.counted(&mut open);
                }
                self.close(open);
            }
        }
    }

    pub fn finish(self) -> Document {
        self.document
    }
}

impl Serialize for NodeRef<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.view() {
            View::Null => serializer.serialize_unit(),
            View::Bool(b) => serializer.serialize_bool(b),
            View::Int(i) => serializer.serialize_i64(i),
            View::UInt(u) => serializer.serialize_u64(u),
            View::Float(f) => serializer.serialize_f64(f),
            View::Str(s) => serializer.serialize_str(s),
            View::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&item)?;
                }
                seq.end()
            }
            View::Object(members) => {
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (key, value) in members {
                    map.serialize_entry(key, &value)?;
                }
                map.end()
            }
        }
    }
}

/// Two documents are equal when their values are: the same nodes in the same order, strings
/// equal as text wherever each tape keeps it (a scanned body's text holds the body too).
impl PartialEq for Document {
    fn eq(&self, other: &Document) -> bool {
        self.nodes.len() == other.nodes.len()
            && self.nodes.iter().zip(&other.nodes).all(|(mine, theirs)| match (*mine, *theirs) {
                (Node::Str { start, len }, Node::Str { start: their_start, len: their_len }) => {
                    self.str_at(start, len) == other.str_at(their_start, their_len)
                }
                (mine, theirs) => mine == theirs,
            })
    }
}

impl Serialize for Document {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.root().serialize(serializer)
    }
}

impl fmt::Debug for Document {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Document({})", serde_json::to_string(self).unwrap_or_default())
    }
}

impl fmt::Debug for NodeRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NodeRef({})", serde_json::to_string(self).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tree_round_trips_with_its_numbers_kept() {
        let tree = json!({"id": 18446744073709551615u64, "neg": -9223372036854775808i64, "f": 1.5, "s": "é", "a": [null, true, [], {}]});
        let document = Document::from_tree(&tree);
        assert_eq!(document.to_tree(), tree);
        assert_eq!(serde_json::to_value(&document).unwrap(), tree);
    }

    #[test]
    fn readers_skip_whole_subtrees() {
        let tree = json!({"a": {"deep": [1, [2, [3]], {"x": 4}]}, "b": [5, 6], "c": "end"});
        let document = Document::from_tree(&tree);
        let keys: Vec<&str> = document.root().as_object().unwrap().keys().collect();
        assert_eq!(keys, ["a", "b", "c"]);
        assert_eq!(document.root().get("c").and_then(NodeRef::as_str), Some("end"));
        let b: Vec<_> = document.root().get("b").unwrap().as_array().unwrap().map(|item| item.view()).collect();
        assert_eq!(b, [View::Int(5), View::Int(6)]);
        assert!(document.root().get("missing").is_none());
        assert!(document.root().get("c").unwrap().get("c").is_none(), "a string has no members");
    }

    #[test]
    fn integers_above_i64_keep_their_own_kind() {
        let document = Document::from_tree(&json!([9223372036854775807u64, 9223372036854775808u64]));
        let items: Vec<_> = document.root().as_array().unwrap().map(NodeRef::view).collect();
        assert_eq!(items, [View::Int(i64::MAX), View::UInt(9223372036854775808)]);
    }

    #[test]
    fn a_tape_over_its_source_reads_plain_strings_where_they_lie() {
        // Equality keeps member order, so the keys are in the order `json!` below writes them.
        let source = r#"{"decoded": "caf\u00e9", "plain": "text"}"#;
        let at = |needle: &str| source.find(needle).unwrap();
        let mut builder = Builder::over(source);
        let mut open = builder.open_object();
        builder.str_of_source(at("decoded"), "decoded".len());
        builder.str("café");
        builder.counted(&mut open);
        builder.str_of_source(at("plain"), "plain".len());
        builder.str_of_source(at("text"), "text".len());
        builder.counted(&mut open);
        builder.close(open);
        let document = builder.finish();
        assert_eq!(document.text.len(), source.len() + "café".len(), "only the decoded string is a copy");
        assert_eq!(document.to_tree(), json!({"decoded": "café", "plain": "text"}));
        // Equal by value to the same body built elsewhere, and not to a different one.
        assert_eq!(document, Document::from_tree(&json!({"decoded": "café", "plain": "text"})));
        assert_ne!(document, Document::from_tree(&json!({"decoded": "cafe", "plain": "text"})));
        assert_ne!(document, Document::from_tree(&json!({"plain": "text"})));
    }

    #[test]
    fn an_empty_document_reads_as_null() {
        assert_eq!(Document::default().root().view(), View::Null);
        assert_eq!(Document::default().to_tree(), serde_json::Value::Null);
    }
}
