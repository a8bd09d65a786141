//! Python objects → JSON bytes, written by serde_json straight from the objects (no
//! `json.dumps`, no intermediate tree).
//!
//! Handles what FastAPI users return: dict, list, tuple, str, int, float, bool, None, and
//! datetime/date/time (ISO 8601), UUID and Decimal (as strings, as pydantic does), Enum (its
//! value), dataclasses, msgspec Structs, pydantic models, sets. Anything else is an error that
//! names its type, which the caller turns into a 500.
//!
//! A route's declared response schema reaches here as a [`Shape`]: a mapping's or an object's
//! members that the schema leaves out are skipped as they are met (FastAPI's response_model
//! rule), so a dropped `password` is never even converted.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString, PyTuple, PyType};
use serde::ser::{Error as _, SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use ferrule_core::shape::{Everything, Fields, Shape};

/// Deeper than any real response; stops reference cycles before the stack does.
const MAX_DEPTH: u16 = 256;

static DATE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static TIME: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static DECIMAL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static ENUM: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Serialises `obj` as JSON, keeping what `shape` keeps ([`Shape::any`]: everything).
pub fn to_vec(obj: &Bound<'_, PyAny>, shape: Shape<'_>) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(128);
    let written = if shape.keeps_everything() {
        serde_json::to_writer(&mut out, &Json { obj, depth: 0, shape: Everything })
    } else {
        serde_json::to_writer(&mut out, &Json { obj, depth: 0, shape })
    };
    written.map_err(|e| e.to_string())?;
    Ok(out)
}

/// A value to write, with what is kept of it (`F`: see [`Fields`]).
struct Json<'a, 'py, F> {
    obj: &'a Bound<'py, PyAny>,
    depth: u16,
    shape: F,
}

impl<F: Fields> Json<'_, '_, F> {
    fn child<'b, 'py>(&self, obj: &'b Bound<'py, PyAny>, shape: F) -> Json<'b, 'py, F> {
        Json { obj, depth: self.depth + 1, shape }
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

fn py_err<E: serde::ser::Error>(err: PyErr) -> E {
    E::custom(err.to_string())
}

impl<F: Fields> Serialize for Json<'_, '_, F> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.depth > MAX_DEPTH {
            return Err(S::Error::custom("nested too deeply (a reference cycle?)"));
        }
        if !F::PLAIN && self.shape.keeps_everything() {
            // Nothing below is filtered: the plain writer from here on.
            return Json { obj: self.obj, depth: self.depth, shape: Everything }.serialize(s);
        }
        let obj = self.obj;
        // Exact built-in types first: one pointer comparison each.
        if obj.is_exact_instance_of::<PyString>() {
            return serialize_str(obj, s);
        }
        if obj.is_exact_instance_of::<PyInt>() {
            return serialize_int(obj, s);
        }
        if let Ok(dict) = obj.cast_exact::<PyDict>() {
            return self.serialize_dict(dict, s);
        }
        if let Ok(list) = obj.cast_exact::<PyList>() {
            return self.serialize_items(list.len(), list.iter(), s);
        }
        if obj.is_none() {
            return s.serialize_unit();
        }
        if let Ok(b) = obj.cast_exact::<PyBool>() {
            return s.serialize_bool(b.is_true());
        }
        if let Ok(f) = obj.cast_exact::<PyFloat>() {
            return serialize_float(f.value(), obj, s);
        }
        if let Ok(tuple) = obj.cast_exact::<PyTuple>() {
            return self.serialize_items(tuple.len(), tuple.iter(), s);
        }
        self.serialize_other(s)
    }
}

impl<F: Fields> Json<'_, '_, F> {
    fn serialize_dict<S: Serializer>(&self, dict: &Bound<'_, PyDict>, s: S) -> Result<S::Ok, S::Error> {
        if F::PLAIN {
            let mut map = s.serialize_map(Some(dict.len()))?;
            for (key, value) in dict.iter() {
                map.serialize_key(&DictKey(&key))?;
                map.serialize_value(&self.child(&value, self.shape))?;
            }
            return map.end();
        }
        let mut map = s.serialize_map(None)?;
        for (key, value) in dict.iter() {
            let kept = match key.cast::<PyString>() {
                Ok(text) => self.shape.field(text.to_str().map_err(py_err)?),
                // A key that is not a str is named by its JSON text (`1`, `true`).
                Err(_) => self.shape.field(&serde_json::to_string(&DictKey(&key)).map_err(S::Error::custom)?.trim_matches('"').to_owned()),
            };
            if let Some(shape) = kept {
                map.serialize_key(&DictKey(&key))?;
                map.serialize_value(&self.child(&value, shape))?;
            }
        }
        map.end()
    }

    fn serialize_items<'py, S: Serializer>(
        &self,
        len: usize,
        items: impl Iterator<Item = Bound<'py, PyAny>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(len))?;
        if F::PLAIN {
            for item in items {
                seq.serialize_element(&self.child(&item, self.shape))?;
            }
        } else {
            for (position, item) in items.enumerate() {
                seq.serialize_element(&self.child(&item, self.shape.item(position)))?;
            }
        }
        seq.end()
    }

    /// Subclasses of the built-ins and the richer types, in the order that keeps each check
    /// meaningful (bool before int, datetime before date, Enum before its mixed-in type).
    fn serialize_other<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let obj = self.obj;
        let py = obj.py();
        if let Some(text) = super::uuid::text_of_exact(obj).map_err(py_err)? {
            return s.serialize_str(std::str::from_utf8(&text).map_err(S::Error::custom)?);
        }
        if obj.is_instance(ENUM.import(py, "enum", "Enum").map_err(py_err)?).map_err(py_err)? {
            let value = obj.getattr(pyo3::intern!(py, "value")).map_err(py_err)?;
            return self.child(&value, self.shape).serialize(s);
        }
        if obj.is_instance_of::<PyString>() {
            return serialize_str(obj, s);
        }
        if obj.is_instance_of::<PyBool>() {
            return s.serialize_bool(obj.is_truthy().map_err(py_err)?);
        }
        if obj.is_instance_of::<PyInt>() {
            return serialize_int(obj, s);
        }
        if let Ok(f) = obj.cast::<PyFloat>() {
            return serialize_float(f.value(), obj, s);
        }
        if let Ok(dict) = obj.cast::<PyDict>() {
            return self.serialize_dict(dict, s);
        }
        if let Ok(list) = obj.cast::<PyList>() {
            return self.serialize_items(list.len(), list.iter(), s);
        }
        if let Ok(tuple) = obj.cast::<PyTuple>() {
            return self.serialize_items(tuple.len(), tuple.iter(), s);
        }
        // datetime is a subclass of date: both print ISO 8601 with isoformat().
        let iso = obj.is_instance(DATE.import(py, "datetime", "date").map_err(py_err)?).map_err(py_err)?
            || obj.is_instance(TIME.import(py, "datetime", "time").map_err(py_err)?).map_err(py_err)?;
        if iso {
            let text = obj.call_method0(pyo3::intern!(py, "isoformat")).map_err(py_err)?;
            return serialize_str(&text, s);
        }
        if obj.is_instance(super::uuid::uuid_type(py).map_err(py_err)?).map_err(py_err)?
            || obj.is_instance(DECIMAL.import(py, "decimal", "Decimal").map_err(py_err)?).map_err(py_err)?
        {
            return serialize_str(&obj.str().map_err(py_err)?.into_any(), s);
        }
        let ty = obj.get_type();
        if let Ok(fields) = ty.getattr(pyo3::intern!(py, "__dataclass_fields__")) {
            let fields = fields.cast_into::<PyDict>().map_err(|e| S::Error::custom(e.to_string()))?;
            return self.serialize_attributes(fields.keys().iter().map(|name| (name.clone(), name)), fields.len(), s);
        }
        if let Ok(fields) = ty.getattr(pyo3::intern!(py, "__struct_fields__")) {
            // msgspec.Struct: each field under its encoded name (`rename`), as msgspec writes it
            // and as its schema names it.
            let fields = fields.cast_into::<PyTuple>().map_err(|e| S::Error::custom(e.to_string()))?;
            let encoded = match ty.getattr(pyo3::intern!(py, "__struct_encode_fields__")) {
                Ok(names) => names.cast_into::<PyTuple>().map_err(|e| S::Error::custom(e.to_string()))?,
                Err(_) => fields.clone(),
            };
            return self.serialize_attributes(fields.iter().zip(encoded.iter()), fields.len(), s);
        }
        if ty.hasattr(pyo3::intern!(py, "model_fields")).map_err(py_err)? && obj.hasattr(pyo3::intern!(py, "model_dump")).map_err(py_err)? {
            // pydantic v2 model: its own JSON-mode dump (serialisers) as plain data, keyed by
            // alias as FastAPI sends it, and as the model's schema names its properties (a
            // response shape built from that schema would otherwise drop an aliased field).
            let kwargs = PyDict::new(py);
            kwargs.set_item("mode", "json").map_err(py_err)?;
            kwargs.set_item("by_alias", true).map_err(py_err)?;
            let data = obj.call_method(pyo3::intern!(py, "model_dump"), (), Some(&kwargs)).map_err(py_err)?;
            return self.child(&data, self.shape).serialize(s);
        }
        if obj.is_instance_of::<PySet>() || obj.is_instance_of::<PyFrozenSet>() {
            let len = obj.len().map_err(py_err)?;
            let items: Vec<Bound<'_, PyAny>> = obj.try_iter().map_err(py_err)?.collect::<PyResult<_>>().map_err(py_err)?;
            return self.serialize_items(len, items.into_iter(), s);
        }
        if let Ok(bytes) = obj.cast::<PyBytes>() {
            return match std::str::from_utf8(bytes.as_bytes()) {
                Ok(text) => s.serialize_str(text),
                Err(_) => Err(S::Error::custom("bytes that are not UTF-8 cannot be sent as JSON")),
            };
        }
        if let Ok(bytes) = obj.cast::<PyByteArray>() {
            return match String::from_utf8(bytes.to_vec()) {
                Ok(text) => s.serialize_str(&text),
                Err(_) => Err(S::Error::custom("bytes that are not UTF-8 cannot be sent as JSON")),
            };
        }
        Err(S::Error::custom(format!("an object of type {} is not JSON-serialisable", type_name(obj))))
    }

    /// The attributes `(attribute, name it is written under)`.
    fn serialize_attributes<'py, S: Serializer>(
        &self,
        names: impl Iterator<Item = (Bound<'py, PyAny>, Bound<'py, PyAny>)>,
        len: usize,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(if F::PLAIN { Some(len) } else { None })?;
        for (attribute, written) in names {
            let written = written.cast_into::<PyString>().map_err(|e| S::Error::custom(e.to_string()))?;
            let text = written.to_str().map_err(py_err)?;
            // Left out before it is read: a property the schema drops is never evaluated.
            let Some(shape) = self.shape.field(text) else { continue };
            let attribute = attribute.cast_into::<PyString>().map_err(|e| S::Error::custom(e.to_string()))?;
            let value = self.obj.getattr(&attribute).map_err(py_err)?;
            map.serialize_entry(text, &self.child(&value, shape))?;
        }
        map.end()
    }
}

fn serialize_str<S: Serializer>(obj: &Bound<'_, PyAny>, s: S) -> Result<S::Ok, S::Error> {
    // SAFETY-free fast path: a str (or subclass) viewed as UTF-8 without copying.
    let text = obj.cast::<PyString>().map_err(|e| S::Error::custom(e.to_string()))?;
    s.serialize_str(text.to_str().map_err(py_err)?)
}

fn serialize_int<S: Serializer>(obj: &Bound<'_, PyAny>, s: S) -> Result<S::Ok, S::Error> {
    if let Ok(i) = obj.extract::<i64>() {
        return s.serialize_i64(i);
    }
    match obj.extract::<i128>() {
        Ok(i) => s.serialize_i128(i),
        Err(_) => Err(S::Error::custom("an int beyond 128 bits is not sent as a JSON number")),
    }
}

fn serialize_float<S: Serializer>(f: f64, obj: &Bound<'_, PyAny>, s: S) -> Result<S::Ok, S::Error> {
    if f.is_finite() {
        s.serialize_f64(f)
    } else {
        Err(S::Error::custom(format!("{} is not a JSON number", obj.repr().map(|r| r.to_string()).unwrap_or_default())))
    }
}

/// Dict keys: JSON keys are strings; numbers, bools and None become their JSON text, as
/// `json.dumps` does.
struct DictKey<'a, 'py>(&'a Bound<'py, PyAny>);

impl Serialize for DictKey<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let key = self.0;
        if key.is_instance_of::<PyString>() {
            return serialize_str(key, s);
        }
        if key.is_none() {
            return s.serialize_str("null");
        }
        if let Ok(b) = key.cast::<PyBool>() {
            return s.serialize_str(if b.is_true() { "true" } else { "false" });
        }
        if key.is_instance_of::<PyInt>() || key.is_instance_of::<PyFloat>() {
            return s.serialize_str(&key.str().map_err(py_err)?.to_string());
        }
        if key.is_instance(ENUM.import(key.py(), "enum", "Enum").map_err(py_err)?).map_err(py_err)? {
            let value = key.getattr(pyo3::intern!(key.py(), "value")).map_err(py_err)?;
            return DictKey(&value).serialize(s);
        }
        Err(S::Error::custom(format!("a dict key of type {} is not a JSON key", type_name(key))))
    }
}
