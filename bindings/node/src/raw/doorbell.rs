//! Waking the JavaScript thread from the runtime's threads: a libuv async handle that calls a
//! JavaScript function, in place of a Node-API thread-safe function.
//!
//! Why not `napi_call_threadsafe_function`: Node queues the call under a mutex and signals the
//! loop (an `eventfd` write) while still holding it. On a busy core that write wakes the
//! JavaScript thread, which preempts the caller, reaches its dispatch callback and blocks on the
//! same mutex; the caller runs again only to unlock it and wake it once more. Measured with
//! `perf record -e cpu-clock` on path-int (server pinned to one core, 50 connections): 15% of
//! the server's samples were in `finish_task_switch`, half of them on that mutex
//! (`__lll_lock_wake` in the call, `__lll_lock_wait` in `AsyncCb`).
//!
//! `uv_async_send` takes no lock: an atomic flag folds every ring before the callback into one
//! `eventfd` write, and the callback runs on the loop's thread. Each request batch already rings
//! once (the mailbox's `notified` flag), so nothing else about the hand-off changes. Measured on
//! the same setup (100,000-request runs, interleaved, three each): context switches per request
//! 0.33 → 0.18, CPU per request 12.3 → 11.7 µs; `finish_task_switch` 15% → 10% of samples.
//!
//! Life cycle: made and closed on the JavaScript thread (a `Doorbell` is not `Send`; dropping
//! it closes it). A ring from another thread reads the handle under a read lock; closing takes
//! it under the write lock, so no ring can reach a handle libuv has been asked to close. The
//! environment's cleanup hook closes it too, for a program (or worker thread) that ends while
//! still listening.
//!
//! A doorbell holds its function strongly or weakly ([`Hold`]). A strong hold is a root: the
//! function, and whatever it closes over, lives until the doorbell is closed, which is right
//! for a listening server. The in-process router's doorbell is owned by the app its function
//! closes over, so a strong hold made a cycle through Node-API that the garbage collector
//! cannot see: every app that had used `inject()` stayed in memory with its router's runtime
//! thread (400 such apps, then `gc()`: 457 threads before, 7 after).

use super::{check, Failed, Result};
use napi::sys;
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

/// libuv's `uv_handle_type` for `uv_async_t`.
const UV_ASYNC: i32 = 1;

// libuv's own functions, exported by the `node` executable to addons (Node-API gives the loop,
// `napi_get_uv_event_loop`, for exactly this use).
extern "C" {
    fn uv_handle_size(kind: i32) -> usize;
    fn uv_async_init(event_loop: *mut sys::uv_loop_s, handle: *mut c_void, callback: unsafe extern "C" fn(*mut c_void)) -> i32;
    fn uv_async_send(handle: *mut c_void) -> i32;
    fn uv_close(handle: *mut c_void, closed: Option<unsafe extern "C" fn(*mut c_void)>);
    fn uv_unref(handle: *mut c_void);
    fn uv_handle_set_data(handle: *mut c_void, data: *mut c_void);
    fn uv_handle_get_data(handle: *const c_void) -> *mut c_void;
}

/// The handle's memory: as big as libuv says, aligned for any of its fields.
fn handle_layout() -> std::alloc::Layout {
    // SAFETY: a pure function of libuv's build.
    let size = unsafe { uv_handle_size(UV_ASYNC) };
    std::alloc::Layout::from_size_align(size, 16).expect("uv_async_t's size is a valid layout")
}

/// How a doorbell holds the function it calls.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Hold {
    /// Kept alive by the doorbell until it is closed.
    Strong,
    /// Kept alive by whoever else refers to it; a ring after it is collected calls nothing.
    Weak,
}

/// What a ring calls, reached from the handle's `data`.
struct Target {
    env: sys::napi_env,
    function: sys::napi_ref,
    /// The async context the call runs in (what `async_hooks` and `AsyncLocalStorage` see).
    context: sys::napi_async_context,
}

/// The open handle, while it is open.
struct Handle(*mut c_void);

// SAFETY: the pointer is only passed to `uv_async_send` (documented as callable from any thread)
// away from the JavaScript thread, under the read lock that closing waits for.
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

struct Shared {
    handle: RwLock<Option<Handle>>,
    /// The environment's cleanup hook is registered and owns one count of this `Arc`. Only the
    /// JavaScript thread reads or clears it (the hook, or `close`), whichever comes first.
    hooked: AtomicBool,
}

/// Rings the JavaScript thread from any thread; does nothing once the doorbell is closed.
#[derive(Clone)]
pub struct Ringer(Arc<Shared>);

impl Ringer {
    pub fn ring(&self) {
        let handle = self.0.handle.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(handle) = handle.as_ref() {
            // SAFETY: an initialised handle that closing cannot take while this read lock is held.
            unsafe { uv_async_send(handle.0) };
        }
    }
}

/// The JavaScript thread's end: calls `function` (with no arguments) on that thread after one or
/// more rings. Closed by [`Doorbell::close`] or by dropping it, by the environment's teardown,
/// or not at all when the process exits first.
pub struct Doorbell {
    env: sys::napi_env,
    shared: Arc<Shared>,
}

impl Doorbell {
    /// Must run on the JavaScript thread of `env`; `function` must be a function.
    pub fn new(env: super::Env, function: super::Value, hold: Hold) -> Result<Doorbell> {
        let env = env.0;
        let mut event_loop = ptr::null_mut();
        // SAFETY: JS thread, valid env.
        check(unsafe { sys::napi_get_uv_event_loop(env, &mut event_loop) }, "get the event loop")?;
        let mut reference = ptr::null_mut();
        // SAFETY: as above; `function` is a live value of this call.
        let count = match hold {
            Hold::Strong => 1,
            Hold::Weak => 0,
        };
        check(unsafe { sys::napi_create_reference(env, function, count, &mut reference) }, "keep the dispatch function")?;
        let mut context = ptr::null_mut();
        let made = (|| {
            let name = super::Env(env).string("ferrule.dispatch")?;
            // SAFETY: as above; a null resource lets Node make one.
            check(unsafe { sys::napi_async_init(env, ptr::null_mut(), name, &mut context) }, "make an async context")
        })();
        if let Err(e) = made {
            // SAFETY: the reference made above, deleted once.
            unsafe { sys::napi_delete_reference(env, reference) };
            return Err(e);
        }
        let target = Box::into_raw(Box::new(Target { env, function: reference, context }));
        // SAFETY: a fresh allocation of the size libuv asked for, initialised by `uv_async_init`
        // before any other use; on failure it is freed again and never seen by libuv.
        let handle = unsafe {
            let handle = std::alloc::alloc_zeroed(handle_layout()).cast::<c_void>();
            if handle.is_null() {
                std::alloc::handle_alloc_error(handle_layout());
            }
            if uv_async_init(event_loop, handle, rung) != 0 {
                std::alloc::dealloc(handle.cast(), handle_layout());
                forget_target(target);
                return Err(Failed("start the async handle"));
            }
            uv_handle_set_data(handle, target.cast());
            handle
        };
        let shared = Arc::new(Shared { handle: RwLock::new(Some(Handle(handle))), hooked: AtomicBool::new(true) });
        // The hook owns one count of `shared` until it runs or is removed.
        let hook_arg = Arc::into_raw(shared.clone()) as *mut c_void;
        // SAFETY: JS thread; removed with the same function and argument in `close`.
        if unsafe { sys::napi_add_env_cleanup_hook(env, Some(torn_down), hook_arg) } != sys::Status::napi_ok {
            shared.hooked.store(false, Ordering::Relaxed);
            // SAFETY: the count given to the hook that was not added.
            drop(unsafe { Arc::from_raw(hook_arg as *const Shared) });
            shut(&shared);
            return Err(Failed("add a cleanup hook"));
        }
        Ok(Doorbell { env, shared })
    }

    /// Lets Node's event loop end while the doorbell is open (as `timer.unref()` does): for a
    /// waker that must not keep a program alive by itself.
    pub fn unref(&self) {
        let handle = self.shared.handle.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(handle) = handle.as_ref() {
            // SAFETY: JS thread; an open handle.
            unsafe { uv_unref(handle.0) };
        }
    }

    /// What the runtime's threads ring with.
    pub fn ringer(&self) -> Ringer {
        Ringer(self.shared.clone())
    }

    /// Stops the calls (on the JavaScript thread): rings after this do nothing, and the handle no
    /// longer keeps Node's event loop alive. Dropping the doorbell does the same.
    pub fn close(self) {
        drop(self);
    }
}

impl Drop for Doorbell {
    fn drop(&mut self) {
        if self.shared.hooked.swap(false, Ordering::Relaxed) {
            let hook_arg = Arc::as_ptr(&self.shared) as *mut c_void;
            // SAFETY: JS thread; the hook added in `new` with this argument, which has not run.
            unsafe { sys::napi_remove_env_cleanup_hook(self.env, Some(torn_down), hook_arg) };
            // SAFETY: the count the hook owned; it can no longer run.
            drop(unsafe { Arc::from_raw(hook_arg as *const Shared) });
        }
        shut(&self.shared);
    }
}

/// Closes the handle once (later calls find it gone).
fn shut(shared: &Shared) {
    let taken = shared.handle.write().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
    let Some(Handle(handle)) = taken else { return };
    // SAFETY: JS thread; the handle is open, and no ring can reach it any more. Its target is
    // released here, and its memory when libuv has let go of it.
    unsafe {
        forget_target(uv_handle_get_data(handle).cast());
        uv_close(handle, Some(closed));
    }
}

/// Releases what a ring would have called.
///
/// # Safety
/// JS thread; `target` from `Box::into_raw` in [`Doorbell::new`], released once.
unsafe fn forget_target(target: *mut Target) {
    let target = Box::from_raw(target);
    sys::napi_delete_reference(target.env, target.function);
    sys::napi_async_destroy(target.env, target.context);
}

/// libuv is done with a closed handle.
unsafe extern "C" fn closed(handle: *mut c_void) {
    std::alloc::dealloc(handle.cast(), handle_layout());
}

/// The environment is going away with the doorbell still open.
unsafe extern "C" fn torn_down(arg: *mut c_void) {
    let shared = Arc::from_raw(arg as *const Shared);
    shared.hooked.store(false, Ordering::Relaxed);
    shut(&shared);
}

/// One or more rings: call the function, as Node calls a callback from the event loop
/// (`napi_make_callback` runs the microtasks and `process.nextTick` queue afterwards).
unsafe extern "C" fn rung(handle: *mut c_void) {
    let target = &*uv_handle_get_data(handle).cast::<Target>();
    let env = target.env;
    let mut scope = ptr::null_mut();
    if sys::napi_open_handle_scope(env, &mut scope) != sys::Status::napi_ok {
        return;
    }
    let mut function = ptr::null_mut();
    let mut receiver = ptr::null_mut();
    if sys::napi_get_reference_value(env, target.function, &mut function) == sys::Status::napi_ok
        // A weakly held function that has been collected: its owner is gone, nothing to call.
        && !function.is_null()
        // The receiver must be an object; the glue's function is an arrow function and ignores it.
        && sys::napi_get_global(env, &mut receiver) == sys::Status::napi_ok
    {
        let mut result = ptr::null_mut();
        if sys::napi_make_callback(env, target.context, receiver, function, 0, ptr::null(), &mut result) == sys::Status::napi_pending_exception {
            // What a throwing event-loop callback does in Node: 'uncaughtException'.
            let mut error = ptr::null_mut();
            if sys::napi_get_and_clear_last_exception(env, &mut error) == sys::Status::napi_ok {
                sys::napi_fatal_exception(env, error);
            }
        }
    }
    sys::napi_close_handle_scope(env, scope);
}
