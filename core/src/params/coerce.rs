//! Text → typed value, with pydantic's lax-mode rules where FastAPI users rely on them.

use super::kind::ScalarKind;
use crate::problem::{Issue, LocSegment};
use crate::value::{DateTimeValue, Value};
use chrono::NaiveDate;
use serde_json::{json, Value as Json};

/// Coerce one textual value; on failure the issue says what was expected at `loc()`. The
/// location is made only for a failure: it is a few allocations (callgrind on path-deep: 440
/// instructions a parameter when it was made for every value).
pub fn coerce(kind: ScalarKind, text: &str, loc: impl FnOnce() -> Vec<LocSegment>) -> Result<Value, Issue> {
    let fail = |kind: &'static str, msg: &str| {
        Err(Issue::new(kind, loc(), msg, Json::String(text.to_owned())))
    };
    match kind {
        ScalarKind::Str | ScalarKind::Binary => Ok(Value::Str(text.to_owned())),
        ScalarKind::Int => match parse_int(text) {
            Ok(i) => Ok(Value::Int(i)),
            // A whole number past 64 bits: the same error as in a JSON body (pydantic's).
            Err(IntText::TooLarge) => {
                let issue = Issue::int_parsing_size(Vec::new(), Json::Null);
                fail(issue.kind, &issue.msg)
            }
            Err(IntText::NotAnInteger) => fail(
                "int_parsing",
                "Input should be a valid integer, unable to parse string as an integer",
            ),
        },
        ScalarKind::Decimal if is_decimal(text) => Ok(Value::Str(text.trim().to_owned())),
        ScalarKind::Decimal => fail("decimal_parsing", "Input should be a valid decimal"),
        ScalarKind::Float => match text.trim().parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Value::Float(f)),
            _ => fail("float_parsing", "Input should be a valid number, unable to parse string as a number"),
        },
        ScalarKind::Bool => match parse_bool(text) {
            Some(b) => Ok(Value::Bool(b)),
            None => fail("bool_parsing", "Input should be a valid boolean, unable to interpret input"),
        },
        ScalarKind::Uuid => match uuid::Uuid::try_parse(text.trim()) {
            Ok(u) => Ok(Value::Uuid(u)),
            Err(_) => fail("uuid_parsing", "Input should be a valid UUID"),
        },
        // A date-time at midnight is its day, as pydantic reads one (`2024-01-01T00:00:00`,
        // the timestamp `0`); at another time it is not a day.
        ScalarKind::Date => match parse_date(text).ok_or(()).or_else(|()| super::datetime::day_of(text.trim())) {
            Ok(d) => Ok(Value::Date(d)),
            Err(true) => fail("date_from_datetime_inexact", "Datetimes provided to dates should have zero time - e.g. be exact dates"),
            Err(false) => fail("date_parsing", "Input should be a valid date in the format YYYY-MM-DD"),
        },
        // ISO 8601, or what else pydantic reads as a `datetime` (a day, a Unix timestamp).
        ScalarKind::DateTime => match parse_datetime(text).or_else(|| super::datetime::parse_lax(text.trim())) {
            Some(dt) => Ok(Value::DateTime(dt)),
            None => fail("datetime_parsing", "Input should be a valid datetime"),
        },
        ScalarKind::Union { int, float, bool } => {
            let tries = [(int, ScalarKind::Int), (float, ScalarKind::Float), (bool, ScalarKind::Bool)];
            let mut first_failure = None;
            for (_, kind) in tries.into_iter().filter(|(on, _)| *on) {
                match coerce(kind, text, Vec::new) {
                    Ok(value) => return Ok(value),
                    Err(issue) => {
                        first_failure.get_or_insert(issue);
                    }
                }
            }
            // None read it: the first branch's own error, where the value is.
            match first_failure {
                Some(issue) => fail(issue.kind, &issue.msg),
                None => Ok(Value::Str(text.to_owned())),
            }
        }
    }
}

/// A uuid, date or date-time kept as the text it was sent, once its format has judged it: a
/// uuid only hyphenated (optionally after `urn:uuid:`), as Ajv's `uuid` format takes one, where
/// [`coerce`] also reads the simple and braced forms (and spaces around) Python's `UUID` takes;
/// a date and a date-time as the `date` and `date-time` formats judge a JSON body's, without
/// the other texts a typed parameter takes (a Unix timestamp).
pub fn as_sent(kind: ScalarKind, text: &str, loc: impl FnOnce() -> Vec<LocSegment>) -> Result<Value, Issue> {
    // 36 characters the uuid crate reads are the hyphenated form (the simple one is 32, the
    // braced 38). Its reader is ~50 instructions; a loop over the bytes here was ~280.
    let hyphenated = |text: &str| {
        let text = text.strip_prefix("urn:uuid:").unwrap_or(text);
        text.len() == 36 && uuid::Uuid::try_parse(text).is_ok()
    };
    let (read, refusal, msg) = match kind {
        ScalarKind::Uuid => (hyphenated(text), "uuid_parsing", "Input should be a valid UUID"),
        ScalarKind::Date => (is_date(text), "date_parsing", "Input should be a valid date in the format YYYY-MM-DD"),
        ScalarKind::DateTime => (is_date_time(text), "datetime_parsing", "Input should be a valid datetime"),
        _ => return coerce(kind, text, loc).map(|_| Value::Str(text.to_owned())),
    };
    match read {
        true => Ok(Value::Str(text.to_owned())),
        false => Err(Issue::new(refusal, loc(), msg, Json::String(text.to_owned()))),
    }
}

/// Integers as decimal text; like pydantic, a whole-number float text (`"3.0"`) is refused.
/// Why a text is no `i64`.
enum IntText {
    NotAnInteger,
    /// A whole number, but past 64 bits.
    TooLarge,
}

fn parse_int(text: &str) -> Result<i64, IntText> {
    // A whole number written with a zero fraction (`4.0`, `4.00`) is that number, as pydantic
    // reads it (and as a JSON body's `4.0` arrives); `4.` and `4.5` are not.
    let t = text.trim();
    let t = match t.split_once('.') {
        Some((whole, zeros)) if !zeros.is_empty() && zeros.bytes().all(|b| b == b'0') => whole,
        _ => t,
    };
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'_') {
        return Err(IntText::NotAnInteger);
    }
    if digits.starts_with('_') || digits.ends_with('_') || digits.contains("__") {
        return Err(IntText::NotAnInteger);
    }
    // Only digits (and a sign) are left, so the one way to fail is to overflow.
    t.replace('_', "").parse().map_err(|_| IntText::TooLarge)
}

/// The spellings pydantic accepts for booleans.
fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" | "t" | "y" => Some(true),
        "false" | "0" | "no" | "off" | "f" | "n" => Some(false),
        _ => None,
    }
}

/// Exactly `YYYY-MM-DD`, as pydantic reads a date. chrono's `%Y-%m-%d` also took a signed
/// year or a space for a digit (`-024-01-01`, ` 2024-1-01`), and parsed its pattern on every
/// call (1 % of a query-many request).
/// `YYYY-MM-DD`, a real day from year 1, as a `date-time`'s day is ([`parse_datetime`]): year
/// 0 is RFC 3339's but no Python `date`'s, and reached `date(0, 1, 1)` as a 500 (found by a
/// probe; pydantic answers `date_parsing`).
pub(super) fn parse_date(text: &str) -> Option<NaiveDate> {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let number = |digits: &[u8]| digits.iter().try_fold(0u32, |n, d| d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0')));
    let year = number(&b[0..4]).filter(|year| *year >= 1)?;
    NaiveDate::from_ymd_opt(year as i32, number(&b[5..7])?, number(&b[8..10])?)
}

/// Whether a JSON string is a date a route accepts ([`parse_date`]): the `date` format of every
/// compiled schema (`validation::route_options`), so a body's day is judged as a parameter's.
pub(crate) fn is_date(text: &str) -> bool {
    parse_date(text).is_some()
}

/// Whether a JSON string is a date-time a route accepts: ISO 8601 with fixed-width fields,
/// `YYYY-MM-DD`, `T` (or `t`) or a space, `HH:MM`, optionally `:SS` and a fraction, and optionally `Z`
/// or `±HH:MM` (pydantic's `datetime` takes it with or without the offset), that is a real
/// time ([`parse_datetime`]). It is the `date-time` format of every compiled schema
/// (`validation::route_options`). The shape is checked first because chrono's numbers are
/// lenient (`2018-1-2T3:4:5`, ` 1:00`, a sign), and a body's text reaches Python's
/// `datetime.fromisoformat`, which refuses those: found on review, they would have been 500s.
pub(crate) fn is_date_time(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| b.get(range).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let fixed = b.len() >= 16 && digits(0..4) && b[4] == b'-' && digits(5..7) && b[7] == b'-' && digits(8..10) && matches!(b[10], b'T' | b't' | b' ')
        && digits(11..13) && b[13] == b':' && digits(14..16);
    fixed && after_minutes(&b[16..]) && parse_datetime(text).is_some()
}

/// Whether text is a decimal number as Python's `Decimal` (so pydantic) reads one, finite:
/// around it whitespace; a sign; digits, a point and digits (one side may be empty), `_`
/// between two digits; an exponent. The `decimal` format of every compiled schema, which
/// Python's `Decimal` parameters are declared with so their text reaches it whole: read as a
/// JSON number it went through a float (`12345678901234567.89` became `…568`, `1.10` became
/// `1.1`: found by a differential run against FastAPI).
pub(crate) fn is_decimal(text: &str) -> bool {
    let b = text.trim().as_bytes();
    let b = b.strip_prefix(b"+").or_else(|| b.strip_prefix(b"-")).unwrap_or(b);
    // Digits with `_` only between two of them; the count of digits.
    let run = |b: &[u8]| -> (usize, usize) {
        let mut at = 0;
        let mut digits = 0;
        while at < b.len() {
            match b[at] {
                b'0'..=b'9' => digits += 1,
                b'_' if at > 0 && b[at - 1].is_ascii_digit() && b.get(at + 1).is_some_and(u8::is_ascii_digit) => {}
                _ => break,
            }
            at += 1;
        }
        (at, digits)
    };
    let (whole_end, whole) = run(b);
    let mut rest = &b[whole_end..];
    let mut fraction = 0;
    if let Some(after) = rest.strip_prefix(b".") {
        let (end, digits) = run(after);
        fraction = digits;
        rest = &after[end..];
    }
    if whole + fraction == 0 {
        return false;
    }
    if let Some(exponent) = rest.strip_prefix(b"e").or_else(|| rest.strip_prefix(b"E")) {
        let exponent = exponent.strip_prefix(b"+").or_else(|| exponent.strip_prefix(b"-")).unwrap_or(exponent);
        return !exponent.is_empty() && exponent.iter().all(u8::is_ascii_digit);
    }
    rest.is_empty()
}

/// A time of day as pydantic and Python's `time.fromisoformat` read one: `07:30`, `07:30:00`,
/// a fraction of a second, and an offset (`Z`, `+02:00`) or none. JSON Schema's `time` is RFC
/// 3339's full-time, which wants the offset: a Python `time` field refused `07:30:00`, the very
/// text Ferrule writes for one (found by a probe; FastAPI takes it).
pub(crate) fn is_time(text: &str) -> bool {
    let b = text.as_bytes();
    two_digits(b, 0, 23) && b.get(2) == Some(&b':') && two_digits(b, 3, 59) && after_minutes(&b[5..])
}

/// What may follow a time's `HH:MM`, in a time or a date-time: `:SS`, then a fraction of a
/// second, then `Z`, `±HH:MM` or nothing.
fn after_minutes(rest: &[u8]) -> bool {
    let mut at = 0;
    if rest.first() == Some(&b':') {
        if !two_digits(rest, 1, 59) {
            return false;
        }
        at = 3;
        if rest.get(at) == Some(&b'.') {
            let fraction = rest[at + 1..].iter().take_while(|d| d.is_ascii_digit()).count();
            if fraction == 0 {
                return false;
            }
            at += 1 + fraction;
        }
    }
    match &rest[at..] {
        [] | [b'Z' | b'z'] => true,
        [b'+' | b'-', offset @ ..] => offset.len() == 5 && two_digits(offset, 0, 23) && offset[2] == b':' && two_digits(offset, 3, 59),
        _ => false,
    }
}

/// Two digits at `at` of `b`, making at most `most`.
fn two_digits(b: &[u8], at: usize, most: u8) -> bool {
    b.get(at..at + 2).is_some_and(|d| d.iter().all(u8::is_ascii_digit) && (d[0] - b'0') * 10 + (d[1] - b'0') <= most)
}

/// A date-time in ISO 8601 text, as pydantic reads one ([`super::datetime::parse_iso`]),
/// spaces around it aside.
fn parse_datetime(text: &str) -> Option<DateTimeValue> {
    super::datetime::parse_iso(text.trim())
}

/// A schema `default` (JSON) in the parameter's typed form.
pub fn typed_default(kind: ScalarKind, default: &Json) -> Value {
    match (kind, default) {
        (_, Json::Null) => Value::Null,
        (ScalarKind::Int, Json::Number(n)) if n.is_i64() => Value::Int(n.as_i64().unwrap_or(0)),
        (ScalarKind::Float, Json::Number(n)) => Value::Float(n.as_f64().unwrap_or(0.0)),
        (_, Json::Bool(b)) => Value::Bool(*b),
        (_, Json::String(s)) => coerce(kind, s, Vec::new).unwrap_or_else(|_| Value::Str(s.clone())),
        (kind, Json::Array(items)) => Value::Array(items.iter().map(|i| typed_default(kind, i)).collect()),
        (_, other) => Value::Json(crate::document::Document::from_tree(other)),
    }
}

/// The instance a coerced value presents to JSON Schema validation.
/// What a parameter of `kind` is validated as: [`to_instance`], but a decimal's text as the
/// number it is (its bounds are judged in a float; the handler gets every digit).
pub fn instance_of(kind: ScalarKind, value: &Value) -> Json {
    let number = |text: &str| {
        let digits: String = text.chars().filter(|&c| c != '_').collect();
        digits.parse::<f64>().ok().and_then(serde_json::Number::from_f64).map_or_else(|| Json::String(text.to_owned()), Json::Number)
    };
    match (kind, value) {
        (ScalarKind::Decimal, Value::Str(text)) => number(text),
        (ScalarKind::Decimal, Value::Array(items)) => Json::Array(items.iter().map(|item| instance_of(kind, item)).collect()),
        _ => to_instance(value),
    }
}

pub fn to_instance(value: &Value) -> Json {
    match value {
        Value::File(file) => json!(file.filename.clone().unwrap_or_default()),
        other => other.to_json(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(kind: ScalarKind, text: &str) -> Value {
        coerce(kind, text, Vec::new).expect(text)
    }

    fn err(kind: ScalarKind, text: &str) -> &'static str {
        coerce(kind, text, Vec::new).expect_err(text).kind
    }

    #[test]
    fn integers() {
        assert_eq!(ok(ScalarKind::Int, "-42"), Value::Int(-42));
        assert_eq!(ok(ScalarKind::Int, "1_000"), Value::Int(1000));
        assert_eq!(ok(ScalarKind::Int, "4.0"), Value::Int(4));
        assert_eq!(ok(ScalarKind::Int, "-4.00"), Value::Int(-4));
        assert_eq!(err(ScalarKind::Int, "4.5"), "int_parsing");
        assert_eq!(err(ScalarKind::Int, "4."), "int_parsing");
        assert_eq!(err(ScalarKind::Int, ".0"), "int_parsing");
        assert_eq!(err(ScalarKind::Int, "99999999999999999999"), "int_parsing_size");
        assert_eq!(err(ScalarKind::Int, "-9223372036854775809"), "int_parsing_size");
        assert_eq!(err(ScalarKind::Int, ""), "int_parsing");
    }

    #[test]
    fn a_time_is_read_as_pydantic_reads_one() {
        for time in ["07:30", "07:30:00", "23:59:59.123456", "07:30:00Z", "07:30:00+02:00", "00:00-05:30"] {
            assert!(is_time(time), "{time}");
        }
        for time in ["7:30", "24:00", "07:60", "07:30:", "07:30:00.", "07:30:00+2", "07:30:00 ", "", "07:30:00+24:00"] {
            assert!(!is_time(time), "{time}");
        }
    }

    #[test]
    fn booleans_accept_pydantic_spellings() {
        for t in ["true", "True", "1", "yes", "on"] {
            assert_eq!(ok(ScalarKind::Bool, t), Value::Bool(true));
        }
        for t in ["false", "0", "no", "off"] {
            assert_eq!(ok(ScalarKind::Bool, t), Value::Bool(false));
        }
        assert_eq!(err(ScalarKind::Bool, "maybe"), "bool_parsing");
    }

    #[test]
    fn floats_refuse_non_finite() {
        assert_eq!(ok(ScalarKind::Float, "2.5"), Value::Float(2.5));
        assert_eq!(err(ScalarKind::Float, "inf"), "float_parsing");
        assert_eq!(err(ScalarKind::Float, "NaN"), "float_parsing");
    }

    #[test]
    fn dates_and_times() {
        assert_eq!(err(ScalarKind::Date, "2024-02-30"), "date_parsing");
        assert_eq!(err(ScalarKind::Date, "2024-1-5"), "date_parsing");
        assert_eq!(err(ScalarKind::Date, "02024-1-01"), "date_parsing");
        assert_eq!(err(ScalarKind::Date, "-024-01-01"), "date_parsing");
        assert_eq!(err(ScalarKind::Date, " 2024-1-01"), "date_parsing");
        assert_eq!(err(ScalarKind::Date, "0000-01-01"), "date_parsing", "no Python date has year 0");
        assert!(is_date("0001-01-01") && !is_date("0000-12-31") && !is_date("2024-02-30"));
        assert_eq!(ok(ScalarKind::Date, "2024-02-29").to_json(), serde_json::json!("2024-02-29"));
        let Value::DateTime(dt) = ok(ScalarKind::DateTime, "2024-01-15T10:30:00Z") else { panic!() };
        assert_eq!(dt.to_iso8601(), "2024-01-15T10:30:00+00:00");
        let Value::DateTime(naive) = ok(ScalarKind::DateTime, "2024-01-15T10:30:00") else { panic!() };
        assert_eq!(naive.to_iso8601(), "2024-01-15T10:30:00");
    }

    /// Found by a differential run beside FastAPI 0.165: pydantic reads a `datetime` parameter
    /// from a Unix timestamp, a day alone, `+0100` and `2024-01-15 10:30`, and a `date` from a
    /// date-time at midnight; each was a 422. A date-time at another time is no day (pydantic's
    /// `date_from_datetime_inexact`).
    #[test]
    fn dates_and_date_times_from_what_pydantic_reads() {
        let text = |kind, sent| ok(kind, sent).to_json();
        assert_eq!(text(ScalarKind::DateTime, "1700000000"), json!("2023-11-14T22:13:20+00:00"));
        assert_eq!(text(ScalarKind::DateTime, "2024-01-15"), json!("2024-01-15T00:00:00"));
        assert_eq!(text(ScalarKind::DateTime, "2024-01-15T10:30:00+0100"), json!("2024-01-15T10:30:00+01:00"));
        assert_eq!(text(ScalarKind::DateTime, "2024-01-15 10:30"), json!("2024-01-15T10:30:00"));
        assert_eq!(err(ScalarKind::DateTime, "1e10"), "datetime_parsing");
        assert_eq!(text(ScalarKind::Date, "2024-01-15T00:00:00"), json!("2024-01-15"));
        assert_eq!(text(ScalarKind::Date, "0"), json!("1970-01-01"));
        assert_eq!(err(ScalarKind::Date, "2024-01-15T00:00:01"), "date_from_datetime_inexact");
        assert_eq!(err(ScalarKind::Date, "1700000000"), "date_from_datetime_inexact");
        // Handed over as sent (Node's), each is judged by its format alone, as Ajv judges it.
        assert_eq!(as_sent(ScalarKind::DateTime, "1700000000", Vec::new).unwrap_err().kind, "datetime_parsing");
        assert_eq!(as_sent(ScalarKind::Date, "2024-01-15T00:00:00", Vec::new).unwrap_err().kind, "date_parsing");
        assert_eq!(as_sent(ScalarKind::DateTime, "2024-01-15T10:30:00Z", Vec::new).unwrap(), Value::Str("2024-01-15T10:30:00Z".into()));
    }

    #[test]
    fn uuids_are_normalised() {
        let v = ok(ScalarKind::Uuid, "550E8400-E29B-41D4-A716-446655440000");
        assert_eq!(v.to_json(), json!("550e8400-e29b-41d4-a716-446655440000"));
        assert_eq!(err(ScalarKind::Uuid, "550e8400"), "uuid_parsing");
    }
}
