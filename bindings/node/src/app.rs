//! `NativeApp`: the routes the JavaScript `App` declared, served by the core, with requests
//! handed to the JavaScript thread in batches.
//!
//! Runtime threads never wait on JavaScript: a request becomes a job in a mailbox whose waker
//! rings a libuv async handle (one ring per batch; `raw::Doorbell`). On the JS thread,
//! `dispatch()` turns every waiting job into a context object and hands them to the JS glue
//! (index.js), which calls the handlers and answers each with `reply`/`replyResponse`/`fail`;
//! results are serialised here, on the JS thread, and sent back to the runtime in one batch
//! per `flush()`. Those four calls (and `replyTape`, a result the glue flattened itself) are
//! plain N-API functions ([`NativeApp::hot_path`], `raw::function`), not napi-rs methods.

use crate::raw::{self, Env};
use crate::{shapes, to_js, to_json};
use ferrule_core::bridge::{is_abandoned, Reply};
use ferrule_core::host::{lock, Call, Catch, Exchange, GroupId, Handshake, Hooks, Host, HostError, HostRoute, InProcess, Inbox, Job, Listen, Open, Phase, PushBuffer, Reject, Serving, StreamId, Wake};
use ferrule_core::http::StatusCode;
use ferrule_core::shape::Shape;
use ferrule_core::socket::{Closed, Message, Socket, UnsendableClose};
use ferrule_core::stream::Event;
use ferrule_core::log::{FieldValue, LogRecord, LogWake};
use ferrule_core::{HandlerError, Response};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use std::sync::{Arc, Mutex};

/// A JavaScript route: its handler's slot in the glue's handler list.
struct JsRoute {
    index: u32,
}

/// What JavaScript is in the middle of: requests from the server (`listen`) and from the
/// in-process router (`inject`), answered through the inbox each came from.
#[derive(Default)]
struct Conversations {
    serving: Option<Arc<Serving<JsRoute>>>,
    local: Option<Local>,
    /// Requests handed to JavaScript and not answered yet.
    pending: Vec<Option<Pending>>,
    free: Vec<u32>,
    /// The streams being sent, by the id the glue gave them: where the glue's pushes and the
    /// core's pulls meet.
    streams: std::collections::HashMap<StreamId, (PushBuffer, Inbox<JsRoute>)>,
    /// Open WebSockets, by the core's id, until the glue has taken their end.
    sockets: std::collections::HashMap<u64, Socket>,
    /// The hook chains requests came with, numbered as the glue knows them (`hooksOf`): one
    /// per route and server, so each is resolved into functions once.
    chains: Vec<Arc<Hooks>>,
    chain_numbers: std::collections::HashMap<usize, u32>,
    /// How the server's runtime wakes the JavaScript thread while it serves: for jobs, and
    /// for log records when the app has a logger.
    doorbells: [Option<raw::Doorbell>; 2],
    /// While `close()` runs (`refuseRequests`): an in-process router built meanwhile refuses
    /// too.
    refusing: bool,
}

/// The routes served without a socket, for `app.inject()`: built for a number of routes, and
/// built again once more are declared.
struct Local {
    client: InProcess<JsRoute>,
    /// Rings the glue's in-process dispatcher. Unref'd: it does not keep Node's event loop
    /// alive (the glue holds a timer while an injected request is under way, as an open socket
    /// would), so a test file ends when its last inject has. It holds the dispatcher weakly:
    /// the app keeps it (`_onLocalJobs`), that timer keeps the app while answers are awaited,
    /// and an app its program has let go of is collected, this router and doorbell with it.
    bell: raw::Doorbell,
    routes: usize,
    exchanges: std::collections::HashMap<u32, Exchange>,
    next_exchange: u32,
}

struct Pending {
    /// Where its answer goes: the server's inbox or the in-process router's.
    inbox: Inbox<JsRoute>,
    reply: Reply,
    /// The shapes its JSON is written with; `None` for a request no route takes.
    route: Option<Arc<HostRoute<JsRoute>>>,
    /// What a plain return value is sent with: the route's status, or a refusal's.
    status: StatusCode,
    /// When the core gives up on it (504): what `ctx.signal` aborts at.
    deadline: Option<std::time::Instant>,
    /// What the request carried as sent, for the raw accessors (`ctx.rawBody`, …): kept,
    /// not converted, until a handler asks.
    raw: Option<RawParts>,
    /// A WebSocket's handshake: held until answered, so that its `Job::Unopened` cannot come
    /// before the glue has kept its `ctx` (see `ferrule_core::host::Handshake`). Never read:
    /// letting go of it is what it is for.
    #[allow(dead_code)]
    handshake: Option<Arc<Handshake<JsRoute>>>,
}

struct RawParts {
    body: ferrule_core::bytes::Bytes,
    query: String,
    headers: ferrule_core::http::HeaderMap,
    client: Option<std::net::SocketAddr>,
    /// What a trusted proxy said (`trustProxy`): the scheme and host.
    forwarded: Option<ferrule_core::Forwarded>,
}

#[napi]
pub struct NativeApp {
    /// Shared with the functions of the request path ([`NativeApp::hot_path`]), which hold it
    /// for as long as JavaScript holds them.
    state: std::rc::Rc<AppState>,
}

pub struct AppState {
    host: Host<JsRoute>,
    running: Mutex<Conversations>,
    /// The last drain ended at its deadline with requests cut off.
    cut_off: std::sync::atomic::AtomicBool,
}

impl std::ops::Deref for NativeApp {
    type Target = AppState;

    fn deref(&self) -> &AppState {
        &self.state
    }
}

impl Conversations {
    /// Each job as the glue's entries: `[id, route, …context parts]` per request (after `[-8,
    /// handshake]` for a WebSocket's handshake), `[-1, stream]` per pull, `[-2, stream]` per
    /// release, `[-3, socket, route, …context parts, raw parts, handshake]` per WebSocket
    /// opened, `[-4, socket]` per socket with messages waiting, `[-9, handshake]` per
    /// handshake that did not open. Requests are answered through `inbox`, where they came from.
    fn entries(&mut self, env: Env, jobs: Vec<Job<JsRoute>>, inbox: &Inbox<JsRoute>) -> Result<Vec<raw::Value>> {
        let mut entries = Vec::with_capacity(jobs.len() * (3 + to_js::CONTEXT_PARTS));
        for job in jobs {
            let (route, mut request, reply, hooks, handshake) = match job {
                Job::Call(call) => {
                    let Call { route, hooks, request, reply, handshake } = *call;
                    (route, request, reply, hooks, handshake)
                }
                // `[-6, id, route or -1, …context parts, chain, status, problem, [name, value, …]]`:
                // a request the core refused that the glue's hooks or handlers must see.
                Job::Reject(reject) => {
                    let Reject { route, hooks, mut request, rejection, reply } = *reject;
                    if is_abandoned(&reply) {
                        continue;
                    }
                    let Ok(parts) = to_js::context_parts(env, &request) else {
                        let _ = reply.send(Ok(rejection.response()));
                        continue;
                    };
                    let default = rejection.response();
                    let mut headers = Vec::with_capacity(rejection.headers.len() * 2);
                    for (name, value) in &rejection.headers {
                        headers.push(env.string(name.as_str()).map_err(js_error)?);
                        headers.push(env.string(value.to_str().unwrap_or_default()).map_err(js_error)?);
                    }
                    let chain = self.chain_number(&hooks);
                    let route_index = route.as_ref().map_or(-1, |r| r.data.index as i64);
                    let status = rejection.problem.status_code();
                    let id = self.admit(Pending { inbox: inbox.clone(), reply, route, status, deadline: None, raw: Some(RawParts::take(&mut request)), handshake: None });
                    entries.extend([env.int(-6).map_err(js_error)?, env.int(id as i64).map_err(js_error)?, env.int(route_index).map_err(js_error)?]);
                    entries.extend(parts);
                    entries.extend([
                        env.int(chain).map_err(js_error)?,
                        env.int(status.as_u16() as i64).map_err(js_error)?,
                        env.buffer(default.body.bytes().map_or(&[][..], |b| &b[..])).map_err(js_error)?,
                        shapes::array(env, &headers).map_err(js_error)?,
                    ]);
                    continue;
                }
                // `[-1, stream]`: the core took (or waits for) what the glue pushed, so a
                // producer waiting for room may go on.
                Job::Pull(pull) => {
                    let stream = pull.stream;
                    let Some((buffer, via)) = self.streams.get_mut(&stream).filter(|_| !pull.is_abandoned()) else { continue };
                    if let Some((reply, outcome)) = buffer.pull(pull.reply) {
                        let via = via.clone();
                        if PushBuffer::is_last(&outcome) {
                            self.streams.remove(&stream);
                        }
                        via.answer_pull(reply, outcome);
                    }
                    entries.extend([env.int(-1).map_err(js_error)?, env.number(stream as f64).map_err(js_error)?]);
                    continue;
                }
                // `[-2, stream]`: its client left; the glue closes the producer.
                Job::Release(stream) => {
                    self.streams.remove(&stream);
                    entries.extend([env.int(-2).map_err(js_error)?, env.number(stream as f64).map_err(js_error)?]);
                    continue;
                }
                // `[-3, socket, route, …context parts, raw parts, handshake or -1]`: a WebSocket is
                // open; its handler runs, with what its handshake's hooks set on their `ctx`.
                Job::Open(open) => {
                    let Open { route, mut request, socket, handshake } = *open;
                    // A socket's raw parts come with it: its handler's `ctx` lives as long as the
                    // socket, long after the core has forgotten the request.
                    let parts = to_js::context_parts(env, &request).and_then(|parts| Ok((parts, RawParts::take(&mut request).to_js(env)?)));
                    let (parts, raw) = match parts {
                        Ok(parts) => parts,
                        Err(_) => {
                            socket.close_with(Closed::new(1011, ""));
                            continue;
                        }
                    };
                    self.sockets.insert(socket.id(), socket.clone());
                    entries.extend([env.int(-3).map_err(js_error)?, env.number(socket.id() as f64).map_err(js_error)?]);
                    entries.push(env.int(route.data.index as i64).map_err(js_error)?);
                    entries.extend(parts);
                    entries.push(raw);
                    entries.push(env.number(handshake.map_or(-1.0, |id| id as f64)).map_err(js_error)?);
                    continue;
                }
                // `[-9, handshake]`: a handshake the hooks saw will not open: the glue forgets its `ctx`.
                Job::Unopened(id) => {
                    entries.extend([env.int(-9).map_err(js_error)?, env.number(id as f64).map_err(js_error)?]);
                    continue;
                }
                // `[-4, socket]`: messages (or the end) wait: the glue takes them (`socketTake`).
                Job::Socket(id) => {
                    entries.extend([env.int(-4).map_err(js_error)?, env.number(id as f64).map_err(js_error)?]);
                    continue;
                }
                // `[-7, id]`: the client of request `id`, watched since its handler read
                // `ctx.signal`, left: the glue aborts that signal. Not when the id has been
                // answered and given to a request whose client is still there.
                Job::Departed(id) => {
                    let gone = self.pending.get(id as usize).and_then(Option::as_ref).is_some_and(|pending| is_abandoned(&pending.reply));
                    if gone {
                        entries.extend([env.int(-7).map_err(js_error)?, env.number(id as f64).map_err(js_error)?]);
                    }
                    continue;
                }
            };
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
            let chain = if hooks.is_empty() { -1 } else { self.chain_number(&hooks) };
            let (index, status, deadline) = (route.data.index, route.status, request.deadline);
            // `[-8, handshake]` before a WebSocket's handshake that its hooks see.
            if let Some(handshake) = &handshake {
                entries.extend([env.int(-8).map_err(js_error)?, env.number(handshake.id() as f64).map_err(js_error)?]);
            }
            let id = self.admit(Pending { inbox: inbox.clone(), reply, route: Some(route), status, deadline, raw: Some(RawParts::take(&mut request)), handshake });
            entries.extend([env.int(id as i64).map_err(js_error)?, env.int(index as i64).map_err(js_error)?]);
            entries.extend(parts);
            entries.push(env.int(chain).map_err(js_error)?);
        }
        Ok(entries)
    }

    /// Files a request handed to JavaScript; returns the id the glue answers it by.
    fn admit(&mut self, pending: Pending) -> u32 {
        match self.free.pop() {
            Some(id) => {
                self.pending[id as usize] = Some(pending);
                id
            }
            None => {
                self.pending.push(Some(pending));
                self.pending.len() as u32 - 1
            }
        }
    }

    /// The number the glue knows `hooks` by (asking `hooksOf` for it once).
    fn chain_number(&mut self, hooks: &Arc<Hooks>) -> i64 {
        let key = Arc::as_ptr(hooks) as usize;
        let next = self.chains.len() as u32;
        let number = *self.chain_numbers.entry(key).or_insert(next);
        if number == next {
            // Kept, so the address stays this chain's for as long as its number is used.
            self.chains.push(hooks.clone());
        }
        number as i64
    }
}

/// `[scheme or null, host or null]`.
fn forwarded_to_js(env: Env, forwarded: &ferrule_core::Forwarded) -> std::result::Result<raw::Value, raw::Failed> {
    let scheme = forwarded.scheme.map_or_else(|| env.null(), |scheme| env.string(scheme))?;
    let host = forwarded.host.as_deref().map_or_else(|| env.null(), |host| env.string(host))?;
    shapes::array(env, &[scheme, host])
}

impl RawParts {
    fn take(request: &mut ferrule_core::RequestData) -> RawParts {
        RawParts {
            body: std::mem::take(&mut request.raw_body),
            query: std::mem::take(&mut request.raw_query),
            headers: std::mem::take(&mut request.raw_headers),
            client: request.client,
            forwarded: request.forwarded.take(),
        }
    }

    /// What `ctx`'s raw accessors read: `[body (Buffer), query string, [name, value, …] query
    /// pairs, [name, value, …] headers, [name, value, …] cookies, [traceparent, trace id] or
    /// null, [client address, client port] or null, [scheme or null, host or null] (what a
    /// trusted proxy said) or null]`.
    fn to_js(self, env: Env) -> std::result::Result<raw::Value, raw::Failed> {
        let flat = |pairs: Vec<(String, String)>| -> std::result::Result<raw::Value, raw::Failed> {
            let mut values = Vec::with_capacity(pairs.len() * 2);
            for (name, value) in &pairs {
                values.push(env.string(name)?);
                values.push(env.string(value)?);
            }
            shapes::array(env, &values)
        };
        let query: Vec<(String, String)> = ferrule_core::query_pairs(&self.query);
        let headers: Vec<(String, String)> =
            self.headers.iter().map(|(n, v)| (n.as_str().to_owned(), ferrule_core::header_value_text(v).into_owned())).collect();
        let cookies = ferrule_core::cookie_pairs(&self.headers);
        let trace = match ferrule_core::trace::TraceContext::of(&self.headers) {
            Some(trace) => flat(vec![(trace.header(), trace.trace_id_hex())]),
            None => env.null(),
        };
        let client = match self.client {
            Some(client) => env.string(&client.ip().to_string()).and_then(|ip| shapes::array(env, &[ip, env.int(i64::from(client.port()))?])),
            None => env.null(),
        };
        let forwarded = match &self.forwarded {
            Some(forwarded) => forwarded_to_js(env, forwarded),
            None => env.null(),
        };
        let parts = [env.buffer(&self.body), env.string(&self.query), flat(query), flat(headers), flat(cookies), trace, client, forwarded];
        let parts = parts.into_iter().collect::<std::result::Result<Vec<_>, _>>()?;
        shapes::array(env, &parts)
    }
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

/// A host error as a JavaScript error: the glue (index.js) throws a mistake in the program
/// as a `TypeError`, and gives a refused socket its `code` (`EADDRINUSE`), as Node's own
/// `listen` does.
pub(crate) fn host_error(error: HostError) -> Error {
    let kind = match error.os_code() {
        Some(code) => code,
        None if error.is_usage() => "TypeError",
        None => "Error",
    };
    Error::new(Status::GenericFailure, format!("{kind}|ferrule: {error}"))
}

/// A status as JavaScript gave it (any number): a whole number or -1, which the core refuses.
fn whole(status: f64) -> i64 {
    if status.is_finite() && status.fract() == 0.0 { status as i64 } else { -1 }
}

#[napi]
impl NativeApp {
    /// `configJson`: the core's `AppConfig` as JSON.
    #[napi(constructor)]
    pub fn new(config_json: String) -> Result<Self> {
        let host = Host::from_json(&config_json).map_err(host_error)?;
        Ok(NativeApp { state: std::rc::Rc::new(AppState { host, running: Mutex::new(Conversations::default()), cut_off: Default::default() }) })
    }

    /// The functions the glue calls for every request or batch, made without napi-rs's
    /// per-call wrapper (`raw::function`): `{ dispatch, reply, replyTape, flush, serialise }`.
    /// The glue puts them on this object, in place of methods.
    #[napi]
    pub fn hot_path(&self, env: napi::Env) -> Result<Js> {
        let env = Env(env.raw());
        let made = (|| {
            let mut properties = Vec::with_capacity(5);
            let bodies: [(&str, raw::Body<AppState>); 4] = [("dispatch", AppState::dispatch), ("reply", AppState::reply), ("replyTape", AppState::reply_tape), ("flush", AppState::flush)];
            for (name, body) in bodies {
                properties.push((env.string(name)?, raw::function(env, name, self.state.clone(), body)?));
            }
            let serialise = to_json::serialiser(env).map_err(|_| raw::Failed("compile the serialiser"))?;
            properties.push((env.string("serialise")?, serialise));
            env.object_from(&properties)
        })();
        made.map(Js).map_err(js_error)
    }

    /// Declares a route (a core `RouteSpec` as JSON); returns its index, which `dispatch`
    /// reports with each request for it.
    #[napi]
    pub fn add_route(&self, spec_json: String, status: f64, group: Option<u32>) -> Result<u32> {
        let index = self.host.routes().len() as u32;
        let group = GroupId::from_index(group.unwrap_or(0) as usize);
        self.host.declare_json(group, &spec_json, whole(status), JsRoute { index }).map_err(host_error)?;
        Ok(index)
    }

    /// Serves a directory under a prefix (`specJson`: the core's `StaticSpec`).
    #[napi]
    pub fn mount_static(&self, spec_json: String) -> Result<()> {
        self.host.mount_static_json(&spec_json).map_err(host_error)
    }

    /// Sets the app-wide `cors` or `compression` (the core's JSON) after the app was made:
    /// `register(cors)` and `register(compress)`.
    #[napi]
    pub fn configure(&self, settings_json: String) -> Result<()> {
        self.host.configure_json(&settings_json).map_err(host_error)
    }

    /// A group of routes (a `register` scope) under `parent`, served under `prefix`.
    #[napi]
    pub fn group(&self, parent: u32, prefix: String) -> Result<u32> {
        self.host.group(GroupId::from_index(parent as usize), &prefix).map(|g| g.index() as u32).map_err(host_error)
    }

    /// A group for one route's own hooks (`{ preHandler }` among its options) under `parent`.
    #[napi]
    pub fn route_group(&self, parent: u32) -> Result<u32> {
        self.host.route_group(GroupId::from_index(parent as usize)).map(|g| g.index() as u32).map_err(host_error)
    }

    /// Registers the glue's hook `slot` at `phase` (`onRequest`, `preHandler`, `onSend`,
    /// `onError`) for `group`'s requests.
    #[napi]
    pub fn hook(&self, group: u32, phase: String, slot: u32) -> Result<()> {
        let phase = Phase::parse(&phase).map_err(|e| Error::new(Status::InvalidArg, format!("TypeError|ferrule: {e}")))?;
        self.host.hook(GroupId::from_index(group as usize), phase, slot).map_err(host_error)
    }

    /// `group`'s error or not-found handler takes the requests the core refuses with `status`
    /// (null: every refusal).
    #[napi]
    pub fn catch(&self, group: u32, status: Option<u32>) -> Result<()> {
        let catch = status.map_or(Catch::All, |s| Catch::Status(s as u16));
        self.host.catch(GroupId::from_index(group as usize), catch).map_err(host_error)
    }

    /// `group`'s `onError` hooks see the requests the core refuses as failures of the request
    /// (a 400, 413, 415, 422; not a 404 or 405), as Fastify's see those errors.
    #[napi]
    pub fn catch_failures(&self, group: u32) -> Result<()> {
        self.host.catch(GroupId::from_index(group as usize), Catch::Failures).map_err(host_error)
    }

    /// Chain `number`'s hook slots: `[onRequest, preHandler, onSend, onError]`.
    #[napi]
    pub fn hooks_of(&self, number: u32) -> Option<Vec<Vec<u32>>> {
        let running = lock(&self.running);
        let hooks = running.chains.get(number as usize)?;
        Some(vec![hooks.on_request.clone(), hooks.pre_handler.clone(), hooks.on_send.clone(), hooks.on_error.clone()])
    }

    /// The OpenAPI document of the routes declared so far, as indented JSON.
    #[napi]
    pub fn openapi(&self) -> Result<String> {
        self.host.openapi().map_err(host_error)
    }

    /// Starts serving on `fd` (a listening socket inherited from the primary process) or
    /// `host:port`; returns the bound port. `onJobs` is called on the JS thread whenever
    /// requests wait for `dispatch()`, and `onLogs` whenever log records wait for `takeLogs()`.
    /// A server that does not start leaves nothing behind to keep Node's event loop alive.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn listen(
        &self,
        env: napi::Env,
        on_jobs: Js,
        on_logs: Option<Js>,
        host: String,
        port: u32,
        fd: Option<i32>,
        threads: Option<u32>,
    ) -> Result<u32> {
        let env = Env(env.raw());
        let mut running = lock(&self.running);
        // Refused here, before the logs are routed anew: the running server keeps its own.
        if running.serving.is_some() {
            return Err(host_error(HostError::AlreadyServing));
        }
        let port = u16::try_from(port).map_err(|_| Error::new(Status::GenericFailure, format!("TypeError|ferrule: port {port} is not a TCP port (0-65535)")))?;
        let listen = match fd {
            Some(fd) => Listen::Inherited(fd),
            None => Listen::Address { host: &host, port },
        };
        // Each rung once per batch by the runtime's threads; they keep Node's event loop alive
        // until `release()`.
        let jobs_bell = raw::Doorbell::new(env, on_jobs.0, raw::Hold::Strong).map_err(js_error)?;
        let logs_bell = match on_logs.map(|on_logs| raw::Doorbell::new(env, on_logs.0, raw::Hold::Strong)).transpose() {
            Ok(bell) => bell,
            Err(e) => {
                jobs_bell.close();
                return Err(js_error(e));
            }
        };
        match self.start(listen, threads, &jobs_bell, logs_bell.as_ref()) {
            Ok(serving) => {
                let bound = serving.port();
                running.serving = Some(serving);
                running.doorbells = [Some(jobs_bell), logs_bell];
                Ok(bound as u32)
            }
            Err(e) => {
                self.host.unroute_logs();
                jobs_bell.close();
                if let Some(bell) = logs_bell {
                    bell.close();
                }
                Err(host_error(e))
            }
        }
    }

    /// Prints the startup line (the same in every language).
    #[napi]
    pub fn announce(&self) {
        if let Some(serving) = lock(&self.running).serving.as_ref() {
            serving.announce();
        }
    }

    /// `dispatch()` for the in-process router: its waiting jobs as the same entries, then
    /// `[-5, exchange, status, [name, value, …], body (Buffer), cutOff]` per injected request
    /// answered; `null` when there is no in-process router.
    #[napi]
    pub fn dispatch_local(&self, env: napi::Env) -> Result<Js> {
        let env = Env(env.raw());
        let mut conversations = lock(&self.running);
        let Some(local) = conversations.local.as_mut() else { return env.null().map(Js).map_err(js_error) };
        let mut jobs = Vec::new();
        local.client.mailbox().take_all(&mut jobs);
        let inbox = local.client.inbox();
        let answered: Vec<u32> = local.exchanges.iter().filter(|(_, exchange)| exchange.is_done()).map(|(id, _)| *id).collect();
        let answers: Vec<_> = answered.into_iter().filter_map(|id| Some((id, local.exchanges.remove(&id)?.take()?))).collect();
        let mut entries = conversations.entries(env, jobs, &inbox)?;
        for (id, answer) in answers {
            let mut headers = Vec::with_capacity(answer.headers.len() * 2);
            for (name, value) in &answer.headers {
                headers.push(env.string(name.as_str()).map_err(js_error)?);
                headers.push(env.string(&latin1(value.as_bytes())).map_err(js_error)?);
            }
            entries.extend([
                env.int(-5).map_err(js_error)?,
                env.number(id as f64).map_err(js_error)?,
                env.int(answer.status.as_u16() as i64).map_err(js_error)?,
                shapes::array(env, &headers).map_err(js_error)?,
                env.buffer(&answer.body).map_err(js_error)?,
                env.boolean(answer.cut_off).map_err(js_error)?,
            ]);
        }
        shapes::array(env, &entries).map(Js).map_err(js_error)
    }

    /// Starts one request through the whole core without a socket (`app.inject()`); returns
    /// the exchange id its answer comes back under (`[-5, …]` from `dispatchLocal`). `onJobs`
    /// is the glue's dispatcher for in-process jobs; `headers` is `[name, value, …]`.
    #[napi]
    pub fn inject(&self, env: napi::Env, on_jobs: Js, method: String, url: String, headers: Vec<String>, body: Buffer) -> Result<u32> {
        let mut conversations = lock(&self.running);
        let routes = self.host.routes().len();
        if conversations.local.as_ref().is_none_or(|local| local.routes != routes) {
            let bell = raw::Doorbell::new(Env(env.raw()), on_jobs.0, raw::Hold::Weak).map_err(js_error)?;
            bell.unref();
            let ringer = bell.ringer();
            let client = match self.host.in_process(Wake::Callback(Box::new(move || ringer.ring()))) {
                Ok(client) => client,
                Err(e) => {
                    bell.close();
                    return Err(host_error(e));
                }
            };
            // The router it replaces (built for fewer routes) is done with: so is its bell.
            if let Some(old) = conversations.local.replace(Local { client, bell, routes, exchanges: Default::default(), next_exchange: 0 }) {
                old.bell.close();
            }
        }
        let refusing = conversations.refusing;
        let local = conversations.local.as_mut().expect("just built");
        local.client.refuse_requests(refusing);
        let mut request = ferrule_core::http::Request::builder().method(method.as_str()).uri(url.as_str());
        for (name, value) in pairs(&headers) {
            request = request.header(name, latin1_bytes(value));
        }
        let request = request
            .body(ferrule_core::bytes::Bytes::copy_from_slice(&body))
            .map_err(|e| Error::new(Status::InvalidArg, format!("TypeError|ferrule: a request that cannot be sent: {e}")))?;
        let id = local.next_exchange;
        local.next_exchange = local.next_exchange.wrapping_add(1);
        local.exchanges.insert(id, local.client.send(request));
        Ok(id)
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
        let mut running = lock(&self.running);
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
        let running = lock(&self.running);
        let deadline = running.pending.get(id as usize)?.as_ref()?.deadline?;
        Some(deadline.saturating_duration_since(std::time::Instant::now()).as_secs_f64() * 1000.0)
    }

    /// Asks for a `[-7, id]` entry when request `id`'s client leaves before it is answered;
    /// true when it has left already. Asked once per request, and only when a handler reads
    /// `ctx.signal`.
    #[napi]
    pub fn watch_departure(&self, id: u32) -> bool {
        let mut running = lock(&self.running);
        let Some(Some(pending)) = running.pending.get_mut(id as usize) else { return false };
        let inbox = pending.inbox.clone();
        inbox.watch_departure(&mut pending.reply, id as u64)
    }

    /// What request `id` carried as sent: `[body (Buffer), query string, [name, value, …] query
    /// pairs, [name, value, …] headers, [name, value, …] cookies]`; null once answered. Asked
    /// once per request, and only when a handler reads a raw accessor.
    #[napi]
    pub fn raw_parts(&self, env: napi::Env, id: u32) -> Result<Js> {
        let env = Env(env.raw());
        let raw = lock(&self.running).pending.get_mut(id as usize).and_then(|p| p.as_mut()?.raw.take());
        let Some(raw) = raw else { return env.null().map(Js).map_err(js_error) };
        raw.to_js(env).map(Js).map_err(js_error)
    }

    /// One header of request `id` as sent (`name` in lower case), repeated ones joined with
    /// ", "; undefined when absent. `ctx.header()` asks here until the handler has fetched every
    /// raw part: a hook that reads one header should not pay for all of them (measured: that
    /// was half the cost of the benchmarks' one-hook feature).
    #[napi]
    pub fn header(&self, env: napi::Env, id: u32, name: String) -> Result<Js> {
        let env = Env(env.raw());
        let running = lock(&self.running);
        let raw = running.pending.get(id as usize).and_then(|p| p.as_ref()?.raw.as_ref());
        match raw.and_then(|raw| ferrule_core::header_text(&raw.headers, &name)) {
            Some(text) => env.string(&text),
            None => env.undefined(),
        }
        .map(Js)
        .map_err(js_error)
    }

    /// What a trusted proxy said about request `id`: `[scheme or null, host or null]`, or null.
    /// `ctx.protocol` and `ctx.host` ask here until the handler has fetched every raw part, as
    /// `ctx.header()` does.
    #[napi]
    pub fn forwarded(&self, env: napi::Env, id: u32) -> Result<Js> {
        let env = Env(env.raw());
        let running = lock(&self.running);
        let raw = running.pending.get(id as usize).and_then(|p| p.as_ref()?.raw.as_ref());
        match raw.and_then(|raw| raw.forwarded.as_ref()) {
            Some(forwarded) => forwarded_to_js(env, forwarded),
            None => env.null(),
        }
        .map(Js)
        .map_err(js_error)
    }

    /// Answers request `id` with an explicit response (`new Response(body, {status, headers})`);
    /// `headers` is a flat `[name, value, …]` list (arrays of values already repeated).
    #[napi]
    pub fn reply_response(&self, env: napi::Env, id: u32, status: f64, headers: Vec<String>, body: Js) -> Result<()> {
        let env = Env(env.raw());
        let Some((reply, route, _, inbox)) = self.take(id) else { return Ok(()) };
        // Its JSON is written with the shape declared for its own status (Fastify's rule).
        let shape = shape_of(&route, whole(status));
        let outcome = match env.kind(body.0) {
            Ok(raw::Kind::Undefined | raw::Kind::Null) => Ok(None),
            Ok(_) => plain(env, body.0, shape).map(Some),
            Err(e) => Err(e.0.to_owned()),
        }
        .map_err(|message| HandlerError::new(format!("returned a response that cannot be sent: {message}")))
        .and_then(|body| Response::from_parts(whole(status), body, pairs(&headers)));
        inbox.answer(reply, outcome.map(Response::with_json_charset));
        Ok(())
    }

    /// Answers request `id` with a stream whose producer the glue runs as `stream` (a
    /// Readable, an async iterator, a `ReadableStream`, a generator), pushing its items
    /// (`streamPush`, `streamPushEvent`); `events` makes it a Server-Sent Events stream.
    /// `status` null: the route's.
    #[napi]
    pub fn reply_stream(&self, id: u32, status: Option<f64>, headers: Vec<String>, stream: f64, events: bool, keep_alive_ms: Option<f64>) -> Result<()> {
        let Some((reply, _, route_status, inbox)) = self.take(id) else { return Ok(()) };
        let status = status.map_or(i64::from(route_status.as_u16()), whole);
        lock(&self.running).streams.insert(stream as StreamId, (PushBuffer::default(), inbox.clone()));
        let mut body = inbox.stream(stream as StreamId);
        // `sse(source, { keepAlive })`: the stream's own keep-alive period (ms; 0: none).
        if let Some(ms) = keep_alive_ms.filter(|ms| ms.is_finite() && *ms >= 0.0) {
            body = body.keep_alive_every(std::time::Duration::from_secs_f64(ms / 1000.0));
        }
        let body = if events { Response::events(body) } else { Response::stream(body) };
        inbox.answer(reply, Response::from_parts(status, Some(body), pairs(&headers)));
        Ok(())
    }

    /// Answers request `id` with the file at `path` (`reply.sendFile`), which the core sends
    /// from disk, ranges and validators answered (`Response::file`). `status` null: the route's.
    #[napi]
    pub fn reply_file(&self, id: u32, status: Option<f64>, headers: Vec<String>, path: String) -> Result<()> {
        let Some((reply, _, route_status, inbox)) = self.take(id) else { return Ok(()) };
        let status = status.map_or(i64::from(route_status.as_u16()), whole);
        inbox.answer(reply, Response::from_parts(status, Some(Response::file(path)), pairs(&headers)));
        Ok(())
    }

    /// A chunk of the stream (a string, UTF-8, or a Buffer): to the pull that waits, or kept
    /// for the next. Returns whether the producer may push again without waiting for the client
    /// (false: wait for the stream's `[-1, stream]`; also false once the client has left).
    #[napi]
    pub fn stream_push(&self, env: napi::Env, stream: f64, chunk: Js) -> Result<bool> {
        let env = Env(env.raw());
        let bytes = match env.kind(chunk.0) {
            Ok(raw::Kind::String) => env.as_string(chunk.0).map(|text| ferrule_core::bytes::Bytes::from(text.into_bytes())).map_err(|e| e.0.to_owned()),
            Ok(raw::Kind::Object) => env.bytes(chunk.0).map_err(|e| e.0.to_owned()).and_then(|b| b.map(Into::into).ok_or_else(|| "an object".to_owned())),
            Ok(kind) => Err(format!("{kind:?}").to_lowercase()),
            Err(e) => Err(e.0.to_owned()),
        };
        let bytes = bytes.map_err(|kind| Error::new(Status::InvalidArg, format!("TypeError|ferrule: produced a chunk that cannot be sent: {kind} (chunks are strings or Buffers)")))?;
        Ok(self.push_to(stream, bytes))
    }

    /// An event of the event stream: `data` (a string as it is, anything else as JSON) and the
    /// optional fields of a Server-Sent Event; returns as `streamPush` does.
    #[napi]
    pub fn stream_push_event(&self, env: napi::Env, stream: f64, data: Js, name: Option<String>, id: Option<String>, retry: Option<f64>, comment: Option<String>) -> Result<bool> {
        let env = Env(env.raw());
        let data = match env.kind(data.0) {
            Ok(raw::Kind::Undefined | raw::Kind::Null) => Ok(None),
            Ok(raw::Kind::String) => env.as_string(data.0).map(Some).map_err(|e| e.0.to_owned()),
            Ok(_) => to_json::to_vec(env, data.0, Shape::any()).and_then(|json| String::from_utf8(json).map_err(|e| e.to_string())).map(Some),
            Err(e) => Err(e.0.to_owned()),
        };
        let event = data.and_then(|data| {
            let mut event = Event::default();
            if let Some(data) = data {
                event = event.with_data(data);
            }
            if let Some(name) = name {
                event = event.with_name(name);
            }
            if let Some(id) = id {
                event = event.with_id(id);
            }
            if let Some(retry) = retry.filter(|r| r.is_finite() && *r >= 0.0) {
                event = event.with_retry(std::time::Duration::from_millis(retry as u64));
            }
            if let Some(comment) = comment {
                event = event.with_comment(comment);
            }
            event.encode().map_err(|e| e.to_string())
        });
        let bytes = event.map_err(|message| Error::new(Status::InvalidArg, format!("TypeError|ferrule: produced an event that cannot be sent: {message}")))?;
        Ok(self.push_to(stream, bytes))
    }

    /// The stream's producer is done: the response ends once what it pushed has gone.
    #[napi]
    pub fn stream_end(&self, stream: f64) {
        self.end_stream(stream, Ok(()));
    }

    /// The stream's producer failed (the glue has logged why; `log` is for the server's log):
    /// the response is cut off (an event stream ends) once what it pushed before has gone.
    #[napi]
    pub fn stream_fail(&self, stream: f64, log: String) {
        self.end_stream(stream, Err(HandlerError::new(log)));
    }

    /// Answers request `id` after its handler threw an `HttpError`: its problem response.
    #[napi]
    pub fn fail_http(&self, id: u32, status: f64, detail: Option<String>, headers: Vec<String>) -> Result<()> {
        let Some((reply, _, _, inbox)) = self.take(id) else { return Ok(()) };
        inbox.answer(reply, Response::http_error(whole(status), detail, pairs(&headers)));
        Ok(())
    }

    /// Answers request `id` after its handler threw anything else (or its result could not be
    /// sent): a bare 500 that leaks nothing; `log` is for the server's log.
    #[napi]
    pub fn fail(&self, id: u32, log: String, logged: Option<bool>) -> Result<()> {
        let Some((reply, _, _, inbox)) = self.take(id) else { return Ok(()) };
        // `logged`: the glue wrote the error (with its stack) already; the core adds no line.
        let error = if logged == Some(true) { HandlerError::reported(log) } else { HandlerError::new(log) };
        inbox.answer(reply, Err(error));
        Ok(())
    }

    /// Fastify's `return503OnClosing`, for the time `close()` runs its `preClose` hooks and
    /// drains: requests the server reads, and those injected, are answered 503 from now on
    /// (`refuse`), or served again once `close()` is done.
    #[napi]
    pub fn refuse_requests(&self, refuse: bool) {
        let mut conversations = lock(&self.running);
        conversations.refusing = refuse;
        if let Some(serving) = &conversations.serving {
            serving.refuse_requests(refuse);
        }
        if let Some(local) = &conversations.local {
            local.client.refuse_requests(refuse);
        }
    }

    /// Stops accepting connections and drains in-flight requests; `dispatch()` returns `null`
    /// once done. Calling it again does nothing.
    #[napi]
    pub fn close(&self) {
        if let Some(serving) = &lock(&self.running).serving {
            serving.stop();
        }
    }

    /// Every waiting log record as `[level, target, message, fields]` repeated (`level` is
    /// pino's name: debug, info, warn, error; `fields` an object of the record's values).
    #[napi]
    pub fn take_logs(&self, env: napi::Env) -> Result<Js> {
        let env = Env(env.raw());
        let mut records = Vec::new();
        self.host.logs().take(&mut records);
        let mut entries = Vec::with_capacity(records.len() * 4);
        for record in &records {
            entries.extend(log_entry(env, record).map_err(js_error)?);
        }
        shapes::array(env, &entries).map(Js).map_err(js_error)
    }

    /// Lets go of the in-process router, its runtime thread and its doorbell, unless an
    /// injected request is under way: `close()` calls it, and the next `inject()` builds
    /// another. Otherwise they last until the app is collected, and a test file that makes an
    /// app per test keeps one thread per app until the collector runs.
    #[napi]
    pub fn release_in_process(&self) {
        let mut conversations = lock(&self.running);
        let idle = conversations.local.as_ref().is_some_and(|local| local.exchanges.is_empty());
        let released = if idle { conversations.local.take() } else { None };
        drop(conversations);
        // Its runtime's thread is joined here, with the app's lock released.
        drop(released);
    }

    /// Forgets the stopped server and closes its doorbell, which kept Node's event loop alive.
    /// The app can listen again afterwards.
    #[napi]
    pub fn release(&self) {
        let mut conversations = lock(&self.running);
        for doorbell in conversations.doorbells.iter_mut().filter_map(Option::take) {
            doorbell.close();
        }
        // Requests and streams of the stopped server hold its mailbox: let go of them too.
        if let Some(serving) = conversations.serving.take() {
            let served = serving.inbox();
            let Conversations { pending, free, streams, .. } = &mut *conversations;
            for (id, slot) in pending.iter_mut().enumerate() {
                if slot.as_ref().is_some_and(|p| p.inbox.same_as(&served)) {
                    *slot = None;
                    free.push(id as u32);
                }
            }
            streams.retain(|_, (_, inbox)| !inbox.same_as(&served));
        }
        drop(conversations);
        // The next listen() routes the logs again.
        self.host.unroute_logs();
    }
}

impl AppState {
    /// Routes the logs (with a logger, records wait in a queue and the logs' doorbell drains
    /// them on the JavaScript thread; without one, the core writes its lines to stderr itself)
    /// and starts the server.
    fn start(&self, listen: Listen<'_>, threads: Option<u32>, jobs_bell: &raw::Doorbell, logs_bell: Option<&raw::Doorbell>) -> std::result::Result<Arc<Serving<JsRoute>>, HostError> {
        if let Some(bell) = logs_bell {
            let ringer = bell.ringer();
            self.host.route_logs(LogWake::Callback(Box::new(move || ringer.ring())))?;
        }
        let ringer = jobs_bell.ringer();
        let wake = Wake::Callback(Box::new(move || ringer.ring()));
        self.host.serve(listen, threads.map(|t| t as usize), wake, "the JavaScript side")
    }

    /// Request `id`'s reply channel, route, plain status and inbox, once (the slot is freed).
    #[allow(clippy::type_complexity)]
    fn take(&self, id: u32) -> Option<(Reply, Option<Arc<HostRoute<JsRoute>>>, StatusCode, Inbox<JsRoute>)> {
        let mut running = lock(&self.running);
        let slot = running.pending.get_mut(id as usize)?.take()?;
        running.free.push(id);
        Some((slot.reply, slot.route, slot.status, slot.inbox))
    }

    fn socket(&self, id: f64) -> Option<Socket> {
        lock(&self.running).sockets.get(&(id as u64)).cloned()
    }

    fn push_to(&self, stream: f64, bytes: ferrule_core::bytes::Bytes) -> bool {
        let mut running = lock(&self.running);
        let Some((buffer, inbox)) = running.streams.get_mut(&(stream as StreamId)) else { return false };
        if let Some((reply, outcome)) = buffer.push(bytes) {
            inbox.answer_pull(reply, outcome);
            return true;
        }
        buffer.has_room()
    }

    fn end_stream(&self, stream: f64, how: std::result::Result<(), HandlerError>) {
        let mut running = lock(&self.running);
        let id = stream as StreamId;
        let Some((buffer, inbox)) = running.streams.get_mut(&id) else { return };
        if let Some((reply, outcome)) = buffer.end(how) {
            let inbox = inbox.clone();
            if PushBuffer::is_last(&outcome) {
                running.streams.remove(&id);
            }
            inbox.answer_pull(reply, outcome);
        }
    }
}

/// The request path's functions (see [`NativeApp::hot_path`]): called from JavaScript with
/// the arguments as given; an `Err` is thrown.
impl AppState {
    /// `dispatch()`: every waiting request as `[id, route, …context parts]` repeated (see
    /// `to_js::context_parts`), and stream jobs as `[-1, stream]` (a pull) or `[-2, stream]`
    /// (a release); `null` once the server has stopped.
    fn dispatch(env: Env, app: &AppState, _: &[raw::Value]) -> std::result::Result<raw::Value, String> {
        let failed = |e: raw::Failed| format!("ferrule: {}", e.0);
        let mut conversations = lock(&app.running);
        let Some(serving) = conversations.serving.clone() else { return env.null().map_err(failed) };
        let mut jobs = Vec::new();
        serving.mailbox().take_all(&mut jobs);
        if let Some(outcome) = serving.outcome() {
            // The runtime is gone before the outcome is known, and with it every request
            // still waiting: calls taken with it have nobody to answer.
            if outcome.is_err() {
                app.cut_off.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            return env.null().map_err(failed);
        }
        let entries = conversations.entries(env, jobs, &serving.inbox()).map_err(|e| e.reason)?;
        // Exactly as long as its entries: a request left out must not leave a hole.
        shapes::array(env, &entries).map_err(failed)
    }

    /// `reply(id, value)`: answers request `id` with a handler's plain return value: a string
    /// (text/plain), a Buffer (application/octet-stream), undefined (no body, as Fastify sends
    /// `reply.send()`), or anything else as JSON, serialised here (null is `null`).
    fn reply(env: Env, app: &AppState, args: &[raw::Value]) -> std::result::Result<raw::Value, String> {
        let id = request_id(env, args[0])?;
        if let Some((reply, route, status, inbox)) = app.take(id) {
            let outcome = match env.kind(args[1]) {
                Ok(raw::Kind::Undefined) => Ok(Response::new(status)),
                _ => plain(env, args[1], shape_of(&route, status.as_u16().into())),
            }
            .map(|response| response.with_status(status).with_json_charset())
                .map_err(|message| HandlerError::new(format!("returned a value that cannot be sent: {message}")));
            inbox.answer(reply, outcome);
        }
        env.undefined().map_err(|e| e.0.to_owned())
    }

    /// `replyTape(id, tape, used, text)`: answers request `id` with the JSON of a value the glue
    /// flattened itself (`serialise(value)`, see `to_json::from_tape`).
    fn reply_tape(env: Env, app: &AppState, args: &[raw::Value]) -> std::result::Result<raw::Value, String> {
        let id = request_id(env, args[0])?;
        if let Some((reply, route, status, inbox)) = app.take(id) {
            // Taken: whatever fails from here is this request's 500, never a request left waiting.
            let outcome = env
                .as_f64(args[2])
                .map_err(|e| e.0.to_owned())
                .and_then(|used| to_json::from_tape(env, args[1], used, args[3], shape_of(&route, status.as_u16().into())))
                .map(|json| Response::shaped_json(json).with_status(status).with_json_charset())
                .map_err(|message| HandlerError::new(format!("returned a value that cannot be sent: {message}")));
            inbox.answer(reply, outcome);
        }
        env.undefined().map_err(|e| e.0.to_owned())
    }

    /// `flush()`: sends every answer given since the last flush to the waiting requests.
    fn flush(env: Env, app: &AppState, _: &[raw::Value]) -> std::result::Result<raw::Value, String> {
        let running = lock(&app.running);
        if let Some(serving) = &running.serving {
            serving.flush();
        }
        if let Some(local) = &running.local {
            local.client.flush();
        }
        env.undefined().map_err(|e| e.0.to_owned())
    }
}

/// A request's id as the glue passes it back.
fn request_id(env: Env, value: raw::Value) -> std::result::Result<u32, String> {
    let id = env.as_f64(value).map_err(|e| format!("ferrule: a request id must be a number ({})", e.0))?;
    if id >= 0.0 && id <= f64::from(u32::MAX) && id.fract() == 0.0 {
        Ok(id as u32)
    } else {
        Err(format!("ferrule: {id} is not a request id"))
    }
}

/// The shape a JSON result sent with `status` is written with: the route's, none without one.
fn shape_of(route: &Option<Arc<HostRoute<JsRoute>>>, status: i64) -> Shape<'_> {
    route.as_ref().map_or(Shape::any(), |route| route.response_shape(status))
}

/// Header bytes as Node's `http` reads them: one character per byte (latin1).
fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// A header value as Node's `http` writes it: one byte per character when every character
/// fits in one (latin1), else UTF-8 (which the core then judges as any client's bytes).
fn latin1_bytes(text: &str) -> Vec<u8> {
    match text.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect::<Option<Vec<u8>>>() {
        Some(bytes) => bytes,
        None => text.as_bytes().to_vec(),
    }
}

fn pairs(flat: &[String]) -> impl Iterator<Item = (&str, &str)> {
    flat.chunks_exact(2).map(|pair| (pair[0].as_str(), pair[1].as_str()))
}

/// A plain handler result: string → text/plain, Buffer → bytes, anything else → JSON (written
/// with the route's `shape` for its status, if it declares one). A function or a symbol has
/// no JSON form: it is refused by name, never sent as `null`.
fn plain(env: Env, value: raw::Value, shape: Shape<'_>) -> std::result::Result<Response, String> {
    match env.kind(value).map_err(|e| e.0.to_owned())? {
        raw::Kind::String => Ok(Response::text(env.as_string(value).map_err(|e| e.0.to_owned())?)),
        raw::Kind::Object => match env.bytes(value).map_err(|e| e.0.to_owned())? {
            Some(bytes) => Ok(Response::bytes(bytes)),
            None => Ok(Response::shaped_json(to_json::to_vec(env, value, shape)?)),
        },
        raw::Kind::Function => Err("a function".into()),
        raw::Kind::Symbol => Err("a symbol".into()),
        _ => Ok(Response::shaped_json(to_json::to_vec(env, value, shape)?)),
    }
}

fn log_entry(env: Env, record: &LogRecord) -> raw::Result<[raw::Value; 4]> {
    let mut fields = Vec::with_capacity(record.fields.len());
    for (name, value) in &record.fields {
        let value = match value {
            FieldValue::Int(v) => env.integer(*v)?,
            FieldValue::Uint(v) => env.unsigned(*v)?,
            FieldValue::Float(v) => env.number(*v)?,
            FieldValue::Bool(v) => env.boolean(*v)?,
            FieldValue::Text(v) => env.string(v)?,
        };
        fields.push((env.string(name)?, value));
    }
    Ok([env.string(record.level.name())?, env.string(record.target)?, env.string(&record.message)?, env.object_from(&fields)?])
}

/// WebSockets: what the glue's `WebSocket` (index.js) calls. Nothing here waits on the network.
#[napi]
impl NativeApp {
    /// `[code, reason, pongs, …messages]`: everything that arrived (text as strings, binary as
    /// Buffers), once the connection is over its close code and reason (else null, null), and
    /// the pongs' payloads since the last take (an Array of Buffers, else null). Taking nothing
    /// arms the next `[-4, socket]`.
    #[napi]
    pub fn socket_take(&self, env: napi::Env, id: f64) -> Result<Js> {
        let env = Env(env.raw());
        let Some(socket) = self.socket(id) else { return env.null().map(Js).map_err(js_error) };
        let taken = socket.take();
        let mut values = Vec::with_capacity(taken.messages.len() + 3);
        match &taken.end {
            Some(closed) => {
                values.push(env.int(closed.code as i64).map_err(js_error)?);
                values.push(env.string(&closed.reason).map_err(js_error)?);
                lock(&self.running).sockets.remove(&(id as u64));
            }
            None => values.extend([env.null().map_err(js_error)?, env.null().map_err(js_error)?]),
        }
        values.push(if taken.pongs.is_empty() {
            env.null().map_err(js_error)?
        } else {
            let pongs = taken.pongs.iter().map(|data| env.buffer(data)).collect::<std::result::Result<Vec<_>, _>>().map_err(js_error)?;
            shapes::array(env, &pongs).map_err(js_error)?
        });
        for message in &taken.messages {
            values.push(match message {
                Message::Text(text) => env.string(text),
                Message::Binary(data) => env.buffer(data),
            }.map_err(js_error)?);
        }
        shapes::array(env, &values).map(Js).map_err(js_error)
    }

    /// Queues a message: a string goes as text, a Buffer as binary. False when the socket is
    /// closed (the message is dropped, as `ws` does).
    #[napi]
    pub fn socket_send(&self, env: napi::Env, id: f64, data: Js) -> Result<bool> {
        let env = Env(env.raw());
        let Some(socket) = self.socket(id) else { return Ok(false) };
        let message = match env.kind(data.0) {
            Ok(raw::Kind::String) => env.as_string(data.0).map(|text| Message::Text(text.into())).map_err(|e| e.0.to_owned()),
            Ok(raw::Kind::Object) => env.bytes(data.0).map_err(|e| e.0.to_owned()).and_then(|b| b.map(|b| Message::Binary(b.into())).ok_or_else(|| "an object".to_owned())),
            Ok(kind) => Err(format!("{kind:?}").to_lowercase()),
            Err(e) => Err(e.0.to_owned()),
        };
        let message = message.map_err(|kind| Error::new(Status::InvalidArg, format!("TypeError|ferrule: cannot send {kind} on a WebSocket (send a string or a Buffer)")))?;
        Ok(socket.send(message).is_ok())
    }

    #[napi]
    pub fn socket_ping(&self, id: f64, data: Buffer) -> bool {
        self.socket(id).is_some_and(|socket| socket.ping(ferrule_core::bytes::Bytes::copy_from_slice(&data)).is_ok())
    }

    /// Throws for a close no server may send (the core's rule) as `ws` does: a TypeError for
    /// the code, a RangeError for a reason too long.
    #[napi]
    pub fn socket_close(&self, id: f64, code: f64, reason: String) -> Result<()> {
        let refused = |refused: UnsendableClose| {
            let kind = if matches!(refused, UnsendableClose::Code(_)) { "TypeError" } else { "RangeError" };
            Error::new(Status::InvalidArg, format!("{kind}|ferrule: {refused}"))
        };
        if code.fract() != 0.0 || !code.is_finite() || code.abs() > 1e15 {
            return Err(Error::new(Status::InvalidArg, format!("TypeError|ferrule: {code} is not a close code a server may send (a whole number)")));
        }
        match self.socket(id) {
            Some(socket) => socket.close(code as i64, &reason).map_err(refused),
            None => Ok(()),
        }
    }

    #[napi]
    pub fn socket_buffered(&self, id: f64) -> f64 {
        self.socket(id).map_or(0.0, |socket| socket.buffered() as f64)
    }

    /// The subprotocol chosen in the handshake, if any.
    #[napi]
    pub fn socket_protocol(&self, id: f64) -> Option<String> {
        self.socket(id)?.subprotocol().map(str::to_owned)
    }
}
