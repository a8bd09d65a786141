//! `InProcessHandle`: the app's routes served without a socket, for `ferrule.testing.TestClient`.
//!
//! The core's in-process router runs the whole stack (routing, validation, middleware,
//! problem responses) on a runtime of its own; its calls wake the test client's event loop
//! through the same doorbell a server's do, and are run by the same `Dispatcher`. When an
//! answer arrives the doorbell rings too, and `dispatch()` resolves the future its caller
//! awaits.

use crate::dispatch::Dispatcher;
use crate::route::PyRoute;
use ferrule_core::bytes::Bytes;
use ferrule_core::host::{lock, Exchange, InProcess};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use std::sync::{Arc, Mutex};

#[pyclass(module = "ferrule._ferrule", frozen)]
pub struct InProcessHandle {
    client: InProcess<PyRoute>,
    dispatcher: Arc<Dispatcher>,
    /// Requests under way, each with the asyncio future its caller awaits.
    pending: Mutex<Vec<(Exchange, Py<PyAny>)>>,
}

impl InProcessHandle {
    pub fn new(client: InProcess<PyRoute>, dispatcher: Dispatcher) -> Self {
        InProcessHandle { client, dispatcher: Arc::new(dispatcher), pending: Mutex::new(Vec::new()) }
    }
}

#[pymethods]
impl InProcessHandle {
    /// The eventfd the test client's loop watches (`loop.add_reader(handle.doorbell, handle.dispatch)`).
    #[getter]
    fn doorbell(&self) -> i32 {
        self.client.mailbox().doorbell_fd().unwrap_or(-1)
    }

    /// Starts one request through the whole core: `headers` as `(name, value bytes)` pairs in
    /// order. Returns an asyncio future of `(status, [(name, value bytes)], body, cut_off)`.
    fn send(&self, py: Python<'_>, method: &str, uri: &str, headers: Vec<(String, Bound<'_, PyBytes>)>, body: Vec<u8>) -> PyResult<Py<PyAny>> {
        let mut request = ferrule_core::http::Request::builder().method(method).uri(uri);
        for (name, value) in &headers {
            request = request.header(name.as_str(), value.as_bytes());
        }
        let request = request.body(Bytes::from(body)).map_err(|e| PyValueError::new_err(format!("a request that cannot be sent: {e}")))?;
        let future = py.import("asyncio")?.call_method0("get_running_loop")?.call_method0("create_future")?.unbind();
        let exchange = self.client.send(request);
        lock(&self.pending).push((exchange, future.clone_ref(py)));
        Ok(future)
    }

    /// Runs every waiting job, then resolves the futures of answered requests. Called by the
    /// loop when the doorbell rings.
    fn dispatch(&self, py: Python<'_>) -> PyResult<()> {
        let mut jobs = Vec::new();
        self.client.mailbox().take_all(&mut jobs);
        self.dispatcher.run_jobs(py, jobs);
        let answered: Vec<_> = {
            let mut pending = lock(&self.pending);
            let (done, waiting) = pending.drain(..).partition(|(exchange, _)| exchange.is_done());
            *pending = waiting;
            done
        };
        for (exchange, future) in answered {
            let Some(answer) = exchange.take() else { continue };
            let future = future.bind(py);
            if future.call_method0("done")?.is_truthy()? {
                continue; // the caller gave up waiting
            }
            let headers = PyList::empty(py);
            for (name, value) in &answer.headers {
                headers.append((name.as_str(), PyBytes::new(py, value.as_bytes())))?;
            }
            let result = PyTuple::new(py, [answer.status.as_u16().into_pyobject(py)?.into_any(), headers.into_any(), PyBytes::new(py, &answer.body).into_any(), answer.cut_off.into_pyobject(py)?.to_owned().into_any()])?;
            future.call_method1("set_result", (result,))?;
        }
        match self.dispatcher.take_fatal() {
            Some(fatal) => Err(fatal),
            None => Ok(()),
        }
    }

    /// Cancels the stand-in tasks of `async def` handlers run at once (`crate::inline_run`):
    /// the client is closing, and its shutdown steps should not find them running.
    fn retire_stand_ins(&self, py: Python<'_>) {
        self.dispatcher.retire_stand_ins(py);
    }

    /// The exception a handler raised since the last call (its request got a 500), if any:
    /// the test client raises it again in the test.
    fn take_raised(&self) -> Option<Py<PyAny>> {
        self.dispatcher.take_raised()
    }
}
