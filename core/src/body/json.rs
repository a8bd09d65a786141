//! JSON bodies, parsed strictly and located the way FastAPI locates problems.
//!
//! The body becomes the core's [`Document`] (a tape, see `crate::document`). A body is first
//! read by a one-pass scan ([`scan`]) that accepts only what it has checked completely; any
//! other body, so every refused one, is parsed by serde_json's parser, which decides what is
//! refused and where. serde_json's own `Value` would silently change what a client sent in
//! three ways; this parser refuses them, each as a 422 issue with a location:
//! * a key repeated in one object (`{"id": -5, "id": 7}` would pass `minimum: 1` as 7):
//!   `json_duplicate_key` at the key;
//! * an integer that does not fit 64 bits (serde_json rounds it to a float, so a 30-digit id
//!   arrived as `1.2345678901234568e+29`): `int_parsing_size` at the number;
//! * nesting deeper than the app's `max_json_depth`: `json_invalid` at the byte offset, as any
//!   other malformed JSON.
//!
//! Where the app asks (`refuse_prototype_keys`, Node's default), a `__proto__` key, or a
//! `constructor` key whose object has a `prototype`, is `json_forbidden_key` at the key
//! ([`prototype_key`]): the parser notes such keys as it writes them, so a body without one
//! pays a length compare per key and no walk.
//!
//! Cost of the strict parse: serde_json's scan plus one tape node per value and the string
//! bytes copied once into the tape's text (json-large: 18.6 µs where serde_json's `Value` took
//! 45.5 µs; the scan takes two thirds of the strict parse's time). A key is
//! checked against the keys before it in its object: pairwise up to 16 members (cheaper than
//! hashing short keys), through a set beyond that. A float that could be a rounded integer
//! (integral and beyond ±2^63) is rare; only then is the text scanned again to tell `1e20`
//! from `100000000000000000000`.

mod scan;

use crate::document::{Builder, Document, Span};
use crate::problem::{Issue, LocSegment};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{json, Value as Json};
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::fmt;

/// serde_json refuses nesting at 128 levels on its own; the app's limit can only be lower.
pub const MAX_DEPTH: usize = 127;

/// A refusal found while building the value; its path is filled in as the error unwinds.
#[derive(Debug)]
enum Refusal {
    DuplicateKey(String),
    TooDeep,
}

struct Shared {
    max_depth: usize,
    refusal: RefCell<Option<(Refusal, Vec<LocSegment>)>>,
    maybe_rounded: Cell<bool>,
}

/// Up to this many members an object's keys are compared pairwise; beyond, through a set.
const PAIRWISE_KEYS: usize = 16;

/// The keys of one object read so far, to refuse a repeated one (both parsers use it).
struct SeenKeys {
    /// The first keys: each one's fingerprint ([`fingerprint`]) and where it lies in the tape's
    /// text. Only keys of equal fingerprints have their text compared.
    firsts: [(u64, Span); PAIRWISE_KEYS],
    /// Every key, once the object has more than `PAIRWISE_KEYS`.
    set: Option<HashSet<String>>,
}

/// A key's length with its first and last bytes: the keys of one object rarely share all
/// three (`name` and `gift` share a length, `name` and `notes` a first letter). Compared first,
/// it spares the text comparisons (a `memcmp` call for each pair of equal length). With the
/// check inlined into both parsers' member loops (it was a call per key, the set's code out of
/// line now), json-medium's scan went from 40,116 instructions to 38,679, json-large's from
/// 397,349 to 382,087 (callgrind, 1,000 parses each).
#[inline]
fn fingerprint(key: &[u8]) -> u64 {
    let (first, last) = (key.first().copied().unwrap_or(0), key.last().copied().unwrap_or(0));
    (key.len() as u64) << 16 | u64::from(first) << 8 | u64::from(last)
}

impl SeenKeys {
    fn new() -> Self {
        SeenKeys { firsts: [(0, Span::default()); PAIRWISE_KEYS], set: None }
    }

    /// Whether the key at `span`, member number `count` of its object, repeats an earlier one;
    /// it is remembered either way.
    #[inline(always)]
    fn repeats(&mut self, builder: &Builder, count: usize, span: Span) -> bool {
        if count >= PAIRWISE_KEYS {
            return self.repeats_in_set(builder, span);
        }
        let key = builder.bytes(span);
        let print = fingerprint(key);
        self.firsts[count] = (print, span);
        self.firsts[..count].iter().any(|&(earlier, at)| earlier == print && builder.bytes(at) == key)
    }

    #[cold]
    #[inline(never)]
    fn repeats_in_set(&mut self, builder: &Builder, span: Span) -> bool {
        let firsts = &self.firsts;
        let set = self.set.get_or_insert_with(|| firsts.iter().map(|&(_, earlier)| builder.text(earlier).to_owned()).collect());
        !set.insert(builder.text(span).to_owned())
    }
}

pub fn parse(bytes: &[u8], max_depth: usize) -> Result<Document, Issue> {
    if !Builder::fits(bytes.len()) {
        return Err(Issue::new("json_invalid", vec![LocSegment::Key("body".into())], "JSON decode error", json!({}))
            .with_ctx(json!({"error": "a JSON body must be under 2 GiB"})));
    }
    let max_depth = max_depth.min(MAX_DEPTH);
    // One UTF-8 check of the whole body is cheaper than a check of every string.
    if let Ok(text) = std::str::from_utf8(bytes) {
        if let Some(document) = scan::scan(text, max_depth) {
            // Compared as text too: `==` on floats calls -0.0 and 0.0 equal.
            #[cfg(fuzzing)]
            assert_eq!(
                Ok(format!("{document:?}")),
                parse_strict(bytes, max_depth).map(|strict| format!("{strict:?}")).map_err(|_| "refused"),
                "the scan and the strict parse differ"
            );
            return Ok(document);
        }
    }
    parse_strict(bytes, max_depth)
}

/// serde_json's strict parse: the judge of every body the scan leaves to it.
fn parse_strict(bytes: &[u8], max_depth: usize) -> Result<Document, Issue> {
    let shared = Shared { max_depth, refusal: RefCell::new(None), maybe_rounded: Cell::new(false) };
    let mut builder = Builder::with_capacity(bytes.len());
    let seed = Strict { shared: &shared, builder: &mut builder, depth: 0 };
    // A body that is not UTF-8 is parsed from bytes, to locate the problem.
    let parsed = match std::str::from_utf8(bytes) {
        Ok(text) => {
            let mut deserializer = serde_json::Deserializer::from_str(text);
            seed.deserialize(&mut deserializer).and_then(|value| deserializer.end().map(|()| value))
        }
        Err(_) => {
            let mut deserializer = serde_json::Deserializer::from_slice(bytes);
            seed.deserialize(&mut deserializer).and_then(|value| deserializer.end().map(|()| value))
        }
    };
    match parsed {
        Ok(()) => {
            if shared.maybe_rounded.get() {
                if let Some(loc) = oversized_integer(bytes) {
                    return Err(Issue::int_parsing_size(loc.0, Json::String(loc.1)));
                }
            }
            Ok(builder.finish())
        }
        Err(error) => Err(match shared.refusal.into_inner() {
            Some((Refusal::DuplicateKey(key), mut path)) => {
                path.push(LocSegment::Key("body".into()));
                path.reverse();
                Issue::new("json_duplicate_key", path, format!("Duplicate key '{key}' in a JSON object"), Json::String(key))
            }
            Some((Refusal::TooDeep, _)) => invalid(bytes, &error, format!("nesting deeper than {} levels", shared.max_depth)),
            None => {
                let message = error.to_string();
                // serde_json appends " at line L column C"; the offset says the same more precisely.
                let reason = message.split(" at line ").next().unwrap_or(&message).to_owned();
                if reason == "recursion limit exceeded" {
                    // serde_json's own limit, one level past the deepest the app may allow.
                    return Err(invalid(bytes, &error, format!("nesting deeper than {} levels", shared.max_depth)));
                }
                // An integer too long even for a float (some 310 digits) is past 64 bits too:
                // the same refusal as a shorter one, not a decode error at its end (found by a
                // differential run of the JSONTestSuite corpus and its variants).
                if reason == "number out of range" {
                    if let Some((loc, text)) = oversized_integer(bytes) {
                        return Err(Issue::int_parsing_size(loc, Json::String(text)));
                    }
                }
                invalid(bytes, &error, reason)
            }
        }),
    }
}

fn invalid(bytes: &[u8], error: &serde_json::Error, reason: String) -> Issue {
    let offset = if error.is_eof() {
        // Input ended early: the error is at the end, where the next value was expected.
        bytes.len()
    } else {
        let mut offset = byte_offset(bytes, error.line(), error.column());
        if reason == "expected ident" {
            // A bad literal (`tea`, `nul!`): serde_json points at the first wrong letter,
            // Python's json module (so FastAPI) at the start of the value.
            while offset > 0 && bytes[offset - 1].is_ascii_alphabetic() {
                offset -= 1;
            }
        }
        offset
    };
    // FastAPI's location is Python's, an index into the decoded text: characters, not bytes
    // (found by an attack probe: after "éééé" the byte offset was 4 past the character).
    let offset = bytes[..offset.min(bytes.len())].iter().filter(|&&b| !(0x80..0xC0).contains(&b)).count();
    Issue::new("json_invalid", vec![LocSegment::Key("body".into()), LocSegment::Index(offset)], "JSON decode error", json!({}))
        .with_ctx(json!({"error": reason}))
}

/// Writes one value (and everything inside it) to the tape, one nesting level at a time.
struct Strict<'a> {
    shared: &'a Shared,
    builder: &'a mut Builder,
    depth: usize,
}

impl Strict<'_> {
    fn refuse<E: de::Error>(&self, refusal: Refusal) -> E {
        *self.shared.refusal.borrow_mut() = Some((refusal, Vec::new()));
        E::custom("refused")
    }

    /// Adds this level's segment to the location of a refusal unwinding through it.
    fn locate(&self, segment: impl FnOnce() -> LocSegment) {
        if let Some((_, path)) = self.shared.refusal.borrow_mut().as_mut() {
            path.push(segment());
        }
    }

    fn nested(&mut self) -> Strict<'_> {
        Strict { shared: self.shared, builder: &mut *self.builder, depth: self.depth + 1 }
    }
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<(), E> {
        self.builder.bool(v);
        Ok(())
    }

    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        self.builder.int(v);
        Ok(())
    }

    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        self.builder.uint(v);
        Ok(())
    }

    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        // serde_json hands an integer too large for 64 bits over as this float.
        if v.fract() == 0.0 && v.abs() >= 9.223_372_036_854_775e18 {
            self.shared.maybe_rounded.set(true);
        }
        self.builder.float(v);
        Ok(())
    }

    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.builder.str(v);
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.builder.null();
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        if self.depth >= self.shared.max_depth {
            return Err(self.refuse(Refusal::TooDeep));
        }
        let mut open = self.builder.open_array();
        loop {
            match seq.next_element_seed(self.nested()) {
                Ok(Some(())) => self.builder.counted(&mut open),
                Ok(None) => {
                    self.builder.close(open);
                    return Ok(());
                }
                Err(error) => {
                    let index = open.len();
                    self.locate(|| LocSegment::Index(index));
                    return Err(error);
                }
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut access: A) -> Result<(), A::Error> {
        if self.depth >= self.shared.max_depth {
            return Err(self.refuse(Refusal::TooDeep));
        }
        let mut open = self.builder.open_object();
        let mut seen = SeenKeys::new();
        while let Some(()) = access.next_key_seed(Key { builder: &mut *self.builder })? {
            let key_at = self.builder.last();
            if let Err(error) = access.next_value_seed(self.nested()) {
                let key = self.builder.text(self.builder.span_at(key_at)).to_owned();
                self.locate(|| LocSegment::Key(key));
                return Err(error);
            }
            let span = self.builder.span_at(key_at);
            self.builder.key(span);
            if seen.repeats(self.builder, open.len(), span) {
                let key = self.builder.text(span).to_owned();
                let error = self.refuse(Refusal::DuplicateKey(key.clone()));
                self.locate(|| LocSegment::Key(key));
                return Err(error);
            }
            self.builder.counted(&mut open);
        }
        self.builder.close(open);
        Ok(())
    }
}

/// An object's key, written to the tape as it is read (no `String` per key).
struct Key<'a> {
    builder: &'a mut Builder,
}

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.builder.str(v);
        Ok(())
    }
}

/// The first `__proto__` key, or `constructor` key holding an object with a `prototype`, in a
/// document whose parser noted one ([`Document::has_prototype_keys`]), as an issue at the key.
pub fn prototype_key(document: &Document) -> Option<Issue> {
    fn find(node: crate::document::NodeRef<'_>, path: &mut Vec<LocSegment>) -> Option<String> {
        use crate::document::View;
        match node.view() {
            View::Object(members) => {
                for (key, value) in members {
                    let forbidden = key == "__proto__" || (key == "constructor" && value.get("prototype").is_some());
                    path.push(LocSegment::Key(key.to_owned()));
                    if forbidden {
                        return Some(key.to_owned());
                    }
                    if let Some(found) = find(value, path) {
                        return Some(found);
                    }
                    path.pop();
                }
                None
            }
            View::Array(items) => {
                for (index, item) in items.enumerate() {
                    path.push(LocSegment::Index(index));
                    if let Some(found) = find(item, path) {
                        return Some(found);
                    }
                    path.pop();
                }
                None
            }
            _ => None,
        }
    }
    if !document.has_prototype_keys() {
        return None;
    }
    let mut path = vec![LocSegment::Key("body".into())];
    let key = find(document.root(), &mut path)?;
    Some(Issue::new("json_forbidden_key", path, format!("Forbidden key '{key}' in a JSON object"), Json::String(key)))
}

/// The location and text of the first integer literal in `bytes` (JSON up to its first error)
/// that does not fit in 64 bits, if any.
fn oversized_integer(bytes: &[u8]) -> Option<(Vec<LocSegment>, String)> {
    enum Frame {
        Object(Option<String>),
        Array(usize),
    }
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    let mut pending_key: Option<String> = None;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => {
                stack.push(Frame::Object(None));
                i += 1;
            }
            b'[' => {
                stack.push(Frame::Array(0));
                i += 1;
            }
            b'}' | b']' => {
                stack.pop();
                i += 1;
            }
            b',' => {
                if let Some(Frame::Array(n)) = stack.last_mut() {
                    *n += 1;
                }
                i += 1;
            }
            b':' => {
                if let Some(Frame::Object(key)) = stack.last_mut() {
                    *key = pending_key.take();
                }
                i += 1;
            }
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                // A string right after `{` or `,` in an object is a key.
                let text = &bytes[start..i.min(bytes.len())];
                pending_key = serde_json::from_slice::<String>(text).ok();
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len() && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                    i += 1;
                }
                let literal = &bytes[start..i];
                let integral = !literal.iter().any(|b| matches!(b, b'.' | b'e' | b'E'));
                let text = String::from_utf8_lossy(literal).into_owned();
                if integral && text.parse::<i64>().is_err() && text.parse::<u64>().is_err() {
                    let mut loc = vec![LocSegment::Key("body".into())];
                    for frame in &stack {
                        match frame {
                            Frame::Object(Some(key)) => loc.push(LocSegment::Key(key.clone())),
                            Frame::Object(None) => {}
                            Frame::Array(n) => loc.push(LocSegment::Index(*n)),
                        }
                    }
                    return Some((loc, text));
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// serde_json reports 1-based line and column; turn them into a 0-based byte offset.
fn byte_offset(bytes: &[u8], line: usize, column: usize) -> usize {
    let line_start: usize = bytes
        .split(|b| *b == b'\n')
        .take(line.saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum();
    (line_start + column.saturating_sub(1)).min(bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(input: &str) -> serde_json::Value {
        serde_json::to_value(parse(input.as_bytes(), MAX_DEPTH).unwrap_err().loc).unwrap()
    }

    #[test]
    fn malformed_json_is_located() {
        assert_eq!(loc("{\"a\": }"), json!(["body", 6]));
        assert_eq!(loc("{\n  \"a\": 1,\n  x\n}"), json!(["body", 14]));
    }

    #[test]
    fn a_bad_literal_is_located_at_its_start() {
        assert_eq!(loc("{\"item\": tea}"), json!(["body", 9]));
        assert_eq!(loc("[1, nul!]"), json!(["body", 4]));
        assert_eq!(loc("[True]"), json!(["body", 1]));
    }

    #[test]
    fn invalid_utf8_is_located_in_the_string() {
        let mut bytes = b"{\"a\": \"ab".to_vec();
        bytes.extend_from_slice(&[0xff, b'"', b'}']);
        let issue = parse(&bytes, MAX_DEPTH).unwrap_err();
        assert_eq!(serde_json::to_value(issue.loc).unwrap(), json!(["body", 9]));
        assert!(parse("{\"a\": \"\u{e9}\"}".as_bytes(), MAX_DEPTH).is_ok());
    }

    #[test]
    fn truncated_json_points_at_the_end() {
        assert_eq!(loc("{\"a\": [1, 2"), json!(["body", 11]));
    }

    fn issue(input: &str, depth: usize) -> serde_json::Value {
        serde_json::to_value(parse(input.as_bytes(), depth).unwrap_err()).unwrap()
    }

    #[test]
    fn prototype_keys_are_found_where_they_are_however_they_are_written() {
        let found = |body: &str| prototype_key(&parse(body.as_bytes(), MAX_DEPTH).unwrap()).map(|issue| serde_json::to_value(issue).unwrap());
        let proto = found(r#"{"a": [1, {"__proto__": {"isAdmin": true}}]}"#).unwrap();
        assert_eq!((&proto["type"], &proto["loc"]), (&json!("json_forbidden_key"), &json!(["body", "a", 1, "__proto__"])));
        // Escaped, and noted by serde_json's strict parse as by the scan.
        assert!(found(r#"{"\u005f_proto__": {}}"#).is_some());
        assert!(parse_strict(br#"{"n": 1, "__proto__": {}}"#, MAX_DEPTH).unwrap().has_prototype_keys());
        let constructor = found(r#"{"constructor": {"prototype": {"x": 1}}}"#).unwrap();
        assert_eq!(constructor["loc"], json!(["body", "constructor"]));
        for harmless in [r#"{"constructor": "Object"}"#, r#"{"proto": 1, "__proto": 2}"#, r#"["__proto__"]"#] {
            assert!(found(harmless).is_none(), "{harmless}");
        }
        assert!(!parse(br#"{"name": "__proto__"}"#, MAX_DEPTH).unwrap().has_prototype_keys(), "a value is no key");
    }

    #[test]
    fn a_repeated_key_is_refused_where_it_repeats() {
        let found = issue(r#"{"user": {"id": -5, "id": 7}}"#, MAX_DEPTH);
        assert_eq!(found["type"], "json_duplicate_key");
        assert_eq!(found["loc"], json!(["body", "user", "id"]));
        assert_eq!(found["input"], "id");
        let found = issue(r#"[{"a": 1}, {"b": 1, "b": 2}]"#, MAX_DEPTH);
        assert_eq!(found["loc"], json!(["body", 1, "b"]));
        assert!(parse(br#"{"a": {"id": 1}, "b": {"id": 2}}"#, MAX_DEPTH).is_ok(), "the same key in two objects is fine");
    }

    #[test]
    fn keys_alike_in_length_and_ends_are_told_apart_by_their_text() {
        // One fingerprint (length, first and last byte), different keys: both kept, in both
        // parsers (the scan, and serde_json's, which takes any body with a `-0`).
        for body in [r#"{"abc": 1, "axc": 2, "": 3, "a": 4, "b": 5}"#, r#"{"abc": -0, "axc": 2, "": 3, "a": 4, "b": 5}"#] {
            let document = parse(body.as_bytes(), MAX_DEPTH).unwrap();
            assert_eq!(document.root().as_object().unwrap().keys().collect::<Vec<_>>(), ["abc", "axc", "", "a", "b"], "{body}");
        }
        // The same fingerprint and the same text: refused, wherever the first one was.
        for body in [r#"{"abc": 1, "axc": 2, "abc": 3}"#, r#"{"abc": -0, "axc": 2, "abc": 3}"#] {
            let found = issue(body, MAX_DEPTH);
            assert_eq!(found["type"], "json_duplicate_key", "{body}");
            assert_eq!(found["loc"], json!(["body", "abc"]));
        }
        assert_eq!(issue(r#"{"": 1, "a": 2, "": 3}"#, MAX_DEPTH)["type"], "json_duplicate_key");
    }

    #[test]
    fn a_repeated_key_among_many_is_found_past_the_pairwise_limit() {
        for (members, repeated) in [(17, "k3"), (40, "k39"), (1000, "k999"), (1000, "k0")] {
            let mut body = String::from("{");
            for i in 0..members {
                body.push_str(&format!("\"k{i}\": {i}, "));
            }
            body.push_str(&format!("\"{repeated}\": 0}}"));
            let found = issue(&body, MAX_DEPTH);
            assert_eq!(found["type"], "json_duplicate_key", "{members} members");
            assert_eq!(found["loc"], json!(["body", repeated]));
        }
        let distinct: String = format!("{{{}}}", (0..1000).map(|i| format!("\"k{i}\": {i}")).collect::<Vec<_>>().join(", "));
        assert_eq!(parse(distinct.as_bytes(), MAX_DEPTH).unwrap().root().as_object().unwrap().len(), 1000);
    }

    #[test]
    fn members_keep_the_order_they_were_sent_in() {
        let document = parse(br#"{"z": 1, "a": {"y": 2, "b": 3}, "m": [{"q": 1, "c": 2}]}"#, MAX_DEPTH).unwrap();
        let keys: Vec<&str> = document.root().as_object().unwrap().keys().collect();
        assert_eq!(keys, ["z", "a", "m"]);
        let inner: Vec<&str> = document.root().get("a").unwrap().as_object().unwrap().keys().collect();
        assert_eq!(inner, ["y", "b"]);
    }

    #[test]
    fn an_integer_too_long_for_a_float_is_int_parsing_size_too() {
        // serde_json cannot even round 400 digits to a float: it was a `json_invalid` at the
        // number's end.
        let digits = format!("1{}", "0".repeat(400));
        let issue = serde_json::to_value(parse(format!(r#"{{"id": [{digits}]}}"#).as_bytes(), MAX_DEPTH).unwrap_err()).unwrap();
        assert_eq!((&issue["type"], &issue["loc"], &issue["input"]), (&json!("int_parsing_size"), &json!(["body", "id", 0]), &json!(digits)));
        // A float that overflows is no integer: still malformed for a client's purposes.
        assert_eq!(serde_json::to_value(parse(b"[1e400]", MAX_DEPTH).unwrap_err()).unwrap()["type"], "json_invalid");
    }

    #[test]
    fn an_integer_beyond_64_bits_is_refused_never_rounded() {
        let found = issue(r#"{"ids": [1, 123456789012345678901234567890]}"#, MAX_DEPTH);
        assert_eq!(found["type"], "int_parsing_size");
        assert_eq!(found["loc"], json!(["body", "ids", 1]));
        assert_eq!(found["input"], "123456789012345678901234567890");
        assert_eq!(issue("-9223372036854775809", MAX_DEPTH)["type"], "int_parsing_size");
        // The extremes of i64 and u64 are exact, and a float written as one stays a float.
        assert_eq!(parse(b"[-9223372036854775808, 18446744073709551615]", MAX_DEPTH).unwrap().to_tree(), json!([i64::MIN, u64::MAX]));
        assert_eq!(parse(b"{\"big\": 1e30, \"s\": \"1234567890123456789012\"}", MAX_DEPTH).unwrap().to_tree()["big"], json!(1e30));
    }

    // Found by an attack probe: FastAPI (Python's json) says 23, a character index; the byte
    // offset was 27.
    #[test]
    fn a_malformed_bodys_location_counts_characters_not_bytes() {
        let found = issue(r#"{"name":"éééé","price":x}"#, MAX_DEPTH);
        assert_eq!(found["loc"], json!(["body", 23]));
        assert_eq!(issue(r#"{"name":"eeee","price":x}"#, MAX_DEPTH)["loc"], json!(["body", 23]));
    }

    #[test]
    fn nesting_deeper_than_the_limit_is_malformed_json() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(parse(nested(127).as_bytes(), MAX_DEPTH).is_ok());
        let found = issue(&nested(128), MAX_DEPTH);
        assert_eq!(found["type"], "json_invalid");
        assert_eq!(found["ctx"]["error"], "nesting deeper than 127 levels");
        assert!(parse(nested(3).as_bytes(), 3).is_ok());
        assert_eq!(issue(r#"{"a": {"b": {"c": 1}}}"#, 2)["type"], "json_invalid");
    }
}
