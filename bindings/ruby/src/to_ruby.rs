//! Request data → Ruby objects, built from the core's typed values (no JSON text).
//!
//! Declared parameters and form fields are Hashes with Symbol keys; JSON bodies keep String
//! keys, as `JSON.parse` gives them. Integers, floats and booleans are Ruby's own; UUIDs are
//! Strings, dates `Date`s, date-times with an offset `Time`s, date-times without one their
//! ISO 8601 String (a Ruby `Time` always has an offset; inventing one would lose what the
//! client said), uploaded files `Ferrule::UploadedFile`s (bytes as a binary String).

use crate::raw_parts::RawParts;
use crate::types::Types;
use chrono::{Datelike, Timelike};
use ferrule_core::document::{Document, NodeRef, View};
use ferrule_core::lasting_keys::Found;
use ferrule_core::{Body, DateTimeValue, KeyCache, Params, RequestData, Value as Typed};
use magnus::{prelude::*, Error, RHash, RString, Ruby, Value};

/// `declares_body`: whether the request's route declares one (see `RawParts`).
pub fn request(ruby: &Ruby, types: &Types, data: &mut RequestData, declares_body: bool) -> Result<Value, Error> {
    let request_id = match data.request_id() {
        Some(id) => ruby.str_new(id).as_value(),
        None => ruby.qnil().as_value(),
    };
    let args = [
        ruby.str_new(data.method.as_str()).as_value(),
        ruby.str_new(&data.path).as_value(),
        params(ruby, types, &data.path_params)?.as_value(),
        params(ruby, types, &data.query)?.as_value(),
        params(ruby, types, &data.headers)?.as_value(),
        params(ruby, types, &data.cookies)?.as_value(),
        body(ruby, types, &data.body)?,
        request_id,
    ];
    let request: Value = types.request(ruby).funcall("new", (args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7]))?;
    // What the request carried as sent, converted only if the block asks (lib/ferrule/types.rb).
    // Set as the instance variable directly: a method call per request would cost more.
    let request = magnus::RStruct::from_value(request).ok_or_else(|| Error::new(ruby.exception_type_error(), "Ferrule::Request is not a Struct"))?;
    request.ivar_set("@raw", RawParts::take(data, declares_body))?;
    let request = request.as_value();
    Ok(request)
}

fn params(ruby: &Ruby, types: &Types, params: &Params) -> Result<RHash, Error> {
    let hash = ruby.hash_new();
    for (name, value) in params.iter() {
        hash.aset(ruby.sym_new(name), typed(ruby, types, value)?)?;
    }
    Ok(hash)
}

fn body(ruby: &Ruby, types: &Types, body: &Body) -> Result<Value, Error> {
    Ok(match body {
        Body::None => ruby.qnil().as_value(),
        Body::Json(json) => self::json(ruby, json)?,
        Body::Form(fields) => params(ruby, types, fields)?.as_value(),
        Body::Bytes(bytes) => ruby.str_from_slice(bytes).as_value(),
        Body::Text(text) => ruby.str_new(text).as_value(),
    })
}

fn typed(ruby: &Ruby, types: &Types, value: &Typed) -> Result<Value, Error> {
    Ok(match value {
        Typed::Null => ruby.qnil().as_value(),
        Typed::Bool(true) => ruby.qtrue().as_value(),
        Typed::Bool(false) => ruby.qfalse().as_value(),
        Typed::Int(i) => ruby.integer_from_i64(*i).as_value(),
        Typed::Float(f) => ruby.float_from_f64(*f).as_value(),
        Typed::Str(s) => ruby.str_new(s).as_value(),
        Typed::Uuid(u) => ruby.str_new(&u.hyphenated().to_string()).as_value(),
        Typed::Date(d) => types.date(ruby).funcall("new", (d.year(), d.month(), d.day()))?,
        Typed::DateTime(naive @ DateTimeValue::Naive(_)) => ruby.str_new(&naive.to_iso8601()).as_value(),
        Typed::DateTime(DateTimeValue::Offset(dt)) => {
            let (naive, offset) = (dt.naive_local(), dt.offset().local_minus_utc());
            let seconds = naive.second() as f64 + naive.nanosecond() as f64 / 1e9;
            types.time(ruby).funcall(
                "new",
                (naive.year(), naive.month(), naive.day(), naive.hour(), naive.minute(), seconds, offset),
            )?
        }
        Typed::File(file) => {
            let text = |t: &Option<String>| match t {
                Some(t) => ruby.str_new(t).as_value(),
                None => ruby.qnil().as_value(),
            };
            let headers = ruby.hash_new();
            for (name, value) in &file.headers {
                let joined = match headers.get(name.as_str()).and_then(|previous: Value| magnus::RString::from_value(previous)) {
                    Some(previous) => format!("{}, {value}", previous.to_string()?),
                    None => value.clone(),
                };
                headers.aset(name.as_str(), joined)?;
            }
            types.uploaded_file(ruby).funcall(
                "new",
                (
                    ruby.str_new(&file.field),
                    text(&file.filename),
                    text(&file.content_type),
                    ruby.str_from_slice(&file.data),
                    file.data.len(),
                    headers,
                ),
            )?
        }
        Typed::Array(items) => {
            let array = ruby.ary_new_capa(items.len());
            for item in items {
                array.push(typed(ruby, types, item)?)?;
            }
            array.as_value()
        }
        Typed::Json(json) => self::json(ruby, json)?,
    })
}

pub fn json(ruby: &Ruby, json: &Document) -> Result<Value, Error> {
    json_with_keys(ruby, json.root(), &mut KeyCache::new())
}

/// Hash keys are frozen, deduplicated strings made once per distinct key: `Hash#[]=` would
/// otherwise copy and freeze every string key it is given. The cache lives on the Rust heap,
/// where Ruby's GC does not look; a cached key stays alive because it is already a key of a
/// Hash in the tree being built, whose root is held on this thread's stack.
fn json_with_keys<'j>(ruby: &Ruby, json: NodeRef<'j>, keys: &mut KeyCache<'j, RString>) -> Result<Value, Error> {
    Ok(match json.view() {
        View::Null => ruby.qnil().as_value(),
        View::Bool(true) => ruby.qtrue().as_value(),
        View::Bool(false) => ruby.qfalse().as_value(),
        View::Int(i) => ruby.integer_from_i64(i).as_value(),
        View::UInt(u) => ruby.integer_from_u64(u).as_value(),
        View::Float(f) => ruby.float_from_f64(f).as_value(),
        View::Str(s) => ruby.str_new(s).as_value(),
        View::Array(items) => {
            let array = ruby.ary_new_capa(items.len());
            for item in items {
                array.push(json_with_keys(ruby, item, keys)?)?;
            }
            array.as_value()
        }
        View::Object(members) => {
            let hash = ruby.hash_new();
            for (key, item) in members {
                let key = keys.get_or_insert_with(key, |k| Ok::<_, Error>(ruby.str_new(k).to_interned_str())).map(Found::into_owned)?;
                hash.aset(key, json_with_keys(ruby, item, keys)?)?;
            }
            hash.as_value()
        }
    })
}
