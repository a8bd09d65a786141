//! Objects made by object literals: one small compiled function per list of keys,
//! `(function(v0, v1){return {"id": v0, "name": v1};})`, called with the values; arrays
//! likewise, from rest parameters. Fixed scripts (that one, the serialiser's walk) are
//! compiled once per environment by [`compiled`].
//!
//! V8 gives a literal its final shape at once, while defining properties one by one from here
//! changes the object's shape once per property; that was the largest single cost of
//! building request objects (a quarter of the JavaScript thread's time on small requests).
//! Records of one kind (an array of items, the same headers on every request) reuse one
//! function, kept for the life of the thread.
//!
//! Keys come from requests, so the number of functions and their size are bounded (past the
//! bounds, or for a key a literal treats specially, the caller defines the properties), and
//! every key enters the source as a JSON string literal, which is a JavaScript one.

use crate::raw::{Env, Result, Value};
use napi::sys;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write;

/// Functions kept per thread; a body with ever-new keys cannot make more.
const MAX_SHAPES: usize = 512;
/// Larger objects are rare and gain little: their properties are defined one by one.
const MAX_KEYS: usize = 64;
/// V8 keeps a function's source: long keys would let requests pin megabytes of it.
const MAX_KEY_BYTES: usize = 1024;

/// Arrays up to this long are made in one call; V8 takes far more arguments, but the values
/// sit on its stack.
const MAX_ARRAY_CALL: usize = 4096;

struct Shapes {
    env: sys::napi_env,
    /// Fixed sources compiled once ([`compiled`]), by the address of their text.
    scripts: Vec<(usize, sys::napi_ref)>,
    /// Keys, each as its length (4 bytes) then its UTF-8 bytes → the function.
    factories: HashMap<Box<[u8]>, sys::napi_ref>,
    scratch: Vec<u8>,
}

thread_local! {
    static SHAPES: RefCell<Option<Shapes>> = const { RefCell::new(None) };
}

/// A new object with `keys[i]: values[i]` (a repeated key keeps its last value, as when
/// defining them in order), or `None` when these keys get no function.
pub fn object<'k>(env: Env, keys: impl Iterator<Item = &'k str> + Clone, values: &[Value]) -> Result<Option<Value>> {
    if values.is_empty()
        || values.len() > MAX_KEYS
        || keys.clone().map(str::len).sum::<usize>() > MAX_KEY_BYTES
        || keys.clone().any(|k| k == "__proto__")
    {
        return Ok(None);
    }
    with_shapes(env, |shapes| {
        shapes.scratch.clear();
        for key in keys.clone() {
            shapes.scratch.extend_from_slice(&(key.len() as u32).to_le_bytes());
            shapes.scratch.extend_from_slice(key.as_bytes());
        }
        let factory = match shapes.factories.get(shapes.scratch.as_slice()) {
            Some(reference) => env.referenced(*reference)?,
            None if shapes.factories.len() < MAX_SHAPES => {
                let factory = env.run_script(&factory_source(keys, values.len()))?;
                shapes.factories.insert(shapes.scratch.as_slice().into(), env.reference(factory)?);
                factory
            }
            None => return Ok(None),
        };
        env.call(env.undefined()?, factory, values).map(Some)
    })
}

/// A new array of `values`: one call where setting elements from here is one call each.
pub fn array(env: Env, values: &[Value]) -> Result<Value> {
    if values.len() > MAX_ARRAY_CALL {
        let array = env.array(values.len())?;
        for (i, value) in values.iter().enumerate() {
            env.set_index(array, i as u32, *value)?;
        }
        return Ok(array);
    }
    let factory = compiled(env, "(function(...items){return items;})")?;
    env.call(env.undefined()?, factory, values)
}

/// The value of `source`, a fixed script, run once per environment and kept.
pub fn compiled(env: Env, source: &'static str) -> Result<Value> {
    with_shapes(env, |shapes| {
        let id = source.as_ptr() as usize;
        if let Some((_, reference)) = shapes.scripts.iter().find(|(known, _)| *known == id) {
            return env.referenced(*reference);
        }
        let value = env.run_script(source)?;
        shapes.scripts.push((id, env.reference(value)?));
        Ok(value)
    })
}

fn with_shapes<T>(env: Env, f: impl FnOnce(&mut Shapes) -> Result<T>) -> Result<T> {
    SHAPES.with_borrow_mut(|slot| {
        if slot.as_ref().is_none_or(|shapes| shapes.env != env.0) {
            // A new environment (the first call, or a worker's): functions of another one
            // cannot be used in it.
            *slot = Some(Shapes { env: env.0, scripts: Vec::new(), factories: HashMap::new(), scratch: Vec::new() });
        }
        f(slot.as_mut().expect("just set"))
    })
}

fn factory_source<'k>(keys: impl Iterator<Item = &'k str>, n: usize) -> String {
    let mut source = String::from("(function(");
    for i in 0..n {
        let _ = write!(source, "{}v{i}", if i > 0 { "," } else { "" });
    }
    source.push_str("){return {");
    for (i, key) in keys.enumerate() {
        let literal = serde_json::to_string(key).unwrap_or_default();
        let _ = write!(source, "{}{literal}:v{i}", if i > 0 { "," } else { "" });
    }
    source.push_str("};})");
    source
}

/// The same object from defined properties, for keys without a function.
pub fn object_or_defined<'k>(env: Env, keys: impl Iterator<Item = &'k str> + Clone, values: Vec<Value>) -> Result<Value> {
    if let Some(object) = object(env, keys.clone(), &values)? {
        return Ok(object);
    }
    let properties = keys.zip(values).map(|(key, value)| Ok((env.string(key)?, value))).collect::<Result<Vec<_>>>()?;
    env.object_from(&properties)
}
