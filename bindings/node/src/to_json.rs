//! JavaScript values → JSON bytes, written by Rust while walking the values (no
//! `JSON.stringify`, no intermediate string), with `JSON.stringify`'s rules: `toJSON()` is
//! honoured (so Dates become ISO strings), `undefined`, functions and symbols are left out of
//! objects and become `null` in arrays, non-finite numbers become `null`; a BigInt or a
//! reference cycle is an error.

use crate::raw::{Env, Failed, Kind, Value};

const MAX_DEPTH: usize = 256;

pub fn to_vec(env: Env, value: Value) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(128);
    let to_json_key = env.string("toJSON").map_err(failed)?;
    let mut writer = Writer { env, out: &mut out, to_json_key };
    match writer.value(value, 0)? {
        true => Ok(out),
        // A top-level undefined or function: JSON.stringify gives undefined; send null.
        false => Ok(b"null".to_vec()),
    }
}

struct Writer<'a> {
    env: Env,
    out: &'a mut Vec<u8>,
    /// Made once per response: a named lookup would make the key string for every object.
    to_json_key: Value,
}

fn failed(e: Failed) -> String {
    format!("cannot read the value ({})", e.0)
}

impl Writer<'_> {
    /// Writes `value`; `false` (nothing written) for values JSON leaves out.
    fn value(&mut self, value: Value, depth: usize) -> Result<bool, String> {
        if depth > MAX_DEPTH {
            return Err("nested too deeply (a reference cycle?)".into());
        }
        let env = self.env;
        match env.kind(value).map_err(failed)? {
            Kind::Undefined | Kind::Function | Kind::Symbol | Kind::External => Ok(false),
            Kind::Null => {
                self.out.extend_from_slice(b"null");
                Ok(true)
            }
            Kind::Boolean => {
                let b = env.as_bool(value).map_err(failed)?;
                self.out.extend_from_slice(if b { b"true" } else { b"false" });
                Ok(true)
            }
            Kind::Number => {
                self.number(env.as_f64(value).map_err(failed)?);
                Ok(true)
            }
            Kind::String => {
                let mut text = Vec::new();
                env.string_into(value, &mut text).map_err(failed)?;
                // N-API hands out valid UTF-8; escaping needs a str.
                let text = String::from_utf8(text).map_err(|_| "a string is not valid UTF-8".to_owned())?;
                serde_json::to_writer(&mut *self.out, &text).map_err(|e| e.to_string())?;
                Ok(true)
            }
            Kind::BigInt => Err("a BigInt cannot be sent as JSON (convert it to a string or number)".into()),
            Kind::Object => self.object(value, depth),
        }
    }

    fn key(&mut self, key: Value) -> Result<(), String> {
        let mut text = Vec::new();
        self.env.string_into(key, &mut text).map_err(failed)?;
        let text = String::from_utf8(text).map_err(|_| "a key is not valid UTF-8".to_owned())?;
        serde_json::to_writer(&mut *self.out, &text).map_err(|e| e.to_string())
    }

    fn number(&mut self, n: f64) {
        if !n.is_finite() {
            self.out.extend_from_slice(b"null");
        } else if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
            // Integral values print as integers, as JSON.stringify does (1, not 1.0).
            self.out.extend_from_slice((n as i64).to_string().as_bytes());
        } else {
            let _ = serde_json::to_writer(&mut *self.out, &n);
        }
    }

    fn object(&mut self, value: Value, depth: usize) -> Result<bool, String> {
        let env = self.env;
        if env.is_array(value).map_err(failed)? {
            let len = env.array_len(value).map_err(failed)?;
            self.out.push(b'[');
            for i in 0..len {
                if i > 0 {
                    self.out.push(b',');
                }
                let item = env.index(value, i).map_err(failed)?;
                if !self.value(item, depth + 1)? {
                    self.out.extend_from_slice(b"null");
                }
            }
            self.out.push(b']');
            return Ok(true);
        }
        let to_json = env.get(value, self.to_json_key).map_err(failed)?;
        if env.kind(to_json).map_err(failed)? == Kind::Function {
            let replaced = env.call(value, to_json, &[]).map_err(|e| {
                env.clear_exception();
                format!("toJSON() threw ({})", e.0)
            })?;
            return self.value(replaced, depth + 1);
        }
        let keys = env.keys(value).map_err(failed)?;
        let len = env.array_len(keys).map_err(failed)?;
        self.out.push(b'{');
        let mut first = true;
        for i in 0..len {
            let key = env.index(keys, i).map_err(failed)?;
            let item = env.get(value, key).map_err(failed)?;
            let mark = self.out.len();
            if !first {
                self.out.push(b',');
            }
            // Keys are strings (numbers converted by `keys`): no type check needed.
            self.key(key)?;
            self.out.push(b':');
            if self.value(item, depth + 1)? {
                first = false;
            } else {
                self.out.truncate(mark); // undefined/function values leave the key out
            }
        }
        self.out.push(b'}');
        Ok(true)
    }
}
