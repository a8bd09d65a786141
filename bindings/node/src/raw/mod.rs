//! Node-API calls used on the JavaScript thread, as small checked functions.
//!
//! The conversions between request data and JavaScript values make many small N-API calls;
//! going through `napi::sys` directly keeps each one a plain function call, and this module
//! keeps the `unsafe` in one place. Every function here must run on the JavaScript thread
//! with the `env` of the current call.

mod doorbell;
mod function;

pub use doorbell::{Doorbell, Hold};
pub use function::{function, Body};
use napi::sys;
use std::ptr;

pub type Value = sys::napi_value;

/// `Number.MAX_SAFE_INTEGER`.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

#[derive(Clone, Copy)]
pub struct Env(pub sys::napi_env);

/// A failed N-API call (a pending exception or a wrong type).
#[derive(Debug)]
pub struct Failed(pub &'static str);

pub type Result<T> = std::result::Result<T, Failed>;

fn check(status: sys::napi_status, what: &'static str) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Failed(what))
    }
}

macro_rules! out {
    ($what:literal, |$out:ident| $call:expr) => {{
        let mut $out = std::mem::MaybeUninit::uninit();
        // SAFETY: an N-API call on the JS thread writing one value to `$out`, read only on success.
        let status = unsafe { $call };
        check(status, $what)?;
        // SAFETY: initialised by the successful call above.
        Ok(unsafe { $out.assume_init() })
    }};
}

/// A JavaScript value's type (`typeof`, with `null` apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Undefined,
    Null,
    Boolean,
    Number,
    String,
    Symbol,
    Object,
    Function,
    External,
    BigInt,
}

impl Env {
    pub fn object(self) -> Result<Value> {
        out!("create object", |v| sys::napi_create_object(self.0, v.as_mut_ptr()))
    }

    pub fn array(self, len: usize) -> Result<Value> {
        out!("create array", |v| sys::napi_create_array_with_length(self.0, len, v.as_mut_ptr()))
    }

    pub fn string(self, text: &str) -> Result<Value> {
        if text.is_ascii() {
            // ASCII is Latin-1 too, which V8 copies as it is instead of decoding UTF-8.
            return out!("create string", |v| sys::napi_create_string_latin1(self.0, text.as_ptr().cast(), text.len() as isize, v.as_mut_ptr()));
        }
        out!("create string", |v| sys::napi_create_string_utf8(self.0, text.as_ptr().cast(), text.len() as isize, v.as_mut_ptr()))
    }

    pub fn number(self, n: f64) -> Result<Value> {
        out!("create number", |v| sys::napi_create_double(self.0, n, v.as_mut_ptr()))
    }

    /// A number; exact only within ±(2^53 − 1) (see [`Env::integer`]).
    pub fn int(self, n: i64) -> Result<Value> {
        out!("create number", |v| sys::napi_create_int64(self.0, n, v.as_mut_ptr()))
    }

    /// An integer as a number when a number holds it exactly (|n| ≤ 2^53 − 1), else a BigInt:
    /// an id of 2^60 must not arrive rounded.
    pub fn integer(self, n: i64) -> Result<Value> {
        if n.unsigned_abs() <= MAX_SAFE_INTEGER {
            return self.int(n);
        }
        out!("create bigint", |v| sys::napi_create_bigint_int64(self.0, n, v.as_mut_ptr()))
    }

    pub fn unsigned(self, n: u64) -> Result<Value> {
        match i64::try_from(n) {
            Ok(n) => self.integer(n),
            Err(_) => out!("create bigint", |v| sys::napi_create_bigint_uint64(self.0, n, v.as_mut_ptr())),
        }
    }

    pub fn boolean(self, b: bool) -> Result<Value> {
        out!("get boolean", |v| sys::napi_get_boolean(self.0, b, v.as_mut_ptr()))
    }

    pub fn null(self) -> Result<Value> {
        out!("get null", |v| sys::napi_get_null(self.0, v.as_mut_ptr()))
    }

    pub fn undefined(self) -> Result<Value> {
        out!("get undefined", |v| sys::napi_get_undefined(self.0, v.as_mut_ptr()))
    }

    pub fn buffer(self, bytes: &[u8]) -> Result<Value> {
        let mut data = ptr::null_mut();
        out!("create buffer", |v| sys::napi_create_buffer_copy(self.0, bytes.len(), bytes.as_ptr().cast(), &mut data, v.as_mut_ptr()))
    }

    /// A new object with the given own properties, keyed by JavaScript strings already made
    /// (see `ferrule_core::KeyCache`), defined in one call.
    pub fn object_from(self, properties: &[(Value, Value)]) -> Result<Value> {
        let object = self.object()?;
        let descriptors: Vec<sys::napi_property_descriptor> = properties
            .iter()
            .map(|(name, value)| sys::napi_property_descriptor {
                utf8name: ptr::null(),
                name: *name,
                method: None,
                getter: None,
                setter: None,
                value: *value,
                attributes: sys::PropertyAttributes::writable | sys::PropertyAttributes::enumerable | sys::PropertyAttributes::configurable,
                data: ptr::null_mut(),
            })
            .collect();
        // SAFETY: JS thread; the descriptors' handles are alive for the call.
        check(unsafe { sys::napi_define_properties(self.0, object, descriptors.len(), descriptors.as_ptr()) }, "define properties")?;
        Ok(object)
    }

    pub fn set_index(self, array: Value, index: u32, value: Value) -> Result<()> {
        // SAFETY: JS thread, live handles.
        check(unsafe { sys::napi_set_element(self.0, array, index, value) }, "set element")
    }

    pub fn get(self, object: Value, key: Value) -> Result<Value> {
        out!("get property", |v| sys::napi_get_property(self.0, object, key, v.as_mut_ptr()))
    }

    pub fn index(self, array: Value, index: u32) -> Result<Value> {
        out!("get element", |v| sys::napi_get_element(self.0, array, index, v.as_mut_ptr()))
    }

    pub fn kind(self, value: Value) -> Result<Kind> {
        let t: sys::napi_valuetype = out!("typeof", |v| sys::napi_typeof(self.0, value, v.as_mut_ptr()))?;
        use sys::ValueType as T;
        Ok(match t {
            T::napi_undefined => Kind::Undefined,
            T::napi_null => Kind::Null,
            T::napi_boolean => Kind::Boolean,
            T::napi_number => Kind::Number,
            T::napi_string => Kind::String,
            T::napi_symbol => Kind::Symbol,
            T::napi_object => Kind::Object,
            T::napi_function => Kind::Function,
            T::napi_external => Kind::External,
            _ => Kind::BigInt,
        })
    }

    pub fn as_f64(self, value: Value) -> Result<f64> {
        out!("number value", |v| sys::napi_get_value_double(self.0, value, v.as_mut_ptr()))
    }

    /// A string's UTF-8 bytes, appended to `into` (lone surrogates become U+FFFD, as in V8).
    fn string_into(self, value: Value, into: &mut Vec<u8>) -> Result<()> {
        // Most strings are short: one call into a stack buffer; a full buffer may mean more.
        let mut small = [0u8; 128];
        let written: usize = out!("string value", |v| sys::napi_get_value_string_utf8(
            self.0,
            value,
            small.as_mut_ptr().cast(),
            small.len(),
            v.as_mut_ptr()
        ))?;
        if written < small.len() - 4 {
            into.extend_from_slice(&small[..written]);
            return Ok(());
        }
        let len: usize = out!("string length", |v| sys::napi_get_value_string_utf8(self.0, value, ptr::null_mut(), 0, v.as_mut_ptr()))?;
        let start = into.len();
        into.resize(start + len + 1, 0);
        let written: usize = out!("string value", |v| sys::napi_get_value_string_utf8(
            self.0,
            value,
            into.as_mut_ptr().add(start).cast(),
            len + 1,
            v.as_mut_ptr()
        ))?;
        into.truncate(start + written);
        Ok(())
    }

    /// A string's bytes when it is all ASCII (one byte per UTF-16 unit), else `None`.
    pub fn ascii(self, value: Value) -> Result<Option<Vec<u8>>> {
        let len: usize = out!("string length", |v| sys::napi_get_value_string_utf16(self.0, value, ptr::null_mut(), 0, v.as_mut_ptr()))?;
        // Room for one byte more than ASCII needs: a string with any other character
        // has more UTF-8 bytes than UTF-16 units, so it fills the buffer or shows a high byte.
        let mut bytes = vec![0u8; len + 2];
        let written: usize = out!("string value", |v| sys::napi_get_value_string_utf8(
            self.0,
            value,
            bytes.as_mut_ptr().cast(),
            bytes.len(),
            v.as_mut_ptr()
        ))?;
        bytes.truncate(written);
        Ok((written == len && bytes.is_ascii()).then_some(bytes))
    }

    /// A string's UTF-16 code units, as JavaScript holds them (two calls whatever the length).
    pub fn utf16(self, value: Value) -> Result<Vec<u16>> {
        let len: usize = out!("string length", |v| sys::napi_get_value_string_utf16(self.0, value, ptr::null_mut(), 0, v.as_mut_ptr()))?;
        let mut units = vec![0u16; len + 1];
        let written: usize = out!("string value", |v| sys::napi_get_value_string_utf16(self.0, value, units.as_mut_ptr(), units.len(), v.as_mut_ptr()))?;
        units.truncate(written);
        Ok(units)
    }

    /// A copy of the first `count` elements of a Float64Array.
    pub fn f64s(self, array: Value, count: usize) -> Result<Vec<f64>> {
        let mut kind = 0;
        let mut data = ptr::null_mut();
        let mut buffer = ptr::null_mut();
        let mut offset = 0;
        let len: usize = out!("typed array", |v| sys::napi_get_typedarray_info(self.0, array, &mut kind, v.as_mut_ptr(), &mut data, &mut buffer, &mut offset))?;
        if kind != sys::TypedarrayType::float64_array {
            return Err(Failed("not a Float64Array"));
        }
        if count > len {
            return Err(Failed("typed array shorter than said"));
        }
        if count == 0 {
            return Ok(Vec::new());
        }
        // SAFETY: N-API gives the elements' address (aligned, as a Float64Array's are) and
        // count; they are copied before any JavaScript can run and move or detach them.
        Ok(unsafe { std::slice::from_raw_parts(data.cast::<f64>(), count) }.to_vec())
    }

    pub fn as_string(self, value: Value) -> Result<String> {
        let mut bytes = Vec::new();
        self.string_into(value, &mut bytes)?;
        String::from_utf8(bytes).map_err(|_| Failed("string value"))
    }

    /// A copy of the bytes of a Buffer (or Uint8Array), if `value` is one.
    pub fn bytes(self, value: Value) -> Result<Option<Vec<u8>>> {
        let is_buffer: bool = out!("is buffer", |v| sys::napi_is_buffer(self.0, value, v.as_mut_ptr()))?;
        if !is_buffer {
            return Ok(None);
        }
        let mut data = ptr::null_mut();
        let len: usize = out!("buffer info", |v| sys::napi_get_buffer_info(self.0, value, &mut data, v.as_mut_ptr()))?;
        if len == 0 {
            return Ok(Some(Vec::new()));
        }
        // SAFETY: the buffer's memory is valid while `value` is alive (this call); copied now.
        Ok(Some(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) }.to_vec()))
    }

    /// Calls `function` with `this` = `receiver` and `args`.
    pub fn call(self, receiver: Value, function: Value, args: &[Value]) -> Result<Value> {
        out!("call", |v| sys::napi_call_function(self.0, receiver, function, args.len(), args.as_ptr(), v.as_mut_ptr()))
    }

    /// Runs `source` as a script and gives its value.
    pub fn run_script(self, source: &str) -> Result<Value> {
        let script = self.string(source)?;
        out!("run script", |v| sys::napi_run_script(self.0, script, v.as_mut_ptr()))
    }

    /// A strong reference that keeps `value` alive beyond the current call (never released:
    /// for values kept for the life of the environment).
    pub fn reference(self, value: Value) -> Result<sys::napi_ref> {
        out!("create reference", |r| sys::napi_create_reference(self.0, value, 1, r.as_mut_ptr()))
    }

    pub fn referenced(self, reference: sys::napi_ref) -> Result<Value> {
        out!("reference value", |v| sys::napi_get_reference_value(self.0, reference, v.as_mut_ptr()))
    }

    /// Takes the pending exception left by a failed call and says what it was (its
    /// `message`, for an Error), so the caller can report it and go on.
    pub fn take_exception(self) -> String {
        let mut exception = ptr::null_mut();
        // SAFETY: JS thread; taking when nothing is pending gives undefined.
        unsafe { sys::napi_get_and_clear_last_exception(self.0, &mut exception) };
        let message = (|| {
            if exception.is_null() || self.kind(exception).ok()? != Kind::Object {
                return None;
            }
            let key = self.string("message").ok()?;
            let message = self.get(exception, key).ok()?;
            (self.kind(message).ok()? == Kind::String).then(|| self.as_string(message).ok()).flatten()
        })();
        self.clear_pending();
        message.unwrap_or_else(|| "an exception".to_owned())
    }

    /// Reading the message could itself throw (a getter): nothing may stay pending.
    fn clear_pending(self) {
        let mut ignored = ptr::null_mut();
        // SAFETY: JS thread; clearing when nothing is pending is allowed.
        unsafe { sys::napi_get_and_clear_last_exception(self.0, &mut ignored) };
    }
}
