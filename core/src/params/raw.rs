//! Raw request inputs before coercion: name/value pairs from a query string, a form body,
//! headers, cookies or multipart parts. Invalid UTF-8 is kept, so it can be reported precisely.

use crate::value::UploadedFile;
use percent_encoding::percent_decode;
use std::borrow::Cow;

#[derive(Debug, Clone)]
pub enum RawValue<'a> {
    Text(Cow<'a, str>),
    /// Bytes that are not UTF-8 (after percent-decoding).
    Invalid(Vec<u8>),
    /// Boxed: a file is rare, and inline it made every pair 160 bytes where text needs 56 (a
    /// query's pairs are scanned once per declared parameter, and grown as they are read).
    File(Box<UploadedFile>),
}

/// Ordered name/value pairs; a key may repeat.
#[derive(Debug, Clone, Default)]
pub struct RawPairs<'a> {
    pairs: Vec<(Cow<'a, str>, RawValue<'a>)>,
    case_insensitive: bool,
}

impl<'a> RawPairs<'a> {
    pub fn new() -> Self {
        RawPairs { pairs: Vec::new(), case_insensitive: false }
    }

    /// Room for `capacity` pairs, for a caller that knows how many come (a path's parameters).
    pub fn with_capacity(capacity: usize) -> Self {
        RawPairs { pairs: Vec::with_capacity(capacity), case_insensitive: false }
    }

    /// Header names compare without regard to case.
    pub fn case_insensitive() -> Self {
        RawPairs { pairs: Vec::new(), case_insensitive: true }
    }

    /// [`RawPairs::case_insensitive`], with room for `capacity` pairs.
    pub fn case_insensitive_with_capacity(capacity: usize) -> Self {
        RawPairs { pairs: Vec::with_capacity(capacity), case_insensitive: true }
    }

    pub fn push(&mut self, key: Cow<'a, str>, value: RawValue<'a>) {
        self.pairs.push((key, value));
    }

    pub fn values<'s>(&'s self, key: &'s str) -> impl Iterator<Item = &'s RawValue<'a>> + 's {
        self.pairs.iter().filter_map(move |(k, v)| self.same_name(k, key).then_some(v))
    }

    /// The last value of `key` (a scalar parameter sent twice takes its last, as in FastAPI),
    /// found from the end: one comparison for the last pair, where taking the last of
    /// [`RawPairs::values`] compared every pair (query-many, 16 parameters: 50,540 → 49,874
    /// instructions a request, callgrind, `ferrule-bench serve ferrule-rust`).
    pub fn last(&self, key: &str) -> Option<&RawValue<'a>> {
        self.pairs.iter().rev().find(|(k, _)| self.same_name(k, key)).map(|(_, v)| v)
    }

    /// The values of `key` and, when given, of its other spelling `also` (`tag[]` for `tag`),
    /// in the order they were sent.
    pub fn values_either<'s>(&'s self, key: &'s str, also: Option<&'s str>) -> impl Iterator<Item = &'s RawValue<'a>> + 's {
        self.pairs.iter().filter_map(move |(k, v)| (self.same_name(k, key) || also.is_some_and(|also| self.same_name(k, also))).then_some(v))
    }

    /// Whether a sent name is a declared one: header names without regard to case, others
    /// exactly ([`same_name`], which all three searches take).
    #[inline]
    fn same_name(&self, sent: &str, declared: &str) -> bool {
        if self.case_insensitive {
            return sent.eq_ignore_ascii_case(declared);
        }
        same_name(sent, declared)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &RawValue<'a>)> {
        self.pairs.iter().map(|(k, v)| (&**k, v))
    }

    /// `a=1&b=x+y&b=%20` as sent in query strings and url-encoded bodies.
    pub fn from_urlencoded(input: &'a [u8]) -> Self {
        // Sized once: growing a vector of pairs one doubling at a time cost a query of 16
        // pairs five allocations.
        let mut pairs = RawPairs::with_capacity(input.iter().filter(|b| **b == b'&').count() + 1);
        for piece in input.split(|b| *b == b'&').filter(|p| !p.is_empty()) {
            let (key, value) = match piece.iter().position(|b| *b == b'=') {
                Some(eq) => (&piece[..eq], &piece[eq + 1..]),
                None => (piece, &piece[piece.len()..]),
            };
            let key = match decode_component(key) {
                RawValue::Text(k) => k,
                RawValue::Invalid(bytes) => Cow::Owned(String::from_utf8_lossy(&bytes).into_owned()),
                RawValue::File(_) => continue,
            };
            pairs.push(key, decode_component(value));
        }
        pairs
    }
}

/// Percent-decoding with `+` as space; borrows when nothing needs decoding.
fn decode_component(raw: &[u8]) -> RawValue<'_> {
    if !raw.iter().any(|b| *b == b'%' || *b == b'+') {
        return match std::str::from_utf8(raw) {
            Ok(text) => RawValue::Text(Cow::Borrowed(text)),
            Err(_) => RawValue::Invalid(raw.to_vec()),
        };
    }
    let plus_as_space: Vec<u8> = raw.iter().map(|b| if *b == b'+' { b' ' } else { *b }).collect();
    let decoded: Vec<u8> = percent_decode(&plus_as_space).collect();
    match String::from_utf8(decoded) {
        Ok(text) => RawValue::Text(Cow::Owned(text)),
        Err(e) => RawValue::Invalid(e.into_bytes()),
    }
}

/// Whether two names are exactly the same, the length and first byte compared inline first:
/// names of one length are common (`page`, `sort`, `size`, `tags`), and this spares a call to
/// `memcmp` for each that differs (query-many: 49,874 → 49,629 instructions a request).
#[inline]
pub(super) fn same_name(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.as_bytes().first() == b.as_bytes().first() && a == b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(pairs: &RawPairs, key: &str) -> Vec<String> {
        pairs
            .values(key)
            .map(|v| match v {
                RawValue::Text(t) => t.to_string(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn repeated_keys_and_decoding() {
        let pairs = RawPairs::from_urlencoded(b"a=1&b=x+y&a=%32&c");
        assert_eq!(texts(&pairs, "a"), ["1", "2"]);
        assert_eq!(texts(&pairs, "b"), ["x y"]);
        assert_eq!(texts(&pairs, "c"), [""]);
    }

    /// A pair is scanned and moved on every lookup: a file's fields inline made each 160 bytes.
    #[test]
    fn a_pair_of_text_is_small() {
        assert!(std::mem::size_of::<(Cow<str>, RawValue)>() <= 56, "{}", std::mem::size_of::<(Cow<str>, RawValue)>());
    }

    #[test]
    fn a_query_is_read_into_one_allocation() {
        let pairs = RawPairs::from_urlencoded(b"a=1&b=2&&c=3");
        assert_eq!(pairs.pairs.len(), 3);
        assert_eq!(pairs.pairs.capacity(), 4);
    }

    #[test]
    fn invalid_utf8_is_kept_as_bytes() {
        let pairs = RawPairs::from_urlencoded(b"name=%FF%FE");
        assert!(matches!(pairs.values("name").next(), Some(RawValue::Invalid(b)) if b == &[0xff, 0xfe]));
    }
}
