//! Each request's Python code runs in a `contextvars` context of its own.
//!
//! The loop calls `dispatch()` in one context, the same for every batch. A `def` handler, its
//! hooks and its dependencies ran right there, so a `ContextVar` one request set (a user id
//! for the log, a tenant) was what every later request on that loop read, `async def` ones
//! included, since a task copies the context it is made in. An asyncio task runs in a copy made
//! when it starts, and Starlette runs a `def` handler in one: code that runs here gets the same,
//! [`isolated`]: a copy of the loop's context, entered for the request and left after it.
//!
//! The three functions are CPython's public C API ("Context Variables Objects", unchanged since
//! 3.7) but not part of the limited API the rest of this module keeps to, so pyo3 declares
//! them only for full-API builds; the wheel still loads on every CPython from 3.10. A copy is a
//! new context object sharing the variables' immutable map, so it costs an allocation, not a
//! walk. `contextvars.Context.run` would do the same through a Python call into a Rust callable
//! made per request.

use pyo3::ffi::PyObject;
use pyo3::prelude::*;
use std::os::raw::c_int;

extern "C" {
    fn PyContext_CopyCurrent() -> *mut PyObject;
    fn PyContext_Enter(context: *mut PyObject) -> c_int;
    fn PyContext_Exit(context: *mut PyObject) -> c_int;
}

/// Runs `run` in a fresh copy of the current context: what it sets of a `ContextVar` is gone
/// when it returns. Should the copy fail (no memory), `run` runs in the current context, as it
/// would have before, rather than the request failing.
pub fn isolated<R>(py: Python<'_>, run: impl FnOnce() -> R) -> R {
    // SAFETY: the GIL is held (`py`); on success a new reference, which `from_owned_ptr` takes.
    let copy = unsafe { PyContext_CopyCurrent() };
    if copy.is_null() {
        PyErr::fetch(py).write_unraisable(py, None);
        return run();
    }
    let context = unsafe { Bound::from_owned_ptr(py, copy) };
    // SAFETY: a context made just now, entered nowhere else.
    if unsafe { PyContext_Enter(context.as_ptr()) } != 0 {
        PyErr::fetch(py).write_unraisable(py, None);
        return run();
    }
    let _left = Left(context);
    run()
}

/// Leaves the entered context however `run` ends.
struct Left<'py>(Bound<'py, PyAny>);

impl Drop for Left<'_> {
    fn drop(&mut self) {
        // SAFETY: `self.0` is the context entered by `isolated`, still the current one: Python
        // code cannot leave a context it did not enter, and every error of `run` is a `PyErr`
        // by now, not a pending exception.
        if unsafe { PyContext_Exit(self.0.as_ptr()) } != 0 {
            PyErr::fetch(self.0.py()).write_unraisable(self.0.py(), None);
        }
    }
}
