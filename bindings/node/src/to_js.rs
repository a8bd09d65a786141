//! Request data → the parts of the handler's context object, built from the core's typed
//! values with no JSON text in between. index.js puts the parts into one object literal
//! `{ method, path, params, query, headers, cookies, body, requestId }`: a literal gets its
//! shape at once, where defining eight properties from here is eight shape changes.
//!
//! Integers and floats become numbers, booleans booleans, UUIDs, dates and date-times their
//! canonical strings (JavaScript has no date-only type; `new Date(ctx.query.at)` parses the
//! ISO form), uploaded files `{ field, filename, contentType, size, data: Buffer }`.

use crate::raw::{Env, Result, Value};
use crate::shapes;
use ferrule_core::{Body, KeyCache, Params, RequestData, Value as Typed};

/// How many values [`context_parts`] gives for each request.
pub const CONTEXT_PARTS: usize = 8;

/// `[method, path, params, query, headers, cookies, body, requestId]`, in the order index.js
/// reads them.
pub fn context_parts(env: Env, request: &RequestData) -> Result<[Value; CONTEXT_PARTS]> {
    let id = match &request.request_id {
        Some(id) => env.string(id)?,
        None => env.null()?,
    };
    Ok([
        env.string(request.method.as_str())?,
        env.string(&request.path)?,
        params(env, &request.path_params)?,
        params(env, &request.query)?,
        params(env, &request.headers)?,
        params(env, &request.cookies)?,
        body(env, &request.body)?,
        id,
    ])
}

fn params(env: Env, params: &Params) -> Result<Value> {
    if params.is_empty() {
        return env.object();
    }
    let values = params.iter().map(|(_, value)| typed(env, value)).collect::<Result<Vec<_>>>()?;
    shapes::object_or_defined(env, params.iter().map(|(name, _)| name), &values, |name| env.string(name))
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
        Typed::Date(d) => env.string(&d.to_string()),
        Typed::DateTime(dt) => env.string(&dt.to_iso8601()),
        Typed::File(file) => {
            let text = |t: &Option<String>| match t {
                Some(t) => env.string(t),
                None => env.null(),
            };
            let values = vec![
                env.string(&file.field)?,
                text(&file.filename)?,
                text(&file.content_type)?,
                env.int(file.data.len() as i64)?,
                env.buffer(&file.data)?,
            ];
            shapes::object_or_defined(env, ["field", "filename", "contentType", "size", "data"].into_iter(), &values, |name| env.string(name))
        }
        Typed::Array(items) => shapes::array(env, &items.iter().map(|item| typed(env, item)).collect::<Result<Vec<_>>>()?),
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
        J::Array(items) => match same_keys(items) {
            Some(first) => records(env, first, items, keys),
            None => shapes::array(env, &items.iter().map(|item| json_with_keys(env, item, keys)).collect::<Result<Vec<_>>>()?),
        },
        J::Object(map) => {
            let values = map.values().map(|item| json_with_keys(env, item, keys)).collect::<Result<Vec<_>>>()?;
            object(env, map, &values, keys)
        }
    }
}

type JsonMap = serde_json::Map<String, serde_json::Value>;

fn object<'j>(env: Env, map: &'j JsonMap, values: &[Value], keys: &mut KeyCache<'j, Value>) -> Result<Value> {
    shapes::object_or_defined(env, map.keys().map(String::as_str), values, |key| keys.get_or_insert_with(key, |k| env.string(k)))
}

/// The first item's keys when `items` are two or more non-empty objects that all have the
/// same keys: an array of records, made in one call.
fn same_keys(items: &[serde_json::Value]) -> Option<&JsonMap> {
    let (first, rest) = items.split_first()?;
    let first = first.as_object().filter(|map| !map.is_empty() && !rest.is_empty())?;
    rest.iter().all(|item| item.as_object().is_some_and(|map| map.len() == first.len() && map.keys().eq(first.keys()))).then_some(first)
}

fn records<'j>(env: Env, first: &'j JsonMap, items: &'j [serde_json::Value], keys: &mut KeyCache<'j, Value>) -> Result<Value> {
    let maps = || items.iter().filter_map(serde_json::Value::as_object);
    let mut values = Vec::with_capacity(items.len() * first.len());
    for map in maps() {
        for value in map.values() {
            values.push(json_with_keys(env, value, keys)?);
        }
    }
    if let Some(array) = shapes::records(env, first.keys().map(String::as_str), items.len(), &values)? {
        return Ok(array);
    }
    let objects = maps().zip(values.chunks(first.len())).map(|(map, values)| object(env, map, values, keys)).collect::<Result<Vec<_>>>()?;
    shapes::array(env, &objects)
}
