//! Serving: the tokio runtime on its own threads, and the hand-over of requests to the thread
//! that runs the asyncio event loop (see `dispatch`).
//!
//! Runtime threads never take the GIL. A request for a Python route becomes a `Job` in a
//! `Mailbox` whose doorbell (an eventfd) the event loop watches; the loop thread calls
//! `dispatch()`, which runs every waiting job.

use crate::dispatch::Dispatcher;
use crate::route::PyRoute;
use ferrule_core::host::Serving;
use pyo3::prelude::*;
use std::sync::Arc;

#[pyclass(module = "ferrule._ferrule", frozen)]
pub struct ServerHandle {
    serving: Arc<Serving<PyRoute>>,
    dispatcher: Arc<Dispatcher>,
    stopped: Py<PyAny>,
}

impl ServerHandle {
    pub fn new(serving: Arc<Serving<PyRoute>>, dispatcher: Dispatcher, stopped: Py<PyAny>) -> Self {
        ServerHandle { serving, dispatcher: Arc::new(dispatcher), stopped }
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
        self.dispatcher.run_jobs(py, jobs);
        if let Some(fatal) = self.dispatcher.take_fatal() {
            return Err(fatal);
        }
        match self.serving.outcome() {
            Some(outcome) => self.finish(py, outcome.err()),
            None => Ok(()),
        }
    }
}

impl ServerHandle {
    fn finish(&self, py: Python<'_>, error: Option<String>) -> PyResult<()> {
        let stopped = self.stopped.bind(py);
        if stopped.call_method0(pyo3::intern!(py, "done"))?.is_truthy()? {
            return Ok(());
        }
        // Before `stopped` resolves, so that they have ended when the shutdown steps run.
        self.dispatcher.retire_stand_ins(py);
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
