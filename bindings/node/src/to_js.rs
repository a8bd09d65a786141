//! Request data → the parts of the handler's context object, built from the core's typed
//! values with no JSON text in between. index.js puts the parts into one object literal
//! `{ method, path, params, query, headers, cookies, body, requestId }`: a literal gets its
//! shape at once, where defining eight properties from here is eight shape changes.
//!
//! Integers and floats become numbers, booleans booleans, UUIDs, dates and date-times their
//! canonical strings (JavaScript has no date-only type; `new Date(ctx.query.at)` parses the
//! ISO form), uploaded files `{ field, filename, contentType, size, data: Buffer, headers }`.

use crate::raw::{Env, Result, Value};
use crate::shapes;
use ferrule_core::document::{Document, Items, Members, NodeRef, View};
use ferrule_core::lasting_keys::Found;
use ferrule_core::http::Method;
use ferrule_core::{Body, KeyCache, Params, RequestData, Value as Typed};

/// How many values [`context_parts`] gives for each request.
pub const CONTEXT_PARTS: usize = 8;

/// The methods sent as their index in this list, which index.js's `METHOD_BY_INDEX` repeats: a small
/// integer costs N-API a fraction of a new string (callgrind on path-int: 680 instructions for
/// `"GET"` made as a string, against the table's lookup in the glue).
const METHODS: [Method; 9] = [Method::GET, Method::POST, Method::PUT, Method::DELETE, Method::PATCH, Method::HEAD, Method::OPTIONS, Method::CONNECT, Method::TRACE];

/// `[method, path, params, query, headers, cookies, body, requestId]`, in the order index.js
/// reads them. The method is an index into [`METHODS`] when it is one of them; parameters,
/// query, headers and cookies are `undefined` when there are none, and the glue makes their
/// empty object (a literal `{}` in JavaScript; from here it is a `napi_create_object`, about
/// 300 instructions each, three per request on a route that declares none).
pub fn context_parts(env: Env, request: &RequestData) -> Result<[Value; CONTEXT_PARTS]> {
    let id = match request.request_id() {
        Some(id) => env.string(id)?,
        None => env.null()?,
    };
    let method = match METHODS.iter().position(|m| *m == request.method) {
        Some(index) => env.int(index as i64)?,
        None => env.string(request.method.as_str())?,
    };
    let some = |values: &Params| if values.is_empty() { env.undefined() } else { params(env, values) };
    Ok([
        method,
        env.string(&request.path)?,
        some(&request.path_params)?,
        some(&request.query)?,
        some(&request.headers)?,
        some(&request.cookies)?,
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
        Typed::Int(i) => env.integer(*i),
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
            // The part's headers: names vary from file to file, so a plain object, not a shape.
            let mut headers: Vec<(&str, String)> = Vec::with_capacity(file.headers.len());
            for (name, value) in &file.headers {
                match headers.iter_mut().find(|(n, _)| *n == name.as_str()) {
                    Some((_, joined)) => {
                        joined.push_str(", ");
                        joined.push_str(value);
                    }
                    None => headers.push((name, value.clone())),
                }
            }
            let headers = headers.iter().map(|(name, value)| Ok((env.string(name)?, env.string(value)?))).collect::<Result<Vec<_>>>()?;
            let values = vec![
                env.string(&file.field)?,
                text(&file.filename)?,
                text(&file.content_type)?,
                env.int(file.data.len() as i64)?,
                env.buffer(&file.data)?,
                env.object_from(&headers)?,
            ];
            shapes::object_or_defined(env, ["field", "filename", "contentType", "size", "data", "headers"].into_iter(), &values, |name| env.string(name))
        }
        Typed::Array(items) => shapes::array(env, &items.iter().map(|item| typed(env, item)).collect::<Result<Vec<_>>>()?),
        Typed::Json(json) => self::json(env, json),
    }
}

fn uuid_buffer() -> [u8; 36] {
    [0; 36]
}

pub fn json(env: Env, json: &Document) -> Result<Value> {
    json_with_keys(env, json.root(), &mut KeyCache::new())
}

/// JavaScript values built by one walk of the core's document.
fn json_with_keys<'j>(env: Env, json: NodeRef<'j>, keys: &mut KeyCache<'j, Value>) -> Result<Value> {
    match json.view() {
        View::Null => env.null(),
        View::Bool(b) => env.boolean(b),
        View::Int(i) => env.integer(i),
        View::UInt(u) => env.unsigned(u),
        View::Float(f) => env.number(f),
        View::Str(s) => env.string(s),
        View::Array(items) => array(env, items, keys),
        View::Object(members) => {
            let values = members.map(|(_, item)| json_with_keys(env, item, keys)).collect::<Result<Vec<_>>>()?;
            object(env, members, &values, keys)
        }
    }
}

fn object<'j>(env: Env, members: Members<'j>, values: &[Value], keys: &mut KeyCache<'j, Value>) -> Result<Value> {
    shapes::object_or_defined(env, members.keys(), values, |key| keys.get_or_insert_with(key, |k| env.string(k)).map(Found::into_owned))
}

/// An array; a run of objects with the same keys at its start (an array of records, most of
/// a large body) is made by one call. Keys are checked while the values are made, in one walk
/// of each object: a separate check first cost a second walk of every record.
fn array<'j>(env: Env, items: Items<'j>, keys: &mut KeyCache<'j, Value>) -> Result<Value> {
    let first = items.clone().next().and_then(NodeRef::as_object).filter(|members| members.len() > 0 && items.len() > 1);
    let mut values = Vec::new();
    let mut records = 0;
    if let Some(first) = first {
        values.reserve(items.len() * first.len());
        'items: for item in items {
            let Some(members) = item.as_object().filter(|members| members.len() == first.len()) else { break };
            let mark = values.len();
            for ((key, value), expected) in members.zip(first.keys()) {
                if key != expected {
                    // Its values made so far are left to the garbage collector: at most one object's.
                    values.truncate(mark);
                    break 'items;
                }
                values.push(json_with_keys(env, value, keys)?);
            }
            records += 1;
        }
    }
    if let Some(first) = first.filter(|_| records == items.len()) {
        if let Some(array) = shapes::records(env, first.keys(), records, &values)? {
            return Ok(array);
        }
    }
    let mut elements = Vec::with_capacity(items.len());
    if let Some(first) = first {
        for (item, values) in items.zip(values.chunks(first.len())).take(records) {
            elements.push(object(env, item.as_object().expect("counted as a record"), values, keys)?);
        }
    }
    for item in items.skip(records) {
        elements.push(json_with_keys(env, item, keys)?);
    }
    shapes::array(env, &elements)
}
