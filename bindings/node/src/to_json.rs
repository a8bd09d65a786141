//! JavaScript values → JSON bytes, with `JSON.stringify`'s rules: `toJSON()` is honoured (so
//! Dates become ISO strings), `undefined`, functions and symbols are left out of objects and
//! become `null` in arrays, non-finite numbers become `null`; a reference cycle is an error.
//! A BigInt is written as its exact integer (JSON.stringify would throw).
//!
//! `flatten.js` walks the value in JavaScript and leaves a tape (ops and numbers) and the
//! text of every string; this module writes the JSON from those. Walking through N-API
//! instead costs several calls per property, which made this the largest cost of a JSON
//! response.
//!
//! A route's declared response schema reaches here as a [`Shape`]: the tape is written
//! skipping the members it leaves out (Fastify's `response` rule), and each object ends with
//! the defaults of what it lacked, or fails without a required member (as fast-json-stringify
//! does). A route without one takes the plain writer, which asks nothing.

use crate::raw::{Env, Value};
use crate::shapes;
use ferrule_core::json_text;
use ferrule_core::shape::{Container, Shape, Written};

/// The tape's ops; `flatten.js` writes the same numbers.
mod op {
    pub const NULL: f64 = 0.0;
    pub const FALSE: f64 = 1.0;
    pub const TRUE: f64 = 2.0;
    /// Followed by the number.
    pub const NUMBER: f64 = 3.0;
    /// Followed by the string's length in UTF-16 units; its text is next in the strings.
    pub const STRING: f64 = 4.0;
    pub const ARRAY: f64 = 5.0;
    pub const OBJECT: f64 = 6.0;
    pub const END: f64 = 7.0;
    /// A key, like STRING; its value follows.
    pub const KEY: f64 = 8.0;
    /// A BigInt: followed by the length of its decimal digits (with any `-`) in the strings.
    pub const INTEGER: f64 = 9.0;
}

const FLATTEN_SOURCE: &str = include_str!("flatten.js");

pub fn to_vec(env: Env, value: Value, shape: Shape<'_>) -> Result<Vec<u8>, String> {
    let flatten = serialiser(env)?;
    let receiver = env.undefined().map_err(|e| e.0.to_owned())?;
    let flat = env.call(receiver, flatten, &[value]).map_err(|_| env.take_exception())?;
    let read = |index| env.index(flat, index).map_err(|e| format!("cannot read the serialised value ({})", e.0));
    if env.kind(flat).map_err(|e| e.0.to_owned())? == crate::raw::Kind::Null {
        // A top-level undefined or function: JSON.stringify gives undefined; send null.
        return Ok(b"null".to_vec());
    }
    let (tape, used, text) = (read(0)?, read(1)?, read(2)?);
    let used = env.as_f64(used).map_err(|e| e.0.to_owned())?;
    from_tape(env, tape, used, text, shape)
}

/// The walk in `flatten.js`, compiled once per environment: the glue calls it itself for a
/// handler's plain result (a call from JavaScript to JavaScript, where one from here costs
/// an entry into V8 and a read of each part of its result), then passes the parts to
/// [`from_tape`] through `replyTape`.
pub fn serialiser(env: Env) -> Result<Value, String> {
    shapes::compiled(env, FLATTEN_SOURCE).map_err(|e| format!("cannot compile the serialiser ({})", e.0))
}

/// The JSON of a flattened value: its tape (a Float64Array, of which `used` elements count)
/// and its text.
pub fn from_tape(env: Env, tape: Value, used: f64, text: Value, shape: Shape<'_>) -> Result<Vec<u8>, String> {
    if !(used >= 0.0 && used.fract() == 0.0) {
        return Err(format!("the serialised value's length is {used}"));
    }
    // Only the used part: the tape is kept large between calls.
    let tape = env.f64s(tape, used as usize).map_err(|e| e.0.to_owned())?;
    // Most responses are all ASCII: read as bytes, their text needs no decoding.
    if let Some(bytes) = env.ascii(text).map_err(|e| e.0.to_owned())? {
        let mut out = Vec::with_capacity(bytes.len() + tape.len() * 4 + 16);
        write_with(&tape, &bytes, &mut out, shape)?;
        return Ok(out);
    }
    let text = env.utf16(text).map_err(|e| e.0.to_owned())?;
    let mut out = Vec::with_capacity(text.len() + tape.len() * 4 + 16);
    write_with(&tape, &text, &mut out, shape)?;
    Ok(out)
}

fn write_with<T: Text>(tape: &[f64], text: &[T], out: &mut Vec<u8>, shape: Shape<'_>) -> Result<(), String> {
    if shape.keeps_everything() {
        write(tape, text, out)
    } else {
        write_shaped(tape, text, out, shape)
    }
}

/// The text of a tape's strings: bytes when all of it is ASCII, else UTF-16 units. The
/// tape's lengths count UTF-16 units, which are bytes in the first case.
trait Text: Copy + Into<u32> {
    /// Writes these units as a JSON string, quoted and escaped.
    fn write_string(units: &[Self], out: &mut Vec<u8>);

    /// A key's text, for looking it up in a shape.
    fn key(units: &[Self]) -> std::borrow::Cow<'_, str>;

    /// Writes a BigInt's decimal text as a JSON number.
    fn write_digits(units: &[Self], out: &mut Vec<u8>) -> Result<(), String> {
        for (i, unit) in units.iter().enumerate() {
            match char::from_u32((*unit).into()) {
                Some(c @ '0'..='9') => out.push(c as u8),
                Some('-') if i == 0 => out.push(b'-'),
                _ => return Err("the serialised value is malformed".into()),
            }
        }
        Ok(())
    }
}

impl Text for u8 {
    fn key(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
        // ASCII (the caller checked), so always UTF-8.
        String::from_utf8_lossy(bytes)
    }

    fn write_string(bytes: &[u8], out: &mut Vec<u8>) {
        // ASCII, so UTF-8.
        json_text::string_of_utf8(out, bytes);
    }
}

impl Text for u16 {
    fn key(units: &[u16]) -> std::borrow::Cow<'_, str> {
        String::from_utf16_lossy(units).into()
    }

    /// A lone surrogate is written as its `\uXXXX` escape, as JSON.stringify writes it
    /// (well-formed since ES2019): the text stays valid UTF-8 and a reader gets the unit back
    /// (found by a probe: it became U+FFFD, the data changed).
    fn write_string(units: &[u16], out: &mut Vec<u8>) {
        out.reserve(units.len() + 2);
        out.push(b'"');
        let mut i = 0;
        while let Some(&unit) = units.get(i) {
            let plain = units[i..].iter().take_while(|&&u| u < 0x80 && !json_text::needs_escape(u as u8)).count();
            if plain > 0 {
                out.extend(units[i..i + plain].iter().map(|&u| u as u8));
                i += plain;
                continue;
            }
            if unit < 0x80 {
                json_text::escape(unit as u8, out);
                i += 1;
                continue;
            }
            match char::decode_utf16(units[i..].iter().copied()).next() {
                Some(Ok(c)) => {
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                    i += c.len_utf16();
                }
                _ => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    out.extend_from_slice(b"\\u");
                    out.extend((0..4).rev().map(|shift| HEX[usize::from(unit >> (shift * 4)) & 0xf]));
                    i += 1;
                }
            }
        }
        out.push(b'"');
    }
}

/// Writes the JSON that `tape` and `text` describe.
fn write<T: Text>(tape: &[f64], text: &[T], out: &mut Vec<u8>) -> Result<(), String> {
    const BROKEN: &str = "the serialised value is malformed";
    // Open containers: whether each is an object, and whether it has a member yet.
    let mut open: Vec<(bool, bool)> = Vec::new();
    let mut ops = tape.iter().copied();
    let mut text_at = 0usize;
    let mut after_key = false;
    let mut take_text = |len: f64| -> Result<&[T], String> {
        let end = text_at.checked_add(len as usize).ok_or(BROKEN)?;
        let slice = text.get(text_at..end).ok_or(BROKEN)?;
        text_at = end;
        Ok(slice)
    };
    while let Some(code) = ops.next() {
        if code == op::END {
            let (is_object, _) = open.pop().ok_or(BROKEN)?;
            out.push(if is_object { b'}' } else { b']' });
            continue;
        }
        if code == op::KEY {
            let Some((true, has_member)) = open.last_mut() else { return Err(BROKEN.into()) };
            if std::mem::replace(has_member, true) {
                out.push(b',');
            }
            T::write_string(take_text(ops.next().ok_or(BROKEN)?)?, out);
            out.push(b':');
            after_key = true;
            continue;
        }
        // A value: in an array, it is a member of its own.
        if !std::mem::take(&mut after_key) {
            if let Some((false, has_member)) = open.last_mut() {
                if std::mem::replace(has_member, true) {
                    out.push(b',');
                }
            }
        }
        match code {
            op::NULL => out.extend_from_slice(b"null"),
            op::FALSE => out.extend_from_slice(b"false"),
            op::TRUE => out.extend_from_slice(b"true"),
            op::NUMBER => number(ops.next().ok_or(BROKEN)?, out),
            op::STRING => T::write_string(take_text(ops.next().ok_or(BROKEN)?)?, out),
            op::INTEGER => T::write_digits(take_text(ops.next().ok_or(BROKEN)?)?, out)?,
            op::ARRAY | op::OBJECT => {
                let is_object = code == op::OBJECT;
                out.push(if is_object { b'{' } else { b'[' });
                open.push((is_object, false));
            }
            _ => return Err(BROKEN.into()),
        }
    }
    if open.is_empty() {
        Ok(())
    } else {
        Err(BROKEN.into())
    }
}

/// [`write`], leaving out what `shape` leaves out: a dropped member's key and value are
/// stepped over on the tape, never written.
fn write_shaped<T: Text>(tape: &[f64], text: &[T], out: &mut Vec<u8>, shape: Shape<'_>) -> Result<(), String> {
    const BROKEN: &str = "the serialised value is malformed";
    struct Open<'s> {
        is_object: bool,
        has_member: bool,
        shape: Shape<'s>,
        /// The next item's position (arrays).
        position: usize,
        /// What an object's schema may add once its members are written.
        written: Written,
    }
    let mut open: Vec<Open<'_>> = Vec::new();
    let mut ops = tape.iter().copied();
    let mut text_at = 0usize;
    // The shape of the value the last key introduced.
    let mut after_key: Option<Shape<'_>> = None;
    let take_text = |at: &mut usize, len: f64| -> Result<std::ops::Range<usize>, String> {
        let end = at.checked_add(len as usize).filter(|end| *end <= text.len()).ok_or(BROKEN)?;
        let range = *at..end;
        *at = end;
        Ok(range)
    };
    let mut started = false;
    while let Some(code) = ops.next() {
        if code == op::END {
            let closed = open.pop().ok_or(BROKEN)?;
            if closed.is_object {
                closed.shape.complete(&closed.written, out, closed.has_member).map_err(|e| e.to_string())?;
            }
            out.push(if closed.is_object { b'}' } else { b']' });
            continue;
        }
        if code == op::KEY {
            let Some(object) = open.last_mut().filter(|o| o.is_object && after_key.is_none()) else { return Err(BROKEN.into()) };
            let key = take_text(&mut text_at, ops.next().ok_or(BROKEN)?)?;
            let name = T::key(&text[key.clone()]);
            match object.shape.member(&name, &mut object.written) {
                Some(inner) => {
                    if std::mem::replace(&mut object.has_member, true) {
                        out.push(b',');
                    }
                    T::write_string(&text[key], out);
                    out.push(b':');
                    after_key = Some(inner);
                }
                None => skip_value(&mut ops, &mut |len| take_text(&mut text_at, len).map(|_| ()))?,
            }
            continue;
        }
        let value_shape = match after_key.take() {
            Some(inner) => inner,
            None => match open.last_mut() {
                Some(array) if !array.is_object => {
                    if std::mem::replace(&mut array.has_member, true) {
                        out.push(b',');
                    }
                    array.position += 1;
                    array.shape.item(array.position - 1)
                }
                Some(_) => return Err(BROKEN.into()),
                None if !std::mem::replace(&mut started, true) => shape,
                None => return Err(BROKEN.into()),
            },
        };
        match code {
            op::NULL => out.extend_from_slice(b"null"),
            op::FALSE => out.extend_from_slice(b"false"),
            op::TRUE => out.extend_from_slice(b"true"),
            op::NUMBER => number(ops.next().ok_or(BROKEN)?, out),
            op::STRING => {
                let range = take_text(&mut text_at, ops.next().ok_or(BROKEN)?)?;
                T::write_string(&text[range], out);
            }
            op::INTEGER => {
                let range = take_text(&mut text_at, ops.next().ok_or(BROKEN)?)?;
                T::write_digits(&text[range], out)?;
            }
            op::ARRAY | op::OBJECT => {
                let is_object = code == op::OBJECT;
                value_shape.admits(if is_object { Container::Object } else { Container::Array }).map_err(|e| e.to_string())?;
                out.push(if is_object { b'{' } else { b'[' });
                open.push(Open { is_object, has_member: false, shape: value_shape, position: 0, written: Written::default() });
            }
            _ => return Err(BROKEN.into()),
        }
    }
    if open.is_empty() && after_key.is_none() {
        Ok(())
    } else {
        Err(BROKEN.into())
    }
}

/// Steps over one value on the tape (with everything inside it); `text` is told the length of
/// each string, key and BigInt stepped over.
fn skip_value(ops: &mut impl Iterator<Item = f64>, text: &mut impl FnMut(f64) -> Result<(), String>) -> Result<(), String> {
    const BROKEN: &str = "the serialised value is malformed";
    let mut depth = 0usize;
    loop {
        match ops.next().ok_or(BROKEN)? {
            op::NULL | op::FALSE | op::TRUE => {}
            op::NUMBER => {
                ops.next().ok_or(BROKEN)?;
            }
            op::STRING | op::INTEGER | op::KEY => text(ops.next().ok_or(BROKEN)?)?,
            op::ARRAY | op::OBJECT => depth += 1,
            op::END => depth = depth.checked_sub(1).ok_or(BROKEN)?,
            _ => return Err(BROKEN.into()),
        }
        if depth == 0 {
            return Ok(());
        }
    }
}

fn number(n: f64, out: &mut Vec<u8>) {
    if !n.is_finite() {
        out.extend_from_slice(b"null");
    } else if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        // Integral values print as integers, as JSON.stringify does (1, not 1.0).
        json_text::int(out, n as i64);
    } else {
        let start = out.len();
        json_text::float(out, n);
        // The shortest digits are JavaScript's too; only the spelling differs, where the text
        // has an exponent or ends in `.0` (2^53 and up): rare, so checked after the fact.
        let written = &out[start..];
        if written.contains(&b'e') || written.ends_with(b".0") {
            let text = out[start..].to_vec();
            out.truncate(start);
            javascript_spelling(&text, out);
        }
    }
}

/// A number's shortest digits (`text`, as [`json_text::float`] writes them: `1e21`, `1.5e-7`,
/// `9007199254740992.0`) spelled as JavaScript's `Number.prototype.toString` spells them
/// (ECMA-262 Number::toString): plain digits up to 21 integer digits (`100000000000000000000`,
/// where the first spelling was `1e20`), `0.000001`, then `1e+21` and `1.5e-7`.
fn javascript_spelling(text: &[u8], out: &mut Vec<u8>) {
    let (negative, text) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let (mantissa, exponent) = match text.iter().position(|&b| b == b'e') {
        Some(at) => (&text[..at], std::str::from_utf8(&text[at + 1..]).ok().and_then(|e| e.parse::<i32>().ok()).unwrap_or(0)),
        None => (text, 0),
    };
    let integer_digits = mantissa.iter().position(|&b| b == b'.').unwrap_or(mantissa.len());
    let mut digits: Vec<u8> = mantissa.iter().copied().filter(u8::is_ascii_digit).collect();
    // The value is 0.DIGITS × 10^point.
    let mut point = integer_digits as i32 + exponent;
    let leading = digits.iter().take_while(|&&d| d == b'0').count();
    digits.drain(..leading);
    point -= leading as i32;
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    if digits.is_empty() {
        out.push(b'0');
        return;
    }
    if negative {
        out.push(b'-');
    }
    let k = digits.len() as i32;
    if k <= point && point <= 21 {
        out.extend_from_slice(&digits);
        out.resize(out.len() + (point - k) as usize, b'0');
    } else if 0 < point && point <= 21 {
        out.extend_from_slice(&digits[..point as usize]);
        out.push(b'.');
        out.extend_from_slice(&digits[point as usize..]);
    } else if -6 < point && point <= 0 {
        out.extend_from_slice(b"0.");
        out.resize(out.len() + (-point) as usize, b'0');
        out.extend_from_slice(&digits);
    } else {
        out.push(digits[0]);
        if k > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        let e = point - 1;
        out.push(b'e');
        out.push(if e < 0 { b'-' } else { b'+' });
        json_text::int(out, i64::from(e.unsigned_abs()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON written from UTF-16 text, checked to be the same from bytes when it is ASCII.
    fn json(tape: &[f64], text: &str) -> String {
        let units: Vec<u16> = text.encode_utf16().collect();
        let mut out = Vec::new();
        write(tape, &units, &mut out).unwrap();
        if text.is_ascii() {
            let mut from_bytes = Vec::new();
            write(tape, text.as_bytes(), &mut from_bytes).unwrap();
            assert_eq!(String::from_utf8_lossy(&from_bytes), String::from_utf8_lossy(&out));
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn objects_and_arrays_get_their_commas() {
        use op::*;
        let tape = [OBJECT, KEY, 1.0, ARRAY, NUMBER, 1.0, NUMBER, 2.5, NULL, ARRAY, END, END, KEY, 1.0, OBJECT, END, KEY, 1.0, TRUE, END];
        assert_eq!(json(&tape, "abc"), r#"{"a":[1,2.5,null,[]],"b":{},"c":true}"#);
    }

    #[test]
    fn strings_are_escaped_and_made_utf8() {
        use op::*;
        assert_eq!(json(&[ARRAY, STRING, 6.0, STRING, 3.0, END], "q\"\\\n\u{1}\u{e9}d\u{1F600}"), "[\"q\\\"\\\\\\n\\u0001\u{e9}\",\"d\u{1F600}\"]");
        assert_eq!(json(&[ARRAY, STRING, 5.0, STRING, 5.0, END], "a\tb\u{1f}\"\\\r\x08\x0cz"), r#"["a\tb\u001f\"","\\\r\b\fz"]"#);
        // Lone surrogates as JSON.stringify escapes them; a pair stays one character.
        let units = [0xD800u16, u16::from(b'a'), 0xDC00, 0xD83D, 0xDE00, 0xDBFF];
        let mut out = Vec::new();
        write(&[STRING, 6.0], &units, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "\"\\ud800a\\udc00\u{1F600}\\udbff\"");
    }

    #[test]
    fn numbers_print_as_javascript_prints_them() {
        use op::*;
        assert_eq!(json(&[ARRAY, NUMBER, -0.0, NUMBER, 1e3, NUMBER, 0.1, NUMBER, f64::NAN, END], ""), "[0,1000,0.1,null]");
        // Found by a probe against JSON.stringify: 2^53 went out as 9007199254740992.0, read
        // as a float by other languages' parsers, and 1e21 as 1e21.
        let spelled = |n: f64| json(&[NUMBER, n], "");
        for (n, javascript) in [
            (9_007_199_254_740_992.0, "9007199254740992"),
            (-9_007_199_254_740_994.0, "-9007199254740994"),
            (1e20, "100000000000000000000"),
            (1.2345678901234568e20, "123456789012345680000"),
            (1e21, "1e+21"),
            (1.5e300, "1.5e+300"),
            (-2.5e-7, "-2.5e-7"),
            (1e-7, "1e-7"),
            (0.000001, "0.000001"),
            (0.0000123, "0.0000123"),
            (123.456, "123.456"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
        ] {
            assert_eq!(spelled(n), javascript, "{n:e}");
        }
    }

    fn shaped(tape: &[f64], text: &str, schema: serde_json::Value) -> String {
        let shape = ferrule_core::shape::CompiledShape::compile(&schema).unwrap();
        let units: Vec<u16> = text.encode_utf16().collect();
        let mut out = Vec::new();
        write_with(tape, &units, &mut out, shape.root()).unwrap();
        let mut from_bytes = Vec::new();
        write_with(tape, text.as_bytes(), &mut from_bytes, shape.root()).unwrap();
        assert_eq!(String::from_utf8_lossy(&from_bytes), String::from_utf8_lossy(&out));
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn members_a_shape_leaves_out_are_stepped_over() {
        use op::*;
        // {"id":1,"pw":{"a":[1,"s",{}]},"tags":[{"t":"x","q":9}],"n":"v"}
        let tape = [
            OBJECT, KEY, 2.0, NUMBER, 1.0, KEY, 2.0, OBJECT, KEY, 1.0, ARRAY, NUMBER, 1.0, STRING, 1.0, OBJECT, END, END, END,
            KEY, 4.0, ARRAY, OBJECT, KEY, 1.0, STRING, 1.0, KEY, 1.0, NUMBER, 9.0, END, END, KEY, 1.0, STRING, 1.0, END,
        ];
        let text = "idpwastagstxqnv";
        let schema = serde_json::json!({"properties": {"id": {}, "tags": {"items": {"properties": {"t": {}}}}, "n": {}}});
        assert_eq!(shaped(&tape, text, schema), r#"{"id":1,"tags":[{"t":"x"}],"n":"v"}"#);
        let all = serde_json::json!({"type": "object"});
        assert_eq!(shaped(&tape, text, all), r#"{"id":1,"pw":{"a":[1,"s",{}]},"tags":[{"t":"x","q":9}],"n":"v"}"#);
        // The first member left out: no comma before the next one written.
        let tail = serde_json::json!({"properties": {"n": {}}});
        assert_eq!(shaped(&tape, text, tail), r#"{"n":"v"}"#);
    }

    #[test]
    fn an_object_gets_its_defaults_and_fails_without_a_required_member() {
        use op::*;
        // [{"id":1},{"id":2,"tags":["a"]},{}]
        let tape = [ARRAY, OBJECT, KEY, 2.0, NUMBER, 1.0, END, OBJECT, KEY, 2.0, NUMBER, 2.0, KEY, 4.0, ARRAY, STRING, 1.0, END, END, END];
        let text = "ididtagsa";
        let item = serde_json::json!({"properties": {"id": {}, "tags": {"default": []}}, "required": ["id"]});
        let schema = serde_json::json!({"items": item});
        assert_eq!(shaped(&tape, text, schema.clone()), r#"[{"id":1,"tags":[]},{"id":2,"tags":["a"]}]"#);
        let lacking = [ARRAY, OBJECT, END, END];
        let shape = ferrule_core::shape::CompiledShape::compile(&schema).unwrap();
        let error = write_with(&lacking, "".as_bytes(), &mut Vec::new(), shape.root()).unwrap_err();
        assert!(error.contains("`id`"), "{error}");
        let empty = serde_json::json!({"properties": {"a": {"default": {"b": 1}}}});
        assert_eq!(shaped(&[OBJECT, END], "", empty), r#"{"a":{"b":1}}"#, "no comma before the first member");
    }

    #[test]
    fn a_malformed_tape_is_an_error_not_a_panic() {
        use op::*;
        let units: Vec<u16> = "ab".encode_utf16().collect();
        let shape = ferrule_core::shape::CompiledShape::compile(&serde_json::json!({"properties": {"a": {}}})).unwrap();
        for tape in [&[OBJECT][..], &[END], &[STRING, 5.0], &[KEY, 1.0], &[ARRAY, KEY, 1.0, NULL, END], &[NUMBER], &[42.0]] {
            assert!(write(tape, &units, &mut Vec::new()).is_err(), "{tape:?}");
            assert!(write(tape, b"ab", &mut Vec::new()).is_err(), "{tape:?}");
            assert!(write_shaped(tape, &units, &mut Vec::new(), shape.root()).is_err(), "{tape:?}");
        }
        // A member being stepped over that never ends, a key with no value, two values.
        for tape in [&[OBJECT, KEY, 1.0, OBJECT][..], &[OBJECT, KEY, 1.0, END], &[NULL, NULL], &[OBJECT, KEY, 1.0, ARRAY, END]] {
            let units: Vec<u16> = "ba".encode_utf16().collect();
            assert!(write_shaped(tape, &units, &mut Vec::new(), shape.root()).is_err(), "{tape:?}");
        }
    }
}
