//! Every `unsafe` of the Ruby binding, in one place (as Node's `raw.rs`): waiting without the
//! GVL, and reading a String's bytes or a value's class name, which magnus marks unsafe
//! because Ruby could change or free them while Rust holds a reference — so each is copied
//! out here at once, before any Ruby code can run.
//!
//! ## Waiting without Ruby's global VM lock
//!
//! magnus has no wrapper for `rb_thread_call_without_gvl`; this is one. The closure runs on
//! the calling Ruby thread with the GVL released, so other Ruby threads run meanwhile; `ubf`
//! is Ruby's "unblocking function", called from another thread when Ruby needs this one back
//! (a signal for the main thread, `Thread#kill`, VM shutdown). If Ruby raises on the way back
//! (an `Interrupt`, a kill), that comes back as `Err` and must be propagated.

use magnus::value::ReprValue;
use magnus::{Error, RString, Ruby};
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

pub fn without_gvl<F, R, U>(ruby: &Ruby, func: F, ubf: U) -> Result<R, Error>
where
    F: FnOnce() -> R,
    U: Fn() + Sync,
{
    call_without_gvl(ruby, func, ubf, 0)
}

fn call_without_gvl<F, R, U>(ruby: &Ruby, func: F, ubf: U, flags: i32) -> Result<R, Error>
where
    F: FnOnce() -> R,
    U: Fn() + Sync,
{
    struct Call<F, R> {
        func: Option<F>,
        out: Option<std::thread::Result<R>>,
    }
    unsafe extern "C" fn call<F: FnOnce() -> R, R>(data: *mut c_void) -> *mut c_void {
        // SAFETY: `data` is the `Call` below, alive for the whole rb_thread_call_without_gvl.
        let call = unsafe { &mut *(data as *mut Call<F, R>) };
        if let Some(func) = call.func.take() {
            call.out = Some(catch_unwind(AssertUnwindSafe(func)));
        }
        std::ptr::null_mut()
    }
    unsafe extern "C" fn unblock<U: Fn() + Sync>(data: *mut c_void) {
        // SAFETY: `data` is `ubf` below, alive for the whole call; it is only read.
        let ubf = unsafe { &*(data as *const U) };
        let _ = catch_unwind(AssertUnwindSafe(ubf));
    }
    let mut call_data = Call { func: Some(func), out: None };
    magnus::rb_sys::protect(|| {
        // SAFETY: a Ruby thread holding the GVL; both pointers outlive the call, and neither
        // callback touches Ruby.
        unsafe {
            rb_sys::rb_nogvl(
                Some(call::<F, R>),
                &mut call_data as *mut Call<F, R> as *mut c_void,
                Some(unblock::<U>),
                &ubf as *const U as *mut c_void,
                flags,
            );
        }
        rb_sys::Qnil as rb_sys::VALUE
    })?;
    match call_data.out {
        Some(Ok(result)) => Ok(result),
        Some(Err(_)) => Err(Error::new(ruby.exception_runtime_error(), "ferrule: a panic while waiting without the GVL")),
        None => Err(Error::new(ruby.exception_runtime_error(), "ferrule: interrupted before waiting")),
    }
}

/// A String's bytes, copied.
pub fn string_bytes(s: RString) -> Vec<u8> {
    // SAFETY: the slice is copied before any Ruby code can run (we hold the GVL).
    unsafe { s.as_slice() }.to_vec()
}

/// A String's text when it is UTF-8 (or 7-bit), copied.
pub fn string_text(s: RString) -> Option<String> {
    with_string_text(s, str::to_owned)
}

/// `each` applied to a String's text when it is UTF-8 (or 7-bit), read in place; `None` when
/// it is not. `each` must not call Ruby: the text is Ruby's buffer, valid only while no Ruby
/// code runs (we hold the GVL, and nothing else can change it meanwhile).
pub fn with_string_text<R>(s: RString, each: impl FnOnce(&str) -> R) -> Option<R> {
    // SAFETY: see above; the borrow ends when `each` returns.
    unsafe { s.as_str() }.ok().map(each)
}

/// The class name of a live value (for log lines and messages).
pub fn class_name<T: ReprValue>(value: T) -> String {
    // SAFETY: the name is copied before any Ruby code can run (we hold the GVL).
    unsafe { value.classname() }.into_owned()
}
