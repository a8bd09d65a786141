//! Python objects → JSON bytes, written straight from the objects (no `json.dumps`, no
//! intermediate tree, no serde: [`json_text`] writes each piece).
//!
//! Handles what FastAPI users return: dict, list, tuple, str, int, float, bool, None, and
//! datetime/date/time (ISO 8601), UUID and Decimal (as strings, as pydantic does), Enum (its
//! value), dataclasses, msgspec Structs, pydantic models, sets. Anything else is an error that
//! names its type, which the caller turns into a 500.
//!
//! A route's declared response schema reaches here as a [`Shape`]: a mapping's or an object's
//! members that the schema leaves out are skipped as they are met (FastAPI's response_model
//! rule), so a dropped `password` is never even converted; at an object's end the shape adds
//! the defaults of what it lacked and refuses it without a required member.
//!
//! Cost, json-large's response (`{"body": ...}`, 16.7 KB, 838 keys) written 3,000 times on one
//! core, the shipped build: 29.6 µs each through serde_json with pyo3's owning iterators, 19.0
//! µs now (json-medium 3.09 → 1.90 µs). Most of the difference is the borrowed walk
//! (`write_dict`): a dict or list iterated by pyo3 costs two reference counts and a size check
//! per member, each a call into the interpreter under the stable ABI. orjson 3.13 writes the same
//! objects in 8.7 µs (0.94 for json-medium): it is built for one Python version and reads a
//! str's text and an object's type from the structs, where this wheel (abi3) calls a function.

use std::borrow::Cow;
use std::cell::Cell;

use pyo3::prelude::*;
use pyo3::Borrowed;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString, PyTuple, PyType};
use ferrule_core::json_text;
use ferrule_core::shape::{Container, Everything, Fields, Scalar, Shape, Written as MembersWritten};

use super::written_keys::{self, WrittenKeys};

/// Deeper than any real response; stops reference cycles before the stack does.
const MAX_DEPTH: u16 = 256;

static TIME: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static DECIMAL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static ENUM: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static DATACLASS_FIELDS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// A response's first buffer is as large as this thread's last response (within bounds), so a
/// large body is not grown, and copied, seven times on its way from 128 bytes.
const MIN_CAPACITY: usize = 128;
const MAX_CAPACITY_HINT: usize = 1 << 20;

thread_local! {
    static LAST_LENGTH: Cell<usize> = const { Cell::new(MIN_CAPACITY) };
}

/// Serialises a handler's result as JSON, keeping what `shape` keeps ([`Shape::any`]:
/// everything), and refusing a `None` the shape does not admit, as FastAPI's validation of a
/// result against its response model does.
pub fn to_vec(obj: &Bound<'_, PyAny>, shape: Shape<'_>) -> Result<Vec<u8>, String> {
    written(obj, shape, true, None, false)
}

/// Why [`to_vec_checked`] wrote nothing.
pub enum Unwritten {
    /// A scalar of a kind its shape does not admit (a `str` or a `Decimal` where the model
    /// says `int`, a float for an `int`): FastAPI would have made the result into its model,
    /// coercing it or refusing it, so the caller does that and writes what it made.
    Unadmitted(String),
    Failed(String),
}

/// [`to_vec`], also refusing a scalar whose kind the shape does not admit
/// ([`Shape::admits_scalar`]), where FastAPI validates the result against its response model:
/// for a route that can make its result into its model ([`Unwritten::Unadmitted`]).
/// A time with a zero offset is written with `Z`, as pydantic writes one.
pub fn to_vec_checked(obj: &Bound<'_, PyAny>, shape: Shape<'_>) -> Result<Vec<u8>, Unwritten> {
    let unadmitted = Cell::new(false);
    written(obj, shape, true, Some(&unadmitted), true).map_err(|message| if unadmitted.get() { Unwritten::Unadmitted(message) } else { Unwritten::Failed(message) })
}

/// [`to_vec`] for what a route's response model made of its result (after
/// [`Unwritten::Unadmitted`]): a time with a zero offset is written with `Z`, as pydantic
/// writes one.
pub fn to_vec_made(obj: &Bound<'_, PyAny>, shape: Shape<'_>) -> Result<Vec<u8>, String> {
    written(obj, shape, true, None, true)
}

/// [`to_vec`] for content the app sent itself (`JSONResponse(content)`): filtered by the
/// shape, but its `None`s are sent as they are, since FastAPI does not validate a response
/// the handler built.
pub fn to_vec_as_given(obj: &Bound<'_, PyAny>, shape: Shape<'_>) -> Result<Vec<u8>, String> {
    written(obj, shape, false, None, false)
}

/// `unadmitted`: scalars are checked too, and this is set when one is refused. `utc_as_z`:
/// [`Json::utc_as_z`].
fn written(obj: &Bound<'_, PyAny>, shape: Shape<'_>, nulls_checked: bool, unadmitted: Option<&Cell<bool>>, utc_as_z: bool) -> Result<Vec<u8>, String> {
    let hint = LAST_LENGTH.with(Cell::get);
    let mut out = Vec::with_capacity(hint);
    if nulls_checked && obj.is_none() {
        shape.admits_null().map_err(|e| e.to_string())?;
    }
    if shape.keeps_everything() {
        // A scalar result's own shape (`-> int`) filters nothing: asked here, before the plain
        // writer takes it.
        if let (Some(unadmitted), Some(kind)) = (unadmitted, exact_scalar(obj)) {
            shape.admits_scalar(kind).map_err(|e| refused(unadmitted, e))?;
        }
        written_keys::with(|keys| Json { obj, depth: 0, shape: Everything, keys, nulls_checked: false, unadmitted: None, utc_as_z }.write(&mut out))?;
    } else {
        written_keys::with(|keys| Json { obj, depth: 0, shape, keys, nulls_checked, unadmitted, utc_as_z }.write(&mut out))?;
    }
    LAST_LENGTH.with(|last| last.set(out.len().clamp(MIN_CAPACITY, MAX_CAPACITY_HINT)));
    Ok(out)
}

/// A value to write, with what is kept of it (`F`: see [`Fields`]).
struct Json<'a, 'k, 'py, F> {
    obj: &'a Bound<'py, PyAny>,
    depth: u16,
    shape: F,
    /// This thread's table of written keys, for the whole response.
    keys: &'k WrittenKeys,
    /// Whether a `None` is checked against the shape ([`Shape::admits_null`]): FastAPI
    /// validates plain data against the response model, but takes an instance of a model or a
    /// dataclass as it is, so nothing below one is checked (`x: int = None` sends `null` there).
    nulls_checked: bool,
    /// Where scalars are checked against the shape too ([`to_vec_checked`]): set when one is
    /// refused. Never below an instance, as `nulls_checked`.
    unadmitted: Option<&'k Cell<bool>>,
    /// Whether a datetime or time with a zero offset is written with `Z` (`…T00:00:00Z`), as
    /// pydantic writes a result under a response model, rather than as `isoformat()` writes it
    /// (`+00:00`), as FastAPI writes other results (found by a differential run).
    utc_as_z: bool,
}

type Written = Result<(), String>;

/// The kind of an exact str, int, float or bool (the types [`write_scalar`] writes).
#[inline(always)]
fn exact_scalar(obj: &Bound<'_, PyAny>) -> Option<Scalar> {
    if obj.is_exact_instance_of::<PyString>() {
        Some(Scalar::String)
    } else if obj.is_exact_instance_of::<PyInt>() {
        Some(Scalar::Integer)
    } else if obj.is_exact_instance_of::<PyFloat>() {
        Some(Scalar::Float)
    } else if obj.is_exact_instance_of::<PyBool>() {
        Some(Scalar::Bool)
    } else {
        None
    }
}

/// Whether `shape` refuses a scalar of some kind (an `int` field's refuses a str), so that a
/// value that is no exact scalar is asked where [`Json::write_other`] learns its kind.
#[inline]
fn restricts_scalars<F: Fields>(shape: F) -> bool {
    [Scalar::Bool, Scalar::Integer, Scalar::Float, Scalar::String].into_iter().any(|kind| shape.admits_scalar(kind).is_err())
}

/// A refused scalar's message, noted in `unadmitted`.
#[cold]
fn refused(unadmitted: &Cell<bool>, error: ferrule_core::shape::Incomplete) -> String {
    unadmitted.set(true);
    error.to_string()
}

const NOT_UTF8: &str = "bytes that are not UTF-8 cannot be sent as JSON";

impl<'k, F: Fields> Json<'_, 'k, '_, F> {
    fn child<'b, 'py>(&self, obj: &'b Bound<'py, PyAny>, shape: F) -> Json<'b, 'k, 'py, F> {
        Json { obj, depth: self.depth + 1, shape, keys: self.keys, nulls_checked: self.nulls_checked, unadmitted: self.unadmitted, utc_as_z: self.utc_as_z }
    }

    /// Whether a scalar of `kind` may be written with `shape` here ([`Self::unadmitted`]).
    #[inline(always)]
    fn scalar_with(&self, shape: F, kind: Scalar) -> Written {
        match self.unadmitted {
            Some(unadmitted) if !F::PLAIN => shape.admits_scalar(kind).map_err(|e| refused(unadmitted, e)),
            _ => Ok(()),
        }
    }

    /// [`Self::scalar_with`] for `value` when it is an exact scalar (what [`write_scalar`] is
    /// about to write without asking the shape).
    #[inline(always)]
    fn exact_scalar_with(&self, value: &Bound<'_, PyAny>, shape: F) -> Written {
        if F::PLAIN || self.unadmitted.is_none() {
            return Ok(());
        }
        match exact_scalar(value) {
            Some(kind) => self.scalar_with(shape, kind),
            None => Ok(()),
        }
    }

    /// Whether a `None` may be written with `shape` here ([`Self::nulls_checked`]).
    #[inline(always)]
    fn null_with(&self, shape: F) -> Written {
        if self.nulls_checked {
            shape.admits_null().map_err(|e| e.to_string())
        } else {
            Ok(())
        }
    }

    /// An ISO 8601 time's text as [`Self::utc_as_z`] says.
    fn zoned<'t>(&self, text: &'t [u8]) -> Cow<'t, [u8]> {
        match text.strip_suffix(b"+00:00") {
            Some(local) if self.utc_as_z => Cow::Owned([local, b"Z"].concat()),
            _ => Cow::Borrowed(text),
        }
    }

    /// `obj` written in place of an instance FastAPI takes as it is (its dump, or itself read
    /// by its fields): no `None` below it is checked.
    fn instance<'b, 'py>(&self, obj: &'b Bound<'py, PyAny>) -> Json<'b, 'k, 'py, F> {
        Json { obj, depth: self.depth + 1, shape: self.shape, keys: self.keys, nulls_checked: false, unadmitted: None, utc_as_z: self.utc_as_z }
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

fn py_err(err: PyErr) -> String {
    err.to_string()
}

impl<F: Fields> Json<'_, '_, '_, F> {
    fn write(&self, out: &mut Vec<u8>) -> Written {
        if self.depth > MAX_DEPTH {
            return Err("nested too deeply (a reference cycle?)".into());
        }
        if !F::PLAIN && self.nulls_checked && self.obj.is_none() {
            // FastAPI validates a result against its response model: `None` where the model
            // says `str`, or for the model itself, is a 500 there, never a `null` sent.
            self.shape.admits_null().map_err(|e| e.to_string())?;
        }
        // A richer scalar (a Decimal, a datetime, a str subclass) under a shape that refuses
        // some kind stays with the shaped writer, whose `write_other` asks as it learns the kind;
        // a dict, a list or an object is asked nothing more than it was.
        let mut kind_unknown = false;
        if !F::PLAIN && self.unadmitted.is_some() && restricts_scalars(self.shape) {
            match exact_scalar(self.obj) {
                Some(kind) => self.scalar_with(self.shape, kind)?,
                None => kind_unknown = !self.obj.is_none(),
            }
        }
        if !F::PLAIN && self.shape.keeps_everything() && !kind_unknown {
            // Nothing below is filtered: the plain writer from here on.
            return Json { obj: self.obj, depth: self.depth, shape: Everything, keys: self.keys, nulls_checked: false, unadmitted: None, utc_as_z: self.utc_as_z }.write(out);
        }
        let obj = self.obj;
        if let Some(written) = write_scalar(obj, out, || Ok(())) {
            return written;
        }
        if let Ok(dict) = obj.cast_exact::<PyDict>() {
            return self.write_dict(dict, out);
        }
        if let Ok(list) = obj.cast_exact::<PyList>() {
            return self.write_list(list, out);
        }
        if let Ok(tuple) = obj.cast_exact::<PyTuple>() {
            return self.write_items(tuple.iter(), out);
        }
        self.write_other(out)
    }

    /// A dict's members, read with borrowed references (`PyDict_Next`): taking and dropping a
    /// reference to every key and value, and asking the dict's size at every step, were an eighth
    /// of this writer's profile on json-large. Borrowing is sound while no Python code runs,
    /// because only Python code can take a member out of the dict. So a value whose writing
    /// could run Python code (anything but an exact str, int, float, bool or None), and any key
    /// that is not an exact str, is taken as a reference of its own first, and the dict's size
    /// is checked again after it (Python's own rule: a dict changed while iterated is an error).
    fn write_dict(&self, dict: &Bound<'_, PyDict>, out: &mut Vec<u8>) -> Written {
        self.shape.admits(Container::Object).map_err(|e| e.to_string())?;
        let py = dict.py();
        let size = dict.len();
        out.push(b'{');
        let mut first = true;
        // What the object's schema may add once its members are written.
        let mut members_written = MembersWritten::default();
        let (mut position, mut key, mut value) = (0, std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: `dict` is a live dict; `PyDict_Next` only reads it and hands out borrowed
        // references to its current members (never null when it returns 1).
        while unsafe { pyo3::ffi::PyDict_Next(dict.as_ptr(), &mut position, &mut key, &mut value) } != 0 {
            // SAFETY: members of `dict`, used below only as long as nothing can remove them
            // (see above).
            let (key, value) = unsafe { (Borrowed::from_ptr(py, key), Borrowed::from_ptr(py, value)) };
            if key.is_exact_instance_of::<PyString>() {
                let shape = if F::PLAIN {
                    if !std::mem::replace(&mut first, false) {
                        out.push(b',');
                    }
                    self.keys.write(&key, out).map_err(py_err)?;
                    self.shape
                } else {
                    let name = utf8(&key).map_err(py_err)?;
                    let Some(shape) = self.shape.member(text_of(name), &mut members_written) else { continue };
                    if !std::mem::replace(&mut first, false) {
                        out.push(b',');
                    }
                    json_text::string_of_utf8(out, name);
                    out.push(b':');
                    shape
                };
                self.exact_scalar_with(&value, shape)?;
                if let Some(written) = write_scalar(&value, out, || self.null_with(shape)) {
                    written?;
                    continue;
                }
                let value = value.to_owned();
                self.child(&value, shape).write(out)?;
            } else {
                let (key, value) = (key.to_owned(), value.to_owned());
                let name = key_text(&key)?;
                let Some(shape) = self.shape.member(&name, &mut members_written) else { continue };
                if !std::mem::replace(&mut first, false) {
                    out.push(b',');
                }
                json_text::string(out, &name);
                out.push(b':');
                self.child(&value, shape).write(out)?;
            }
            if dict.len() != size {
                return Err("the dict changed size while it was being written".into());
            }
        }
        self.shape.complete(&members_written, out, !first).map_err(|e| e.to_string())?;
        out.push(b'}');
        Ok(())
    }

    /// A list's items, borrowed as [`Self::write_dict`] borrows a dict's members. A list
    /// shortened by an item's own code ends where it was cut (as `json.dumps` ends it).
    fn write_list(&self, list: &Bound<'_, PyList>, out: &mut Vec<u8>) -> Written {
        self.shape.admits(Container::Array).map_err(|e| e.to_string())?;
        let py = list.py();
        out.push(b'[');
        let mut len = list.len();
        let mut position = 0;
        while position < len {
            if position > 0 {
                out.push(b',');
            }
            // SAFETY: `position < len`, the list's length read since any Python code last ran,
            // so the item exists; borrowed, as in `write_dict`.
            let item = unsafe { Borrowed::from_ptr(py, pyo3::ffi::PyList_GetItem(list.as_ptr(), position as pyo3::ffi::Py_ssize_t)) };
            self.exact_scalar_with(&item, self.shape.item(position))?;
            if let Some(written) = write_scalar(&item, out, || self.null_with(self.shape.item(position))) {
                written?;
            } else {
                let item = item.to_owned();
                self.child(&item, self.shape.item(position)).write(out)?;
                len = list.len();
            }
            position += 1;
        }
        out.push(b']');
        Ok(())
    }

    fn write_items<'py>(&self, items: impl Iterator<Item = Bound<'py, PyAny>>, out: &mut Vec<u8>) -> Written {
        self.shape.admits(Container::Array).map_err(|e| e.to_string())?;
        out.push(b'[');
        for (position, item) in items.enumerate() {
            if position > 0 {
                out.push(b',');
            }
            self.child(&item, self.shape.item(position)).write(out)?;
        }
        out.push(b']');
        Ok(())
    }

    /// Subclasses of the built-ins and the richer types, in the order that keeps each check
    /// meaningful (bool before int, datetime before date, Enum before its mixed-in type).
    fn write_other(&self, out: &mut Vec<u8>) -> Written {
        let obj = self.obj;
        let py = obj.py();
        if let Some(text) = super::uuid::text_of_exact(obj).map_err(py_err)? {
            self.scalar_with(self.shape, Scalar::String)?;
            json_text::string_of_utf8(out, &text);
            return Ok(());
        }
        if let Some(text) = super::iso_text::datetime_of_exact(obj).map_err(py_err)? {
            self.scalar_with(self.shape, Scalar::String)?;
            json_text::string_of_utf8(out, self.zoned(text.as_bytes()).as_ref());
            return Ok(());
        }
        if let Some(text) = super::iso_text::date_of_exact(obj).map_err(py_err)? {
            self.scalar_with(self.shape, Scalar::String)?;
            json_text::string_of_utf8(out, text.as_bytes());
            return Ok(());
        }
        if obj.is_instance(ENUM.import(py, "enum", "Enum").map_err(py_err)?).map_err(py_err)? {
            let value = obj.getattr(pyo3::intern!(py, "value")).map_err(py_err)?;
            return self.child(&value, self.shape).write(out);
        }
        if obj.is_instance_of::<PyString>() {
            self.scalar_with(self.shape, Scalar::String)?;
            return write_str(obj, out);
        }
        if obj.is_instance_of::<PyBool>() {
            self.scalar_with(self.shape, Scalar::Bool)?;
            write_bool(obj.is_truthy().map_err(py_err)?, out);
            return Ok(());
        }
        if obj.is_instance_of::<PyInt>() {
            self.scalar_with(self.shape, Scalar::Integer)?;
            return write_int(obj, out);
        }
        if let Ok(f) = obj.cast::<PyFloat>() {
            self.scalar_with(self.shape, Scalar::Float)?;
            return write_float(f.value(), obj, out);
        }
        if let Ok(dict) = obj.cast::<PyDict>() {
            return self.write_dict(dict, out);
        }
        if let Ok(list) = obj.cast::<PyList>() {
            return self.write_list(list, out);
        }
        if let Ok(tuple) = obj.cast::<PyTuple>() {
            return self.write_items(tuple.iter(), out);
        }
        // Subclasses of date (datetime among them) and time print ISO 8601 with isoformat().
        let iso = obj.is_instance(super::iso_text::date_type(py).map_err(py_err)?).map_err(py_err)?
            || obj.is_instance(TIME.import(py, "datetime", "time").map_err(py_err)?).map_err(py_err)?;
        if iso {
            self.scalar_with(self.shape, Scalar::String)?;
            let text = obj.call_method0(pyo3::intern!(py, "isoformat")).map_err(py_err)?;
            if self.utc_as_z {
                let text = text.cast_into::<PyString>().map_err(|e| e.to_string())?;
                json_text::string_of_utf8(out, self.zoned(utf8(&text).map_err(py_err)?).as_ref());
                return Ok(());
            }
            return write_str(&text, out);
        }
        if obj.is_instance(super::uuid::uuid_type(py).map_err(py_err)?).map_err(py_err)?
            || obj.is_instance(DECIMAL.import(py, "decimal", "Decimal").map_err(py_err)?).map_err(py_err)?
        {
            // A Decimal too: pydantic writes one as a string.
            self.scalar_with(self.shape, Scalar::String)?;
            return write_str(&obj.str().map_err(py_err)?.into_any(), out);
        }
        let ty = obj.get_type();
        if ty.hasattr(pyo3::intern!(py, "__dataclass_fields__")).map_err(py_err)? {
            if let Ok(serializer) = ty.getattr(pyo3::intern!(py, "__pydantic_serializer__")) {
                // A pydantic dataclass: as pydantic writes it (its field serializers and
                // computed fields), as FastAPI sends it (found by a probe: its raw fields went out).
                let kwargs = PyDict::new(py);
                kwargs.set_item("mode", "json").map_err(py_err)?;
                kwargs.set_item("by_alias", true).map_err(py_err)?;
                let data = serializer.call_method("to_python", (obj,), Some(&kwargs)).map_err(py_err)?;
                return self.instance(&data).write(out);
            }
            // `dataclasses.fields()`, as FastAPI reads a dataclass: `__dataclass_fields__` also
            // holds its ClassVar and InitVar pseudo-fields, so a class-level registry went out in
            // every response and an InitVar without a default was a 500 (found by a probe).
            let fields = DATACLASS_FIELDS.import(py, "dataclasses", "fields").and_then(|fields| fields.call1((obj,))).map_err(py_err)?;
            let names: Vec<Bound<'_, PyAny>> = fields.try_iter().map_err(py_err)?.map(|field| field?.getattr(pyo3::intern!(py, "name"))).collect::<PyResult<_>>().map_err(py_err)?;
            return self.instance(obj).write_attributes(names.into_iter().map(|name| (name.clone(), name)), Missing::Refused, out);
        }
        if let Ok(fields) = ty.getattr(pyo3::intern!(py, "__struct_fields__")) {
            // msgspec.Struct: each field under its encoded name (`rename`), as msgspec writes it
            // and as its schema names it.
            let fields = fields.cast_into::<PyTuple>().map_err(|e| e.to_string())?;
            let encoded = match ty.getattr(pyo3::intern!(py, "__struct_encode_fields__")) {
                Ok(names) => names.cast_into::<PyTuple>().map_err(|e| e.to_string())?,
                Err(_) => fields.clone(),
            };
            return self.instance(obj).write_attributes(fields.iter().zip(encoded.iter()), Missing::Refused, out);
        }
        if ty.hasattr(pyo3::intern!(py, "model_fields")).map_err(py_err)? && obj.hasattr(pyo3::intern!(py, "model_dump")).map_err(py_err)? {
            // pydantic v2 model: its own JSON-mode dump (serialisers) as plain data, keyed by
            // alias as FastAPI sends it, and as the model's schema names its properties (a
            // response shape built from that schema would otherwise drop an aliased field).
            let kwargs = PyDict::new(py);
            kwargs.set_item("mode", "json").map_err(py_err)?;
            kwargs.set_item("by_alias", true).map_err(py_err)?;
            let data = obj.call_method(pyo3::intern!(py, "model_dump"), (), Some(&kwargs)).map_err(py_err)?;
            return self.instance(&data).write(out);
        }
        if obj.is_instance_of::<PySet>() || obj.is_instance_of::<PyFrozenSet>() {
            let items: Vec<Bound<'_, PyAny>> = obj.try_iter().map_err(py_err)?.collect::<PyResult<_>>().map_err(py_err)?;
            return self.write_items(items.into_iter(), out);
        }
        if let Ok(bytes) = obj.cast::<PyBytes>() {
            let text = std::str::from_utf8(bytes.as_bytes()).map_err(|_| NOT_UTF8.to_owned())?;
            json_text::string(out, text);
            return Ok(());
        }
        if let Ok(bytes) = obj.cast::<PyByteArray>() {
            let text = String::from_utf8(bytes.to_vec()).map_err(|_| NOT_UTF8.to_owned())?;
            json_text::string(out, &text);
            return Ok(());
        }
        if let Some(encoded) = jsonable(obj) {
            return self.child(&encoded, self.shape).write(out);
        }
        // An object of the app's own (an ORM row, a SQLAlchemy Row, a `__slots__` class) where
        // the response schema declares an object: its declared attributes, as FastAPI reads a
        // result `from_attributes` (found by probes: a 500, alone, in a list after a dict, or
        // inside a page's `items`). Only declared names are read, so nothing else goes out; one
        // it lacks is filled or missing as a key would be.
        let declared = self.shape.declared_names();
        if !declared.is_empty() {
            let names: Vec<_> = declared.iter().map(|name| PyString::new(py, name).into_any()).collect();
            return self.write_attributes(names.into_iter().map(|name| (name.clone(), name)), Missing::Skipped, out);
        }
        // An iterable of the app's own where the schema declares an array (a SQLAlchemy
        // ScalarResult, `dict.values()`, a `map`): its items, as FastAPI reads them (found by a
        // probe: a 500).
        if self.shape.is_array() {
            if let Ok(items) = obj.try_iter() {
                let items: Vec<Bound<'_, PyAny>> = items.collect::<PyResult<_>>().map_err(py_err)?;
                return self.write_items(items.into_iter(), out);
            }
        }
        Err(format!("an object of type {} is not JSON-serialisable", type_name(obj)))
    }

    /// The attributes `(attribute, name it is written under)`; one the object lacks is an error,
    /// or, [`Missing::Skipped`], a member it does not have (filled or missing as a key would be).
    fn write_attributes<'py>(&self, names: impl Iterator<Item = (Bound<'py, PyAny>, Bound<'py, PyAny>)>, missing: Missing, out: &mut Vec<u8>) -> Written {
        self.shape.admits(Container::Object).map_err(|e| e.to_string())?;
        out.push(b'{');
        let mut first = true;
        let mut seen = MembersWritten::default();
        for (attribute, written) in names {
            let written = written.cast_into::<PyString>().map_err(|e| e.to_string())?;
            let text = written.to_str().map_err(py_err)?;
            let attribute = attribute.cast_into::<PyString>().map_err(|e| e.to_string())?;
            // Read once: a property evaluated to learn whether it is there and again for its
            // value ran its query twice (found by a probe).
            let read_first = match missing {
                Missing::Skipped => match self.obj.getattr(&attribute) {
                    Ok(value) => Some(value),
                    Err(e) if e.is_instance_of::<pyo3::exceptions::PyAttributeError>(self.obj.py()) => continue,
                    Err(e) => return Err(py_err(e)),
                },
                Missing::Refused => None,
            };
            // Left out before it is read: a property the schema drops is never evaluated.
            let Some(shape) = self.shape.member(text, &mut seen) else { continue };
            let value = match read_first {
                Some(value) => value,
                None => self.obj.getattr(&attribute).map_err(py_err)?,
            };
            if !std::mem::replace(&mut first, false) {
                out.push(b',');
            }
            json_text::string(out, text);
            out.push(b':');
            self.child(&value, shape).write(out)?;
        }
        self.shape.complete(&seen, out, !first).map_err(|e| e.to_string())?;
        out.push(b'}');
        Ok(())
    }
}

/// What [`Json::write_attributes`] does with an attribute the object lacks.
#[derive(Clone, Copy)]
enum Missing {
    /// An error: a dataclass's or Struct's own fields are all there.
    Refused,
    /// The member is not written: an object read by the names its schema declares.
    Skipped,
}

/// Writes `obj` when it is exactly a str, int, float, bool or None, the types whose writing
/// runs no Python code (so a borrowed reference to it is enough); `None` for anything else.
///
/// Always inlined: `#[inline]` left it a call for every member and item, returning its
/// `Option<Result<(), String>>` through memory. Inlined into its three callers, json-large's
/// served request went from 1,353,410 to 1,329,736 instructions (−1.7%; callgrind,
/// `PYTHONHASHSEED=0`), json-medium's from 174,893 to 172,049, json-small's unchanged.
///
/// `null` says whether a `None` may be written there: asked only when the value is one, so a
/// shaped member that is not pays nothing for the check (+792 instructions a request in
/// `write_dict` on json-medium-response when every member asked `is_none` first).
#[inline(always)]
fn write_scalar(obj: &Bound<'_, PyAny>, out: &mut Vec<u8>, null: impl FnOnce() -> Written) -> Option<Written> {
    if obj.is_exact_instance_of::<PyString>() {
        return Some(utf8(obj).map(|text| json_text::string_of_utf8(out, text)).map_err(py_err));
    }
    if obj.is_exact_instance_of::<PyInt>() {
        let mut overflow = 0;
        // SAFETY: `obj` is an int. This call raises nothing: beyond 64 bits it sets `overflow`,
        // and that int is left to `write_int` on a reference of its own.
        let value = unsafe { pyo3::ffi::PyLong_AsLongAndOverflow(obj.as_ptr(), &mut overflow) };
        if overflow != 0 {
            return None;
        }
        json_text::int(out, value.into());
        return Some(Ok(()));
    }
    if obj.is_none() {
        return Some(null().map(|()| out.extend_from_slice(b"null")));
    }
    if let Ok(b) = obj.cast_exact::<PyBool>() {
        write_bool(b.is_true(), out);
        return Some(Ok(()));
    }
    if let Ok(f) = obj.cast_exact::<PyFloat>() {
        return Some(write_float(f.value(), obj, out));
    }
    None
}

/// The UTF-8 text of a str (or subclass), read in place: CPython keeps it with the object, so
/// it lives as long as the borrow of `text`. An error for a lone surrogate.
#[inline]
pub(super) fn utf8<'a>(text: &'a Bound<'_, PyAny>) -> PyResult<&'a [u8]> {
    let mut size: pyo3::ffi::Py_ssize_t = 0;
    // SAFETY: `text` is a live str (every caller checked its type first).
    let data = unsafe { pyo3::ffi::PyUnicode_AsUTF8AndSize(text.as_ptr(), &mut size) };
    if data.is_null() {
        return Err(PyErr::fetch(text.py()));
    }
    // SAFETY: CPython's UTF-8 copy of the str: `size` bytes, kept until the str is freed.
    Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size as usize) })
}

/// Text CPython produced as UTF-8 (see [`utf8`]).
#[inline]
fn text_of(bytes: &[u8]) -> &str {
    // CPython's UTF-8 encoder only writes valid UTF-8 (a lone surrogate is an error above), so
    // this never fails; the check costs one pass over a key, only when a shape asks for it.
    std::str::from_utf8(bytes).unwrap_or_default()
}

fn write_str(obj: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> Written {
    let text = obj.cast::<PyString>().map_err(|e| e.to_string())?;
    json_text::string_of_utf8(out, utf8(text.as_any()).map_err(py_err)?);
    Ok(())
}

fn write_bool(b: bool, out: &mut Vec<u8>) {
    out.extend_from_slice(if b { b"true" } else { b"false" });
}

fn write_int(obj: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> Written {
    if let Ok(i) = obj.extract::<i64>() {
        json_text::int(out, i);
        return Ok(());
    }
    let i = obj.extract::<i128>().map_err(|_| "an int beyond 128 bits is not sent as a JSON number".to_owned())?;
    json_text::int128(out, i);
    Ok(())
}

fn write_float(f: f64, obj: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> Written {
    if f.is_finite() {
        json_text::float(out, f);
        Ok(())
    } else {
        Err(format!("{} is not a JSON number", obj.repr().map(|r| r.to_string()).unwrap_or_default()))
    }
}

/// A dict key's JSON text: JSON keys are strings; numbers, bools and None become their JSON
/// text, as `json.dumps` does.
static JSONABLE_ENCODER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// What `ferrule.encoders.known_value` (jsonable_encoder's rules by kind) makes of `obj` when
/// that is JSON's own kind (a timedelta's seconds, a Path's text, a deque's items, an IPv4Address's
/// text), as FastAPI encodes a handler's result: these were 500s (found by a probe). Asked only
/// of what the writer does not know itself; `None` for an object of no known kind (still a
/// 500: its attributes are not sent), or when encoding fails.
fn jsonable<'py>(obj: &Bound<'py, PyAny>) -> Option<Bound<'py, PyAny>> {
    let encoded = JSONABLE_ENCODER.import(obj.py(), "ferrule.encoders", "known_value").and_then(|encode| encode.call1((obj,))).ok()?;
    let json_kind = encoded.is_none()
        || encoded.is_instance_of::<PyString>()
        || encoded.is_instance_of::<PyInt>()
        || encoded.is_instance_of::<PyFloat>()
        || encoded.is_instance_of::<PyDict>()
        || encoded.is_instance_of::<PyList>();
    (json_kind && !encoded.is(obj)).then_some(encoded)
}

fn key_text<'a>(key: &'a Bound<'_, PyAny>) -> Result<Cow<'a, str>, String> {
    if let Ok(text) = key.cast::<PyString>() {
        return text.to_str().map(Cow::Borrowed).map_err(py_err);
    }
    if key.is_none() {
        return Ok(Cow::Borrowed("null"));
    }
    if let Ok(b) = key.cast::<PyBool>() {
        return Ok(Cow::Borrowed(if b.is_true() { "true" } else { "false" }));
    }
    // An Enum before int: an IntEnum's str() is its name on Python 3.10.
    if key.is_instance(ENUM.import(key.py(), "enum", "Enum").map_err(py_err)?).map_err(py_err)? {
        let value = key.getattr(pyo3::intern!(key.py(), "value")).map_err(py_err)?;
        return key_text(&value).map(|text| Cow::Owned(text.into_owned()));
    }
    if key.is_instance_of::<PyInt>() || key.is_instance_of::<PyFloat>() {
        return Ok(Cow::Owned(key.str().map_err(py_err)?.to_string()));
    }
    // A UUID, date or Decimal key, as jsonable_encoder writes one (its text, or its number's).
    if let Some(encoded) = jsonable(key).filter(|encoded| encoded.is_instance_of::<PyString>() || encoded.is_instance_of::<PyInt>() || encoded.is_instance_of::<PyFloat>()) {
        return key_text(&encoded).map(|text| Cow::Owned(text.into_owned()));
    }
    Err(format!("a dict key of type {} is not a JSON key", type_name(key)))
}
