//! `NativeApp`: the routes the JavaScript `App` declared, served by the core, with requests
//! handed to the JavaScript thread in batches.
//!
//! Runtime threads never wait on JavaScript: a request becomes a job in a mailbox whose waker
//! is a thread-safe function call (one per batch). On the JS thread, `dispatch()` turns every
//! waiting job into a context object and hands them to the JS glue (index.js), which calls
//! the handlers and answers each with `reply`/`replyResponse`/`fail`; results are serialised
//! here, on the JS thread, and sent back to the runtime in one batch per `flush()`.

use crate::raw::{self, Env};
use crate::{shapes, to_js, to_json};
use ferrule_core::bridge::{hand_over, is_abandoned, serve_in_background, Mailbox, Outcome, Reply, ReplyBatch};
use ferrule_core::http::StatusCode;
use ferrule_core::{App, AppConfig, Handler, HandlerError, HandlerFuture, Problem, RequestData, Response, RouteSpec};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;


enum Job {
    Call { route: u32, request: RequestData, reply: Reply },
    /// The server has stopped (with the drain's error, if any).
    Stopped(Option<String>),
}

struct Shared {
    mailbox: Arc<Mailbox<Job>>,
    replies: Arc<ReplyBatch<Outcome>>,
}

/// The core's handler trait for a JavaScript route: post, then await the reply.
struct JsHandler {
    route: u32,
    shared: Arc<Shared>,
}

impl Handler for JsHandler {
    fn call(&self, request: RequestData) -> HandlerFuture {
        hand_over(&self.shared.mailbox, "the JavaScript side", |reply| Job::Call { route: self.route, request, reply })
    }
}

struct Running {
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    /// Requests handed to JavaScript and not answered yet.
    pending: Vec<Option<Pending>>,
    free: Vec<u32>,
}

struct Pending {
    reply: Reply,
    /// The route's status for a plain return value.
    status: u16,
    /// When the core gives up on it (504): what `ctx.signal` aborts at.
    deadline: Option<std::time::Instant>,
}

struct Route {
    spec: RouteSpec,
    status: u16,
}

#[napi]
pub struct NativeApp {
    config: AppConfig,
    routes: Mutex<Vec<Route>>,
    running: Mutex<Option<Running>>,
    /// The last drain ended at its deadline with requests cut off.
    cut_off: std::sync::atomic::AtomicBool,
}

/// A JavaScript value passed through untouched (for the glue in index.js).
pub struct Js(raw::Value);

impl TypeName for Js {
    fn type_name() -> &'static str {
        "unknown"
    }

    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

impl ToNapiValue for Js {
    unsafe fn to_napi_value(_env: napi::sys::napi_env, value: Self) -> Result<napi::sys::napi_value> {
        Ok(value.0)
    }
}

impl FromNapiValue for Js {
    unsafe fn from_napi_value(_env: napi::sys::napi_env, value: napi::sys::napi_value) -> Result<Self> {
        Ok(Js(value))
    }
}

impl ValidateNapiValue for Js {}

fn js_error(e: raw::Failed) -> Error {
    Error::from_reason(format!("ferrule: {}", e.0))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[napi]
impl NativeApp {
    /// `configJson`: the core's `AppConfig` as JSON (read once, at startup).
    #[napi(constructor)]
    pub fn new(config_json: String) -> Result<Self> {
        let config: AppConfig = serde_json::from_str(&config_json).map_err(|e| Error::from_reason(format!("ferrule: app settings: {e}")))?;
        config.check().map_err(|e| Error::from_reason(format!("ferrule: app settings: {e}")))?;
        Ok(NativeApp { config, routes: Mutex::new(Vec::new()), running: Mutex::new(None), cut_off: Default::default() })
    }

    /// Declares a route (a core `RouteSpec` as JSON); returns its index, which `dispatch`
    /// reports with each request for it.
    #[napi]
    pub fn add_route(&self, spec_json: String, status: u32) -> Result<u32> {
        let spec: RouteSpec = serde_json::from_str(&spec_json).map_err(|e| Error::from_reason(format!("ferrule: route: {e}")))?;
        let status = u16::try_from(status).ok().filter(|s| StatusCode::from_u16(*s).is_ok()).ok_or_else(|| {
            Error::from_reason(format!("ferrule: {} {}: {status} is not an HTTP status", spec.method, spec.path))
        })?;
        App::with_config(self.config.clone()).check_route(&spec).map_err(|e| Error::from_reason(format!("ferrule: {e}")))?;
        let mut routes = lock(&self.routes);
        routes.push(Route { spec, status });
        Ok(routes.len() as u32 - 1)
    }

    /// Starts serving on `fd` (an inherited listening socket) or `host:port` (with
    /// SO_REUSEPORT when `reusePort`, for worker processes); returns the bound port.
    /// `onJobs` is called on the JS thread whenever requests wait for `dispatch()`.
    #[napi]
    pub fn listen(
        &self,
        on_jobs: ThreadsafeFunction<(), (), (), Status, false>,
        host: String,
        port: u32,
        reuse_port: bool,
        threads: Option<u32>,
    ) -> Result<u32> {
        let mut running = lock(&self.running);
        if running.is_some() {
            return Err(Error::from_reason("ferrule: this app is already listening"));
        }
        let on_jobs = Arc::new(on_jobs);
        let shared = Arc::new(Shared {
            mailbox: Arc::new(Mailbox::with_waker(move || {
                let _ = on_jobs.call((), ThreadsafeFunctionCallMode::NonBlocking);
            })),
            replies: Arc::new(ReplyBatch::default()),
        });
        shared.mailbox.set_queue_limit(self.config.max_queued_requests);
        let mut app = App::with_config(self.config.clone());
        for (index, route) in lock(&self.routes).iter().enumerate() {
            app.add_route(route.spec.clone(), Arc::new(JsHandler { route: index as u32, shared: shared.clone() }));
        }
        let addr = format!("{host}:{port}");
        let listener = ferrule_core::bind(&addr, reuse_port).map_err(|e| Error::from_reason(format!("ferrule: cannot listen on {addr}: {e}")))?;
        let bound = listener.local_addr().map_err(|e| Error::from_reason(e.to_string()))?.port();
        let on_stopped = shared.mailbox.clone();
        let stop = serve_in_background(app, listener, threads.map(|t| t as usize), &shared.replies, move |outcome| {
            let _ = on_stopped.post(Job::Stopped(outcome.err().map(|e| e.to_string())));
        })
        .map_err(|e| Error::from_reason(format!("ferrule: {e}")))?;
        *running = Some(Running { shared, stop: Some(stop), pending: Vec::new(), free: Vec::new() });
        Ok(bound as u32)
    }

    /// Every waiting request as `[id, route, …context parts]` repeated (see
    /// `to_js::context_parts`); `null` once the server has stopped.
    #[napi]
    pub fn dispatch(&self, env: napi::Env) -> Result<Js> {
        let env = Env(env.raw());
        let mut guard = lock(&self.running);
        let Some(running) = guard.as_mut() else { return env.null().map(Js).map_err(js_error) };
        let mut jobs = Vec::new();
        running.shared.mailbox.take_all(&mut jobs);
        if let Some(error) = jobs.iter().find_map(|job| match job {
            Job::Stopped(error) => Some(error),
            Job::Call { .. } => None,
        }) {
            // The runtime is gone before `Stopped` is posted, and with it every request still
            // waiting: calls queued next to it have nobody to answer.
            if let Some(error) = error {
                eprintln!("ferrule: {error}");
                self.cut_off.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            running.shared.mailbox.close();
            return env.null().map(Js).map_err(js_error);
        }
        let routes = lock(&self.routes);
        let mut entries = Vec::with_capacity(jobs.len() * (2 + to_js::CONTEXT_PARTS));
        for job in jobs {
            let Job::Call { route, request, reply } = job else { continue };
            if is_abandoned(&reply) {
                continue;
            }
            let parts = match to_js::context_parts(env, &request) {
                Ok(parts) => parts,
                Err(e) => {
                    let _ = reply.send(Err(HandlerError::new(format!("building the request object failed: {}", e.0))));
                    continue;
                }
            };
            let status = routes.get(route as usize).map(|r| r.status).unwrap_or(200);
            let pending = Pending { reply, status, deadline: request.deadline };
            let id = match running.free.pop() {
                Some(id) => {
                    running.pending[id as usize] = Some(pending);
                    id
                }
                None => {
                    running.pending.push(Some(pending));
                    running.pending.len() as u32 - 1
                }
            };
            entries.extend([env.int(id as i64).map_err(js_error)?, env.int(route as i64).map_err(js_error)?]);
            entries.extend(parts);
        }
        // Exactly as long as its entries: a request left out must not leave a hole.
        shapes::array(env, &entries).map(Js).map_err(js_error)
    }

    /// Whether the last drain cut requests off at its deadline (after a signal, the process
    /// then exits 1).
    #[napi]
    pub fn drain_cut_off(&self) -> bool {
        self.cut_off.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether request `id` is still waited for. A batch whose synchronous handlers run long
    /// asks before each further handler; a request given up (its deadline passed, its client
    /// left) is forgotten here and its handler never called.
    #[napi]
    pub fn wanted(&self, id: u32) -> bool {
        let mut guard = lock(&self.running);
        let Some(running) = guard.as_mut() else { return false };
        match running.pending.get(id as usize) {
            Some(Some(pending)) if is_abandoned(&pending.reply) => {
                running.pending[id as usize] = None;
                running.free.push(id);
                false
            }
            Some(Some(_)) => true,
            _ => false,
        }
    }

    /// Milliseconds until request `id`'s deadline (0 once it has passed); null when the route
    /// has no deadline or the request is answered. Asked once per request, and only when a
    /// handler reads `ctx.signal`.
    #[napi]
    pub fn remaining_ms(&self, id: u32) -> Option<f64> {
        let guard = lock(&self.running);
        let deadline = guard.as_ref()?.pending.get(id as usize)?.as_ref()?.deadline?;
        Some(deadline.saturating_duration_since(std::time::Instant::now()).as_secs_f64() * 1000.0)
    }

    /// Answers request `id` with a handler's plain return value: a string (text/plain), a
    /// Buffer (application/octet-stream), or anything else as JSON, serialised here.
    #[napi]
    pub fn reply(&self, env: napi::Env, id: u32, value: Js) -> Result<()> {
        let env = Env(env.raw());
        let Some((reply, status)) = self.take(id) else { return Ok(()) };
        let outcome = plain(env, value.0, status);
        self.push(reply, outcome);
        Ok(())
    }

    /// Answers request `id` with an explicit response (`new Response(body, {status, headers})`);
    /// `headers` is a flat `[name, value, …]` list.
    #[napi]
    pub fn reply_response(&self, env: napi::Env, id: u32, status: u32, headers: Vec<String>, body: Js) -> Result<()> {
        let env = Env(env.raw());
        let Some((reply, _)) = self.take(id) else { return Ok(()) };
        let outcome = (|| -> std::result::Result<Response, String> {
            let status = u16::try_from(status).ok().and_then(|s| StatusCode::from_u16(s).ok()).ok_or(format!("{status} is not an HTTP status"))?;
            let kind = env.kind(body.0).map_err(|e| e.0.to_owned())?;
            let mut response = if matches!(kind, raw::Kind::Undefined | raw::Kind::Null) {
                Response::new(status)
            } else {
                plain(env, body.0, status.as_u16()).map_err(|e| e.message().to_owned())?
            };
            for pair in headers.chunks(2) {
                if let [name, value] = pair {
                    if name.eq_ignore_ascii_case("content-type") {
                        response.headers.remove(ferrule_core::http::header::CONTENT_TYPE);
                    }
                    response = response.try_header(name, value).map_err(|e| e.to_string())?;
                }
            }
            Ok(response)
        })()
        .map_err(|message| HandlerError::new(format!("returned a response that cannot be sent: {message}")));
        self.push(reply, outcome);
        Ok(())
    }

    /// Answers request `id` after its handler threw: with `HttpError`'s status and detail as
    /// a problem response, or (status 500, no detail) a bare 500 that leaks nothing.
    #[napi]
    pub fn fail(&self, id: u32, status: u32, detail: Option<String>, headers: Vec<String>, log: Option<String>) -> Result<()> {
        let Some((reply, _)) = self.take(id) else { return Ok(()) };
        let outcome = match (StatusCode::from_u16(status as u16), detail) {
            (Ok(StatusCode::INTERNAL_SERVER_ERROR) | Err(_), None) => Err(HandlerError::new(log.unwrap_or_else(|| "the handler threw".into()))),
            (status, detail) => {
                let mut problem = Problem::status(status.unwrap_or(StatusCode::INTERNAL_SERVER_ERROR));
                if let Some(detail) = detail {
                    problem = problem.with_detail(detail);
                }
                let mut response = Response::problem(&problem);
                for pair in headers.chunks(2) {
                    if let [name, value] = pair {
                        if let Ok(with) = response.clone().try_header(name, value) {
                            response = with;
                        }
                    }
                }
                Ok(response)
            }
        };
        self.push(reply, outcome);
        Ok(())
    }

    /// Sends every answer given since the last flush to the waiting requests.
    #[napi]
    pub fn flush(&self) {
        if let Some(running) = lock(&self.running).as_ref() {
            running.shared.replies.flush();
        }
    }

    /// Stops accepting connections and drains in-flight requests; `dispatch()` returns `null`
    /// once done. Calling it again does nothing.
    #[napi]
    pub fn close(&self) {
        if let Some(stop) = lock(&self.running).as_mut().and_then(|r| r.stop.take()) {
            let _ = stop.send(());
        }
    }

    /// Forgets the stopped server (and with it the thread-safe function that kept Node's
    /// event loop alive). The app can listen again afterwards.
    #[napi]
    pub fn release(&self) {
        lock(&self.running).take();
    }
}

impl NativeApp {
    fn take(&self, id: u32) -> Option<(Reply, u16)> {
        let mut guard = lock(&self.running);
        let running = guard.as_mut()?;
        let slot = running.pending.get_mut(id as usize)?.take()?;
        running.free.push(id);
        Some((slot.reply, slot.status))
    }

    fn push(&self, reply: Reply, outcome: Outcome) {
        if let Some(running) = lock(&self.running).as_ref() {
            running.shared.replies.push(reply, outcome);
        }
    }
}

/// A plain handler result: string → text/plain, Buffer → bytes, anything else → JSON.
fn plain(env: Env, value: raw::Value, status: u16) -> Outcome {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    let built = (|| -> std::result::Result<Response, String> {
        match env.kind(value).map_err(|e| e.0.to_owned())? {
            raw::Kind::String => Ok(Response::text(env.as_string(value).map_err(|e| e.0.to_owned())?)),
            raw::Kind::Object => match env.bytes(value).map_err(|e| e.0.to_owned())? {
                Some(bytes) => Ok(Response::bytes(bytes)),
                None => Ok(Response::json_bytes(to_json::to_vec(env, value)?)),
            },
            _ => Ok(Response::json_bytes(to_json::to_vec(env, value)?)),
        }
    })();
    built
        .map(|r| r.with_status(status))
        .map_err(|message| HandlerError::new(format!("returned a value that cannot be sent: {message}")))
}
