//! Request data → Python objects, built directly from the core's typed values.

use crate::request::UploadFile;
use ferrule_core::document::{Document, NodeRef, View};
use ferrule_core::{Body, DateTimeValue, KeyCache, Params, Value};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDate, PyDict, PyFloat, PyList, PyString, PyType};

static DATETIME: PyOnceLock<Py<PyType>> = PyOnceLock::new();

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
    DATETIME.import(py, "datetime", "datetime")?.call_method1(pyo3::intern!(py, "fromisoformat"), (dt.to_iso8601(),))
}

pub fn json<'py>(py: Python<'py>, json: &Document) -> PyResult<Bound<'py, PyAny>> {
    json_with_keys(py, json.root(), &mut KeyCache::new())
}

/// Dicts and lists built by one walk of the core's document.
fn json_with_keys<'j, 'py>(py: Python<'py>, json: NodeRef<'j>, keys: &mut KeyCache<'j, Bound<'py, PyString>>) -> PyResult<Bound<'py, PyAny>> {
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
                let key = keys.get_or_insert_with(key, |k| Ok::<_, PyErr>(PyString::new(py, k)))?;
                dict.set_item(key, json_with_keys(py, item, keys)?)?;
            }
            dict.into_any()
        }
    })
}

pub fn params<'py>(py: Python<'py>, params: &Params) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (name, item) in params.iter() {
        dict.set_item(PyString::new(py, name), value(py, item)?)?;
    }
    Ok(dict)
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
