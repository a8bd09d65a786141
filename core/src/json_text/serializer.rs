//! Any `Serialize` value written as JSON text by this module's writer: what a Rust handler's
//! [`Response::json`](crate::Response::json) and [`Json`](crate::response::Json) answer with,
//! and a problem's body. Every binding already writes its objects through [`super::string`]
//! and its siblings; this is the same writer behind serde's interface, so a Rust handler's
//! answer costs what a binding's does.
//!
//! Why not `serde_json::to_vec`: its serializer escapes a string by looking up a table for every
//! byte and hands each piece to `io::Write`. Strings are most of an answer's work (json-large
//! echoed: 1,177 strings, 15% of the served request's instructions in serde_json's escaping).
//! Here a string takes the module's short-string test and its eight-bytes-at-a-time scan.
//! Writing json-large's document (the tape of its 15 KB body) took 17.3–17.5 µs through
//! serde_json and 13.9 µs through this (one pinned core, five rounds of 20,000). Served, Rust
//! json-large went from 68.5 to 65.4 CPU-µs a request (medians of eight interleaved runs of
//! 40,000, server and load generator pinned apart); json-medium 14.0 → 13.8, json-small 7.7 →
//! 7.5.
//!
//! Until the short-string path was fixed (`short_and_plain` in `mod.rs`) this writer counted 7.7%
//! fewer instructions on json-large's request and took as long as serde_json's: instruction
//! counts alone do not judge a writer.
//!
//! The text is byte for byte serde_json's compact form, and so are the refusals: a map key
//! must be a string, a `char`, a number, a `bool` or a unit variant (numbers and `bool`s are
//! quoted), a float key must be finite, and a non-finite float value is `null`. serde_json's
//! private tokens are honoured: a `RawValue` (and, where a build enables `arbitrary_precision`,
//! a `Number`) is written as the text it holds. The tests below hold the two writers to the
//! same output on every kind of serde value and on generated documents.

use serde::ser::{self, Impossible, Serialize};
use std::fmt::{self, Display};

/// `value` as compact JSON text, as `serde_json::to_vec` writes it.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Error> {
    // serde_json's starting capacity: most answers fit without a reallocation.
    let mut out = Vec::with_capacity(128);
    value.serialize(&mut Writer { out: &mut out })?;
    Ok(out)
}

/// Why a value has no JSON text: a key that cannot be one, or the value's own refusal.
#[derive(Debug)]
pub struct Error(Box<str>);

impl Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: Display>(message: T) -> Self {
        Error(message.to_string().into())
    }
}

fn key_must_be_a_string() -> Error {
    Error("key must be a string".into())
}

fn float_key_must_be_finite() -> Error {
    Error("float key must be finite (got NaN or +/-inf)".into())
}

/// The names under which serde_json's `RawValue` and `Number` (with `arbitrary_precision`)
/// pass their text through serde: a struct of that name with one field of that name.
const RAW_VALUE: &str = "$serde_json::private::RawValue";
const NUMBER: &str = "$serde_json::private::Number";

struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

macro_rules! integers {
    ($($method:ident: $type:ty),*) => {$(
        #[inline]
        fn $method(self, value: $type) -> Result<(), Error> {
            self.out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
            Ok(())
        }
    )*};
}

impl<'s, 'a> ser::Serializer for &'s mut Writer<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'s, 'a>;
    type SerializeTuple = Compound<'s, 'a>;
    type SerializeTupleStruct = Compound<'s, 'a>;
    type SerializeTupleVariant = Compound<'s, 'a>;
    type SerializeMap = Compound<'s, 'a>;
    type SerializeStruct = Compound<'s, 'a>;
    type SerializeStructVariant = Compound<'s, 'a>;

    #[inline]
    fn serialize_bool(self, value: bool) -> Result<(), Error> {
        self.out.extend_from_slice(if value { b"true" } else { b"false" });
        Ok(())
    }

    integers!(serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64, serialize_i128: i128,
        serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64, serialize_u128: u128);

    #[inline]
    fn serialize_f32(self, value: f32) -> Result<(), Error> {
        if value.is_finite() {
            self.out.extend_from_slice(zmij::Buffer::new().format_finite(value).as_bytes());
        } else {
            self.out.extend_from_slice(b"null");
        }
        Ok(())
    }

    #[inline]
    fn serialize_f64(self, value: f64) -> Result<(), Error> {
        if value.is_finite() {
            super::float(self.out, value);
        } else {
            self.out.extend_from_slice(b"null");
        }
        Ok(())
    }

    fn serialize_char(self, value: char) -> Result<(), Error> {
        super::string(self.out, value.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    #[inline]
    fn serialize_str(self, value: &str) -> Result<(), Error> {
        super::string(self.out, value);
        Ok(())
    }

    fn serialize_bytes(self, value: &[u8]) -> Result<(), Error> {
        self.out.push(b'[');
        for (at, byte) in value.iter().enumerate() {
            if at > 0 {
                self.out.push(b',');
            }
            self.out.extend_from_slice(itoa::Buffer::new().format(*byte).as_bytes());
        }
        self.out.push(b']');
        Ok(())
    }

    #[inline]
    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }

    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    #[inline]
    fn serialize_unit(self) -> Result<(), Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<(), Error> {
        self.serialize_str(variant)
    }

    #[inline]
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(self, _name: &'static str, _index: u32, variant: &'static str, value: &T) -> Result<(), Error> {
        self.out.push(b'{');
        super::string(self.out, variant);
        self.out.push(b':');
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }

    #[inline]
    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'s, 'a>, Error> {
        self.out.push(b'[');
        Ok(Compound::new(self, b"]"))
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'s, 'a>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Compound<'s, 'a>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(self, _name: &'static str, _index: u32, variant: &'static str, _len: usize) -> Result<Compound<'s, 'a>, Error> {
        self.out.push(b'{');
        super::string(self.out, variant);
        self.out.extend_from_slice(b":[");
        Ok(Compound::new(self, b"]}"))
    }

    #[inline]
    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'s, 'a>, Error> {
        self.out.push(b'{');
        Ok(Compound::new(self, b"}"))
    }

    #[inline]
    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Compound<'s, 'a>, Error> {
        if name == RAW_VALUE || name == NUMBER {
            return Ok(Compound { writer: self, first: true, close: b"", verbatim: Some(name) });
        }
        self.out.push(b'{');
        Ok(Compound::new(self, b"}"))
    }

    fn serialize_struct_variant(self, _name: &'static str, _index: u32, variant: &'static str, _len: usize) -> Result<Compound<'s, 'a>, Error> {
        self.out.push(b'{');
        super::string(self.out, variant);
        self.out.extend_from_slice(b":{");
        Ok(Compound::new(self, b"}}"))
    }

    fn collect_str<T: Display + ?Sized>(self, value: &T) -> Result<(), Error> {
        collect_str(self.out, value)
    }
}

/// A `Display` value as a JSON string, escaped piece by piece as it is formatted.
fn collect_str<T: Display + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), Error> {
    struct Escaping<'o>(&'o mut Vec<u8>);
    impl fmt::Write for Escaping<'_> {
        fn write_str(&mut self, piece: &str) -> fmt::Result {
            super::string_contents(self.0, piece.as_bytes());
            Ok(())
        }
    }
    out.push(b'"');
    fmt::write(&mut Escaping(out), format_args!("{value}")).map_err(|_| Error("a value's Display implementation returned an error".into()))?;
    out.push(b'"');
    Ok(())
}

/// An array, a map or a struct being written: a comma before every member but the first, and
/// what closes it at the end.
pub struct Compound<'s, 'a> {
    writer: &'s mut Writer<'a>,
    first: bool,
    close: &'static [u8],
    /// serde_json's private token when this is its `RawValue` or `Number`: its one field's text
    /// is written as it is.
    verbatim: Option<&'static str>,
}

impl<'s, 'a> Compound<'s, 'a> {
    #[inline]
    fn new(writer: &'s mut Writer<'a>, close: &'static [u8]) -> Self {
        Compound { writer, first: true, close, verbatim: None }
    }

    #[inline]
    fn comma(&mut self) {
        if !std::mem::replace(&mut self.first, false) {
            self.writer.out.push(b',');
        }
    }

    #[inline]
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.comma();
        value.serialize(&mut *self.writer)
    }

    #[inline]
    fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
        if let Some(token) = self.verbatim {
            return self.verbatim_text(token, key, value);
        }
        self.comma();
        super::string(self.writer.out, key);
        self.writer.out.push(b':');
        value.serialize(&mut *self.writer)
    }

    /// The text a `RawValue` or `Number` holds (its one field, a string), written as it is.
    /// Rare enough to go through serde_json's own value.
    #[cold]
    fn verbatim_text<T: Serialize + ?Sized>(&mut self, token: &str, key: &str, value: &T) -> Result<(), Error> {
        match serde_json::to_value(value) {
            Ok(serde_json::Value::String(text)) if key == token => {
                self.writer.out.extend_from_slice(text.as_bytes());
                Ok(())
            }
            _ => Err(Error(format!("{token} holds something other than its text").into())),
        }
    }

    #[inline]
    fn finish(self) -> Result<(), Error> {
        self.writer.out.extend_from_slice(self.close);
        Ok(())
    }
}

/// serde's four kinds of sequence, each written as an array by [`Compound::element`].
macro_rules! sequences {
    ($($kind:ident::$method:ident),*) => {$(
        impl ser::$kind for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;

            #[inline]
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.element(value)
            }

            #[inline]
            fn end(self) -> Result<(), Error> {
                self.finish()
            }
        }
    )*};
}

sequences!(SerializeSeq::serialize_element, SerializeTuple::serialize_element, SerializeTupleStruct::serialize_field, SerializeTupleVariant::serialize_field);

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    #[inline]
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.comma();
        key.serialize(KeyWriter { out: self.writer.out })
    }

    #[inline]
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.writer.out.push(b':');
        value.serialize(&mut *self.writer)
    }

    #[inline]
    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

/// serde's two kinds of struct, each written as an object by [`Compound::field`].
macro_rules! structs {
    ($($kind:ident),*) => {$(
        impl ser::$kind for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;

            #[inline]
            fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
                self.field(key, value)
            }

            #[inline]
            fn end(self) -> Result<(), Error> {
                self.finish()
            }
        }
    )*};
}

structs!(SerializeStruct, SerializeStructVariant);

/// A map's key: JSON's keys are strings, so a number or a `bool` is quoted, and anything
/// that has no text of its own is refused.
struct KeyWriter<'o> {
    out: &'o mut Vec<u8>,
}

impl KeyWriter<'_> {
    fn quoted(self, text: &str) -> Result<(), Error> {
        self.out.push(b'"');
        self.out.extend_from_slice(text.as_bytes());
        self.out.push(b'"');
        Ok(())
    }
}

macro_rules! integer_keys {
    ($($method:ident: $type:ty),*) => {$(
        fn $method(self, value: $type) -> Result<(), Error> {
            self.quoted(itoa::Buffer::new().format(value))
        }
    )*};
}

macro_rules! refused_keys {
    ($($method:ident($($argument:ty),*) -> $returns:ty;)*) => {$(
        fn $method(self, $(_: $argument),*) -> Result<$returns, Error> {
            Err(key_must_be_a_string())
        }
    )*};
}

impl ser::Serializer for KeyWriter<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    #[inline]
    fn serialize_str(self, value: &str) -> Result<(), Error> {
        super::string(self.out, value);
        Ok(())
    }

    fn serialize_char(self, value: char) -> Result<(), Error> {
        self.serialize_str(value.encode_utf8(&mut [0; 4]))
    }

    fn serialize_bool(self, value: bool) -> Result<(), Error> {
        self.quoted(if value { "true" } else { "false" })
    }

    integer_keys!(serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64, serialize_i128: i128,
        serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64, serialize_u128: u128);

    fn serialize_f32(self, value: f32) -> Result<(), Error> {
        if !value.is_finite() {
            return Err(float_key_must_be_finite());
        }
        self.quoted(zmij::Buffer::new().format_finite(value))
    }

    fn serialize_f64(self, value: f64) -> Result<(), Error> {
        if !value.is_finite() {
            return Err(float_key_must_be_finite());
        }
        self.quoted(zmij::Buffer::new().format_finite(value))
    }

    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<(), Error> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(self, _name: &'static str, _index: u32, _variant: &'static str, _value: &T) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }

    refused_keys! {
        serialize_bytes(&[u8]) -> ();
        serialize_none() -> ();
        serialize_unit() -> ();
        serialize_unit_struct(&'static str) -> ();
        serialize_seq(Option<usize>) -> Impossible<(), Error>;
        serialize_tuple(usize) -> Impossible<(), Error>;
        serialize_tuple_struct(&'static str, usize) -> Impossible<(), Error>;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Impossible<(), Error>;
        serialize_map(Option<usize>) -> Impossible<(), Error>;
        serialize_struct(&'static str, usize) -> Impossible<(), Error>;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Impossible<(), Error>;
    }

    fn collect_str<T: Display + ?Sized>(self, value: &T) -> Result<(), Error> {
        collect_str(self.out, value)
    }
}

#[cfg(test)]
mod tests {
    use super::to_vec;
    use serde::Serialize;
    use serde_json::json;
    use std::collections::BTreeMap;

    /// Both writers' text for `value`, or both refusals' messages.
    fn agree<T: Serialize + ?Sized + std::fmt::Debug>(value: &T) {
        let ours = to_vec(value).map(String::from_utf8).map_err(|e| e.to_string());
        let theirs = serde_json::to_vec(value).map(String::from_utf8).map_err(|e| e.to_string());
        assert_eq!(ours.map(Result::unwrap), theirs.map(Result::unwrap), "{value:?}");
    }

    #[derive(Serialize, Debug)]
    struct Unit;

    #[derive(Serialize, Debug)]
    struct Newtype(u8);

    #[derive(Serialize, Debug)]
    struct Pair(i32, &'static str);

    #[derive(Serialize, Debug)]
    enum Kind {
        Plain,
        Wrapped(f64),
        Tuple(u8, bool),
        Record { name: String, tags: Vec<&'static str> },
        Empty {},
        EmptyTuple(),
    }

    #[derive(Serialize, Debug)]
    struct Record {
        id: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        nothing: Option<u8>,
        #[serde(rename = "ünï \"quoted\"")]
        odd_name: bool,
        kinds: Vec<Kind>,
        #[serde(flatten)]
        extra: BTreeMap<String, i32>,
        unit: Unit,
        newtype: Newtype,
        pair: Pair,
        bytes: serde_bytes_like::Bytes,
        empty: Vec<u8>,
        nested: Option<Box<Record>>,
    }

    /// `serialize_bytes`, which no standard type calls (a `Vec<u8>` is a sequence).
    mod serde_bytes_like {
        #[derive(Debug)]
        pub struct Bytes(pub Vec<u8>);
        impl serde::Serialize for Bytes {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_bytes(&self.0)
            }
        }
    }

    fn record(nested: Option<Box<Record>>) -> Record {
        Record {
            id: u64::MAX,
            note: Some("a\nb\u{1}\"é".into()),
            nothing: None,
            odd_name: true,
            kinds: vec![
                Kind::Plain,
                Kind::Wrapped(0.1),
                Kind::Wrapped(f64::NAN),
                Kind::Tuple(7, false),
                Kind::Record { name: "🎉".into(), tags: vec!["x", ""] },
                Kind::Empty {},
                Kind::EmptyTuple(),
            ],
            extra: BTreeMap::from([("flattened".to_owned(), -3)]),
            unit: Unit,
            newtype: Newtype(255),
            pair: Pair(i32::MIN, "\\"),
            bytes: serde_bytes_like::Bytes(vec![0, 1, 255]),
            empty: Vec::new(),
            nested,
        }
    }

    #[test]
    fn every_kind_of_serde_value_is_written_as_serde_json_writes_it() {
        agree(&record(Some(Box::new(record(None)))));
        agree(&(1u8, -2i16, 3u32, -4i64, 5u128, i128::MIN, 'q', '\u{0}', "tuple"));
        agree(&[f32::MIN_POSITIVE, 0.1, -1.5, f32::MAX, f32::INFINITY, f32::NAN]);
        agree(&[0.0, -0.0, 1e100, 5e-324, f64::NEG_INFINITY, 123456789.125]);
        agree(&Some(()));
        agree(&None::<u8>);
        agree(&json!({"a": [1, 2.5, null, true, {"b": "c\td"}], "": {}, "e": []}));
        agree(&std::net::Ipv4Addr::LOCALHOST);
        agree(&format_args!("{}\"{}", 1, "\u{7}"));
        agree(&std::time::Duration::from_millis(1500));
        agree(&std::path::Path::new("a/b\\c"));
    }

    #[test]
    fn map_keys_are_quoted_or_refused_as_serde_json_does() {
        agree(&BTreeMap::from([(1i8, "a"), (-2, "b")]));
        agree(&BTreeMap::from([(u128::MAX, 1)]));
        agree(&BTreeMap::from([(true, 1), (false, 2)]));
        agree(&BTreeMap::from([('k', 1), ('"', 2)]));
        agree(&BTreeMap::from([(Some("some"), 1)]));
        agree(&BTreeMap::from([(None::<&str>, 1)]));
        agree(&vec![(Newtype(3), 1)].into_iter().collect::<KeyList<Newtype>>());
        agree(&vec![(Kind::Plain, 1)].into_iter().collect::<KeyList>());
        agree(&vec![(Kind::Tuple(1, true), 1)].into_iter().collect::<KeyList>());
        agree(&vec![(Kind::Wrapped(1.0), 1)].into_iter().collect::<KeyList>());
        agree(&vec![((), 1)].into_iter().collect::<KeyList<()>>());
        agree(&vec![(vec![1], 1)].into_iter().collect::<KeyList<Vec<i32>>>());
        agree(&vec![(1.5f64, 1), (-0.0, 2)].into_iter().collect::<KeyList<f64>>());
        agree(&vec![(f64::NAN, 1)].into_iter().collect::<KeyList<f64>>());
        agree(&vec![(f32::INFINITY, 1)].into_iter().collect::<KeyList<f32>>());
        agree(&vec![(0.1f32, 1)].into_iter().collect::<KeyList<f32>>());
        agree(&vec![(std::net::Ipv4Addr::LOCALHOST, 1)].into_iter().collect::<KeyList<std::net::Ipv4Addr>>());
    }

    /// A map whose keys need not be ordered or hashable.
    #[derive(Debug)]
    struct KeyList<K = Kind>(Vec<(K, i32)>);

    impl<K> FromIterator<(K, i32)> for KeyList<K> {
        fn from_iter<I: IntoIterator<Item = (K, i32)>>(entries: I) -> Self {
            KeyList(entries.into_iter().collect())
        }
    }

    impl<K: Serialize> Serialize for KeyList<K> {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_map(self.0.iter().map(|(k, v)| (k, v)))
        }
    }

    #[test]
    fn a_values_own_refusal_is_passed_on() {
        struct Refuses;
        impl Serialize for Refuses {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("not today"))
            }
        }
        impl std::fmt::Debug for Refuses {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("Refuses")
            }
        }
        agree(&[Refuses]);
        assert_eq!(to_vec(&Refuses).unwrap_err().to_string(), "not today");
    }

    #[test]
    fn serde_jsons_raw_values_are_written_as_they_are() {
        let raw = serde_json::value::RawValue::from_string("{ \"kept\" : [1,2] }".into()).unwrap();
        agree(&raw);
        agree(&json!({"raw": serde_json::to_value(&raw).unwrap()}));
        #[derive(Serialize, Debug)]
        struct Holder<'a> {
            raw: &'a serde_json::value::RawValue,
        }
        agree(&Holder { raw: &raw });
    }

    #[test]
    fn generated_documents_are_written_as_serde_json_writes_them() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        fn value(next: &mut dyn FnMut() -> u64, depth: usize) -> serde_json::Value {
            let texts = ["", "a", "key", "é\"\\", "\u{1f}\n", "日本語のテキスト", "a longer plain string of text", "\u{7f}🎉"];
            match next() % if depth > 3 { 6 } else { 8 } {
                0 => serde_json::Value::Null,
                1 => json!(next().is_multiple_of(2)),
                2 => json!(next() as i64),
                3 => json!(f64::from_bits(next()) % 1e12),
                4 => json!(texts[(next() % 8) as usize]),
                5 => json!(next() % 1000),
                6 => (0..next() % 5).map(|_| value(next, depth + 1)).collect(),
                _ => serde_json::Value::Object((0..next() % 5).map(|i| (format!("{}{i}", texts[(next() % 8) as usize]), value(next, depth + 1))).collect()),
            }
        }
        for _ in 0..2_000 {
            agree(&value(&mut next, 0));
        }
    }
}

