//! Request data → Python objects, built directly from the core's typed values.

use super::body_plan::BodyPlan;
use crate::request::UploadFile;
use ferrule_core::document::{Document, NodeRef, View};
use ferrule_core::lasting_keys::{Found, LastingKeys};
use ferrule_core::{Body, DateTimeValue, KeyCache, Params, Value};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDate, PyDict, PyFloat, PyList, PyString};
use std::sync::{Mutex, MutexGuard, TryLockError};

/// Body keys made once for the process (see `ferrule_core::lasting_keys`); each keeps the hash
/// its first dict computed. One conversion holds the table at a time; another one meanwhile
/// (the GIL passed on mid-conversion) makes its keys as if it were empty.
///
/// The keys are not interned: that would cost every key an insert into Python's own table
/// (and a removal when it is freed) for an identity that only speeds up a handler's lookups.
static LASTING_KEYS: Mutex<LastingKeys<Py<PyString>>> = Mutex::new(LastingKeys::new());

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
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(self::value(py, item)?)?;
            }
            list.into_any()
        }
        Value::Json(json) => self::json(py, json)?,
    })
}

fn datetime<'py>(py: Python<'py>, dt: &DateTimeValue) -> PyResult<Bound<'py, PyAny>> {
    // One call with the canonical text (offset included) instead of building a timezone and
    // eight integer arguments: under the limited API both go through Python anyway.
    super::iso_text::datetime_from_text(py, &dt.to_iso8601())
}

pub fn json<'py>(py: Python<'py>, json: &Document) -> PyResult<Bound<'py, PyAny>> {
    let mut keys = Keys::for_one_conversion();
    json_with_keys(py, json.root(), &mut keys)
}

/// The keys of one conversion: this body's, in front of the process's.
struct Keys<'j, 'py> {
    request: KeyCache<'j, Bound<'py, PyString>>,
    lasting: Option<MutexGuard<'static, LastingKeys<Py<PyString>>>>,
}

impl<'j, 'py> Keys<'j, 'py> {
    fn for_one_conversion() -> Self {
        let lasting = match LASTING_KEYS.try_lock() {
            Ok(keys) => Some(keys),
            // A panic while the table was held left it whole: every slot is written at once.
            Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        };
        Keys { request: KeyCache::new(), lasting }
    }

    /// The key's string: this conversion's own (borrowed), or one made for a single use.
    #[inline]
    fn get(&mut self, py: Python<'py>, key: &'j str) -> PyResult<Found<'_, Bound<'py, PyString>>> {
        let lasting = &mut self.lasting;
        self.request.get_or_insert_with(key, |key| match lasting {
            Some(lasting) => Ok(match lasting.get_or_make(key, |key| Ok::<_, PyErr>(PyString::new(py, key).unbind()))? {
                Found::Kept(kept) => kept.clone_ref(py).into_bound(py),
                Found::Made(made) => made.into_bound(py),
            }),
            None => Ok(PyString::new(py, key)),
        })
    }
}

/// [`json`], with the strings `plan` names built as the handler's types (see
/// [`super::body_plan`]): a subtree the plan says nothing about is built as [`json`] builds it.
pub fn json_planned<'py>(py: Python<'py>, json: &Document, plan: &BodyPlan) -> PyResult<Bound<'py, PyAny>> {
    let mut keys = Keys::for_one_conversion();
    json_with_plan(py, json.root(), plan, &mut keys)
}

fn json_with_plan<'j, 'py>(py: Python<'py>, json: NodeRef<'j>, plan: &BodyPlan, keys: &mut Keys<'j, 'py>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match (plan, json.view()) {
        (BodyPlan::Uuid, View::Str(text)) => super::uuid::from_str(py, text)?,
        (BodyPlan::DateTime, View::Str(text)) => super::iso_text::datetime_from_text(py, text)?,
        (BodyPlan::Date, View::Str(text)) => super::iso_text::date_from_text(py, text)?,
        (BodyPlan::Items(item), View::Array(items)) => {
            let list = PyList::empty(py);
            for value in items {
                list.append(json_with_plan(py, value, item, keys)?)?;
            }
            list.into_any()
        }
        (BodyPlan::Members(_) | BodyPlan::Values(_), View::Object(members)) => {
            let dict = PyDict::new(py);
            for (key, value) in members {
                let value = match plan.member(key) {
                    Some(plan) => json_with_plan(py, value, plan, keys)?,
                    None => json_with_keys(py, value, keys)?,
                };
                set_member(&dict, keys.get(py, key)?.as_ref(), &value)?;
            }
            dict.into_any()
        }
        // A null, or a value of another kind than the plan's (a union the schema allowed).
        _ => json_with_keys(py, json, keys)?,
    })
}

/// Dicts and lists built by one walk of the core's document.
fn json_with_keys<'j, 'py>(py: Python<'py>, json: NodeRef<'j>, keys: &mut Keys<'j, 'py>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match json.view() {
        View::Null => py.None().into_bound(py),
        View::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
        View::Int(i) => i.into_pyobject(py)?.into_any(),
        View::UInt(u) => u.into_pyobject(py)?.into_any(),
        View::Float(f) => PyFloat::new(py, f).into_any(),
        View::Str(s) => PyString::new(py, s).into_any(),
        View::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_with_keys(py, item, keys)?)?;
            }
            list.into_any()
        }
        View::Object(members) => {
            let dict = PyDict::new(py);
            for (key, item) in members {
                let value = json_with_keys(py, item, keys)?;
                set_member(&dict, keys.get(py, key)?.as_ref(), &value)?;
            }
            dict.into_any()
        }
    })
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
