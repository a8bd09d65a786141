//! Date-times read as pydantic reads a `datetime`: the ISO 8601 text every language takes, and,
//! for a parameter handed over typed, the other texts pydantic takes (a Unix timestamp, a day
//! alone), and a day read from a date-time at midnight.

use crate::value::DateTimeValue;
use chrono::{DateTime, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc};

/// `YYYY-MM-DD`, `T` (or `t`, or a space), `HH:MM`, optionally `:SS` and a fraction (after `.`
/// or `,`, nanoseconds kept), then `Z`, `±HH:MM`, `±HHMM` or nothing (naive): pydantic's ISO
/// forms. chrono's RFC 3339 reader wanted the seconds and the colon of an offset, so
/// `2024-01-01 10:30` and `…T10:30:00+0100`, which FastAPI takes, were 422s (found by a
/// differential run). A day past its month, `24:00`, a leap second and year 0 are refused, as
/// Python's `datetime` holds none of them.
pub(super) fn parse_iso(text: &str) -> Option<DateTimeValue> {
    let b = text.as_bytes();
    let day = super::coerce::parse_date(text.get(..10)?)?;
    if b.len() < 16 || !matches!(b[10], b'T' | b't' | b' ') || b[13] != b':' {
        return None;
    }
    let (hour, minute) = (two_digits(b, 11)?, two_digits(b, 14)?);
    let (mut second, mut nanos, mut at) = (0, 0, 16);
    if b.get(at) == Some(&b':') {
        second = two_digits(b, 17)?;
        at = 19;
        if matches!(b.get(at), Some(b'.' | b',')) {
            let digits = b[at + 1..].iter().take_while(|d| d.is_ascii_digit()).count();
            if digits == 0 {
                return None;
            }
            // Nanoseconds from the first nine digits; the rest are below what any clock keeps.
            nanos = b[at + 1..at + 1 + digits.min(9)].iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')) * 10u32.pow(9 - digits.min(9) as u32);
            at += 1 + digits;
        }
    }
    // Below 60 seconds: chrono's reading of a leap second is no time Python holds.
    let time = NaiveTime::from_hms_nano_opt(hour, minute, second, nanos).filter(|_| second < 60)?;
    let naive = NaiveDateTime::new(day, time);
    let offset_minutes = match &b[at..] {
        [] => return Some(DateTimeValue::Naive(naive)),
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), rest @ ..] => {
            let (hours, minutes) = match rest {
                [_, _, b':', _, _] => (two_digits(rest, 0)?, two_digits(rest, 3)?),
                [_, _, _, _] => (two_digits(rest, 0)?, two_digits(rest, 2)?),
                _ => return None,
            };
            if hours > 23 || minutes > 59 {
                return None;
            }
            let minutes = (hours * 60 + minutes) as i32;
            if *sign == b'-' { -minutes } else { minutes }
        }
        _ => return None,
    };
    let offset = FixedOffset::east_opt(offset_minutes * 60)?;
    offset.from_local_datetime(&naive).single().map(DateTimeValue::Offset)
}

/// What pydantic also reads as a `datetime` when it is not ISO 8601 text: a day alone (its
/// midnight, naive) and a Unix timestamp (UTC; in milliseconds past 2e10, as pydantic has it).
/// Only a parameter handed over typed reads these (Python's, Ruby's); Node's are judged by the
/// format, as Ajv judges them.
pub(super) fn parse_lax(text: &str) -> Option<DateTimeValue> {
    if let Some(day) = super::coerce::parse_date(text) {
        return Some(DateTimeValue::Naive(day.and_time(NaiveTime::MIN)));
    }
    from_timestamp(text)
}

/// `[±]digits[.digits]` as seconds since 1970 (milliseconds when its size is past 2e10), to
/// the microsecond, within Python's years 1 to 9999.
fn from_timestamp(text: &str) -> Option<DateTimeValue> {
    let b = text.as_bytes();
    let unsigned = b.strip_prefix(b"+").or_else(|| b.strip_prefix(b"-")).unwrap_or(b);
    let (whole, fraction) = match unsigned.iter().position(|&c| c == b'.') {
        Some(point) => (&unsigned[..point], &unsigned[point + 1..]),
        None => (unsigned, &[][..]),
    };
    let digits = |part: &[u8]| part.iter().all(u8::is_ascii_digit);
    if whole.is_empty() || !digits(whole) || !digits(fraction) || (fraction.is_empty() && unsigned.len() != whole.len()) {
        return None;
    }
    let mut seconds: f64 = text.parse().ok()?;
    if seconds.abs() > 2e10 {
        seconds /= 1000.0;
    }
    let micros = (seconds * 1e6).round();
    // Python's `datetime` ends with year 9999; chrono's range is wider.
    if !(-62_135_596_800e6..=253_402_300_799e6).contains(&micros) {
        return None;
    }
    let at = DateTime::<Utc>::from_timestamp_micros(micros as i64)?;
    Some(DateTimeValue::Offset(at.fixed_offset()))
}

/// A day read from a date-time (ISO or pydantic's other texts): `Ok` when its time is exactly
/// midnight, as pydantic takes it, `Err(true)` when it is a date-time at another time
/// (pydantic's `date_from_datetime_inexact`), `Err(false)` when it is no date-time at all.
pub(super) fn day_of(text: &str) -> Result<NaiveDate, bool> {
    let value = parse_iso(text).or_else(|| from_timestamp(text)).ok_or(false)?;
    let naive = match value {
        DateTimeValue::Offset(at) => at.naive_local(),
        DateTimeValue::Naive(at) => at,
    };
    (naive.time() == NaiveTime::MIN).then(|| naive.date()).ok_or(true)
}

/// Two digits at `at`, as a number.
fn two_digits(b: &[u8], at: usize) -> Option<u32> {
    match b.get(at..at + 2)? {
        [tens @ b'0'..=b'9', ones @ b'0'..=b'9'] => Some(u32::from(tens - b'0') * 10 + u32::from(ones - b'0')),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iso(text: &str) -> Option<String> {
        parse_iso(text).map(|value| value.to_iso8601())
    }

    fn lax(text: &str) -> Option<String> {
        parse_lax(text).map(|value| value.to_iso8601())
    }

    /// Each as pydantic 2.14's `TypeAdapter(datetime)` reads it (checked one by one).
    #[test]
    fn iso_text_as_pydantic_reads_it() {
        assert_eq!(iso("2024-01-01T00:00:00").as_deref(), Some("2024-01-01T00:00:00"));
        assert_eq!(iso("2024-01-01 10:30").as_deref(), Some("2024-01-01T10:30:00"));
        assert_eq!(iso("2024-01-01T10:30Z").as_deref(), Some("2024-01-01T10:30:00+00:00"));
        assert_eq!(iso("2024-01-01t00:00:00").as_deref(), Some("2024-01-01T00:00:00"));
        assert_eq!(iso("2024-01-01T00:00:00+0100").as_deref(), Some("2024-01-01T00:00:00+01:00"));
        assert_eq!(iso("2024-01-01T00:00:00-00:00").as_deref(), Some("2024-01-01T00:00:00+00:00"));
        assert_eq!(iso("2024-01-01T00:00:00+23:59").as_deref(), Some("2024-01-01T00:00:00+23:59"));
        assert_eq!(iso("2024-01-01T00:00:00,5").as_deref(), Some("2024-01-01T00:00:00.500"));
        assert_eq!(iso("2024-01-01T00:00:00.123456789").as_deref(), Some("2024-01-01T00:00:00.123456789"));
        for refused in [
            "2024-01-01T00:00:00+01", "2024-01-01T24:00:00", "2024-01-01T00:00:60", "2024-1-01T00:00:00", "2024-01-01T00:00:00+24:00",
            "2024-01-01T00:00:00.Z", "2024-01-01T00:00:00UTC", "2024-01-01T00", "2024-01-01T0:00:00", "2024-02-30T00:00:00",
            "0000-01-01T00:00:00", "2024-01-01", "1700000000", "2024-01-01T00:00:00 ",
        ] {
            assert_eq!(iso(refused), None, "{refused}");
        }
    }

    #[test]
    fn a_day_alone_and_timestamps_as_pydantic_reads_them() {
        assert_eq!(lax("2024-01-01").as_deref(), Some("2024-01-01T00:00:00"));
        assert_eq!(lax("1700000000").as_deref(), Some("2023-11-14T22:13:20+00:00"));
        assert_eq!(lax("1700000000.5").as_deref(), Some("2023-11-14T22:13:20.500+00:00"));
        assert_eq!(lax("+1700000000").as_deref(), Some("2023-11-14T22:13:20+00:00"));
        assert_eq!(lax("-1").as_deref(), Some("1969-12-31T23:59:59+00:00"));
        assert_eq!(lax("0").as_deref(), Some("1970-01-01T00:00:00+00:00"));
        // Past 2e10, milliseconds; 2e10 itself is still seconds.
        assert_eq!(lax("1700000000000").as_deref(), Some("2023-11-14T22:13:20+00:00"));
        assert_eq!(lax("20000000000").as_deref(), Some("2603-10-11T11:33:20+00:00"));
        for refused in ["1e10", "1700000000000000", "99999999999999999999", "1_700_000_000", "0x10", "", "-", "1.", ".5", " 1"] {
            assert_eq!(lax(refused), None, "{refused}");
        }
    }

    #[test]
    fn a_day_from_a_date_time_only_at_midnight() {
        let day = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).unwrap();
        assert_eq!(day_of("2024-01-01T00:00:00"), Ok(day(2024, 1, 1)));
        assert_eq!(day_of("2024-01-01T00:00:00+0100"), Ok(day(2024, 1, 1)));
        assert_eq!(day_of("0"), Ok(day(1970, 1, 1)));
        assert_eq!(day_of("2024-01-01T00:00:01"), Err(true));
        assert_eq!(day_of("1700000000"), Err(true));
        assert_eq!(day_of("x"), Err(false));
    }
}
