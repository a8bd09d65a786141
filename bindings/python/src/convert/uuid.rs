//! `uuid.UUID` in both directions without running its Python code.
//!
//! `UUID(int=n)` is a Python `__init__` with five keyword checks, and `str(u)` formats in
//! Python too; together they were most of what a `{id:uuid}` route cost Python beyond an
//! `{id:int}` one (11.8 against 10.2 CPU-µs per request, the smoke check of `8e5faff`; 10.8
//! against 10.2 with this module, the smoke check of `4fa32b6`). Both directions here are a
//! few C calls:
//! - in: `object.__new__(UUID)`, then its two slots set as `UUID.__init__` sets them
//!   (`int`, and `is_safe` = `SafeUUID.unknown`), through `object.__setattr__` because
//!   `UUID.__setattr__` refuses every write. CPython 3.14's own `UUID._from_int` does the same;
//! - out: the `int` slot read and written as hyphenated hex in Rust. Only for the exact type:
//!   a subclass may print itself differently.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyString, PyType};

static UUID: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static SAFE_UNKNOWN: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static OBJECT_NEW: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The `uuid.UUID` class.
pub fn uuid_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    UUID.import(py, "uuid", "UUID")
}

/// A `uuid.UUID` equal to `UUID(int=value)`.
pub fn to_python(py: Python<'_>, value: u128) -> PyResult<Bound<'_, PyAny>> {
    let class = uuid_type(py)?;
    let new = OBJECT_NEW.get_or_try_init(py, || py.get_type::<pyo3::types::PyAny>().getattr("__new__").map(Bound::unbind))?;
    let uuid = new.bind(py).call1((class,))?;
    let unknown = SAFE_UNKNOWN.get_or_try_init(py, || py.import("uuid")?.getattr("SafeUUID")?.getattr("unknown").map(Bound::unbind))?;
    set_slot(&uuid, pyo3::intern!(py, "int"), value.into_pyobject(py)?.as_any())?;
    set_slot(&uuid, pyo3::intern!(py, "is_safe"), unknown.bind(py))?;
    Ok(uuid)
}

/// `uuid.UUID(value)` for a JSON body's UUID field: text in the forms the `uuid` crate reads
/// (hyphenated, plain, braced, `urn:uuid:`, any case) is parsed here; anything else goes to
/// `uuid.UUID` itself, which accepts a few more spellings and raises its own errors. In
/// Python 3.11 `UUID(text)` is a Python `__init__` (strip, replace, `int(hex, 16)`, checks):
/// 2.13 µs a call on this repository's 2-core machine, most of what a json-medium body's
/// conversion cost beyond building its dicts.
pub fn from_text<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    match value.cast::<PyString>().ok().and_then(|text| text.to_str().ok()) {
        Some(text) => from_str(value.py(), text),
        None => uuid_type(value.py())?.call1((value,)),
    }
}

/// [`from_text`] for text still in Rust (a JSON body's string, converted as it is built).
pub fn from_str<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    match uuid::Uuid::try_parse(text) {
        Ok(parsed) => to_python(py, parsed.as_u128()),
        Err(_) => uuid_type(py)?.call1((text,)),
    }
}

/// `object.__setattr__(obj, name, value)`: past a class's own `__setattr__`.
fn set_slot(obj: &Bound<'_, PyAny>, name: &Bound<'_, PyString>, value: &Bound<'_, PyAny>) -> PyResult<()> {
    // SAFETY: three live objects of this thread, which holds the GIL; the call borrows them.
    let status = unsafe { pyo3::ffi::PyObject_GenericSetAttr(obj.as_ptr(), name.as_ptr(), value.as_ptr()) };
    if status == 0 {
        Ok(())
    } else {
        Err(PyErr::fetch(obj.py()))
    }
}

/// The bytes of `str(obj)` when `obj` is exactly a `uuid.UUID` (`None` for anything else): the
/// canonical lowercase hyphenated form, ASCII, on the stack.
pub fn text_of_exact(obj: &Bound<'_, PyAny>) -> PyResult<Option<[u8; uuid::fmt::Hyphenated::LENGTH]>> {
    let py = obj.py();
    if !obj.get_type().is(uuid_type(py)?) {
        return Ok(None);
    }
    let value: u128 = obj.getattr(pyo3::intern!(py, "int"))?.extract()?;
    let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
    uuid::Uuid::from_u128(value).hyphenated().encode_lower(&mut text);
    Ok(Some(text))
}
