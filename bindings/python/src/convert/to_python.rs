//! Request data → Python objects, built directly from the core's typed values.

use super::body_plan::BodyPlan;
use crate::request::UploadFile;
use ferrule_core::document::{Document, NodeRef, View};
use ferrule_core::lasting_keys::{Found, LastingKeys};
use ferrule_core::{Body, DateTimeValue, KeyCache, Params, Value};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDate, PyDict, PyFloat, PyString};
use std::sync::{Mutex, MutexGuard, TryLockError};

/// Body keys made once for the process (see `ferrule_core::lasting_keys`); each keeps the hash
/// its first dict computed. One conversion holds the table at a time; another one meanwhile
/// (the GIL passed on mid-conversion) makes its keys as if it were empty.
///
/// The keys are not interned: that would cost every key an insert into Python's own table
/// (and a removal when it is freed) for an identity that only speeds up a handler's lookups.
static LASTING_KEYS: Mutex<Lasting> = Mutex::new(LastingKeys::new());

/// Short string values kept the same way, in a table of their own so that values never push
/// out keys. Bodies repeat many of their values request after request (a status, a country or
/// currency code, a SKU, a tag), and a str is immutable, so one object can stand for every
/// occurrence, as jiter (pydantic's parser) does by default. A kept value costs a lookup and a
/// reference instead of a str made (its UTF-8 decoded, allocated) and freed with the body.
///
/// Measured on the benchmark app's `def` handlers echoing their bodies (callgrind, the whole
/// process, instructions a request; `PYTHONHASHSEED` fixed, since the dicts' hash collisions
/// move a run by about 1.5%): json-large (330 short values, repeated from request to request)
/// 1,480,114 → 1,380,228 (−6.7%) with seed 0 and 1,459,255 → 1,357,284 (−7.0%) with seed 1;
/// 106.8 → 100.7 CPU-µs a request (medians of six interleaved runs each, server and load
/// generator pinned; every run after below every run before); json-medium 186,369 → 176,064
/// (−5.5%); json-small 45,308 → 45,356. A value sent once costs a lookup and a refusal on top
/// of being made: json-large with every item's `sku` and `name` new in each request,
/// 1,498,937 → 1,492,435 (its few repeated values saved about what 330 refusals cost).
static LASTING_VALUES: Mutex<Lasting> = Mutex::new(LastingKeys::new());

/// A process table of strings.
type Lasting = LastingKeys<Py<PyString>>;

pub fn value<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(f) => PyFloat::new(py, *f).into_any(),
        Value::Str(s) => PyString::new(py, s).into_any(),
        Value::Uuid(u) => super::uuid::to_python(py, u.as_u128())?,
        Value::Date(d) => {
            use chrono::Datelike;
            PyDate::new(py, d.year(), d.month() as u8, d.day() as u8)?.into_any()
        }
        Value::DateTime(dt) => datetime(py, dt)?,
        Value::File(file) => Bound::new(py, UploadFile::from(file))?.into_any(),
        Value::Array(items) => list_of(py, items.iter(), |item| self::value(py, item))?,
        Value::Json(json) => self::json(py, json)?,
    })
}

fn datetime<'py>(py: Python<'py>, dt: &DateTimeValue) -> PyResult<Bound<'py, PyAny>> {
    // One call with the canonical text (offset included) instead of building a timezone and
    // eight integer arguments: under the limited API both go through Python anyway.
    super::iso_text::datetime_from_text(py, &dt.to_iso8601())
}

pub fn json<'py>(py: Python<'py>, json: &Document) -> PyResult<Bound<'py, PyAny>> {
    let mut strings = Strings::for_one_conversion();
    json_with_strings(py, json.root(), &mut strings)
}

/// The strings of one conversion: this body's keys in front of the process's, and the
/// process's short values.
struct Strings<'j, 'py> {
    keys: KeyCache<'j, Bound<'py, PyString>>,
    lasting_keys: Option<MutexGuard<'static, Lasting>>,
    lasting_values: Option<MutexGuard<'static, Lasting>>,
}

/// A process table for one conversion, or `None` while another conversion holds it.
fn hold(table: &'static Mutex<Lasting>) -> Option<MutexGuard<'static, Lasting>> {
    match table.try_lock() {
        Ok(table) => Some(table),
        // A panic while the table was held left it whole: every slot is written at once.
        Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

impl<'j, 'py> Strings<'j, 'py> {
    fn for_one_conversion() -> Self {
        Strings { keys: KeyCache::new(), lasting_keys: hold(&LASTING_KEYS), lasting_values: hold(&LASTING_VALUES) }
    }

    /// The key's string: this conversion's own (borrowed), or one made for a single use.
    #[inline]
    fn key(&mut self, py: Python<'py>, key: &'j str) -> PyResult<Found<'_, Bound<'py, PyString>>> {
        let lasting = &mut self.lasting_keys;
        self.keys.get_or_insert_with(key, |key| match lasting {
            Some(lasting) => kept_or_made(py, lasting, key),
            None => Ok(PyString::new(py, key)),
        })
    }

    /// A string value: the process's kept one, or a new one. Strings of one character or none
    /// are CPython's own singletons already.
    #[inline]
    fn value(&mut self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyString>> {
        match &mut self.lasting_values {
            Some(lasting) if text.len() > 1 => kept_or_made(py, lasting, text),
            _ => Ok(PyString::new(py, text)),
        }
    }
}

/// `text`'s str from `lasting` (kept there when the table admits it), as a reference of the
/// caller's own.
#[inline]
fn kept_or_made<'py>(py: Python<'py>, lasting: &mut Lasting, text: &str) -> PyResult<Bound<'py, PyString>> {
    Ok(match lasting.get_or_make(text, |text| Ok::<_, PyErr>(PyString::new(py, text).unbind()))? {
        Found::Kept(kept) => kept.clone_ref(py).into_bound(py),
        Found::Made(made) => made.into_bound(py),
    })
}

/// [`json`], with the strings `plan` names built as the handler's types (see
/// [`super::body_plan`]): a subtree the plan says nothing about is built as [`json`] builds it.
pub fn json_planned<'py>(py: Python<'py>, json: &Document, plan: &BodyPlan) -> PyResult<Bound<'py, PyAny>> {
    node_planned(py, json.root(), plan)
}

/// One value of a document (an embedded body parameter's member), as [`json_planned`].
pub fn node_planned<'py>(py: Python<'py>, node: NodeRef<'_>, plan: &BodyPlan) -> PyResult<Bound<'py, PyAny>> {
    let mut strings = Strings::for_one_conversion();
    json_with_plan(py, node, plan, &mut strings)
}

/// One value of a document, as [`json`].
pub fn node<'py>(py: Python<'py>, node: NodeRef<'_>) -> PyResult<Bound<'py, PyAny>> {
    let mut strings = Strings::for_one_conversion();
    json_with_strings(py, node, &mut strings)
}

fn json_with_plan<'j, 'py>(py: Python<'py>, json: NodeRef<'j>, plan: &BodyPlan, strings: &mut Strings<'j, 'py>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match (plan, json.view()) {
        (BodyPlan::Uuid, View::Str(text)) => super::uuid::from_str(py, text)?,
        (BodyPlan::DateTime, View::Str(text)) => super::iso_text::datetime_from_text(py, text)?,
        (BodyPlan::Date, View::Str(text)) => super::iso_text::date_from_text(py, text)?,
        (BodyPlan::Items(item), View::Array(items)) => list_of(py, items, |value| json_with_plan(py, value, item, strings))?,
        (BodyPlan::Members(_) | BodyPlan::Values(_), View::Object(members)) => {
            let dict = PyDict::new(py);
            for (key, value) in members {
                let value = match plan.member(key) {
                    Some(plan) => json_with_plan(py, value, plan, strings)?,
                    None => json_with_strings(py, value, strings)?,
                };
                set_member(&dict, strings.key(py, key)?.as_ref(), &value)?;
            }
            dict.into_any()
        }
        // A null, or a value of another kind than the plan's (a union the schema allowed).
        _ => json_with_strings(py, json, strings)?,
    })
}

/// Dicts and lists built by one walk of the core's document.
fn json_with_strings<'j, 'py>(py: Python<'py>, json: NodeRef<'j>, strings: &mut Strings<'j, 'py>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match json.view() {
        View::Null => py.None().into_bound(py),
        View::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
        View::Int(i) => i.into_pyobject(py)?.into_any(),
        View::UInt(u) => u.into_pyobject(py)?.into_any(),
        View::Float(f) => PyFloat::new(py, f).into_any(),
        View::Str(s) => strings.value(py, s)?.into_any(),
        View::Array(items) => list_of(py, items, |item| json_with_strings(py, item, strings))?,
        View::Object(members) => {
            let dict = PyDict::new(py);
            for (key, item) in members {
                let value = json_with_strings(py, item, strings)?;
                set_member(&dict, strings.key(py, key)?.as_ref(), &value)?;
            }
            dict.into_any()
        }
    })
}

/// A list of `items`, each made by `make`: allocated at its length once and filled in place,
/// each slot taking its item's reference, where appending grew the list step by step and counted
/// every item up and down, two calls into the interpreter each under the stable ABI. Served,
/// instructions a request (callgrind, `PYTHONHASHSEED=0`): json-large (one list of 165 items)
/// 1,360,892 → 1,352,601 (−0.6%), json-medium 175,546 → 174,671 (−0.5%).
fn list_of<'py, T>(
    py: Python<'py>,
    items: impl ExactSizeIterator<Item = T>,
    mut make: impl FnMut(T) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let len = items.len() as pyo3::ffi::Py_ssize_t;
    // SAFETY: a new list of `len` empty (null) slots, or null with an exception set. A list with
    // empty slots is CPython's own way to build one (`PyList_New`'s contract); it is not handed
    // to any Python code before every slot is filled.
    let list = unsafe { Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyList_New(len))? };
    let mut filled = 0;
    for item in items.take(len as usize) {
        let item = make(item)?;
        // SAFETY: `filled < len`: an empty slot of this list, which takes the item's reference.
        unsafe { pyo3::ffi::PyList_SetItem(list.as_ptr(), filled, item.into_ptr()) };
        filled += 1;
    }
    if filled < len {
        // An iterator shorter than it said: no empty slot may reach Python.
        // SAFETY: a live list; deleting its unfilled tail.
        if unsafe { pyo3::ffi::PyList_SetSlice(list.as_ptr(), filled, len, std::ptr::null_mut()) } != 0 {
            return Err(PyErr::fetch(py));
        }
    }
    Ok(list)
}

/// `dict[key] = value` through the C API, which takes its own references: pyo3's `set_item`
/// wants its arguments owned, so a key borrowed from the cache would be counted up for it and
/// down after it, two calls into the interpreter per member under the stable ABI.
#[inline]
fn set_member(dict: &Bound<'_, PyDict>, key: &Bound<'_, PyString>, value: &Bound<'_, PyAny>) -> PyResult<()> {
    // SAFETY: three live objects, the first a dict; the call adds a reference to key and value.
    match unsafe { pyo3::ffi::PyDict_SetItem(dict.as_ptr(), key.as_ptr(), value.as_ptr()) } {
        0 => Ok(()),
        _ => Err(PyErr::fetch(dict.py())),
    }
}

pub fn params<'py>(py: Python<'py>, params: &Params) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (name, item) in params.iter() {
        dict.set_item(PyString::new(py, name), value(py, item)?)?;
    }
    Ok(dict)
}

/// [`body`], a JSON one converted by `plan` as it is built.
pub fn body_planned<'py>(py: Python<'py>, body: &Body, plan: &BodyPlan) -> PyResult<Bound<'py, PyAny>> {
    match body {
        Body::Json(json) => json_planned(py, json, plan),
        other => self::body(py, other),
    }
}

/// The whole body: JSON as dicts and lists, form fields as a dict, bytes, text, or None.
pub fn body<'py>(py: Python<'py>, body: &Body) -> PyResult<Bound<'py, PyAny>> {
    Ok(match body {
        Body::None => py.None().into_bound(py),
        Body::Json(j) => json(py, j)?,
        Body::Form(fields) => params(py, fields)?.into_any(),
        Body::Bytes(b) => PyBytes::new(py, b).into_any(),
        Body::Text(t) => PyString::new(py, t).into_any(),
    })
}
