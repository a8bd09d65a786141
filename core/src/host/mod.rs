//! The host: what every binding needs and none should write again — the app's settings, the
//! route table and its checks, the listening socket, the runtime, the stop protocol, and the
//! lines a server prints when it starts and stops.
//!
//! A binding gives the host three things: its per-route data `R` (a Python callable and its
//! argument plan, a JavaScript route index, a Ruby handler's slot), how its interpreter is woken
//! ([`Wake`]), and conversions between its values and the core's. Everything else is decided
//! here once, so a feature added to the host (streaming, hooks, OpenAPI) reaches every language
//! without being written again in each.
//!
//! The stop protocol, the same for every binding: [`Serving::stop`] starts the drain (from any
//! thread, a signal handler's included); when it has ended and the runtime's threads are gone,
//! the outcome is recorded ([`Serving::outcome`]), the mailbox closes — which wakes its
//! consumer the way it is always woken — and [`Serving::stopped_fd`] becomes readable for
//! bindings that wait on a descriptor.

mod error;
mod handshake;
mod hooks;
mod in_process;
mod inbox;
mod pulled;
mod pushed;
mod routes;
mod serving;

pub use error::HostError;
pub use handshake::Handshake;
pub use hooks::{Catch, GroupId, Hooks, Phase};
pub use in_process::{Answer, Exchange, InProcess};
pub use inbox::Inbox;
pub use pulled::{Pull, PullOutcome, PullReply, Pulled, StreamId};
pub use pushed::{Answer as PushAnswer, PushBuffer};
pub use serving::{bind, Listen, Serving, Wake};

use crate::app::App;
use crate::bridge::Reply;
use crate::handler::Rejection;
use crate::log::{LogWake, Logs};
use crate::request::RequestData;
use crate::response::status_code;
use crate::shape::{ResponseShapes, Shape};
use crate::socket::Socket;
use crate::spec::{AppConfig, RouteSpec};
use http::{Method, StatusCode};
use hooks::Groups;
use routes::RouteTable;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// An app as a binding holds it: settings, then routes as they are declared, then serving.
pub struct Host<R> {
    /// Settings; the app-wide CORS and compression may still change until it serves
    /// ([`Host::configure_json`]).
    config: Mutex<AppConfig>,
    /// Where the app's log records go: standard error until the binding routes them to its
    /// language's logger ([`Host::route_logs`]).
    logs: Mutex<Logs>,
    table: Mutex<Table<R>>,
    /// The last server started; a second `serve` is refused while it runs.
    serving: Mutex<Weak<serving::Stopped>>,
}

struct Table<R> {
    routes: Vec<Arc<HostRoute<R>>>,
    checks: RouteTable,
    groups: Groups,
    statics: Vec<crate::spec::StaticSpec>,
    /// The security schemes of the app and of the routes so far (each route's checked as it comes).
    schemes: crate::openapi::security::Schemes,
}

/// The routes and groups as a server (or an in-process router) starts with them: each route
/// with the hooks its requests meet, resolved once.
pub(crate) struct Snapshot<R> {
    pub(crate) routes: Vec<(Arc<HostRoute<R>>, Arc<Hooks>)>,
    pub(crate) groups: Groups,
    pub(crate) statics: Vec<crate::spec::StaticSpec>,
}

/// A declared route, as the binding gets it back with each request.
pub struct HostRoute<R> {
    pub spec: RouteSpec,
    /// The status a plain (not explicitly built) return value is sent with.
    pub status: StatusCode,
    /// `GET /users/{id:int}`, for log lines.
    pub label: String,
    /// The group it was declared in ([`GroupId::APP`] for the app's own).
    pub group: GroupId,
    pub data: R,
    /// The declared responses' shapes, which the binding writes JSON results with.
    shapes: ResponseShapes,
    /// For a route declared as `/` in a group under a prefix (`/notes`): the prefix with a
    /// trailing slash (`/notes/`), where it is served too (see [`Host::declare_in`]).
    pub(crate) slash_twin: Option<String>,
}

impl<R> HostRoute<R> {
    /// The shape a JSON result sent with `status` (as the handler's language gave it) is
    /// written with: undeclared fields left out; [`Shape::any`] when the route declares nothing
    /// for that status, or the status is none (the response is refused later for that).
    pub fn response_shape(&self, status: i64) -> Shape<'_> {
        let declared = u16::try_from(status).ok().filter(|_| !self.shapes.is_empty()).and_then(|code| self.shapes.for_status(code));
        declared.unwrap_or(Shape::any())
    }
}

/// What the binding's interpreter is asked to do, in the order asked.
///
/// A request's job is boxed: it is moved into the mailbox, out of it with its batch, and into
/// the binding's loop, and each move of an unboxed one (672 bytes) copied the whole request.
/// Boxed, with the hand-over's future no longer holding the job, path-simple went from 34,860
/// to 34,271 instructions a request on Python `def` and from 48,131 to 47,665 on `async def`
/// (callgrind).
pub enum Job<R> {
    /// Run a route's handler: answer through [`Inbox::answer`]. For a WebSocket route
    /// ([`Call::handshake`]), the handshake of one with `on_request` or `pre_handler` hooks:
    /// run them, and answer 101 where the handler would run, to let the upgrade go on (its
    /// [`Job::Open`] follows).
    Call(Box<Call<R>>),
    /// A request the core refused (or no route takes) that the language must see: run its
    /// `on_request` hooks, then its exception handlers on the refusal, then its `on_send` hooks;
    /// answer through [`Inbox::answer`] (see [`hooks`]).
    Reject(Box<Reject<R>>),
    /// Produce the next chunks of a stream a handler returned ([`Inbox::stream`]): answer
    /// through [`Inbox::answer_pull`].
    Pull(Pull),
    /// A stream's client is gone before its end: close the producer (so its `finally`/`ensure`
    /// runs) and forget it. Not sent for a stream that ended or failed: the binding has let
    /// go of it then.
    Release(StreamId),
    /// A WebSocket route's connection is open: run its handler with the socket, filed under
    /// [`Socket::id`]. When the handler is done the binding closes the socket: 1000 when it
    /// returned, 1011 (and a log line) when it raised.
    Open(Box<Open<R>>),
    /// The handshake under this id ([`Handshake::id`]) will never be a socket: forget what was
    /// kept for it. Posted once the binding has let go of its call, for every handshake its
    /// hooks saw that did not open, the refused ones included.
    Unopened(u64),
    /// The socket filed under this id has messages or its end waiting: [`Socket::take`] them.
    /// Sent only after a take that found nothing, so one is in flight per socket at most.
    Socket(u64),
    /// The client of the request the binding watches under this token left before its answer
    /// ([`Inbox::watch_departure`]): abort what its handler waits on (Node's `ctx.signal`).
    /// Check the request is still gone ([`crate::bridge::is_abandoned`]) before acting: the
    /// token may name a request answered and replaced since.
    Departed(u64),
}

/// A WebSocket connection for the binding's interpreter.
pub struct Open<R> {
    pub route: Arc<HostRoute<R>>,
    pub request: RequestData,
    pub socket: Socket,
    /// The [`Handshake::id`] of its handshake, when the hooks saw it: what the binding kept
    /// then is its handler's.
    pub handshake: Option<u64>,
}

/// One request for the binding's interpreter: answer it through [`Inbox::answer`].
pub struct Call<R> {
    pub route: Arc<HostRoute<R>>,
    /// The hooks it meets, in order; empty for most apps (the binding's plain path).
    pub hooks: Arc<Hooks>,
    pub request: RequestData,
    pub reply: Reply,
    /// For a WebSocket's handshake, what the binding keeps the hooks' values under when it lets
    /// the upgrade go on. Hold it until answered (see [`Handshake`]).
    pub handshake: Option<Arc<Handshake<R>>>,
}

/// A refused request for the binding's interpreter (see [`Job::Reject`]).
pub struct Reject<R> {
    /// The route whose checks refused it; `None` when no route takes it (404, 405).
    pub route: Option<Arc<HostRoute<R>>>,
    pub hooks: Arc<Hooks>,
    /// What it carried as sent; no typed values.
    pub request: RequestData,
    /// The core's answer, sent when the language's handlers leave it be.
    pub rejection: Rejection,
    pub reply: Reply,
}

/// Locks a host-side mutex. Every critical section behind these locks is a plain read, push or
/// swap, so a panic elsewhere cannot leave the data half-changed: a poisoned lock is still
/// sound, and refusing it would only turn one failure into many.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl<R: Send + Sync + 'static> Host<R> {
    pub fn new(config: AppConfig) -> Result<Self, HostError> {
        config.check().map_err(HostError::Settings)?;
        let schemes = crate::openapi::security::Schemes::of_app(&config);
        Ok(Host {
            logs: Mutex::new(Logs::stderr(config.log_level)),
            config: Mutex::new(config),
            table: Mutex::new(Table {
                routes: Vec::new(),
                checks: RouteTable::default(),
                groups: Groups::default(),
                statics: Vec::new(),
                schemes,
            }),
            serving: Mutex::new(Weak::new()),
        })
    }

    /// Settings as the core's `AppConfig` JSON, as bindings build it from their own options.
    pub fn from_json(config_json: &str) -> Result<Self, HostError> {
        Host::new(AppConfig::from_json(config_json).map_err(HostError::Settings)?)
    }

    /// The settings as they stand.
    pub fn config(&self) -> AppConfig {
        lock(&self.config).clone()
    }

    /// Sets the app-wide `cors`, `compression` or `allowed_hosts` (with `www_redirect`) after the
    /// app was made, from a JSON object holding any of them (`null` takes one away): Starlette's
    /// `app.add_middleware`, which apps call after `App()`, often below their routes. The next
    /// server or in-process
    /// router takes it; one already serving would not, so that is refused, as is any other
    /// setting (those shape routes as they are declared). Checked as `App()` checks them.
    pub fn configure_json(&self, settings_json: &str) -> Result<(), HostError> {
        let settings: serde_json::Map<String, serde_json::Value> = serde_json::from_str(settings_json).map_err(|e| HostError::Settings(format!("settings: {e}")))?;
        if lock(&self.serving).upgrade().is_some_and(|stopped| !stopped.is_done()) {
            return Err(HostError::Settings("the app is serving: its middleware settings are set before it starts".into()));
        }
        let mut config = self.config();
        for (name, value) in settings {
            let read = |e: serde_json::Error| HostError::Settings(format!("{name}: {e}"));
            match name.as_str() {
                "cors" => config.cors = serde_json::from_value(value).map_err(read)?,
                "compression" => config.compression = serde_json::from_value(value).map_err(read)?,
                "allowed_hosts" => config.allowed_hosts = serde_json::from_value(value).map_err(read)?,
                "www_redirect" => config.www_redirect = serde_json::from_value(value).map_err(read)?,
                _ => return Err(HostError::Settings(format!("{name} is set when the app is made; only cors, compression, allowed_hosts and www_redirect may be set later"))),
            }
        }
        config.check().map_err(HostError::Settings)?;
        *lock(&self.config) = config;
        Ok(())
    }

    /// Declares a route: its template, method, schemas and options are compiled and its place
    /// among the routes so far is checked now, so a mistake is reported by the declaration
    /// that made it. `status` is what a plain return value is sent with.
    pub fn declare(&self, spec: RouteSpec, status: i64, data: R) -> Result<Arc<HostRoute<R>>, HostError> {
        self.declare_in(GroupId::APP, spec, status, data)
    }

    /// [`Host::declare`] in `group`: the route's path is under the group's prefix, and its
    /// requests meet the group's hooks.
    ///
    /// A route declared as `/` in a group under a prefix is served at the prefix and at the
    /// prefix with a slash (`/notes` and `/notes/`), as Fastify's `prefixTrailingSlash: 'both'`
    /// (its default) serves it and as FastAPI's router serves `@router.get("/")` (at
    /// `/notes/`). Declared as `""`, only the prefix. The document names the prefix alone.
    pub fn declare_in(&self, group: GroupId, mut spec: RouteSpec, status: i64, data: R) -> Result<Arc<HostRoute<R>>, HostError> {
        spec.read_nullable();
        let declared_root = spec.path == "/" && group != GroupId::APP;
        let prefix = lock(&self.table).groups.path(group, "").map_err(HostError::Route)?;
        spec.path = lock(&self.table).groups.path(group, &spec.path).map_err(HostError::Route)?;
        // A group's prefix comes before its routes' expressions as before their templates; an
        // expression anchored at the start (`\A/x`, `^/x`: Ruby's read Sinatra patterns are)
        // is anchored after the prefix instead (found on review: such a route never matched).
        if let Some(pattern) = spec.pattern.as_mut().filter(|_| !prefix.is_empty()) {
            let prefix = crate::canonical_path(&prefix).unwrap_or(prefix);
            let unanchored = pattern.strip_prefix(r"\A").or_else(|| pattern.strip_prefix('^')).unwrap_or(pattern);
            *pattern = format!("{}(?:{unanchored})", regex::escape(&prefix));
        }
        let slash_twin = (declared_root && spec.path != "/").then(|| format!("{}/", spec.path));
        let label = format!("{} {}", spec.method.to_ascii_uppercase(), spec.path);
        let status = status_code(status).map_err(|reason| HostError::Route(format!("{label}: status {reason}")))?;
        App::with_config(self.config()).check_route(&spec).map_err(|e| HostError::Route(e.0))?;
        let method = Method::from_bytes(spec.method.to_ascii_uppercase().as_bytes()).map_err(|_| HostError::Route(format!("{label}: invalid method")))?;
        let parsed = crate::path::PathTemplate::of_route(&spec).map_err(HostError::Route)?;
        let mut table = lock(&self.table);
        table.checks.admit(&method, &spec.path, &parsed).map_err(HostError::Route)?;
        let shapes = ResponseShapes::compile(&spec, crate::shape::Required::for_config(&self.config())).map_err(|e| HostError::Route(format!("{label}: {e}")))?;
        // Last of the checks: the schemes it brings are kept only for a route that is declared.
        table.schemes.admit(&spec).map_err(HostError::Route)?;
        let route = Arc::new(HostRoute { spec, status, label, group, data, shapes, slash_twin });
        table.routes.push(route.clone());
        Ok(route)
    }

    /// [`Host::declare_in`] with the route as the core's `RouteSpec` JSON.
    pub fn declare_json(&self, group: GroupId, spec_json: &str, status: i64, data: R) -> Result<Arc<HostRoute<R>>, HostError> {
        let spec: RouteSpec = crate::spec::from_json_named(spec_json).map_err(|e| HostError::Route(format!("{}: {e}", route_named_in(spec_json))))?;
        self.declare_in(group, spec, status, data)
    }

    /// A group of routes under `parent`, served under `prefix` (`/admin`), with hooks of its
    /// own besides its parents' (see [`hooks`]).
    pub fn group(&self, parent: GroupId, prefix: &str) -> Result<GroupId, HostError> {
        lock(&self.table).groups.add(parent, prefix).map_err(HostError::Route)
    }

    /// A group for one route's own hooks under `parent`, at its prefix: the route is declared
    /// in it and its hooks registered on it; they run after its parents', and never for a
    /// request no route matched.
    pub fn route_group(&self, parent: GroupId) -> Result<GroupId, HostError> {
        lock(&self.table).groups.add_for_route(parent).map_err(HostError::Route)
    }

    /// Registers the binding's hook `slot` (its own numbering) to run at `phase` for the
    /// requests of `group` and the groups under it. Taken into account by the next server.
    pub fn hook(&self, group: GroupId, phase: Phase, slot: u32) -> Result<(), HostError> {
        lock(&self.table).groups.hook(group, phase, slot).map_err(HostError::Route)
    }

    /// The binding's exception handlers take requests of `group` the core refuses with this
    /// status (or all): they are handed over as [`Job::Reject`] instead of answered by the core.
    pub fn catch(&self, group: GroupId, catch: Catch) -> Result<(), HostError> {
        lock(&self.table).groups.catch(group, catch).map_err(HostError::Route)
    }

    /// The routes with their resolved hooks, and the groups, as a server starts with them.
    fn snapshot(&self) -> Snapshot<R> {
        let table = lock(&self.table);
        let routes = table.routes.iter().map(|route| (route.clone(), table.groups.resolve(route.group))).collect();
        Snapshot { routes, groups: table.groups.clone(), statics: table.statics.clone() }
    }

    /// Serves a directory under a prefix (see [`crate::static_files`]); a directory that cannot
    /// be opened, or a prefix mounted twice, is refused now.
    pub fn mount_static(&self, spec: crate::spec::StaticSpec) -> Result<(), HostError> {
        let mut table = lock(&self.table);
        let mut probe = App::with_config(self.config());
        for mounted in table.statics.iter().chain([&spec]) {
            probe.mount_static(mounted.clone()).map_err(|e| HostError::Route(e.0))?;
        }
        table.statics.push(spec);
        Ok(())
    }

    /// [`Host::mount_static`] with the mount as the core's `StaticSpec` JSON.
    pub fn mount_static_json(&self, spec_json: &str) -> Result<(), HostError> {
        let spec = serde_json::from_str(spec_json).map_err(|e| HostError::Route(format!("static files: {e}")))?;
        self.mount_static(spec)
    }

    /// Sends the app's log records (at its `log_level`) to the binding's logger from now on:
    /// queued, and the binding woken as `wake` says to drain them ([`Logs::take`]). Servers
    /// already started keep writing where they did.
    pub fn route_logs(&self, wake: LogWake) -> Result<Logs, HostError> {
        let logs = Logs::queued(self.config().log_level, wake).map_err(|e| HostError::Runtime(format!("eventfd: {e}")))?;
        *lock(&self.logs) = logs.clone();
        Ok(logs)
    }

    /// Sends the app's log records to standard error again, letting go of the binding's queue
    /// (and whatever its waker holds: Node's thread-safe function keeps the event loop alive).
    pub fn unroute_logs(&self) {
        *lock(&self.logs) = Logs::stderr(self.config().log_level);
    }

    /// Where the app's log records go now.
    pub fn logs(&self) -> Logs {
        lock(&self.logs).clone()
    }

    /// The OpenAPI document of the routes declared so far (the one the server will serve at
    /// `openapi_url`), as indented JSON for a binding to print or parse.
    pub fn openapi(&self) -> Result<String, HostError> {
        let routes = self.routes();
        let document = crate::openapi::document(&self.config(), routes.iter().map(|route| (&route.spec, route.status.as_u16()))).map_err(HostError::Route)?;
        let mut text = serde_json::to_string_pretty(&document).map_err(|e| HostError::Route(format!("the OpenAPI document: {e}")))?;
        text.push('\n');
        Ok(text)
    }

    /// The routes declared so far, in order.
    pub fn routes(&self) -> Vec<Arc<HostRoute<R>>> {
        lock(&self.table).routes.clone()
    }

    /// Starts serving every declared route on a runtime of its own (`threads` workers, one per
    /// usable CPU by default); requests reach the binding as [`Call`]s in the returned server's
    /// mailbox, woken as `wake` says. `side` names the interpreter in log lines ("the Python
    /// event loop"). Returns once listening.
    pub fn serve(&self, listen: Listen<'_>, threads: Option<usize>, wake: Wake, side: &'static str) -> Result<Arc<Serving<R>>, HostError> {
        let mut last = lock(&self.serving);
        if last.upgrade().is_some_and(|stopped| !stopped.is_done()) {
            return Err(HostError::AlreadyServing);
        }
        let serving = Serving::start(&self.config(), &self.snapshot(), &self.logs(), listen, threads, wake, side)?;
        *last = serving.stopped_weak();
        Ok(serving)
    }

    /// The declared routes served without a socket (see [`InProcess`]), its calls waking the
    /// binding's interpreter as `wake` says; built once per call, so routes declared later
    /// need a new one.
    pub fn in_process(&self, wake: Wake) -> Result<InProcess<R>, HostError> {
        InProcess::new(&self.config(), &self.snapshot(), &self.logs(), wake)
    }
}

#[cfg(test)]
mod tests;

/// The route a spec that did not parse declares (`GET /items`), for its error: the option it
/// got wrong is named by [`crate::spec::from_json_named`], the route here.
fn route_named_in(spec_json: &str) -> String {
    let spec: serde_json::Value = serde_json::from_str(spec_json).unwrap_or_default();
    match (spec["method"].as_str(), spec["path"].as_str()) {
        (Some(method), Some(path)) => format!("{method} {path}"),
        _ => "route".to_owned(),
    }
}
