//! Objects made by object literals: one small compiled function per list of keys,
//! `(function(v0, v1){return {"id": v0, "name": v1};})`, called with the values; arrays
//! likewise, from rest parameters. Fixed scripts (that one, the serialiser's walk) are
//! compiled once per environment by [`compiled`].
//!
//! V8 gives a literal its final shape at once, while defining properties one by one from here
//! changes the object's shape once per property; that was the largest single cost of
//! building request objects (a quarter of the JavaScript thread's time on small requests).
//! Records of one kind (an array of items, the same headers on every request) reuse one
//! function, kept for the life of the thread; an array whose objects all have the same keys
//! is made whole by one call of a looping variant, [`records`].
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
    /// Keys, each as its length (4 bytes) then its UTF-8 bytes → the function. Hashed with
    /// foldhash, seeded at random as the standard hasher is, but cheaper: SipHash was 300 of
    /// path-deep's 20,900 instructions a request on this thread and 1,240 of json-medium's
    /// 147,200, foldhash 40 and 165 (callgrind). A flood of colliding keys is bounded by
    /// [`MAX_SHAPES`] either way.
    factories: HashMap<Box<[u8]>, sys::napi_ref, foldhash::fast::RandomState>,
    scratch: Vec<u8>,
}

thread_local! {
    static SHAPES: RefCell<Option<Shapes>> = const { RefCell::new(None) };
}

/// A new object with `keys[i]: values[i]` (a repeated key keeps its last value, as when
/// defining them in order), or `None` when these keys get no function.
pub fn object<'k>(env: Env, keys: impl Iterator<Item = &'k str> + Clone, values: &[Value]) -> Result<Option<Value>> {
    if values.is_empty() {
        return Ok(None);
    }
    match factory(env, Kind::Object, keys, values.len())? {
        Some(factory) => env.call(env.undefined()?, factory, values).map(Some),
        None => Ok(None),
    }
}

/// An array of `count` new objects that all have `keys`: `values` holds the first object's
/// values, then the second's, and so on. One call makes them all, where making them one by
/// one is a call each (arrays of records are most of a large body). `None` when these keys
/// get no function or the values are too many for one call.
pub fn records<'k>(env: Env, keys: impl Iterator<Item = &'k str> + Clone, count: usize, values: &[Value]) -> Result<Option<Value>> {
    let per_record = values.len() / count.max(1);
    if per_record == 0 || per_record * count != values.len() || values.len() >= MAX_ARRAY_CALL {
        return Ok(None);
    }
    let Some(factory) = factory(env, Kind::Records, keys, per_record)? else { return Ok(None) };
    let mut arguments = Vec::with_capacity(values.len() + 1);
    arguments.push(env.int(count as i64)?);
    arguments.extend_from_slice(values);
    env.call(env.undefined()?, factory, &arguments).map(Some)
}

#[derive(Clone, Copy)]
enum Kind {
    Object,
    Records,
}

/// The function that makes objects with `keys` in the way `kind` says, compiled on first use.
fn factory<'k>(env: Env, kind: Kind, keys: impl Iterator<Item = &'k str> + Clone, arity: usize) -> Result<Option<Value>> {
    if arity > MAX_KEYS || keys.clone().map(str::len).sum::<usize>() > MAX_KEY_BYTES || keys.clone().any(|k| k == "__proto__") {
        return Ok(None);
    }
    with_shapes(env, |shapes| {
        shapes.scratch.clear();
        shapes.scratch.push(kind as u8);
        for key in keys.clone() {
            shapes.scratch.extend_from_slice(&(key.len() as u32).to_le_bytes());
            shapes.scratch.extend_from_slice(key.as_bytes());
        }
        match shapes.factories.get(shapes.scratch.as_slice()) {
            Some(reference) => env.referenced(*reference).map(Some),
            None if shapes.factories.len() < MAX_SHAPES => {
                let factory = env.run_script(&factory_source(kind, keys, arity))?;
                shapes.factories.insert(shapes.scratch.as_slice().into(), env.reference(factory)?);
                Ok(Some(factory))
            }
            None => Ok(None),
        }
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
            *slot = Some(Shapes { env: env.0, scripts: Vec::new(), factories: HashMap::default(), scratch: Vec::new() });
        }
        f(slot.as_mut().expect("just set"))
    })
}

fn factory_source<'k>(kind: Kind, keys: impl Iterator<Item = &'k str>, arity: usize) -> String {
    // The i-th value: a named parameter for one object (V8 optimises those best), an offset
    // into the rest parameters for records.
    let value = |i: usize| match kind {
        Kind::Object => format!("v{i}"),
        Kind::Records => format!("v[j+{i}]"),
    };
    let mut literal = String::from("{");
    for (i, key) in keys.enumerate() {
        let key = serde_json::to_string(key).unwrap_or_default();
        let _ = write!(literal, "{}{key}:{}", if i > 0 { "," } else { "" }, value(i));
    }
    literal.push('}');
    match kind {
        Kind::Object => format!("(function({}){{return {literal};}})", (0..arity).map(value).collect::<Vec<_>>().join(",")),
        Kind::Records => format!("(function(n,...v){{const out=[];for(let i=0,j=0;i<n;i++,j+={arity})out.push({literal});return out;}})"),
    }
}

/// The same object from defined properties, for keys without a function; `key` makes each
/// key's string (JSON bodies pass their cache of repeated keys).
pub fn object_or_defined<'k>(
    env: Env,
    keys: impl Iterator<Item = &'k str> + Clone,
    values: &[Value],
    mut key: impl FnMut(&'k str) -> Result<Value>,
) -> Result<Value> {
    if let Some(object) = object(env, keys.clone(), values)? {
        return Ok(object);
    }
    let properties = keys.zip(values).map(|(name, value)| Ok((key(name)?, *value))).collect::<Result<Vec<_>>>()?;
    env.object_from(&properties)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_enter_the_source_as_string_literals() {
        assert_eq!(factory_source(Kind::Object, ["id", "a\"b"].into_iter(), 2), r#"(function(v0,v1){return {"id":v0,"a\"b":v1};})"#);
        assert_eq!(
            factory_source(Kind::Records, ["v", "});x=1;({"].into_iter(), 2),
            r#"(function(n,...v){const out=[];for(let i=0,j=0;i<n;i++,j+=2)out.push({"v":v[j+0],"});x=1;({":v[j+1]});return out;})"#
        );
    }
}
