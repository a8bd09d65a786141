//! The `duration` format as pydantic reads a `timedelta`, for every compiled schema.
//!
//! JSON Schema's `duration` is RFC 3339's ISO 8601 subset: `P1DT2H`, whole numbers, no sign.
//! pydantic (so FastAPI) takes more, and writes some of it itself: a sign (`-PT1S`), fractions
//! (`PT0.5S`), and a clock with optional days (`01:00:00`, `1 day, 01:00:00`, `2d`). jsonschema's
//! own check refused those, so a Python `timedelta` parameter was a 422 where FastAPI takes the
//! value (found by a probe beside FastAPI). Every form here is one pydantic takes; the binding's
//! conversion still judges the value, so a form pydantic refuses is its 422, with its message.

/// Whether text is a duration: `[±]P…` ISO 8601, or `[±][N day[s][,] ]H:MM[:SS[.f]]`, or
/// `[±]N day[s]` / `[±]Nd`.
pub(crate) fn is_duration(text: &str) -> bool {
    let b = text.as_bytes();
    let b = b.strip_prefix(b"+").or_else(|| b.strip_prefix(b"-")).unwrap_or(b);
    match b.strip_prefix(b"P") {
        Some(iso) => is_iso(iso),
        None => is_days_and_clock(b),
    }
}

/// After the `P`: date components (`Y`, `M`, `W`, `D`), then optionally `T` and time components
/// (`H`, `M`, `S`), each a number with an optional fraction; one component at least.
fn is_iso(rest: &[u8]) -> bool {
    let (date, time) = match rest.iter().position(|&c| c == b'T') {
        Some(at) => (&rest[..at], Some(&rest[at + 1..])),
        None => (rest, None),
    };
    let Some(date_parts) = components(date, b"YMWD") else { return false };
    let time_parts = match time {
        Some(time) => match components(time, b"HMS") {
            Some(count) => count,
            None => return false,
        },
        None => 0,
    };
    date_parts + time_parts > 0
}

/// How many `number unit` components `part` is, every unit one of `units`; `None` if it is
/// anything else.
fn components(mut part: &[u8], units: &[u8]) -> Option<usize> {
    let mut count = 0;
    while !part.is_empty() {
        let whole = leading_digits(part);
        if whole == 0 {
            return None;
        }
        let mut at = whole;
        if part.get(at) == Some(&b'.') {
            let fraction = leading_digits(&part[at + 1..]);
            if fraction == 0 {
                return None;
            }
            at += 1 + fraction;
        }
        if !part.get(at).is_some_and(|unit| units.contains(unit)) {
            return None;
        }
        part = &part[at + 1..];
        count += 1;
    }
    Some(count)
}

/// Optionally days (`N d`, `N day`, `N days`, then an optional comma and spaces), then
/// optionally a clock; at least one of them.
fn is_days_and_clock(b: &[u8]) -> bool {
    let digits = leading_digits(b);
    if digits == 0 {
        return false;
    }
    if b.get(digits) == Some(&b':') {
        return is_clock(b);
    }
    let mut rest = &b[digits..];
    rest = rest.strip_prefix(b" ").unwrap_or(rest);
    rest = match [&b"days"[..], b"day", b"d"].iter().find_map(|word| rest.strip_prefix(*word)) {
        Some(after) => after,
        None => return false,
    };
    rest = rest.strip_prefix(b",").unwrap_or(rest);
    while let Some(after) = rest.strip_prefix(b" ") {
        rest = after;
    }
    rest.is_empty() || is_clock(rest)
}

/// `H:MM`, `H:MM:SS` or `H:MM:SS.f`: hours of any length, minutes and seconds two digits each,
/// below 60.
fn is_clock(b: &[u8]) -> bool {
    let hours = leading_digits(b);
    if hours == 0 || b.get(hours) != Some(&b':') || !below_sixty(b, hours + 1) {
        return false;
    }
    let rest = &b[hours + 3..];
    match rest {
        [] => true,
        [b':', ..] if below_sixty(rest, 1) => match &rest[3..] {
            [] => true,
            [b'.', fraction @ ..] => !fraction.is_empty() && fraction.iter().all(u8::is_ascii_digit),
            _ => false,
        },
        _ => false,
    }
}

fn leading_digits(b: &[u8]) -> usize {
    b.iter().take_while(|c| c.is_ascii_digit()).count()
}

/// Two digits at `at` making less than 60.
fn below_sixty(b: &[u8], at: usize) -> bool {
    b.get(at..at + 2).is_some_and(|d| d[0].is_ascii_digit() && d[1].is_ascii_digit() && d[0] < b'6')
}

#[cfg(test)]
mod tests {
    use super::is_duration;

    /// Each taken by pydantic 2.14's `TypeAdapter(timedelta)` (checked one by one).
    #[test]
    fn takes_what_pydantic_takes() {
        for text in [
            "P1D", "PT1H", "P1Y", "P1M", "P1W", "P1W2D", "P1.5D", "PT1.5S", "PT1.5H", "P1DT", "-P1D", "+P1D",
            "P1DT1H1M1.123456S", "PT0.0000001S", "P1DT1M", "P0D", "PT36H", "P1Y2M3W", "P10000D", "01:00:00", "1:00:00",
            "01:00", "1 day, 01:00:00", "1 day 01:00:00", "2 days, 01:00:00", "2 days 01:00:00", "-1 day, 01:00:00", "1 day",
            "1d", "01:00:00.5", "01:00:00.1234567", "99:00:00", "1 days, 00:00", "1 day,01:00:00", "-01:00:00", "+01:00:00",
        ] {
            assert!(is_duration(text), "{text}");
        }
    }

    /// Each refused by pydantic too.
    #[test]
    fn refuses_what_pydantic_refuses() {
        for text in [
            "", "P", "PT", "p1d", "P1d", "1:0:0", "25:61:00", "00:00:61", "3600", "1.5", " PT1H", "PT1H ", "00:00:00Z",
            "P1D1H", "x", "-", "PT.5S", "01:00:00.", "1 week",
        ] {
            assert!(!is_duration(text), "{text}");
        }
    }
}
