//! JavaScript functions made straight from Node-API, for the calls the glue makes once per
//! request or batch (`reply`, `dispatch`, `flush`).
//!
//! Why not `#[napi]` methods: napi-rs 3 wraps every method call in bookkeeping for the
//! borrows of its class instances (a borrow scope on the heap, a registry lookup to check the
//! class, `napi_unwrap`, then releasing it all). Measured on this machine: a `#[napi]` method
//! that only reads a mutex costs about 240 ns a call from JavaScript, and callgrind counts 3,300
//! instructions of that wrapper around each `reply` on path-int, a sixth of the JavaScript
//! thread's work per request. A function made here reads its arguments with one
//! `napi_get_cb_info` and reaches its state through the callback's `data`, not through `this`.
//!
//! Life cycle: the state is an `Rc` the function owns (functions and state live on the
//! JavaScript thread alone); a finalizer drops it when the function is collected, so the
//! function stays valid however long JavaScript keeps it.

use super::{check, Env, Result, Value};
use napi::sys;
use std::ffi::c_void;
use std::ptr;
use std::rc::Rc;

/// The most arguments a body is given; more are ignored, fewer are `undefined`.
const MAX_ARGUMENTS: usize = 6;

/// What a call does: the state, its arguments; `Err` throws an `Error` with that message.
pub type Body<T> = fn(Env, &T, &[Value]) -> std::result::Result<Value, String>;

struct Bound<T> {
    state: Rc<T>,
    body: Body<T>,
}

/// A function named `name` whose calls run `body` with `state`.
pub fn function<T: 'static>(env: Env, name: &str, state: Rc<T>, body: Body<T>) -> Result<Value> {
    let bound = Box::into_raw(Box::new(Bound { state, body }));
    let mut function = ptr::null_mut();
    // SAFETY: JS thread; `name` is read for `name.len()` bytes during the call.
    let status = unsafe { sys::napi_create_function(env.0, name.as_ptr().cast(), name.len() as isize, Some(call::<T>), bound.cast(), &mut function) };
    if let Err(e) = check(status, "create function") {
        // SAFETY: made above and given to nobody.
        drop(unsafe { Box::from_raw(bound) });
        return Err(e);
    }
    // SAFETY: JS thread; the finalizer takes back the box made above, once, when the function
    // is collected (or its environment ends).
    let status = unsafe { sys::napi_add_finalizer(env.0, function, bound.cast(), Some(release::<T>), ptr::null_mut(), ptr::null_mut()) };
    if let Err(e) = check(status, "add finalizer") {
        // The function exists but nothing would free its state: it is not handed out.
        // SAFETY: the finalizer was not added, so the box is still only ours.
        drop(unsafe { Box::from_raw(bound) });
        return Err(e);
    }
    Ok(function)
}

unsafe extern "C" fn call<T>(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut arguments = [ptr::null_mut(); MAX_ARGUMENTS];
    let mut count = MAX_ARGUMENTS;
    let mut data = ptr::null_mut();
    // SAFETY: Node calls this on the JS thread with a live `info`; it writes at most `count`
    // arguments and fills those not given with `undefined`.
    let status = unsafe { sys::napi_get_cb_info(env, info, &mut count, arguments.as_mut_ptr(), ptr::null_mut(), &mut data) };
    if status != sys::Status::napi_ok {
        throw(env, "ferrule: cannot read the call's arguments");
        return ptr::null_mut();
    }
    // SAFETY: `data` is the box `function` made; its finalizer has not run while the function
    // can still be called.
    let bound = unsafe { &*data.cast::<Bound<T>>() };
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (bound.body)(Env(env), &bound.state, &arguments)));
    match outcome {
        Ok(Ok(value)) => value,
        Ok(Err(message)) => {
            throw(env, &message);
            ptr::null_mut()
        }
        Err(_) => {
            throw(env, "ferrule: the addon panicked");
            ptr::null_mut()
        }
    }
}

unsafe extern "C" fn release<T>(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: the box `function` made, given to this finalizer alone.
    drop(unsafe { Box::from_raw(data.cast::<Bound<T>>()) });
}

/// Throws an `Error` with `message`, unless an exception is already pending (a JavaScript call
/// made by the body threw: that one is the caller's to see).
fn throw(env: sys::napi_env, message: &str) {
    let mut pending = false;
    // SAFETY: JS thread, within the callback.
    unsafe { sys::napi_is_exception_pending(env, &mut pending) };
    if pending {
        return;
    }
    let text = std::ffi::CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: JS thread; `text` outlives the call.
    unsafe { sys::napi_throw_error(env, ptr::null(), text.as_ptr()) };
}
