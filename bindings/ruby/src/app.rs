//! `Ferrule::NativeApp`: the Ruby `Ferrule::App`'s routes, held by the core's host and served
//! by it, with handlers run on Ruby threads.
//!
//! Runtime threads never touch the GVL: a request becomes a call in the host's mailbox. Ruby
//! worker threads (`work`) wait for calls with the GVL released, take a batch, run the handler
//! blocks with the GVL held, and send the results back in one batch. The main thread waits for
//! the server to stop on the host's stopped descriptor with Ruby's own IO wait, so signals and
//! `trap` handlers still run there.
//!
//! The handler blocks are never held here: they live in the Ruby app's own Array (passed to
//! `work`), where the GC always sees them. A route here is only the block's index.

use crate::raw::{self, without_gvl};
use crate::types::Types;
use crate::{logs, response, to_ruby};
use ferrule_core::log::LogWake;
use ferrule_core::bridge::{is_abandoned, Waited};
use crate::stream::{Answers, Streams};
use ferrule_core::host::{lock, Call, Catch, GroupId, Handshake, Hooks, Host, HostError, HostRoute, InProcess, Job, Listen, Open, Phase, Reject, Serving, Wake};
use ferrule_core::http::StatusCode;
use ferrule_core::{HandlerError, Rejection, RequestData};
use magnus::{block::Proc, gc::Marker, prelude::*, DataTypeFunctions, Error, RArray, RClass, RString, Ruby, TypedData};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A Ruby route: its block's index in the app's handler Array.
pub struct RbRoute {
    index: usize,
}

#[derive(TypedData)]
#[magnus(class = "Ferrule::NativeApp", free_immediately, mark)]
pub struct NativeApp {
    host: Host<RbRoute>,
    types: Types,
    serving: Mutex<Option<Arc<Serving<RbRoute>>>>,
    /// The routes served without a socket (`call_rack`), with the route count it was built for.
    in_process: Mutex<Option<(usize, Arc<InProcess<RbRoute>>)>>,
    /// Streamed bodies in progress (server and in-process alike).
    streams: Arc<Streams>,
    /// The hook chains requests came with, numbered as the Ruby app knows them (`hooks_of`).
    chains: Mutex<Chains>,
    /// Every request runs through the app's chain runner (it has error handlers, which see
    /// what any block raises), not only those whose route has hooks.
    chain_every_request: AtomicBool,
}

#[derive(Default)]
struct Chains {
    /// Kept, so an address stays its chain's for as long as its number is used.
    hooks: Vec<Arc<Hooks>>,
    numbers: std::collections::HashMap<usize, usize>,
}

impl Chains {
    fn number(&mut self, hooks: &Arc<Hooks>) -> usize {
        let next = self.hooks.len();
        let number = *self.numbers.entry(Arc::as_ptr(hooks) as usize).or_insert(next);
        if number == next {
            self.hooks.push(hooks.clone());
        }
        number
    }
}

impl DataTypeFunctions for NativeApp {
    fn mark(&self, marker: &Marker) {
        self.types.mark(marker);
    }
}

/// A host error as the Ruby exception a Ruby programmer expects: a mistake in the program is
/// an `ArgumentError`, a refused socket an `Errno::*` (`Errno::EADDRINUSE`), as `TCPServer`
/// raises.
pub fn host_error(ruby: &Ruby, error: HostError) -> Error {
    let message = format!("ferrule: {error}");
    if let Some(code) = error.os_code() {
        let class = ruby
            .class_object()
            .const_get::<_, magnus::RModule>("Errno")
            .and_then(|errno| errno.const_get::<_, magnus::ExceptionClass>(code));
        if let Ok(class) = class {
            return Error::new(class, message);
        }
    }
    if error.is_usage() {
        Error::new(ruby.exception_arg_error(), message)
    } else {
        Error::new(ruby.exception_runtime_error(), message)
    }
}

impl NativeApp {
    /// `NativeApp.new(config_json, Request, UploadedFile, Response, HTTPError)`.
    pub fn new(ruby: &Ruby, config_json: String, request: RClass, uploaded_file: RClass, response: RClass, http_error: RClass) -> Result<Self, Error> {
        let host = Host::from_json(&config_json).map_err(|e| host_error(ruby, e))?;
        let types = Types::new(ruby, request, uploaded_file, response, http_error)?;
        Ok(NativeApp {
            host,
            types,
            serving: Mutex::new(None),
            in_process: Mutex::new(None),
            streams: Default::default(),
            chains: Mutex::new(Chains::default()),
            chain_every_request: AtomicBool::new(false),
        })
    }

    /// `add_route(spec_json, status, group)`: declares a route in `group` (0: the app);
    /// returns its index, where the Ruby app keeps its block.
    pub fn add_route(ruby: &Ruby, rb_self: &Self, spec_json: String, status: i64, group: usize) -> Result<usize, Error> {
        let index = rb_self.host.routes().len();
        rb_self.host.declare_json(GroupId::from_index(group), &spec_json, status, RbRoute { index }).map_err(|e| host_error(ruby, e))?;
        Ok(index)
    }

    /// `mount_static(spec_json)`: serves a directory under a prefix (the core's `StaticSpec`).
    pub fn mount_static(ruby: &Ruby, rb_self: &Self, spec_json: String) -> Result<(), Error> {
        rb_self.host.mount_static_json(&spec_json).map_err(|e| host_error(ruby, e))
    }

    /// `group(parent, prefix)`: a group of routes under `parent`, served under `prefix`.
    pub fn group(ruby: &Ruby, rb_self: &Self, parent: usize, prefix: String) -> Result<usize, Error> {
        rb_self.host.group(GroupId::from_index(parent), &prefix).map(GroupId::index).map_err(|e| host_error(ruby, e))
    }

    /// `hook(group, phase, slot)`: the Ruby app's hook `slot` runs at `phase` (`on_request`,
    /// `pre_handler`, `on_send`, `on_error`) for `group`'s requests.
    pub fn hook(ruby: &Ruby, rb_self: &Self, group: usize, phase: String, slot: u32) -> Result<(), Error> {
        let phase = Phase::parse(&phase).map_err(|e| Error::new(ruby.exception_arg_error(), format!("ferrule: {e}")))?;
        rb_self.host.hook(GroupId::from_index(group), phase, slot).map_err(|e| host_error(ruby, e))
    }

    /// `catch(status)`: the app's error blocks take requests the core refuses with `status`
    /// (nil: every refusal); from then on every request runs through the app's chain runner.
    pub fn catch(ruby: &Ruby, rb_self: &Self, status: Option<u16>) -> Result<(), Error> {
        rb_self.chain_every_request.store(true, Ordering::Relaxed);
        rb_self.host.catch(GroupId::APP, status.map_or(Catch::All, Catch::Status)).map_err(|e| host_error(ruby, e))
    }

    /// `chain_every_request`: the app has error blocks, which see what any block raises.
    pub fn chain_every_request(&self) {
        self.chain_every_request.store(true, Ordering::Relaxed);
    }

    /// `hooks_of(number)`: chain `number`'s hook slots, `[on_request, pre_handler, on_send, on_error]`.
    pub fn hooks_of(&self, number: usize) -> Option<Vec<Vec<u32>>> {
        let chains = lock(&self.chains);
        let hooks = chains.hooks.get(number)?;
        Some(vec![hooks.on_request.clone(), hooks.pre_handler.clone(), hooks.on_send.clone(), hooks.on_error.clone()])
    }

    /// `openapi`: the OpenAPI document of the routes declared so far, as indented JSON.
    pub fn openapi(ruby: &Ruby, rb_self: &Self) -> Result<String, Error> {
        rb_self.host.openapi().map_err(|e| host_error(ruby, e))
    }

    /// `start(host, port, fd, threads)`: serves on `fd` (a listening socket inherited by a
    /// forked worker) or `host:port`; returns the bound port.
    pub fn start(ruby: &Ruby, rb_self: &Self, host: String, port: u16, fd: Option<i32>, threads: Option<usize>) -> Result<u16, Error> {
        let listen = match fd {
            Some(fd) => Listen::Inherited(fd),
            None => Listen::Address { host: &host, port },
        };
        let serving = rb_self.host.serve(listen, threads, Wake::Blocking, "the Ruby workers").map_err(|e| host_error(ruby, e))?;
        let port = serving.port();
        *lock(&rb_self.serving) = Some(serving);
        Ok(port)
    }

    fn serving(&self, ruby: &Ruby) -> Result<Arc<Serving<RbRoute>>, Error> {
        lock(&self.serving).clone().ok_or_else(|| Error::new(ruby.exception_runtime_error(), "ferrule: not serving"))
    }

    /// `route_logs`: from now on the app's records wait in a queue for the Ruby `Logger`
    /// (servers and in-process apps started later); returns the descriptor that is readable
    /// while records wait.
    pub fn route_logs(ruby: &Ruby, rb_self: &Self) -> Result<i32, Error> {
        let logs = rb_self.host.route_logs(LogWake::Doorbell).map_err(|e| host_error(ruby, e))?;
        let fd = logs.doorbell_fd().unwrap_or(-1);
        // An in-process app built before keeps writing where it did: build it anew.
        lock(&rb_self.in_process).take();
        Ok(fd)
    }

    /// `take_logs`: every waiting record (see `logs::to_ruby`).
    pub fn take_logs(ruby: &Ruby, rb_self: &Self) -> Result<RArray, Error> {
        let mut records = Vec::new();
        rb_self.host.logs().take(&mut records);
        logs::to_ruby(ruby, records)
    }

    /// Prints the startup line (the same in every language).
    pub fn announce(&self) {
        if let Some(serving) = lock(&self.serving).as_ref() {
            serving.announce();
        }
    }

    /// Stops accepting connections and drains in-flight requests (returns at once). Safe to
    /// call from a `trap` handler; calling it again does nothing.
    pub fn stop(&self) {
        if let Some(serving) = lock(&self.serving).as_ref() {
            serving.stop();
        }
    }

    /// A worker thread's loop: takes up to `batch` requests at a time and runs their handlers
    /// (`handlers`: the app's Array of blocks, by route index) until the server has stopped.
    /// Returns normally then; a kill or an uncaught non-standard exception propagates.
    pub fn work(ruby: &Ruby, rb_self: &Self, batch: usize, handlers: RArray, runner: Proc) -> Result<(), Error> {
        let serving = rb_self.serving(ruby)?;
        let answers: Arc<dyn Answers> = serving.clone();
        let mut calls = Vec::new();
        loop {
            let interrupted = AtomicBool::new(false);
            let waited = without_gvl(
                ruby,
                || serving.mailbox().wait_for(&mut calls, batch, &interrupted),
                || {
                    interrupted.store(true, Ordering::Release);
                    serving.mailbox().interrupt_waiters();
                },
            )?;
            match waited {
                Waited::Jobs => rb_self.run_all(ruby, handlers, runner, &mut calls, &answers)?,
                Waited::Interrupted => continue,
                Waited::Closed => return Ok(()),
            }
        }
    }

    /// A descriptor that becomes readable once the server has stopped and drained. The main
    /// thread waits on it with Ruby's own IO waiting (`IO#wait_readable`), which keeps signal
    /// handling and `trap` blocks working while every other Ruby thread is in a GVL-free wait.
    pub fn stopped_fd(ruby: &Ruby, rb_self: &Self) -> Result<i32, Error> {
        Ok(rb_self.serving(ruby)?.stopped_fd())
    }

    /// After `stopped_fd` became readable: forgets the stopped server and returns whether
    /// every in-flight request finished (false: the drain deadline cut some off, as the line
    /// the core printed says).
    pub fn finish(ruby: &Ruby, rb_self: &Self) -> Result<bool, Error> {
        let mut serving = lock(&rb_self.serving);
        match serving.as_ref().and_then(|s| s.outcome()) {
            Some(outcome) => {
                serving.take();
                Ok(outcome.is_ok())
            }
            None => Err(Error::new(ruby.exception_runtime_error(), "ferrule: the server has not stopped")),
        }
    }

    /// `call_rack(method, uri, [name, value, …], body, handlers)`: one request through the whole
    /// stack without a socket (`App#call(env)`, so Rack servers and Rack::Test can host the
    /// app); this thread runs the handlers it needs. Returns `[status, [name, value, …], body,
    /// cut_off]` (`cut_off`: the body broke off before its end, a stream whose producer raised).
    /// `remote_addr`: the Rack server's `REMOTE_ADDR`, the peer its handlers see (`req.ip`).
    #[allow(clippy::too_many_arguments)]
    pub fn call_rack(
        ruby: &Ruby,
        rb_self: &Self,
        method: String,
        uri: String,
        headers: RArray,
        body: RString,
        remote_addr: Option<String>,
        handlers: RArray,
        runner: Proc,
    ) -> Result<RArray, Error> {
        let client = rb_self.in_process(ruby)?;
        let mut request = ferrule_core::http::Request::builder().method(method.as_str()).uri(uri.as_str());
        // Header values as the bytes Rack holds (a server's are binary Strings).
        let headers: Vec<RString> = headers.into_iter().map(RString::try_convert).collect::<Result<_, _>>()?;
        for pair in headers.chunks_exact(2) {
            request = request.header(raw::string_bytes(pair[0]), raw::string_bytes(pair[1]));
        }
        let body = ferrule_core::bytes::Bytes::from(raw::string_bytes(body));
        let mut request = request.body(body).map_err(|e| Error::new(ruby.exception_arg_error(), format!("ferrule: a request that cannot be sent: {e}")))?;
        if let Some(ip) = remote_addr.and_then(|addr| addr.parse::<std::net::IpAddr>().ok()) {
            request.extensions_mut().insert(ferrule_core::ClientAddr(std::net::SocketAddr::new(ip, 0)));
        }
        let exchange = client.send(request);
        let answers: Arc<dyn Answers> = client.clone();
        let mut calls = Vec::new();
        while !exchange.is_done() {
            let waited = without_gvl(ruby, || client.wait(&exchange, &mut calls), || client.interrupt(&exchange))?;
            match waited {
                Waited::Jobs => rb_self.run_all(ruby, handlers, runner, &mut calls, &answers)?,
                Waited::Interrupted | Waited::Closed => {
                    // Cleared before looking, so an answer arriving now sets it again.
                    exchange.wake_flag().store(false, Ordering::Release);
                    if !exchange.is_done() {
                        ruby.thread_check_ints()?;
                    }
                }
            }
        }
        let answer = exchange.take().ok_or_else(|| Error::new(ruby.exception_runtime_error(), "ferrule: the answer went missing"))?;
        let flat = ruby.ary_new();
        for (name, value) in answer.headers.iter() {
            flat.push(ruby.str_new(name.as_str()))?;
            flat.push(ruby.str_from_slice(value.as_bytes()))?;
        }
        let out = ruby.ary_new_capa(4);
        out.push(answer.status.as_u16())?;
        out.push(flat)?;
        out.push(ruby.str_from_slice(&answer.body))?;
        out.push(answer.cut_off)?;
        Ok(out)
    }

    /// The in-process router, built again when routes were declared since.
    fn in_process(&self, ruby: &Ruby) -> Result<Arc<InProcess<RbRoute>>, Error> {
        let mut cached = lock(&self.in_process);
        let routes = self.host.routes().len();
        match cached.as_ref() {
            Some((count, client)) if *count == routes => Ok(client.clone()),
            _ => {
                let client = Arc::new(self.host.in_process(Wake::Blocking).map_err(|e| host_error(ruby, e))?);
                *cached = Some((routes, client.clone()));
                Ok(client)
            }
        }
    }

    /// Runs a batch of calls and sends their answers. When one propagates an exception (a
    /// kill, an `Interrupt`), the rest are answered as failed and the exception goes on.
    fn run_all(&self, ruby: &Ruby, handlers: RArray, runner: Proc, jobs: &mut Vec<Job<RbRoute>>, answers: &Arc<dyn Answers>) -> Result<(), Error> {
        let inbox = answers.inbox();
        let mut result = Ok(());
        for job in jobs.drain(..) {
            let chained = |call: &Call<RbRoute>| !call.hooks.is_empty() || self.chain_every_request.load(Ordering::Relaxed);
            let call = match job {
                Job::Call(call) if chained(&call) => {
                    if result.is_ok() {
                        let Call { route, hooks, request, reply, handshake } = *call;
                        result = self.run_chained(ruby, runner, Some(route), &hooks, request, reply, None, handshake, answers);
                    } else {
                        inbox.answer(call.reply, Err(HandlerError::new("the thread running handlers was stopped")));
                    }
                    continue;
                }
                Job::Call(call) => call,
                Job::Reject(reject) => {
                    let Reject { route, hooks, request, rejection, reply } = *reject;
                    if result.is_ok() {
                        result = self.run_chained(ruby, runner, route, &hooks, request, reply, Some(rejection), None, answers);
                    } else {
                        inbox.answer(reply, Ok(rejection.response()));
                    }
                    continue;
                }
                Job::Pull(pull) => {
                    self.streams.pulled(pull);
                    continue;
                }
                Job::Release(stream) => {
                    self.streams.released(stream);
                    continue;
                }
                Job::Open(open) => {
                    if result.is_ok() {
                        result = self.open_socket(ruby, handlers, *open);
                    } else {
                        open.socket.close_with(ferrule_core::socket::Closed::new(1011, ""));
                    }
                    continue;
                }
                Job::Socket(id) => {
                    if result.is_ok() {
                        result = socket_glue(ruby)?.funcall::<_, _, magnus::Value>("arrived", (id,)).map(drop);
                    }
                    continue;
                }
                // What a handshake's filters left in its request's env is let go of.
                Job::Unopened(handshake) => {
                    if result.is_ok() {
                        result = socket_glue(ruby)?.funcall::<_, _, magnus::Value>("unopened", (handshake,)).map(drop);
                    }
                    continue;
                }
                // Ruby watches no request's client (a stream's `closed?` says when one left).
                Job::Departed(_) => continue,
            };
            if result.is_ok() {
                result = self.run(ruby, handlers, *call, answers);
            } else {
                inbox.answer(call.reply, Err(HandlerError::new("the thread running handlers was stopped")));
            }
        }
        inbox.flush();
        result
    }

    /// A WebSocket is open: `Ferrule::WebSocket.open` runs the route's block with it and the
    /// request (given the env its handshake's filters left, by the handshake's id), and files
    /// it under the socket's id for the wake-ups to come.
    fn open_socket(&self, ruby: &Ruby, handlers: RArray, mut open: Open<RbRoute>) -> Result<(), Error> {
        let native = crate::socket::NativeSocket::new(open.socket.clone(), open.route.label.clone(), self.host.logs());
        let opened = handlers.entry::<Proc>(open.route.data.index as isize).and_then(|handler| {
            let request = to_ruby::request(ruby, &self.types, &mut open.request, open.route.spec.body.is_some())?;
            socket_glue(ruby)?.funcall::<_, _, magnus::Value>("open", (native, handler, request, open.handshake)).map(drop)
        });
        if opened.is_err() {
            open.socket.close_with(ferrule_core::socket::Closed::new(1011, ""));
        }
        opened
    }

    fn run(&self, ruby: &Ruby, handlers: RArray, mut call: Call<RbRoute>, answers: &Arc<dyn Answers>) -> Result<(), Error> {
        if is_abandoned(&call.reply) {
            // Its deadline passed while earlier handlers ran: nobody waits for this one.
            return Ok(());
        }
        let called = handlers
            .entry::<Proc>(call.route.data.index as isize)
            .and_then(|handler| to_ruby::request(ruby, &self.types, &mut call.request, call.route.spec.body.is_some()).and_then(|request| handler.call::<_, magnus::Value>((request,))));
        let shapes = |status: i64| call.route.response_shape(status);
        self.answer_called(ruby, answers, call.reply, called, call.route.status, &shapes, &call.route.label)
    }

    /// Sends what a block returned (or raised) as the answer to `reply`: a plain result with
    /// `status` and the route's `shapes`, an explicit response, a streamed body (opened while
    /// the result is converted, started once answered); an error that must stop the thread
    /// running handlers is returned after the answer has gone.
    #[allow(clippy::too_many_arguments)]
    fn answer_called(
        &self,
        ruby: &Ruby,
        answers: &Arc<dyn Answers>,
        reply: ferrule_core::bridge::Reply,
        called: Result<magnus::Value, Error>,
        status: StatusCode,
        shapes: &response::Shapes<'_>,
        label: &str,
    ) -> Result<(), Error> {
        let opened = std::cell::RefCell::new(None);
        let open = |body: magnus::Value, events: bool| {
            let (stream, out) = self.streams.open(answers.clone(), events, self.host.logs(), label);
            *opened.borrow_mut() = Some((body, out));
            stream
        };
        let (outcome, propagate) = match called {
            Ok(value) => (response::from_result(ruby, &self.types, value, status, shapes, &open), None),
            Err(error) => {
                let carried = response::carried_answer(&error);
                match (carried, response::from_error(ruby, &self.types, &self.host.logs(), label, error)) {
                    // Logged as any exception a block raises, and answered with the 500 the
                    // after filters made of it (Context#run_chain) instead of the bare one.
                    (Some(answer), (Err(_), None)) => (response::from_result(ruby, &self.types, answer, status, shapes, &open), None),
                    (_, failed) => failed,
                }
            }
        };
        let start = outcome.is_ok();
        answers.inbox().answer(reply, outcome);
        if let Some((body, out)) = opened.into_inner() {
            if start {
                let streaming: magnus::RModule = ruby.class_object().const_get::<_, magnus::RModule>("Ferrule")?.const_get("Streaming")?;
                streaming.funcall::<_, _, magnus::Value>("start", (out, body))?;
            } else if body.respond_to("close", false).unwrap_or(false) {
                // Not sent after all (its headers were refused): Rack's contract still closes it.
                let _ = body.funcall::<_, _, magnus::Value>("close", ());
            }
        }
        match propagate {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

impl NativeApp {
    /// A request with hooks (or a refused one they must see, or a WebSocket's handshake): the
    /// app's chain runner (`runner.call(chain, route_index or nil, request, refusal or nil,
    /// handshake id or nil)`) runs its filters, its block and its error blocks, and returns
    /// what a block returns. A refusal is `[status, problem body, [name, value, …]]`, the
    /// core's own answer. The `handshake` is held until answered: its `Job::Unopened` must not
    /// come before the filters' env was kept (see `ferrule_core::host::Handshake`).
    #[allow(clippy::too_many_arguments)]
    fn run_chained(
        &self,
        ruby: &Ruby,
        runner: Proc,
        route: Option<Arc<HostRoute<RbRoute>>>,
        hooks: &Arc<Hooks>,
        mut request: RequestData,
        reply: ferrule_core::bridge::Reply,
        rejection: Option<Rejection>,
        handshake: Option<Arc<Handshake<RbRoute>>>,
        answers: &Arc<dyn Answers>,
    ) -> Result<(), Error> {
        if is_abandoned(&reply) {
            return Ok(());
        }
        let number = lock(&self.chains).number(hooks);
        let status = match (&rejection, &route) {
            (Some(rejection), _) => rejection.problem.status_code(),
            (None, Some(route)) => route.status,
            (None, None) => StatusCode::OK,
        };
        let label = route.as_ref().map_or_else(|| format!("{} {}", request.method, request.path), |r| r.label.clone());
        let refusal = match &rejection {
            None => ruby.qnil().as_value(),
            Some(rejection) => {
                let default = rejection.response();
                let headers = ruby.ary_new();
                for (name, value) in &rejection.headers {
                    headers.push(ruby.str_new(name.as_str()))?;
                    headers.push(ruby.str_from_slice(value.as_bytes()))?;
                }
                let body = ruby.str_from_slice(default.body.bytes().map_or(&[][..], |b| &b[..]));
                ruby.ary_new_from_values(&[ruby.integer_from_i64(status.as_u16().into()).as_value(), body.as_value(), headers.as_value()]).as_value()
            }
        };
        let index = route.as_ref().map_or(ruby.qnil().as_value(), |r| ruby.integer_from_i64(r.data.index as i64).as_value());
        let declares_body = route.as_ref().is_some_and(|route| route.spec.body.is_some());
        let called = to_ruby::request(ruby, &self.types, &mut request, declares_body)
            .and_then(|request| runner.call::<_, magnus::Value>((number, index, request, refusal, handshake.as_ref().map(|h| h.id()))));
        let shapes = |status: i64| route.as_ref().map_or(ferrule_core::shape::Shape::any(), |route| route.response_shape(status));
        let answered = self.answer_called(ruby, answers, reply, called, status, &shapes, &label);
        drop(handshake);
        answered
    }
}

/// `NativeApp.reload(command, directories, extensions, debounce_ms)`: runs `command` and starts
/// it again when a source changes; the exit status once SIGINT or SIGTERM stopped it (see
/// `ferrule_core::reload`). Waits without the GVL.
pub fn reload(ruby: &Ruby, command: Vec<String>, directories: Vec<String>, extensions: Vec<String>, debounce_ms: u64) -> Result<i32, Error> {
    let spec = ferrule_core::reload::ReloadSpec {
        command,
        directories: directories.into_iter().map(std::path::PathBuf::from).collect(),
        extensions,
        debounce: std::time::Duration::from_millis(debounce_ms),
        drain: std::time::Duration::from_secs(10),
    };
    let outcome = without_gvl(ruby, move || ferrule_core::reload::supervise(spec), || {})?;
    outcome.map_err(|e| Error::new(ruby.exception_runtime_error(), format!("ferrule: {e}")))
}

/// `NativeApp.problem_body(status, detail)`: the body of the core's problem response for
/// `status` with `detail` (an `HTTPError`'s, as `after` filters see it); with no status, a
/// failed block's bare 500.
pub fn problem_body(ruby: &Ruby, status: Option<u16>, detail: Option<String>) -> Result<RString, Error> {
    let problem = match status {
        None => ferrule_core::Problem::internal(),
        Some(status) => {
            let code = StatusCode::from_u16(status).map_err(|e| Error::new(ruby.exception_arg_error(), format!("ferrule: {e}")))?;
            let mut problem = ferrule_core::Problem::status(code);
            problem.detail = detail;
            problem
        }
    };
    Ok(ruby.str_from_slice(&problem.body()))
}

/// `Ferrule::WebSocket`, where the glue of open sockets lives.
fn socket_glue(ruby: &Ruby) -> Result<magnus::RClass, Error> {
    ruby.class_object().const_get::<_, magnus::RModule>("Ferrule")?.const_get("WebSocket")
}

/// `NativeApp.bind(host, port)`: a listening socket for forked workers to inherit, bound once
/// by the parent (a port in use raises `Errno::EADDRINUSE` there). Returns its descriptor.
pub fn bind(ruby: &Ruby, host: String, port: u16) -> Result<i32, Error> {
    use std::os::fd::IntoRawFd;
    Ok(ferrule_core::host::bind(&host, port).map_err(|e| host_error(ruby, e))?.into_raw_fd())
}

/// `NativeApp.canonical_path(text)`: `text` in the spelling the core matches request paths in
/// (a filter pattern's literal parts, as a route's template is put in it).
pub fn canonical_path(text: String) -> String {
    ferrule_core::canonical_path(&text).unwrap_or(text)
}

/// `NativeApp.unknown_option(what, name, known)`: the core's message for an unknown option,
/// the same in every language.
pub fn unknown_option(what: String, name: String, known: Vec<String>) -> String {
    let known: Vec<&str> = known.iter().map(String::as_str).collect();
    ferrule_core::spec::unknown_option(&what, &name, &known)
}
