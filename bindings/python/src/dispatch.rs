//! Running jobs on the thread of the asyncio event loop: the same for a server (`ServerHandle`)
//! and an in-process test client (`InProcessHandle`), which differ only in where the jobs come
//! from and how the loop learns of them.
//!
//! The loop thread calls `dispatch()` when the mailbox's doorbell rings, and runs every
//! waiting job while it holds the GIL anyway: sync handlers run right there, async ones become
//! tasks on that same loop, but for those whose code cannot wait, which run right there too
//! (`crate::inline_run`). What runs right there runs in a context of its own
//! (`crate::request_context`). Results are serialised on the loop thread and sent back through
//! the inbox's reply batch.
//!
//! A request whose route has hooks (or whose app has exception handlers) runs its whole chain
//! through `ferrule.hooks`: right here when every function in it is a `def`, else as a task;
//! so does a refused request the language must see (`Job::Reject`).
//!
//! An async request's task (`crate::handler_task::HandlerRun`) builds the handler's arguments,
//! awaits it and serialises its result itself. Building every waiting request's objects in
//! `dispatch()` and serialising later, as a done-callback would, keeps dozens of request bodies
//! alive at once under load; measured on json-large at 50 connections that cost 35 % more CPU
//! per request than the same handler as `def`, against none at 1 connection.

use crate::convert::to_python;
use crate::handler_task::{Ended, HandlerRun, TaskStarter};
use crate::inline_run::{self, StandIns};
use crate::request::Request;
use crate::request_context;
use crate::response::{self, ResultTypes};
use crate::route::PyRoute;
use crate::socket::NativeSocket;
use ferrule_core::bridge::{is_abandoned, Reply};
use ferrule_core::host::{lock, Call, Handshake, Hooks, HostRoute, Inbox, Job, Open, Reject};
use ferrule_core::http::StatusCode;
use ferrule_core::{Rejection, RequestData};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

type Route = Arc<HostRoute<PyRoute>>;

pub struct Dispatcher {
    inbox: Inbox<PyRoute>,
    types: Arc<ResultTypes>,
    /// Starts handlers' tasks on the asyncio loop this dispatcher's jobs run on.
    tasks: TaskStarter,
    /// The current task of `async def` handlers that cannot wait, by route.
    stand_ins: StandIns,
    /// See [`Dispatcher::take_fatal`].
    fatal: Mutex<Option<PyErr>>,
    /// An in-process client's: the last exception a handler raised, which its test raises
    /// again. `None` for a server, whose handlers' exceptions only go to the log.
    raised: Option<RaisedSlot>,
    /// The app's `ferrule.hooks.Registry`: its hooks by slot, its exception handlers.
    registry: Py<PyAny>,
    /// Every request runs through a chain (the app has exception handlers, which see what
    /// any handler raises), not only those whose route has hooks.
    every_request_chained: bool,
    /// Each route's `ferrule.hooks.Chain`, by its resolved hooks (one `Arc` per route for the
    /// server's life), built on first use.
    chains: Mutex<HashMap<usize, Arc<Chain>>>,
    /// The answers of tasks go back once per turn of the loop (see [`Dispatcher::flush_soon`]).
    flush_answers: Py<FlushAnswers>,
    flush_scheduled: Arc<AtomicBool>,
    /// The `request.state` of each WebSocket handshake its hooks let through, by its
    /// [`Handshake::id`], until its socket opens (then its `ws.state`) or never will.
    admitted: Mutex<HashMap<u64, Py<PyAny>>>,
}

/// An in-process client's last exception from a handler or a stream's producer.
pub type RaisedSlot = std::sync::Arc<Mutex<Option<Py<PyAny>>>>;

/// Hands the answers pushed since it was scheduled to the runtime; the loop calls it.
#[pyclass(frozen)]
struct FlushAnswers {
    inbox: Inbox<PyRoute>,
    scheduled: Arc<AtomicBool>,
}

#[pymethods]
impl FlushAnswers {
    fn __call__(&self) {
        self.scheduled.store(false, Ordering::Relaxed);
        self.inbox.flush();
    }
}

/// A route's `ferrule.hooks.Chain`, with what a chain of `def`s needs from it at hand.
struct Chain {
    object: Py<PyAny>,
    /// Every function in it is a `def` (and it has no middleware).
    sync: bool,
    /// The `on_request` hooks, then the `pre_handler` ones.
    on_request: Vec<Py<PyAny>>,
    pre_handler: Vec<Py<PyAny>>,
    on_send: bool,
}

impl Dispatcher {
    pub fn new(py: Python<'_>, inbox: Inbox<PyRoute>, types: Arc<ResultTypes>, event_loop: Py<PyAny>, registry: Py<PyAny>, keeps_raised: bool) -> PyResult<Self> {
        let every_request_chained = registry.bind(py).getattr("has_handlers")?.is_truthy()?;
        let flush_scheduled = Arc::new(AtomicBool::new(false));
        let flush_answers = Py::new(py, FlushAnswers { inbox: inbox.clone(), scheduled: flush_scheduled.clone() })?;
        Ok(Dispatcher {
            flush_answers,
            flush_scheduled,
            inbox,
            types,
            tasks: TaskStarter::new(event_loop.bind(py))?,
            stand_ins: StandIns::default(),
            fatal: Mutex::new(None),
            raised: keeps_raised.then(RaisedSlot::default),
            registry,
            every_request_chained,
            chains: Mutex::new(HashMap::new()),
            admitted: Mutex::new(HashMap::new()),
        })
    }

    pub fn inbox(&self) -> &Inbox<PyRoute> {
        &self.inbox
    }

    pub fn types(&self) -> &ResultTypes {
        &self.types
    }

    /// The asyncio loop this dispatcher's jobs run on.
    fn event_loop<'py>(&self, py: Python<'py>) -> &Bound<'py, PyAny> {
        self.tasks.event_loop(py)
    }

    /// What starts tasks on that loop.
    pub fn tasks(&self) -> &TaskStarter {
        &self.tasks
    }

    /// Where an in-process client's exceptions are kept, for a stream's producer that raises
    /// after its handler returned.
    pub fn raised_slot(&self) -> Option<RaisedSlot> {
        self.raised.clone()
    }

    /// Keeps `exception`, raised by a handler, for an in-process client's test.
    pub fn keep_raised(&self, py: Python<'_>, exception: &Bound<'_, PyAny>) {
        if let Some(raised) = &self.raised {
            *lock(raised) = Some(exception.clone().unbind());
            let _ = py;
        }
    }

    /// Sends a task's answer, with those of every task that finishes in the same turn of the
    /// loop. A flush wakes the runtime's delivery task, which on the loop's core preempts the
    /// loop: flushed one answer at a time, an async json-large request cost a context switch
    /// each way (1.03 per request, against 0.02 for the same handler as `def`).
    pub fn flush_soon(&self, py: Python<'_>) {
        if self.flush_scheduled.swap(true, Ordering::Relaxed) {
            return;
        }
        let scheduled = self.event_loop(py).call_method1(pyo3::intern!(py, "call_soon"), (self.flush_answers.clone_ref(py),));
        if scheduled.is_err() {
            // A closed loop runs nothing more: send the answer now.
            self.flush_scheduled.store(false, Ordering::Relaxed);
            self.inbox.flush();
        }
    }

    /// The exception kept since the last call, if any.
    pub fn take_raised(&self) -> Option<Py<PyAny>> {
        self.raised.as_ref().and_then(|raised| lock(raised).take())
    }

    /// Runs every job of a batch, then sends their answers.
    ///
    /// The tasks a batch starts take their first step in the loop's next turn, in the order
    /// they were made. A flush queued after the last of them runs in that same turn, so the
    /// answers of handlers that return without waiting go back with it; queued by the first
    /// answer instead, it would run a turn later.
    pub fn run_jobs(self: &Arc<Self>, py: Python<'_>, jobs: Vec<Job<PyRoute>>) {
        let mut started_tasks = false;
        for job in jobs {
            started_tasks |= match job {
                Job::Call(call) if call.hooks.is_empty() && !self.every_request_chained && !call.route.data.chained => {
                    let Call { route, request, reply, .. } = *call;
                    self.run(py, route, request, reply)
                }
                Job::Call(call) => {
                    let Call { route, hooks, request, reply, handshake } = *call;
                    self.run_chain(py, Some(route), &hooks, request, reply, None, handshake)
                }
                Job::Reject(reject) => {
                    let Reject { route, hooks, request, rejection, reply } = *reject;
                    self.run_chain(py, route, &hooks, request, reply, Some(rejection), None)
                }
                Job::Pull(pull) => {
                    self.types.streams.pull(py, &self.inbox, pull);
                    false
                }
                Job::Release(stream) => {
                    self.types.streams.release(py, stream);
                    false
                }
                Job::Open(open) => {
                    self.open(py, *open);
                    false
                }
                Job::Socket(id) => {
                    arrived(py, id);
                    false
                }
                Job::Unopened(handshake) => {
                    // Let go of outside the lock: a `__del__` may run.
                    let forgotten = lock(&self.admitted).remove(&handshake);
                    drop(forgotten);
                    false
                }
                // Python asks whether a client left (`request.is_disconnected()`); it watches none.
                Job::Departed(_) => false,
            };
        }
        self.inbox.flush();
        if started_tasks {
            self.flush_soon(py);
        }
    }

    /// Runs one request's handler; `true` when it went on the loop as a task.
    fn run(self: &Arc<Self>, py: Python<'_>, route: Route, request: RequestData, reply: Reply) -> bool {
        if is_abandoned(&reply) {
            // Its deadline passed while an earlier handler ran: nobody waits for this one.
            return false;
        }
        if route.data.is_async && !route.data.cannot_wait {
            return self.schedule(py, route, request, reply);
        }
        request_context::isolated(py, || {
            let result = if route.data.is_async {
                let Some(entered) = self.stand_ins.enter(py, &self.tasks, &route) else {
                    return self.schedule(py, route, request, reply);
                };
                let result = inline_run::run_to_end(py, &route, request);
                drop(entered);
                match Ended::of(py, result) {
                    Ended::Answer(result) => result,
                    Ended::Cancelled(_) => return false,
                    Ended::Fatal(error) => {
                        self.inbox.answer(reply, response::from_exception(py, self, &route, error.clone_ref(py)));
                        *lock(&self.fatal) = Some(error);
                        return false;
                    }
                }
            } else {
                route.data.call(py, request, None)
            };
            let outcome = match result {
                Ok(result) => response::from_result(py, self, &route, &result),
                Err(error) => response::from_exception(py, self, &route, error),
            };
            self.inbox.answer(reply, outcome);
            false
        })
    }

    /// What a handler run at once raised that must stop the loop (`SystemExit`,
    /// `KeyboardInterrupt`), for `dispatch()` to raise once its batch is answered.
    pub fn take_fatal(&self) -> Option<PyErr> {
        lock(&self.fatal).take()
    }

    /// Cancels the stand-in tasks of handlers run at once: no request will come any more.
    pub fn retire_stand_ins(&self, py: Python<'_>) {
        self.stand_ins.retire_all(py);
    }

    /// Starts a task on the loop that runs the request from start to reply
    /// ([`HandlerRun`]: the handler's arguments are built when the task first steps).
    fn schedule(self: &Arc<Self>, py: Python<'_>, route: Route, request: RequestData, reply: Reply) -> bool {
        let name = route.data.task_name(py, &route.label);
        let run = HandlerRun::new(PendingCall::new(self, Some(route), request, reply, None, true));
        // If this fails, dropping `run` drops the reply, which the waiting request sees as a
        // failed handler.
        let Ok(run) = Bound::new(py, run) else { return false };
        self.start_task(py, run.get().call(), Ok(run.clone().into_any()), &name)
    }

    /// Runs a request with its hooks (or a refused one the language must see, or a
    /// WebSocket's `handshake`) through `ferrule.hooks`: at once when its chain and handler are
    /// all `def`s, else as a task (then `true`).
    #[allow(clippy::too_many_arguments)]
    fn run_chain(
        self: &Arc<Self>,
        py: Python<'_>,
        route: Option<Route>,
        hooks: &Arc<Hooks>,
        request: RequestData,
        reply: Reply,
        rejection: Option<Rejection>,
        handshake: Option<Arc<Handshake<PyRoute>>>,
    ) -> bool {
        if is_abandoned(&reply) {
            return false;
        }
        // A WebSocket's handshake runs its hooks as a task: its handler is an `async def`, and
        // `ferrule.hooks.run_async` is where a handshake leaves out what is not for it.
        let runs_async = handshake.is_some() || (rejection.is_none() && route.as_ref().is_some_and(|r| r.data.is_async));
        let chain = match self.chain(py, hooks) {
            Ok(chain) => chain,
            Err(error) => {
                let label = route.as_ref().map_or_else(|| format!("{} {}", request.method, request.path), |r| r.label.clone());
                self.inbox.answer(reply, response::from_exception_in(py, self, &label, error));
                return false;
            }
        };
        let sync = !runs_async && chain.sync;
        // A chain run here answers within this batch, which `run_jobs` sends at its end; a task
        // answers later, on its own.
        let call = PendingCall { handshake, ..PendingCall::new(self, route, request, reply, rejection, !sync) };
        let Ok(call) = Bound::new(py, call) else { return false };
        if sync {
            request_context::isolated(py, || run_sync_chain(py, &chain, &call));
            false
        } else {
            let coroutine = RUN_ASYNC.import(py, "ferrule.hooks", "run_async").and_then(|run| run.call1((chain.object.bind(py), &call)));
            let name = match &call.get().route {
                Some(route) => route.data.task_name(py, &route.label),
                None => PyString::new(py, call.get().label()),
            };
            self.start_task(py, call.get(), coroutine, &name)
        }
    }

    /// The route's `ferrule.hooks.Chain` for `hooks`, built once.
    fn chain(&self, py: Python<'_>, hooks: &Arc<Hooks>) -> PyResult<Arc<Chain>> {
        let key = Arc::as_ptr(hooks) as usize;
        if let Some(chain) = lock(&self.chains).get(&key) {
            return Ok(chain.clone());
        }
        let lists = [&hooks.on_request, &hooks.pre_handler, &hooks.on_send, &hooks.on_error].map(|slots| slots.clone());
        let object = self.registry.bind(py).call_method1(pyo3::intern!(py, "chain"), (lists[0].clone(), lists[1].clone(), lists[2].clone(), lists[3].clone()))?;
        let functions = |name: &str| -> PyResult<Vec<Py<PyAny>>> { object.getattr(name)?.try_iter()?.map(|f| f.map(Bound::unbind)).collect() };
        let chain = Arc::new(Chain {
            sync: object.getattr("sync")?.is_truthy()?,
            on_request: functions("on_request")?,
            pre_handler: functions("pre_handler")?,
            on_send: object.getattr("on_send")?.is_truthy()?,
            object: object.unbind(),
        });
        lock(&self.chains).insert(key, chain.clone());
        Ok(chain)
    }

    /// Runs `coroutine` (made for `call`) as a task named `name` on the loop; past the
    /// request's deadline it is cancelled rather than left running for nobody
    /// (`ferrule.server.cancel_at_deadline`). `true` when the task was made.
    fn start_task(&self, py: Python<'_>, call: &PendingCall, coroutine: PyResult<Bound<'_, PyAny>>, name: &Bound<'_, PyString>) -> bool {
        let deadline = request_deadline(call);
        let event_loop = self.event_loop(py);
        let task = coroutine.and_then(|coroutine| self.tasks.start(coroutine, name));
        let made = task.is_ok();
        let started = task.and_then(|task| match deadline {
            // Past its deadline the request has its 504: the task is cancelled rather than
            // left running for nobody (`ferrule.server.cancel_at_deadline`).
            Some(seconds) => CANCEL_AT_DEADLINE
                .import(py, "ferrule.server", "cancel_at_deadline")
                .and_then(|cancel| cancel.call1((event_loop, task, seconds)))
                .map(drop),
            None => Ok(()),
        });
        if let Err(error) = started {
            call.answer(py, Err(error));
        }
        made
    }

    /// Starts a WebSocket route's handler as a task (`ferrule.websocket.converse`), with its
    /// `WebSocket` filed under the socket's id for the wake-ups to come.
    fn open(&self, py: Python<'_>, Open { route, request, socket, handshake }: Open<PyRoute>) {
        let native = NativeSocket::new(socket.clone(), route.label.clone());
        let state = handshake.and_then(|id| lock(&self.admitted).remove(&id));
        let started = CONVERSE.import(py, "ferrule.websocket", "converse").and_then(|converse| {
            // The socket carries its handshake's request, for Starlette's `ws.headers`, `ws.url`,
            // `ws.query_params`, `ws.cookies`, `ws.client`: one object per connection.
            let handshake = Request::new(request, route.data.owner.as_ref().map(|owner| owner.clone_ref(py)));
            let handshake = Bound::new(py, match state {
                Some(state) => handshake.with_state(py, state),
                None => handshake,
            })?;
            let ws = WEBSOCKET.import(py, "ferrule.websocket", "WebSocket")?.call1((Bound::new(py, native)?, &handshake))?;
            let handler = route.data.call_on_socket(py, &handshake, &ws);
            let conversation = match handler {
                Ok(coroutine) => converse.call1((&ws, coroutine))?,
                Err(error) => converse.call1((&ws, py.None(), error.into_value(py)))?,
            };
            self.tasks.start(conversation, &route.data.task_name(py, &route.label)).map(drop)
        });
        if let Err(error) = started {
            error.display(py);
            socket.close_with(ferrule_core::socket::Closed::new(1011, ""));
        }
    }
}

/// A chain of `def`s, run here as `ferrule.hooks` would run it: the `on_request` hooks, the
/// `pre_handler` ones (not for a refused request), the first that returns something answering,
/// else the handler. What is left when something raised or `on_send` hooks must see the
/// response is `ferrule.hooks.finish_sync`'s; a plain answer is sent from here. Running the
/// common case in Rust rather than in a Python frame of its own took a third off the cost of
/// one request hook (1.6 µs of 13 µs per request on path-simple, measured as the benchmarks'
/// `hook` feature does).
fn run_sync_chain(py: Python<'_>, chain: &Chain, object: &Bound<'_, PendingCall>) {
    let call = object.get();
    let request = match call.request(py) {
        Ok(request) => request,
        Err(error) => return call.answer(py, Err(error)),
    };
    let pre_handler = if call.rejection.is_none() { &chain.pre_handler[..] } else { &[] };
    let mut outcome = None;
    for hook in chain.on_request.iter().chain(pre_handler) {
        match hook.bind(py).call1((&request,)) {
            Ok(answer) if answer.is_none() => {}
            answered => {
                outcome = Some(answered);
                break;
            }
        }
    }
    let outcome = outcome.unwrap_or_else(|| call.handle(py, &request));
    match outcome {
        Ok(response) if !chain.on_send => {
            // A generator dependency's teardown, once the response has gone; for a stream, once
            // its producer has ended (`close_with_stream` wraps it before the core takes it).
            let has_state = request.get().has_state(py);
            let closes_with_stream = has_state
                && CLOSE_WITH_STREAM
                    .import(py, "ferrule.dependencies", "close_with_stream")
                    .and_then(|wrap| wrap.call1((&response, &request))?.extract::<bool>())
                    .unwrap_or_else(|error| {
                        error.display(py);
                        false
                    });
            call.answer(py, Ok(response));
            if has_state && !closes_with_stream {
                if let Err(error) = CLOSE_AFTER.import(py, "ferrule.dependencies", "close_after").and_then(|close| close.call1((&request,))) {
                    error.display(py);
                }
            }
        }
        outcome => {
            let (value, failed) = match outcome {
                Ok(response) => (response, false),
                Err(error) => (error.into_value(py).into_bound(py).into_any(), true),
            };
            let finished = FINISH_SYNC.import(py, "ferrule.hooks", "finish_sync").and_then(|finish| finish.call1((chain.object.bind(py), object, &request, value, failed)));
            if let Err(error) = finished {
                call.answer(py, Err(error));
            }
        }
    }
}

static FINISH_SYNC: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static CLOSE_AFTER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static CLOSE_WITH_STREAM: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static RUN_ASYNC: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static VALIDATION_ERROR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static CANCEL_AT_DEADLINE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static CONVERSE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static WEBSOCKET: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static ARRIVED: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Wakes the `WebSocket` filed under `id` (`ferrule.websocket.arrived`).
fn arrived(py: Python<'_>, id: u64) {
    if let Err(error) = ARRIVED.import(py, "ferrule.websocket", "arrived").and_then(|arrived| arrived.call1((id,))) {
        error.display(py);
    }
}

/// Seconds left before the request's deadline, if it has one.
fn request_deadline(call: &PendingCall) -> Option<f64> {
    let state = lock(&call.state);
    let deadline = state.request.as_ref()?.deadline?;
    Some(deadline.saturating_duration_since(std::time::Instant::now()).as_secs_f64())
}

/// One request the loop answers later than it arrived: an async handler's
/// (`crate::handler_task::HandlerRun`: `start()` calls the handler with its arguments, then
/// `answer()` sends the reply), or a chain of hooks (`ferrule.hooks`: `request()`,
/// `handle(request)`, `finish`/`fail`).
#[pyclass(module = "ferrule._ferrule", frozen)]
pub struct PendingCall {
    route: Option<Route>,
    /// What a plain result is sent with: the route's status, or a refusal's.
    status: StatusCode,
    /// The request as the log names it, when it has no route (a route's is its label).
    unrouted_label: String,
    dispatcher: Arc<Dispatcher>,
    /// Shared with the `Request` as its [`ClientWatch`].
    state: Arc<Mutex<CallState>>,
    /// The `Request` hooks and the handler share, made on first use.
    request_object: PyOnceLock<Py<Request>>,
    /// The core's refusal, for a request it refused; raised in the language as `refusal`.
    rejection: Option<Rejection>,
    refusal: PyOnceLock<Py<PyAny>>,
    /// Whether its answer is sent when the loop's turn ends (a task's, `flush_soon`), or with
    /// its batch's (a chain of `def`s run inside `run_jobs`): one flush per request wakes the
    /// runtime's delivery task once per request, which cost a sync chain about 1 µs of the
    /// runtime's CPU per request. Set later by [`PendingCall::answer_later`].
    flushes: std::sync::atomic::AtomicBool,
    /// A WebSocket's handshake: held until the call is gone, so that its `Job::Unopened`
    /// cannot come before `handle` kept its `request.state` (see [`Handshake`]).
    handshake: Option<Arc<Handshake<PyRoute>>>,
}

struct CallState {
    request: Option<RequestData>,
    reply: Option<Reply>,
}

/// What `await request.is_disconnected()` reads: whether the client of a request still
/// unanswered has gone. The runtime drops the reply's receiver when the connection closes (or
/// the deadline passes), so this is one lock and one load, and nothing is watched meanwhile.
/// After the answer (a stream's head included) it reads `False`: a stream's producer is closed
/// when its client goes.
#[derive(Clone)]
pub struct ClientWatch(Arc<Mutex<CallState>>);

impl ClientWatch {
    pub fn client_left(&self) -> bool {
        lock(&self.0).reply.as_ref().is_some_and(is_abandoned)
    }
}

impl PendingCall {
    fn new(dispatcher: &Arc<Dispatcher>, route: Option<Route>, request: RequestData, reply: Reply, rejection: Option<Rejection>, flushes: bool) -> Self {
        let status = match (&rejection, &route) {
            (Some(rejection), _) => rejection.problem.status_code(),
            (None, Some(route)) => route.status,
            (None, None) => StatusCode::OK,
        };
        let unrouted_label = if route.is_none() { format!("{} {}", request.method, request.path) } else { String::new() };
        PendingCall {
            route,
            status,
            unrouted_label,
            dispatcher: dispatcher.clone(),
            state: Arc::new(Mutex::new(CallState { request: Some(request), reply: Some(reply) })),
            request_object: PyOnceLock::new(),
            rejection,
            refusal: PyOnceLock::new(),
            flushes: std::sync::atomic::AtomicBool::new(flushes),
            handshake: None,
        }
    }
}

#[pymethods]
impl PendingCall {
    /// A call of a chain of `def`s that finishes in a task after all (an `async def` exception
    /// handler answers it): its answer is then sent when the loop's turn ends, as a task's is,
    /// not with a batch that has already gone.
    fn answer_later(&self) {
        self.flushes.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// The `Request` the hooks and the handler share.
    fn request<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, Request>> {
        let object = self.request_object.get_or_try_init(py, || {
            let request = lock(&self.state).request.take();
            let request = request.ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("the request was already handed to the handler"))?;
            let owner = self.dispatcher.types().owner.as_ref().map(|owner| owner.clone_ref(py));
            Py::new(py, Request::new(request, owner).watched(self.client_watch()))
        })?;
        Ok(object.bind(py).clone())
    }

    /// Runs the handler on `request` (its result, or an async handler's coroutine); for a
    /// request the core refused, raises the refusal instead.
    fn handle<'py>(&self, py: Python<'py>, request: &Bound<'py, Request>) -> PyResult<Bound<'py, PyAny>> {
        if self.rejection.is_some() {
            return Err(PyErr::from_value(self.refusal(py)?.into_bound(py)));
        }
        let route = self.route.as_ref().ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("no route"))?;
        if let Some(handshake) = &self.handshake {
            // A WebSocket's handshake that its hooks let through: 101 lets the core upgrade it,
            // and the handler runs once the socket is open (`Dispatcher::open`), its `ws.state`
            // the `request.state` the hooks made, if they made one.
            if let Some(state) = request.get().state_if_made(py) {
                lock(&self.dispatcher.admitted).insert(handshake.id(), state);
            }
            let kwargs = PyDict::new(py);
            kwargs.set_item(pyo3::intern!(py, "status_code"), 101)?;
            return self.dispatcher.types().response.bind(py).call((), Some(&kwargs));
        }
        route.data.call_on(py, request)
    }

    /// The exception a refused request is raised as (`RequestValidationError` for a 422 with
    /// its errors, else `HTTPException` with the problem's status, detail and headers); `None`
    /// for a request no one refused.
    #[getter]
    fn refusal(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let Some(rejection) = &self.rejection else { return Ok(py.None()) };
        let refusal = self.refusal.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
            let problem = &rejection.problem;
            if problem.status == 422 && !problem.errors.is_empty() {
                let errors = serde_json::to_value(&problem.errors).map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
                let errors = to_python::json(py, &ferrule_core::document::Document::from_tree(&errors))?;
                let raw_body = lock(&self.state).request.as_ref().map(|r| r.raw_body.clone());
                let body = match (self.request_object.get(py), raw_body) {
                    (Some(object), _) => PyBytes::new(py, &object.get().data().raw_body).into_any(),
                    (None, Some(bytes)) => PyBytes::new(py, &bytes).into_any(),
                    (None, None) => py.None().into_bound(py),
                };
                let kwargs = PyDict::new(py);
                kwargs.set_item("body", body)?;
                let class = VALIDATION_ERROR.import(py, "ferrule.hooks", "RequestValidationError")?;
                return Ok(class.call((errors,), Some(&kwargs))?.unbind());
            }
            let headers = PyDict::new(py);
            for (name, value) in &rejection.headers {
                headers.set_item(name.as_str(), value.to_str().unwrap_or_default())?;
            }
            let class = self.dispatcher.types().http_exception.bind(py);
            Ok(class.call1((problem.status, problem.detail.as_deref(), headers))?.unbind())
        })?;
        Ok(refusal.clone_ref(py))
    }

    /// Whether this is a WebSocket's handshake, which its route's hooks see before the upgrade
    /// (`ferrule.hooks.run_async`).
    #[getter]
    fn is_handshake(&self) -> bool {
        self.handshake.is_some()
    }

    /// The status a plain result is sent with.
    #[getter]
    fn status(&self) -> u16 {
        self.status.as_u16()
    }

    /// The core's own answer to a refused request, as a `Response`: its problem, and the
    /// headers that go with it (a 405's `Allow`).
    fn default_response<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let Some(rejection) = &self.rejection else { return Ok(py.None().into_bound(py)) };
        let response = rejection.response();
        let headers = PyList::empty(py);
        for (name, value) in &response.headers {
            headers.append((name.as_str(), value.to_str().unwrap_or_default()))?;
        }
        let body = PyBytes::new(py, response.body.bytes().map_or(&[][..], |b| &b[..]));
        self.dispatcher.types().response.bind(py).call1((response.status.as_u16(), headers, body))
    }

    fn finish(&self, py: Python<'_>, result: &Bound<'_, PyAny>) {
        self.answer(py, Ok(result.clone()));
    }

    /// `value` as the JSON this call's route sends for `status`, its response schema applied:
    /// what a middleware reads from `body_iterator` is what would go out, never the fields
    /// the schema leaves out. A value that cannot be written raises `ValueError`.
    fn json_of<'py>(&self, py: Python<'py>, value: &Bound<'py, PyAny>, status: i64) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = response::json_of(self.route.as_ref(), value, status).map_err(|message| pyo3::exceptions::PyValueError::new_err(format!("the response cannot be sent: {message}")))?;
        Ok(PyBytes::new(py, &bytes))
    }

    fn fail(&self, py: Python<'_>, exception: &Bound<'_, PyAny>) {
        self.answer(py, Err(PyErr::from_value(exception.clone())));
    }

    /// An exception the app's server-error handler answered (`exception_handler(500)`):
    /// logged with its traceback and kept for an in-process client all the same, as
    /// Starlette raises it again after that handler's response.
    fn report(&self, py: Python<'_>, exception: &Bound<'_, PyAny>) {
        if !response::reported(py, &self.dispatcher, self.label(), exception) {
            PyErr::from_value(exception.clone()).display(py);
        }
    }
}

impl PendingCall {
    /// The handler's coroutine, called with the request's arguments (once).
    pub fn start<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let request = lock(&self.state).request.take();
        let request = request.ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("the call has already started"))?;
        let route = self.route.as_ref().ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("a refused request has no handler"))?;
        route.data.call(py, request, Some(self.client_watch()))
    }

    fn client_watch(&self) -> ClientWatch {
        ClientWatch(self.state.clone())
    }

    /// Sends the reply (the first answer wins; later ones are ignored).
    pub fn answer(&self, py: Python<'_>, outcome: PyResult<Bound<'_, PyAny>>) {
        let Some(reply) = lock(&self.state).reply.take() else { return };
        let outcome = match outcome {
            Ok(result) => response::from_result_as(py, &self.dispatcher, self.route.as_ref(), self.status, &result),
            // The refusal itself, unanswered by the app: the core's own answer.
            Err(error) if self.is_refusal(py, &error) => Ok(self.rejection.as_ref().map(Rejection::response).unwrap_or_else(|| ferrule_core::Response::new(self.status))),
            Err(error) => response::from_exception_in(py, &self.dispatcher, self.label(), error),
        };
        self.dispatcher.inbox().answer(reply, outcome);
        if self.flushes.load(std::sync::atomic::Ordering::Relaxed) {
            self.dispatcher.flush_soon(py);
        }
    }

    /// Sends the answers given so far at once, not when the loop's turn ends.
    pub fn flush_now(&self) {
        self.dispatcher.inbox().flush();
    }

    /// The request as the log names it.
    fn label(&self) -> &str {
        self.route.as_ref().map_or(&self.unrouted_label, |route| &route.label)
    }

    fn is_refusal(&self, py: Python<'_>, error: &PyErr) -> bool {
        self.refusal.get(py).is_some_and(|refusal| refusal.bind(py).is(error.value(py)))
    }
}
