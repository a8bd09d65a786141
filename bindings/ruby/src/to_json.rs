//! Ruby objects → JSON bytes, written by Rust while walking the objects (no `to_json`).
//!
//! Hash (String/Symbol keys, others by `to_s`), Array, String (UTF-8), Symbol, Integer (any
//! size), Float (finite), true/false/nil, `Time` and `Date` (ISO 8601), Struct (`to_h`).
//! Anything else is an error naming its class, which the caller turns into a 500.
//!
//! A route's declared response schema reaches here as a [`Shape`]: a Hash's members that it
//! leaves out are skipped as they are met, never converted.

use magnus::r_hash::ForEach;
use ferrule_core::json_text;
use ferrule_core::shape::{Container, Everything, Fields, Shape, Written};
use magnus::{value::ReprValue, Error, Fixnum, Float, Integer, RArray, RHash, RString, RStruct, Ruby, Symbol, Value};

const MAX_DEPTH: usize = 256;

/// Serialises `value` as JSON, keeping what `shape` keeps ([`Shape::any`]: everything).
pub fn to_vec(ruby: &Ruby, value: Value, shape: Shape<'_>) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(128);
    if shape.keeps_everything() {
        write(ruby, value, &mut out, 0, Everything)?;
    } else {
        write(ruby, value, &mut out, 0, shape)?;
    }
    Ok(out)
}

fn text(e: Error) -> String {
    e.to_string()
}

fn class_name(value: Value) -> String {
    crate::raw::class_name(value)
}

fn write_str(out: &mut Vec<u8>, s: &str) -> Result<(), String> {
    json_text::string(out, s);
    Ok(())
}

/// A Ruby String's text: UTF-8, another encoding converted, or binary bytes that are UTF-8;
/// other bytes are not JSON text.
fn string_text(s: RString) -> Result<String, String> {
    match crate::raw::string_text(s) {
        Some(text) => Ok(text),
        // Another encoding is converted; a binary String (ASCII-8BIT: `req.raw_body`, a
        // socket's read), which converts to nothing, is its bytes' text when they are UTF-8,
        // as Ruby's `JSON.generate` takes it (the README's first example sends one).
        None => s
            .to_string()
            .or_else(|_| String::from_utf8(crate::raw::string_bytes(s)))
            .map_err(|_| "a String that is not valid UTF-8 cannot be sent as JSON".to_owned()),
    }
}

/// Writes `value`, keeping what `shape` keeps (`F`: see [`Fields`]; [`Everything`] is the plain
/// writer, compiled without a question asked).
fn write<F: Fields>(ruby: &Ruby, value: Value, out: &mut Vec<u8>, depth: usize, shape: F) -> Result<(), String> {
    if !F::PLAIN && shape.keeps_everything() {
        return write(ruby, value, out, depth, Everything);
    }
    if depth > MAX_DEPTH {
        return Err("nested too deeply (a reference cycle?)".into());
    }
    if value.is_nil() {
        out.extend_from_slice(b"null");
        return Ok(());
    }
    if value.is_kind_of(ruby.class_true_class()) {
        out.extend_from_slice(b"true");
        return Ok(());
    }
    if value.is_kind_of(ruby.class_false_class()) {
        out.extend_from_slice(b"false");
        return Ok(());
    }
    if let Some(i) = Fixnum::from_value(value) {
        json_text::int(out, i.to_i64());
        return Ok(());
    }
    if let Some(s) = RString::from_value(value) {
        // Written from Ruby's own bytes: no copy, and no Ruby code runs while they are read.
        return match crate::raw::with_string_text(s, |text| json_text::string(out, text)) {
            Some(()) => Ok(()),
            None => write_str(out, &string_text(s)?),
        };
    }
    if let Some(hash) = RHash::from_value(value) {
        shape.admits(Container::Object).map_err(|e| e.to_string())?;
        out.push(b'{');
        let mut first = true;
        let mut failure = None;
        // What the object's schema may add once its members are written.
        let mut written = Written::default();
        hash.foreach(|key: Value, item: Value| {
            let result = key_text(key).and_then(|name| {
                let Some(inner) = shape.member(&name, &mut written) else { return Ok(()) };
                if !std::mem::replace(&mut first, false) {
                    out.push(b',');
                }
                write_str(out, &name)?;
                out.push(b':');
                write(ruby, item, out, depth + 1, inner)
            });
            match result {
                Ok(()) => Ok(ForEach::Continue),
                Err(message) => {
                    failure = Some(message);
                    Ok(ForEach::Stop)
                }
            }
        })
        .map_err(text)?;
        if let Some(message) = failure {
            return Err(message);
        }
        shape.complete(&written, out, !first).map_err(|e| e.to_string())?;
        out.push(b'}');
        return Ok(());
    }
    if let Some(array) = RArray::from_value(value) {
        shape.admits(Container::Array).map_err(|e| e.to_string())?;
        out.push(b'[');
        let mut i = 0;
        while i < array.len() {
            if i > 0 {
                out.push(b',');
            }
            let item: Value = array.entry(i as isize).map_err(text)?;
            write(ruby, item, out, depth + 1, shape.item(i))?;
            i += 1;
        }
        out.push(b']');
        return Ok(());
    }
    if let Some(f) = Float::from_value(value) {
        let f = f.to_f64();
        if !f.is_finite() {
            return Err(format!("{f} is not a JSON number"));
        }
        json_text::float(out, f);
        return Ok(());
    }
    if let Some(i) = Integer::from_value(value) {
        // A Bignum: its decimal digits are a valid JSON number.
        let digits: String = i.funcall("to_s", ()).map_err(text)?;
        out.extend_from_slice(digits.as_bytes());
        return Ok(());
    }
    if let Some(sym) = Symbol::from_value(value) {
        return write_str(out, &sym.name().map_err(text)?);
    }
    if value.is_kind_of(ruby.class_time()) {
        let nanoseconds: u32 = value.funcall("nsec", ()).map_err(text)?;
        let iso: String = value.funcall("strftime", (time_format(nanoseconds),)).map_err(text)?;
        return write_str(out, &iso);
    }
    if value.respond_to("iso8601", false).map_err(text)? && class_name(value) == "Date" {
        let iso: String = value.funcall("iso8601", ()).map_err(text)?;
        return write_str(out, &iso);
    }
    // A Range is a Struct inside Ruby, with no to_h of pairs: it is written as JSON writes it
    // (below), not as a Struct.
    if RStruct::from_value(value).is_some() && class_name(value) != "Range" {
        let hash: Value = value.funcall("to_h", ()).map_err(text)?;
        return write(ruby, hash, out, depth + 1, shape);
    }
    // As the json library writes them, as Sinatra's JSON.generate does: an object whose class
    // has its own to_json (Money), and the value classes it writes as their text (DateTime,
    // BigDecimal, Rational, Complex, Range). They were 500s (found by a probe). Any other
    // object stays a 500, rather than its to_s (an exception's message, say). Only where the
    // response schema filters nothing: text made elsewhere cannot be filtered as it is written.
    if shape.keeps_everything() && writes_its_own_json(value)? {
        let written: String = value.funcall("to_json", ()).map_err(text)?;
        if ferrule_core::serde_json::from_str::<ferrule_core::serde_json::Value>(&written).is_ok() {
            out.extend_from_slice(written.as_bytes());
            return Ok(());
        }
        return Err(format!("an object of class {} wrote no JSON with to_json", class_name(value)));
    }
    Err(format!("an object of class {} is not JSON-serialisable", class_name(value)))
}

/// Whether `value` is written by its own `to_json`: its class defines one (not the json
/// library's generic `Object#to_json`), or it is one of the value classes listed above.
fn writes_its_own_json(value: Value) -> Result<bool, String> {
    if matches!(class_name(value).as_str(), "DateTime" | "BigDecimal" | "Rational" | "Complex" | "Range") {
        return Ok(true);
    }
    if !value.respond_to("to_json", false).map_err(text)? {
        return Ok(false);
    }
    let method: Value = value.funcall("method", ("to_json",)).map_err(text)?;
    let owner: Value = method.funcall("owner", ()).map_err(text)?;
    let owner: String = owner.funcall("to_s", ()).map_err(text)?;
    Ok(!owner.ends_with("GeneratorMethods::Object") && owner != "Object" && owner != "Kernel")
}

/// RFC 3339 for a `Time` with `nanoseconds` past its second: the fraction only when there is
/// one, in as many digits as it needs of 3, 6 or 9 (as the core writes a date-time, and as
/// chrono's `AutoSi` does). Without a fraction a time echoed from `…:00.25Z` lost its quarter
/// second.
fn time_format(nanoseconds: u32) -> &'static str {
    match nanoseconds {
        0 => "%Y-%m-%dT%H:%M:%S%:z",
        n if n % 1_000_000 == 0 => "%Y-%m-%dT%H:%M:%S.%L%:z",
        n if n % 1_000 == 0 => "%Y-%m-%dT%H:%M:%S.%6N%:z",
        _ => "%Y-%m-%dT%H:%M:%S.%9N%:z",
    }
}

/// A Hash key as JSON names it: a String's text, a Symbol's name, anything else's `to_s`.
/// A Symbol's name is borrowed from Ruby's symbol table (the common `{ id: 1 }` costs no copy).
fn key_text(key: Value) -> Result<std::borrow::Cow<'static, str>, String> {
    if let Some(s) = RString::from_value(key) {
        return string_text(s).map(std::borrow::Cow::Owned);
    }
    if let Some(sym) = Symbol::from_value(key) {
        return sym.name().map_err(text);
    }
    key.funcall::<_, _, String>("to_s", ()).map(std::borrow::Cow::Owned).map_err(text)
}
