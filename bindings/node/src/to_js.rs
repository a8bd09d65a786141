//! Request data → the handler's context object, built from the core's typed values with no
//! JSON text in between: `{ method, path, params, query, headers, cookies, body, requestId }`.
//!
//! Integers and floats become numbers, booleans booleans, UUIDs, dates and date-times their
//! canonical strings (JavaScript has no date-only type; `new Date(ctx.query.at)` parses the
//! ISO form), uploaded files `{ field, filename, contentType, size, data: Buffer }`.

use crate::raw::{Env, Result, Value};
use ferrule_core::{Body, KeyCache, Params, RequestData, Value as Typed};

pub fn context(env: Env, request: &RequestData) -> Result<Value> {
    let id = match &request.request_id {
        Some(id) => env.string(id)?,
        None => env.null()?,
    };
    env.object_with(&[
        ("method", env.string(request.method.as_str())?),
        ("path", env.string(&request.path)?),
        ("params", params(env, &request.path_params)?),
        ("query", params(env, &request.query)?),
        ("headers", params(env, &request.headers)?),
        ("cookies", params(env, &request.cookies)?),
        ("body", body(env, &request.body)?),
        ("requestId", id),
    ])
}

fn params(env: Env, params: &Params) -> Result<Value> {
    let properties = params.iter().map(|(name, value)| Ok((name, typed(env, value)?))).collect::<Result<Vec<_>>>()?;
    env.object_with(&properties)
}

fn body(env: Env, body: &Body) -> Result<Value> {
    match body {
        Body::None => env.undefined(),
        Body::Json(json) => self::json(env, json),
        Body::Form(fields) => params(env, fields),
        Body::Bytes(bytes) => env.buffer(bytes),
        Body::Text(text) => env.string(text),
    }
}

fn typed(env: Env, value: &Typed) -> Result<Value> {
    match value {
        Typed::Null => env.null(),
        Typed::Bool(b) => env.boolean(*b),
        Typed::Int(i) => env.int(*i),
        Typed::Float(f) => env.number(*f),
        Typed::Str(s) => env.string(s),
        Typed::Uuid(u) => env.string(u.hyphenated().encode_lower(&mut uuid_buffer())),
        Typed::Date(d) => env.string(&d.format("%Y-%m-%d").to_string()),
        Typed::DateTime(dt) => env.string(&dt.to_iso8601()),
        Typed::File(file) => {
            let text = |t: &Option<String>| match t {
                Some(t) => env.string(t),
                None => env.null(),
            };
            env.object_with(&[
                ("field", env.string(&file.field)?),
                ("filename", text(&file.filename)?),
                ("contentType", text(&file.content_type)?),
                ("size", env.int(file.data.len() as i64)?),
                ("data", env.buffer(&file.data)?),
            ])
        }
        Typed::Array(items) => {
            let array = env.array(items.len())?;
            for (i, item) in items.iter().enumerate() {
                env.set_index(array, i as u32, typed(env, item)?)?;
            }
            Ok(array)
        }
        Typed::Json(json) => self::json(env, json),
    }
}

fn uuid_buffer() -> [u8; 36] {
    [0; 36]
}

pub fn json(env: Env, json: &serde_json::Value) -> Result<Value> {
    json_with_keys(env, json, &mut KeyCache::new())
}

fn json_with_keys<'j>(env: Env, json: &'j serde_json::Value, keys: &mut KeyCache<'j, Value>) -> Result<Value> {
    use serde_json::Value as J;
    match json {
        J::Null => env.null(),
        J::Bool(b) => env.boolean(*b),
        J::Number(n) => match n.as_i64() {
            Some(i) => env.int(i),
            None => env.number(n.as_f64().unwrap_or(f64::NAN)),
        },
        J::String(s) => env.string(s),
        J::Array(items) => {
            let array = env.array(items.len())?;
            for (i, item) in items.iter().enumerate() {
                env.set_index(array, i as u32, json_with_keys(env, item, keys)?)?;
            }
            Ok(array)
        }
        J::Object(map) => {
            let properties = map
                .iter()
                .map(|(key, item)| Ok((keys.get_or_insert_with(key, |k| env.string(k))?, json_with_keys(env, item, keys)?)))
                .collect::<Result<Vec<_>>>()?;
            env.object_from(&properties)
        }
    }
}
