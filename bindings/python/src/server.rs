//! Serving: the tokio runtime on its own threads, and the hand-over of requests to the thread
//! that runs the asyncio event loop.
//!
//! Runtime threads never take the GIL. A request for a Python route becomes a `Job` in a
//! `Mailbox` whose doorbell (an eventfd) the event loop watches; the loop thread calls
//! `dispatch()`, which runs every waiting job while it holds the GIL anyway: sync handlers run
//! right there, async ones become tasks on that same loop. Results are serialised on the loop
//! thread and sent back over a oneshot channel.
//!
//! An async request's task (`ferrule.server.run_handler`) builds the handler's arguments, awaits
//! it and serialises its result itself. Building every waiting request's objects in
//! `dispatch()` and serialising later, as a done-callback would, keeps dozens of request bodies
//! alive at once under load; measured on json-large at 50 connections that cost 35 % more CPU
//! per request than the same handler as `def`, against none at 1 connection.

use crate::response::{self, ResultTypes};
use crate::route::PyRoute;
use ferrule_core::bridge::{is_abandoned, Reply};
use crate::socket::NativeSocket;
use ferrule_core::host::{lock, Call, HostRoute, Job, Open, Serving};
use ferrule_core::RequestData;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use std::sync::{Arc, Mutex};

type Route = Arc<HostRoute<PyRoute>>;

#[pyclass(module = "ferrule._ferrule", frozen)]
pub struct ServerHandle {
    serving: Arc<Serving<PyRoute>>,
    types: Arc<ResultTypes>,
    event_loop: Py<PyAny>,
    stopped: Py<PyAny>,
}

impl ServerHandle {
    pub fn new(serving: Arc<Serving<PyRoute>>, types: Arc<ResultTypes>, event_loop: Py<PyAny>, stopped: Py<PyAny>) -> Self {
        ServerHandle { serving, types, event_loop, stopped }
    }
}

#[pymethods]
impl ServerHandle {
    /// The port actually bound (useful with port 0).
    #[getter]
    fn port(&self) -> u16 {
        self.serving.port()
    }

    /// Prints the startup line (the same in every language).
    fn announce(&self) {
        self.serving.announce();
    }

    /// The eventfd the event loop watches (`loop.add_reader(handle.doorbell, handle.dispatch)`).
    #[getter]
    fn doorbell(&self) -> i32 {
        self.serving.mailbox().doorbell_fd().unwrap_or(-1)
    }

    /// Stop accepting connections and drain in-flight requests (returns at once; `stopped`
    /// resolves when done). Calling it again does nothing.
    fn stop(&self) {
        self.serving.stop();
    }

    /// Runs every waiting job. Called by the event loop when the doorbell rings.
    fn dispatch(&self, py: Python<'_>) -> PyResult<()> {
        let mut jobs = Vec::new();
        self.serving.mailbox().take_all(&mut jobs);
        for job in jobs {
            match job {
                Job::Call(Call { route, request, reply }) => self.run(py, route, request, reply),
                Job::Pull(pull) => self.types.streams.pull(py, &self.serving, pull),
                Job::Release(stream) => self.types.streams.release(py, stream),
                Job::Open(open) => self.open(py, open),
                Job::Socket(id) => arrived(py, id),
            }
        }
        self.serving.flush();
        match self.serving.outcome() {
            Some(outcome) => self.finish(py, outcome.err()),
            None => Ok(()),
        }
    }
}

impl ServerHandle {
    fn run(&self, py: Python<'_>, route: Route, request: RequestData, reply: Reply) {
        if is_abandoned(&reply) {
            // Its deadline passed while an earlier handler ran: nobody waits for this one.
            return;
        }
        if route.data.is_async {
            return self.schedule(py, route, request, reply);
        }
        let outcome = match route.data.call(py, request) {
            Ok(result) => response::from_result(py, &self.types, &self.serving, &route, &result),
            Err(error) => response::from_exception(py, &self.types, &route, error),
        };
        self.serving.answer(reply, outcome);
    }

    /// Starts a task on the loop that runs the request from start to reply.
    fn schedule(&self, py: Python<'_>, route: Route, request: RequestData, reply: Reply) {
        let call = PendingCall {
            route,
            types: self.types.clone(),
            serving: self.serving.clone(),
            state: Mutex::new(CallState { request: Some(request), reply: Some(reply) }),
        };
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

    fn finish(&self, py: Python<'_>, error: Option<String>) -> PyResult<()> {
        let stopped = self.stopped.bind(py);
        if stopped.call_method0(pyo3::intern!(py, "done"))?.is_truthy()? {
            return Ok(());
        }
        match error {
            None => stopped.call_method1(pyo3::intern!(py, "set_result"), (py.None(),))?,
            Some(message) => {
                let exception = pyo3::exceptions::PyRuntimeError::new_err(message).into_value(py);
                stopped.call_method1(pyo3::intern!(py, "set_exception"), (exception,))?
            }
        };
        Ok(())
    }
}

static RUN_HANDLER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static CONVERSE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static WEBSOCKET: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static ARRIVED: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Wakes the `WebSocket` filed under `id` (`ferrule.websocket.arrived`).
fn arrived(py: Python<'_>, id: u64) {
    if let Err(error) = ARRIVED.import(py, "ferrule.websocket", "arrived").and_then(|arrived| arrived.call1((id,))) {
        error.display(py);
    }
}
static CANCEL_AT_DEADLINE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

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
    types: Arc<ResultTypes>,
    serving: Arc<Serving<PyRoute>>,
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
            Ok(result) => response::from_result(py, &self.types, &self.serving, &self.route, &result),
            Err(error) => response::from_exception(py, &self.types, &self.route, error),
        };
        self.serving.answer(reply, outcome);
        self.serving.flush();
    }
}
