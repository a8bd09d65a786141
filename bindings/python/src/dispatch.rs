//! Running jobs on the thread of the asyncio event loop: the same for a server (`ServerHandle`)
//! and an in-process test client (`InProcessHandle`), which differ only in where the jobs come
//! from and how the loop learns of them.
//!
//! The loop thread calls `dispatch()` when the mailbox's doorbell rings, and runs every
//! waiting job while it holds the GIL anyway: sync handlers run right there, async ones become
//! tasks on that same loop. Results are serialised on the loop thread and sent back through
//! the inbox's reply batch.
//!
//! An async request's task (`ferrule.server.run_handler`) builds the handler's arguments, awaits
//! it and serialises its result itself. Building every waiting request's objects in
//! `dispatch()` and serialising later, as a done-callback would, keeps dozens of request bodies
//! alive at once under load; measured on json-large at 50 connections that cost 35 % more CPU
//! per request than the same handler as `def`, against none at 1 connection.

use crate::response::{self, ResultTypes};
use crate::route::PyRoute;
use crate::socket::NativeSocket;
use ferrule_core::bridge::{is_abandoned, Reply};
use ferrule_core::host::{lock, Call, HostRoute, Inbox, Job, Open};
use ferrule_core::RequestData;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use std::sync::{Arc, Mutex};

type Route = Arc<HostRoute<PyRoute>>;

pub struct Dispatcher {
    inbox: Inbox<PyRoute>,
    types: Arc<ResultTypes>,
    event_loop: Py<PyAny>,
    /// An in-process client's: the last exception a handler raised, which its test raises
    /// again. `None` for a server, whose handlers' exceptions only go to the log.
    raised: Option<Mutex<Option<Py<PyAny>>>>,
}

impl Dispatcher {
    pub fn new(inbox: Inbox<PyRoute>, types: Arc<ResultTypes>, event_loop: Py<PyAny>, keeps_raised: bool) -> Self {
        Dispatcher { inbox, types, event_loop, raised: keeps_raised.then(|| Mutex::new(None)) }
    }

    pub fn inbox(&self) -> &Inbox<PyRoute> {
        &self.inbox
    }

    pub fn types(&self) -> &ResultTypes {
        &self.types
    }

    /// Keeps `exception`, raised by a handler, for an in-process client's test.
    pub fn keep_raised(&self, py: Python<'_>, exception: &Bound<'_, PyAny>) {
        if let Some(raised) = &self.raised {
            *lock(raised) = Some(exception.clone().unbind());
            let _ = py;
        }
    }

    /// The exception kept since the last call, if any.
    pub fn take_raised(&self) -> Option<Py<PyAny>> {
        self.raised.as_ref().and_then(|raised| lock(raised).take())
    }

    /// Runs every job of a batch, then sends their answers.
    pub fn run_jobs(self: &Arc<Self>, py: Python<'_>, jobs: Vec<Job<PyRoute>>) {
        for job in jobs {
            match job {
                Job::Call(Call { route, request, reply }) => self.run(py, route, request, reply),
                Job::Pull(pull) => self.types.streams.pull(py, &self.inbox, pull),
                Job::Release(stream) => self.types.streams.release(py, stream),
                Job::Open(open) => self.open(py, open),
                Job::Socket(id) => arrived(py, id),
            }
        }
        self.inbox.flush();
    }

    fn run(self: &Arc<Self>, py: Python<'_>, route: Route, request: RequestData, reply: Reply) {
        if is_abandoned(&reply) {
            // Its deadline passed while an earlier handler ran: nobody waits for this one.
            return;
        }
        if route.data.is_async {
            return self.schedule(py, route, request, reply);
        }
        let outcome = match route.data.call(py, request) {
            Ok(result) => response::from_result(py, self, &route, &result),
            Err(error) => response::from_exception(py, self, &route, error),
        };
        self.inbox.answer(reply, outcome);
    }

    /// Starts a task on the loop that runs the request from start to reply.
    fn schedule(self: &Arc<Self>, py: Python<'_>, route: Route, request: RequestData, reply: Reply) {
        let call = PendingCall { route, dispatcher: self.clone(), state: Mutex::new(CallState { request: Some(request), reply: Some(reply) }) };
        // If this fails before the call is a Python object, dropping it drops the reply,
        // which the waiting request sees as a failed handler.
        let deadline = request_deadline(&call);
        let Ok(call) = Bound::new(py, call) else { return };
        let event_loop = self.event_loop.bind(py);
        let started = RUN_HANDLER
            .import(py, "ferrule.server", "run_handler")
            .and_then(|run_handler| run_handler.call1((&call,)))
            .and_then(|coroutine| event_loop.call_method1(pyo3::intern!(py, "create_task"), (coroutine,)))
            .and_then(|task| match deadline {
                // Past its deadline the request has its 504: the task is cancelled rather than
                // left running for nobody (`ferrule.server.cancel_at_deadline`).
                Some(seconds) => CANCEL_AT_DEADLINE
                    .import(py, "ferrule.server", "cancel_at_deadline")
                    .and_then(|cancel| cancel.call1((event_loop, task, seconds)))
                    .map(drop),
                None => Ok(()),
            });
        if let Err(error) = started {
            call.get().answer(py, Err(error));
        }
    }

    /// Starts a WebSocket route's handler as a task (`ferrule.websocket.converse`), with its
    /// `WebSocket` filed under the socket's id for the wake-ups to come.
    fn open(&self, py: Python<'_>, Open { route, request, socket }: Open<PyRoute>) {
        let native = NativeSocket::new(socket.clone(), route.label.clone());
        let started = CONVERSE.import(py, "ferrule.websocket", "converse").and_then(|converse| {
            let ws = WEBSOCKET.import(py, "ferrule.websocket", "WebSocket")?.call1((Bound::new(py, native)?,))?;
            let handler = route.data.call_with(py, request, Some(&ws));
            let conversation = match handler {
                Ok(coroutine) => converse.call1((&ws, coroutine))?,
                Err(error) => converse.call1((&ws, py.None(), error.into_value(py)))?,
            };
            self.event_loop.bind(py).call_method1(pyo3::intern!(py, "create_task"), (conversation,)).map(drop)
        });
        if let Err(error) = started {
            error.display(py);
            socket.close(1011, "");
        }
    }
}

static RUN_HANDLER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
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

/// One async request, driven by `ferrule.server.run_handler`: `start()` calls the handler with
/// its arguments, then `finish(result)` or `fail(exception)` sends the reply.
#[pyclass(module = "ferrule._ferrule", frozen)]
pub struct PendingCall {
    route: Route,
    dispatcher: Arc<Dispatcher>,
    state: Mutex<CallState>,
}

struct CallState {
    request: Option<RequestData>,
    reply: Option<Reply>,
}

#[pymethods]
impl PendingCall {
    /// The handler's coroutine, called with the request's arguments (once).
    fn start<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let request = lock(&self.state).request.take();
        let request = request.ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("the call has already started"))?;
        self.route.data.call(py, request)
    }

    fn finish(&self, py: Python<'_>, result: &Bound<'_, PyAny>) {
        self.answer(py, Ok(result.clone()));
    }

    fn fail(&self, py: Python<'_>, exception: &Bound<'_, PyAny>) {
        self.answer(py, Err(PyErr::from_value(exception.clone())));
    }
}

impl PendingCall {
    /// Sends the reply (the first answer wins; later ones are ignored).
    fn answer(&self, py: Python<'_>, outcome: PyResult<Bound<'_, PyAny>>) {
        let Some(reply) = lock(&self.state).reply.take() else { return };
        let outcome = match outcome {
            Ok(result) => response::from_result(py, &self.dispatcher, &self.route, &result),
            Err(error) => response::from_exception(py, &self.dispatcher, &self.route, error),
        };
        let inbox = self.dispatcher.inbox();
        inbox.answer(reply, outcome);
        inbox.flush();
    }
}
