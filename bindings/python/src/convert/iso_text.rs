//! Exact `datetime.date` and `datetime.datetime` objects as the ISO 8601 text their
//! `isoformat()` returns, without calling it.
//!
//! `isoformat()` builds its text with `PyUnicode_FromFormat`, through libc's `vsprintf`, and a
//! datetime's offset through a second one: in a served profile of json-medium (one aware
//! datetime in the echoed body), it took 10,100 of the request's 218,100 instructions. Read
//! here through one `__reduce__` call, the request measured 207,100 (callgrind, 2,000
//! requests). A date, from its ordinal, was the first of these: a route echoing one went from
//! 10.7 to 10.3 CPU-µs per request (A/B, 3 rounds). Subclasses keep their own `isoformat()`,
//! which the caller calls.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyString, PyTuple, PyType};

static DATE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static DATETIME: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static UTC: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `datetime.date`, imported once for the process.
pub fn date_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    DATE.import(py, "datetime", "date")
}

/// `datetime.datetime`, imported once for the process.
pub fn datetime_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    DATETIME.import(py, "datetime", "datetime")
}

/// `datetime.fromisoformat(text)`, with RFC 3339's `Z` or `z` read as `+00:00`: Python 3.10
/// refuses both and 3.11 the lowercase one. Python's own body converter calls it too
/// (`_ferrule.datetime_from_text`).
pub fn datetime_from_text<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    let fromisoformat = pyo3::intern!(py, "fromisoformat");
    match text.strip_suffix(['Z', 'z']) {
        Some(local) => datetime_type(py)?.call_method1(fromisoformat, (format!("{local}+00:00"),)),
        None => datetime_type(py)?.call_method1(fromisoformat, (text,)),
    }
}

/// [`datetime_from_text`] for a Python value (`_ferrule.datetime_from_text`); what is not text
/// goes to `fromisoformat` for its own error.
pub fn datetime_from_value<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = value.py();
    match value.cast::<PyString>().ok().and_then(|text| text.to_str().ok()) {
        Some(text) => datetime_from_text(py, text),
        None => datetime_type(py)?.call_method1(pyo3::intern!(py, "fromisoformat"), (value,)),
    }
}

/// `datetime.date.fromisoformat(text)`.
pub fn date_from_text<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    date_type(py)?.call_method1(pyo3::intern!(py, "fromisoformat"), (text,))
}

/// ISO 8601 text of at most `YYYY-MM-DDTHH:MM:SS.ffffff+HH:MM:SS.ffffff`, on the stack.
pub struct IsoText {
    bytes: [u8; 42],
    len: usize,
}

impl IsoText {
    fn new() -> Self {
        IsoText { bytes: [0; 42], len: 0 }
    }

    /// The text (ASCII digits and separators only).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    fn push(&mut self, byte: u8) {
        self.bytes[self.len] = byte;
        self.len += 1;
    }

    /// `value` in exactly `width` decimal digits (`value < 10^width`).
    fn digits(&mut self, mut value: u32, width: usize) {
        for at in (0..width).rev() {
            self.bytes[self.len + at] = b'0' + (value % 10) as u8;
            value /= 10;
        }
        self.len += width;
    }

    /// `YYYY-MM-DD`.
    fn date(&mut self, year: u32, month: u32, day: u32) {
        self.digits(year, 4);
        self.push(b'-');
        self.digits(month, 2);
        self.push(b'-');
        self.digits(day, 2);
    }

    /// `HH:MM:SS`, then `.ffffff` unless the microseconds are 0 (`isoformat()`'s "auto").
    fn time(&mut self, hour: u32, minute: u32, second: u32, microsecond: u32) {
        self.digits(hour, 2);
        self.push(b':');
        self.digits(minute, 2);
        self.push(b':');
        self.digits(second, 2);
        if microsecond != 0 {
            self.push(b'.');
            self.digits(microsecond, 6);
        }
    }

    /// A UTC offset as `isoformat()` writes it: `+HH:MM`, then `:SS` and `.ffffff` only when
    /// they are not 0.
    fn offset(&mut self, total_microseconds: i64) {
        self.push(if total_microseconds < 0 { b'-' } else { b'+' });
        let magnitude = total_microseconds.unsigned_abs();
        let (seconds, microsecond) = (magnitude / 1_000_000, (magnitude % 1_000_000) as u32);
        self.digits((seconds / 3600) as u32, 2);
        self.push(b':');
        self.digits((seconds / 60 % 60) as u32, 2);
        if seconds % 60 != 0 || microsecond != 0 {
            self.push(b':');
            self.digits((seconds % 60) as u32, 2);
            if microsecond != 0 {
                self.push(b'.');
                self.digits(microsecond, 6);
            }
        }
    }
}

/// An exact `datetime.date`, from its ordinal (one call).
pub fn date_of_exact(obj: &Bound<'_, PyAny>) -> PyResult<Option<IsoText>> {
    use chrono::Datelike;
    let py = obj.py();
    if !obj.get_type().is(date_type(py)?) {
        return Ok(None);
    }
    let ordinal: i32 = obj.call_method0(pyo3::intern!(py, "toordinal"))?.extract()?;
    // Python's ordinal 1 is 0001-01-01, as chrono's day 1 of the common era is.
    let Some(date) = chrono::NaiveDate::from_num_days_from_ce_opt(ordinal) else { return Ok(None) };
    let mut text = IsoText::new();
    text.date(date.year() as u32, date.month(), date.day());
    Ok(Some(text))
}

/// An exact `datetime.datetime`, from its pickled state, and its `utcoffset()` when its zone is
/// not `timezone.utc`.
///
/// `__reduce__` returns `(datetime, (state,))` or `(datetime, (state, tzinfo))`, where `state`
/// is ten bytes: the year (two, big-endian), month, day, hour, minute, second and the
/// microseconds (three, big-endian). Pickles must load in every later Python, so that layout
/// is fixed; any other shape is left to `isoformat()`.
pub fn datetime_of_exact(obj: &Bound<'_, PyAny>) -> PyResult<Option<IsoText>> {
    let py = obj.py();
    if !obj.get_type().is(datetime_type(py)?) {
        return Ok(None);
    }
    let reduced = obj.call_method0(pyo3::intern!(py, "__reduce__"))?;
    let Ok(reduced) = reduced.cast_into::<PyTuple>() else { return Ok(None) };
    let Ok(arguments) = reduced.get_item(1).and_then(|arguments| Ok(arguments.cast_into::<PyTuple>()?)) else { return Ok(None) };
    let Ok(state) = arguments.get_item(0).and_then(|state| Ok(state.cast_into::<PyBytes>()?)) else { return Ok(None) };
    let &[year_high, year_low, month, day, hour, minute, second, us_high, us_mid, us_low] = state.as_bytes() else {
        return Ok(None);
    };
    // Naive: no zone in the state (asked by length: a missing item would raise IndexError).
    let offset = match arguments.len() {
        1 => None,
        _ if arguments.get_item(1)?.is(UTC.get_or_try_init(py, || Ok::<_, PyErr>(py.import("datetime")?.getattr("timezone")?.getattr("utc")?.unbind()))?) => Some(0),
        _ => utc_offset_microseconds(obj)?,
    };
    let mut text = IsoText::new();
    // The month's high bit is `fold` in the state of protocols above 3; `__reduce__` is 2.
    text.date(u32::from(year_high) << 8 | u32::from(year_low), u32::from(month & 0x7f), u32::from(day));
    text.push(b'T');
    text.time(u32::from(hour), u32::from(minute), u32::from(second), u32::from(us_high) << 16 | u32::from(us_mid) << 8 | u32::from(us_low));
    if let Some(offset) = offset {
        text.offset(offset);
    }
    Ok(Some(text))
}

/// `obj.utcoffset()` in microseconds, `None` when it is `None` (a zone that does not know).
/// `datetime.utcoffset()` checks what the zone returned: a `timedelta` of less than a day.
fn utc_offset_microseconds(obj: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    let py = obj.py();
    let offset = obj.call_method0(pyo3::intern!(py, "utcoffset"))?;
    if offset.is_none() {
        return Ok(None);
    }
    let days: i64 = offset.getattr(pyo3::intern!(py, "days"))?.extract()?;
    let seconds: i64 = offset.getattr(pyo3::intern!(py, "seconds"))?.extract()?;
    let microseconds: i64 = offset.getattr(pyo3::intern!(py, "microseconds"))?.extract()?;
    Ok(Some((days * 86_400 + seconds) * 1_000_000 + microseconds))
}
