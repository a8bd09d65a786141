//! `Ferrule::NativeApp`: the routes the Ruby `Ferrule::App` declared, served by the core, with
//! handlers run on Ruby threads.
//!
//! Runtime threads never touch the GVL: a request becomes a job in a mailbox. Ruby worker
//! threads (`work`) wait for jobs with the GVL released, take a batch, run the handler blocks
//! with the GVL held, and send the results back to the runtime in one batch. The main thread
//! waits for the server to stop (`wait`) with the GVL released, so signals and `trap`
//! handlers still run there.

use crate::gvl::without_gvl;
use crate::types::Types;
use crate::{response, to_ruby};
use ferrule_core::bridge::{hand_over, is_abandoned, serve_in_background, Mailbox, Outcome, Reply, ReplyBatch, Waited};
use ferrule_core::http::StatusCode;
use ferrule_core::{App, AppConfig, Handler, HandlerError, HandlerFuture, RequestData, RouteSpec};
use magnus::{block::Proc, gc::Marker, value::Opaque, DataTypeFunctions, Error, RClass, Ruby, TypedData};
use std::sync::atomic::{AtomicBool, Ordering};
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;


struct Job {
    route: u32,
    request: RequestData,
    reply: Reply,
}

struct Shared {
    mailbox: Arc<Mailbox<Job>>,
    replies: Arc<ReplyBatch<Outcome>>,
}

struct RbHandler {
    route: u32,
    shared: Arc<Shared>,
}

impl Handler for RbHandler {
    fn call(&self, request: RequestData) -> HandlerFuture {
        hand_over(&self.shared.mailbox, "the Ruby workers", |reply| Job { route: self.route, request, reply })
    }
}

struct Route {
    spec: RouteSpec,
    status: u16,
    handler: Opaque<Proc>,
}

/// Set once the server has stopped and drained; `ready` (an eventfd) becomes readable then.
struct Stopped {
    outcome: Mutex<Option<Option<String>>>,
    ready: std::os::fd::OwnedFd,
}

fn eventfd() -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: no preconditions; a negative result is an error.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: just created, owned by nobody else.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// Async-signal-safe: one write to an eventfd.
fn ring(fd: std::os::fd::RawFd) {
    let one: u64 = 1;
    // SAFETY: writes 8 bytes from a live u64 to an eventfd.
    unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
}


struct Running {
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    stopped: Arc<Stopped>,
}

#[derive(TypedData)]
#[magnus(class = "Ferrule::NativeApp", free_immediately, mark)]
pub struct NativeApp {
    config: AppConfig,
    types: Types,
    routes: Mutex<Vec<Route>>,
    running: Mutex<Option<Running>>,
}

impl DataTypeFunctions for NativeApp {
    fn mark(&self, marker: &Marker) {
        // Never call Ruby while holding `routes`: a GC (and so this mark) could run meanwhile.
        if let Ok(routes) = self.routes.try_lock() {
            for route in routes.iter() {
                marker.mark(route.handler);
            }
        }
        self.types.mark(marker);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn arg_error(ruby: &Ruby, message: impl Into<String>) -> Error {
    Error::new(ruby.exception_arg_error(), message.into())
}

impl NativeApp {
    /// `NativeApp.new(config_json, Request, UploadedFile, Response, HTTPError)`.
    pub fn new(ruby: &Ruby, config_json: String, request: RClass, uploaded_file: RClass, response: RClass, http_error: RClass) -> Result<Self, Error> {
        let config: AppConfig = serde_json::from_str(&config_json).map_err(|e| arg_error(ruby, format!("ferrule: app settings: {e}")))?;
        config.check().map_err(|e| arg_error(ruby, format!("ferrule: app settings: {e}")))?;
        let types = Types::new(ruby, request, uploaded_file, response, http_error)?;
        Ok(NativeApp { config, types, routes: Mutex::new(Vec::new()), running: Mutex::new(None) })
    }

    /// `add_route(spec_json, status) { |request| ... }`: returns the route's index.
    pub fn add_route(ruby: &Ruby, rb_self: &Self, spec_json: String, status: u16) -> Result<usize, Error> {
        let handler = ruby.block_proc()?;
        let spec: RouteSpec = serde_json::from_str(&spec_json).map_err(|e| arg_error(ruby, format!("ferrule: route: {e}")))?;
        if StatusCode::from_u16(status).is_err() {
            return Err(arg_error(ruby, format!("ferrule: {status} is not an HTTP status")));
        }
        App::with_config(rb_self.config.clone()).check_route(&spec).map_err(|e| arg_error(ruby, format!("ferrule: {e}")))?;
        let mut routes = lock(&rb_self.routes);
        routes.push(Route { spec, status, handler: handler.into() });
        Ok(routes.len() - 1)
    }

    /// `start(host, port, fd, threads)`: serves on `fd` (a listening socket inherited by a
    /// forked worker) or `host:port`; returns the bound port.
    pub fn start(ruby: &Ruby, rb_self: &Self, host: String, port: u16, fd: Option<i32>, threads: Option<usize>) -> Result<u16, Error> {
        let mut running = lock(&rb_self.running);
        if running.is_some() {
            return Err(Error::new(ruby.exception_runtime_error(), "ferrule: this app is already serving"));
        }
        let shared = Arc::new(Shared { mailbox: Arc::new(Mailbox::new()), replies: Arc::new(ReplyBatch::default()) });
        shared.mailbox.set_queue_limit(rb_self.config.max_queued_requests);
        let mut app = App::with_config(rb_self.config.clone());
        for (index, route) in lock(&rb_self.routes).iter().enumerate() {
            app.add_route(route.spec.clone(), Arc::new(RbHandler { route: index as u32, shared: shared.clone() }));
        }
        let io_error = |e: std::io::Error| Error::new(ruby.exception_runtime_error(), format!("ferrule: {e}"));
        let listener = match fd {
            Some(fd) => ferrule_core::listener_from_fd(fd).map_err(io_error)?,
            None => ferrule_core::bind(&format!("{host}:{port}"), false)
                .map_err(|e| Error::new(ruby.exception_runtime_error(), format!("ferrule: cannot listen on {host}:{port}: {e}")))?,
        };
        let bound = listener.local_addr().map_err(io_error)?.port();
        let stopped = Arc::new(Stopped { outcome: Mutex::new(None), ready: eventfd().map_err(io_error)? });
        let (on_stopped, drained) = (stopped.clone(), shared.clone());
        let stop = serve_in_background(app, listener, threads, &shared.replies, move |outcome| {
            // Workers finish what is queued, then see the mailbox closed and return.
            drained.mailbox.close();
            *lock(&on_stopped.outcome) = Some(outcome.err().map(|e| e.to_string()));
            ring(on_stopped.ready.as_raw_fd());
        })
        .map_err(|e| Error::new(ruby.exception_runtime_error(), format!("ferrule: {e}")))?;
        *running = Some(Running { shared, stop: Some(stop), stopped });
        Ok(bound)
    }

    /// Stops accepting connections and drains in-flight requests (returns at once). Safe to
    /// call from a `trap` handler; calling it again does nothing.
    pub fn stop(&self) {
        if let Some(stop) = lock(&self.running).as_mut().and_then(|r| r.stop.take()) {
            let _ = stop.send(());
        }
    }

    /// A worker thread's loop: takes up to `batch` requests at a time and runs their handlers
    /// until the server has stopped. Returns normally then; a kill or an uncaught non-standard
    /// exception propagates.
    pub fn work(ruby: &Ruby, rb_self: &Self, batch: usize) -> Result<(), Error> {
        let Some(shared) = lock(&rb_self.running).as_ref().map(|r| r.shared.clone()) else {
            return Err(Error::new(ruby.exception_runtime_error(), "ferrule: not serving"));
        };
        let mut jobs = Vec::new();
        loop {
            let interrupted = AtomicBool::new(false);
            let waited = without_gvl(
                ruby,
                || shared.mailbox.wait_for(&mut jobs, batch, &interrupted),
                || {
                    interrupted.store(true, Ordering::Release);
                    shared.mailbox.interrupt_waiters();
                },
            )?;
            match waited {
                Waited::Jobs => {
                    let mut result = Ok(());
                    for job in jobs.drain(..) {
                        if result.is_ok() {
                            result = rb_self.run(ruby, &shared, job);
                        } else {
                            let _ = job.reply.send(Err(HandlerError::new("the worker thread was stopped")));
                        }
                    }
                    shared.replies.flush();
                    result?;
                }
                Waited::Interrupted => continue,
                Waited::Closed => return Ok(()),
            }
        }
    }

    /// A descriptor that becomes readable once the server has stopped and drained. The main
    /// thread waits on it with Ruby's own IO waiting (`IO#wait_readable`), which keeps signal
    /// handling and `trap` blocks working while every other Ruby thread is in a GVL-free wait.
    pub fn stopped_fd(&self) -> Option<i32> {
        lock(&self.running).as_ref().map(|r| r.stopped.ready.as_raw_fd())
    }

    /// After `stopped_fd` became readable: forgets the stopped server and returns the drain's
    /// problem, if any (nil when every in-flight request finished).
    pub fn finish(ruby: &Ruby, rb_self: &Self) -> Result<Option<String>, Error> {
        let mut running = lock(&rb_self.running);
        let outcome = running.as_ref().and_then(|r| lock(&r.stopped.outcome).clone());
        match outcome {
            Some(problem) => {
                running.take();
                Ok(problem)
            }
            None => Err(Error::new(ruby.exception_runtime_error(), "ferrule: the server has not stopped")),
        }
    }

    fn run(&self, ruby: &Ruby, shared: &Shared, job: Job) -> Result<(), Error> {
        if is_abandoned(&job.reply) {
            // Its deadline passed while earlier handlers ran: nobody waits for this one.
            return Ok(());
        }
        let (handler, status) = {
            let routes = lock(&self.routes);
            match routes.get(job.route as usize) {
                Some(route) => (route.handler, route.status),
                None => {
                    let _ = job.reply.send(Err(HandlerError::new("no such route")));
                    return Ok(());
                }
            }
        };
        let handler = ruby.get_inner(handler);
        let called = to_ruby::request(ruby, &self.types, &job.request).and_then(|request| handler.call::<_, magnus::Value>((request,)));
        let (outcome, propagate) = match called {
            Ok(value) => (response::from_result(ruby, &self.types, value, status), None),
            Err(error) => response::from_error(ruby, &self.types, error),
        };
        shared.replies.push(job.reply, outcome);
        match propagate {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}
