//! Serving: the tokio runtime on its own threads, and the hand-over of requests to the thread
//! that runs the asyncio event loop.
//!
//! Runtime threads never take the GIL. A request for a Python route becomes a `Job` in a
//! `Mailbox` whose doorbell (an eventfd) the event loop watches; the loop thread calls
//! `dispatch()`, which runs every waiting job while it holds the GIL anyway: sync handlers run
//! right there, async ones become tasks on that same loop. Results are serialised on the loop
//! thread and sent back over a oneshot channel.

use crate::response::{self, ResultTypes};
use crate::route::PyRoute;
use ferrule_core::bridge::{Mailbox, ReplyBatch};
use ferrule_core::{App, Handler, HandlerError, HandlerFuture, RequestData, Response};
use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyDict, PyTuple};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

type Outcome = Result<Response, HandlerError>;
type Reply = oneshot::Sender<Outcome>;

pub enum Job {
    Call { route: Arc<PyRoute>, request: RequestData, reply: Reply },
    /// The server has stopped (with the drain's error, if any).
    Stopped(Option<String>),
}

/// The core's handler trait for a Python route: post, then await the reply.
pub struct PyHandler {
    route: Arc<PyRoute>,
    mailbox: Arc<Mailbox<Job>>,
}

impl PyHandler {
    pub fn new(route: Arc<PyRoute>, mailbox: Arc<Mailbox<Job>>) -> Self {
        PyHandler { route, mailbox }
    }
}

impl Handler for PyHandler {
    fn call(&self, request: RequestData) -> HandlerFuture {
        let (reply, answer) = oneshot::channel();
        let posted = self.mailbox.post_deferred(Job::Call { route: self.route.clone(), request, reply });
        let mailbox = self.mailbox.clone();
        Box::pin(async move {
            if posted.is_err() {
                return Err(HandlerError::new("the Python event loop has stopped"));
            }
            // Let the runtime run its other ready tasks first, so requests arriving together
            // reach the loop with one wake-up (see ferrule_core::bridge).
            tokio::task::yield_now().await;
            mailbox.wake();
            answer.await.unwrap_or_else(|_| Err(HandlerError::new("the Python event loop dropped the request")))
        })
    }
}

#[pyclass(module = "ferrule._ferrule", frozen)]
pub struct ServerHandle {
    mailbox: Arc<Mailbox<Job>>,
    replies: Arc<ReplyBatch<Outcome>>,
    types: Arc<ResultTypes>,
    event_loop: Py<PyAny>,
    stopped: Py<PyAny>,
    stop: Mutex<Option<oneshot::Sender<()>>>,
    port: u16,
}

impl ServerHandle {
    pub fn start(
        app: App,
        listener: std::net::TcpListener,
        threads: usize,
        mailbox: Arc<Mailbox<Job>>,
        types: Arc<ResultTypes>,
        event_loop: Py<PyAny>,
        stopped: Py<PyAny>,
    ) -> Result<ServerHandle, String> {
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads.max(1))
            .thread_name("ferrule-runtime")
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the runtime: {e}"))?;
        let server = runtime.block_on(app.serve_std(listener)).map_err(|e| e.to_string())?;
        let replies = Arc::new(ReplyBatch::default());
        runtime.spawn(replies.clone().deliver());
        let (stop, stop_requested) = oneshot::channel::<()>();
        let on_stopped = mailbox.clone();
        std::thread::Builder::new()
            .name("ferrule-server".into())
            .spawn(move || {
                let outcome = runtime.block_on(async move {
                    let _ = stop_requested.await;
                    server.shutdown().await
                });
                // Let the runtime's threads finish before the loop hears that we stopped.
                drop(runtime);
                let _ = on_stopped.post(Job::Stopped(outcome.err().map(|e| e.to_string())));
            })
            .map_err(|e| format!("cannot start the server thread: {e}"))?;
        Ok(ServerHandle { mailbox, replies, types, event_loop, stopped, stop: Mutex::new(Some(stop)), port })
    }
}

#[pymethods]
impl ServerHandle {
    /// The port actually bound (useful with port 0).
    #[getter]
    fn port(&self) -> u16 {
        self.port
    }

    /// The eventfd the event loop watches (`loop.add_reader(handle.doorbell, handle.dispatch)`).
    #[getter]
    fn doorbell(&self) -> i32 {
        self.mailbox.doorbell_fd().unwrap_or(-1)
    }

    /// Stop accepting connections and drain in-flight requests (returns at once; `stopped`
    /// resolves when done). Calling it again does nothing.
    fn stop(&self) {
        if let Some(stop) = self.stop.lock().ok().and_then(|mut s| s.take()) {
            let _ = stop.send(());
        }
    }

    /// Runs every waiting job. Called by the event loop when the doorbell rings.
    fn dispatch(&self, py: Python<'_>) -> PyResult<()> {
        let mut jobs = Vec::new();
        self.mailbox.take_all(&mut jobs);
        let mut result = Ok(());
        for job in jobs {
            match job {
                Job::Call { route, request, reply } => self.run(py, route, request, reply),
                Job::Stopped(error) => result = self.finish(py, error),
            }
        }
        self.replies.flush();
        result
    }
}

impl ServerHandle {
    fn run(&self, py: Python<'_>, route: Arc<PyRoute>, request: RequestData, reply: Reply) {
        let outcome = match route.call(py, request) {
            Ok(result) if route.is_async => match self.schedule(py, &route, result, reply) {
                Ok(()) => return,
                Err((error, reply)) => {
                    self.replies.push(reply, response::from_exception(py, &self.types, &route, error));
                    return;
                }
            },
            Ok(result) => response::from_result(py, &self.types, &route, &result),
            Err(error) => response::from_exception(py, &self.types, &route, error),
        };
        self.replies.push(reply, outcome);
    }

    /// Runs a coroutine as a task on the loop; its done-callback sends the reply.
    fn schedule(&self, py: Python<'_>, route: &Arc<PyRoute>, coroutine: Bound<'_, PyAny>, reply: Reply) -> Result<(), (PyErr, Reply)> {
        let task = match self.event_loop.bind(py).call_method1(pyo3::intern!(py, "create_task"), (coroutine,)) {
            Ok(task) => task,
            Err(error) => return Err((error, reply)),
        };
        let reply = Mutex::new(Some(reply));
        let label = route.label.clone();
        let route = route.clone();
        let types = self.types.clone();
        let replies = self.replies.clone();
        let on_done = PyCFunction::new_closure(py, None, None, move |args: &Bound<'_, PyTuple>, _: Option<&Bound<'_, PyDict>>| -> PyResult<()> {
            let py = args.py();
            let Some(reply) = reply.lock().ok().and_then(|mut r| r.take()) else { return Ok(()) };
            let task = args.get_item(0)?;
            let outcome = match task.call_method0(pyo3::intern!(py, "result")) {
                Ok(result) => response::from_result(py, &types, &route, &result),
                Err(error) => response::from_exception(py, &types, &route, error),
            };
            replies.push(reply, outcome);
            replies.flush();
            Ok(())
        });
        match on_done.and_then(|callback| task.call_method1(pyo3::intern!(py, "add_done_callback"), (callback,))) {
            Ok(_) => Ok(()),
            Err(error) => {
                // The reply went into the closure; dropping the task drops it, which the
                // waiting request sees as a failed handler.
                let _ = task.call_method0(pyo3::intern!(py, "cancel"));
                eprintln!("ferrule: {label}: cannot follow the handler's task:");
                error.display(py);
                Ok(())
            }
        }
    }

    fn finish(&self, py: Python<'_>, error: Option<String>) -> PyResult<()> {
        self.mailbox.close();
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
