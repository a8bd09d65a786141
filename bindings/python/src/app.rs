//! `NativeApp`: the Python `App`'s routes, held by the core's host and served by it.

use crate::dispatch::Dispatcher;
use crate::in_process::InProcessHandle;
use crate::response::ResultTypes;
use crate::route::{ArgumentPlan, PyRoute};
use crate::server::ServerHandle;
use crate::logs::LogDrain;
use ferrule_core::host::{Catch, GroupId, Host, HostError, Listen, Phase, Wake};
use ferrule_core::log::LogWake;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::sync::Arc;

#[pyclass(module = "ferrule._ferrule", frozen)]
pub struct NativeApp {
    host: Host<PyRoute>,
    types: Arc<ResultTypes>,
}

/// A host error as the Python exception a Python programmer expects: a mistake in the
/// program is a `ValueError`, a socket the machine refuses an `OSError` with its errno.
pub fn host_error(error: HostError) -> PyErr {
    match error.os_error() {
        Some(errno) => PyOSError::new_err((errno, error.to_string())),
        None if error.is_usage() => PyValueError::new_err(error.to_string()),
        None => PyRuntimeError::new_err(error.to_string()),
    }
}

#[pymethods]
impl NativeApp {
    /// `config_json`: the core's `AppConfig` as JSON.
    /// `owner`: a weak reference to the Python `App`, which its requests' `request.app` reads.
    #[new]
    #[pyo3(signature = (config_json, response_type, http_exception_type, owner = None))]
    fn new(config_json: &str, response_type: Py<PyAny>, http_exception_type: Py<PyAny>, owner: Option<Py<PyAny>>) -> PyResult<Self> {
        let host = Host::from_json(config_json).map_err(host_error)?;
        Ok(NativeApp { host, types: Arc::new(ResultTypes { response: response_type, http_exception: http_exception_type, streams: Default::default(), owner }) })
    }

    /// Declares a route in `group` (0: the app). `spec_json` is a core `RouteSpec`;
    /// `arguments` lists `ferrule.signature.Argument`s in call order; `status` is a plain
    /// return value's.
    /// `cannot_wait`: an `async def` whose code has no `await`, run to its end at once.
    /// `remake`: makes a result into the route's response model (`PyRoute::remake`).
    #[pyo3(signature = (spec_json, handler, arguments, is_async, status, group = 0, chained = false, cannot_wait = false, remake = None))]
    #[allow(clippy::too_many_arguments)]
    fn add_route(
        &self,
        py: Python<'_>,
        spec_json: &str,
        handler: Py<PyAny>,
        arguments: &Bound<'_, PyList>,
        is_async: bool,
        status: i64,
        group: usize,
        chained: bool,
        cannot_wait: bool,
        remake: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let plans = arguments.iter().map(|a| ArgumentPlan::from_python(&a)).collect::<PyResult<Vec<_>>>()?;
        let owner = self.types.owner.as_ref().map(|owner| owner.clone_ref(py));
        let route = PyRoute::new(handler, plans, is_async, cannot_wait, chained, owner).remaking(remake);
        self.host.declare_json(group_id(group), spec_json, status, route).map_err(host_error)?;
        Ok(())
    }

    /// Sets the app-wide `cors` or `compression` (the core's JSON) after the app was made:
    /// `App.add_middleware`.
    fn configure(&self, settings_json: &str) -> PyResult<()> {
        self.host.configure_json(settings_json).map_err(host_error)
    }

    /// A group of routes under `parent` served under `prefix`; returns its number.
    fn group(&self, parent: usize, prefix: &str) -> PyResult<usize> {
        self.host.group(group_id(parent), prefix).map(|g| g.index()).map_err(host_error)
    }

    /// Registers hook `slot` (of `ferrule.hooks.Registry`) at `phase` for `group`'s requests.
    fn hook(&self, group: usize, phase: &str, slot: u32) -> PyResult<()> {
        let phase = Phase::parse(phase).map_err(PyValueError::new_err)?;
        self.host.hook(group_id(group), phase, slot).map_err(host_error)
    }

    /// The app's exception handlers take requests the core refuses with `status` (`None`:
    /// every refusal).
    #[pyo3(signature = (status = None))]
    fn catch(&self, status: Option<u16>) -> PyResult<()> {
        let catch = status.map_or(Catch::All, Catch::Status);
        self.host.catch(GroupId::APP, catch).map_err(host_error)
    }

    /// Serves a directory under a prefix (`spec_json`: the core's `StaticSpec`).
    fn mount_static(&self, spec_json: &str) -> PyResult<()> {
        self.host.mount_static_json(spec_json).map_err(host_error)
    }

    /// The OpenAPI document of the routes declared so far, as indented JSON.
    fn openapi(&self) -> PyResult<String> {
        self.host.openapi().map_err(host_error)
    }

    /// From now on the app's log records go to Python's `logging`, through the returned drain
    /// (which the event loop watches). Each `serve()` asks for its own.
    fn route_logs(&self) -> PyResult<LogDrain> {
        self.host.route_logs(LogWake::Doorbell).map(LogDrain::new).map_err(host_error)
    }

    /// Starts serving on `fd` (an inherited listening socket) or on `host:port`, with the
    /// runtime on `threads` threads. Handlers run on `event_loop`'s thread when it calls
    /// `dispatch()` (registered with `add_reader` on the returned handle's doorbell);
    /// `stopped` (an asyncio Future) is resolved once a `stop()` has drained every request.
    #[pyo3(signature = (event_loop, stopped, registry, host = None, port = 0, fd = None, threads = None))]
    #[allow(clippy::too_many_arguments)]
    fn start(
        &self,
        py: Python<'_>,
        event_loop: Py<PyAny>,
        stopped: Py<PyAny>,
        registry: Py<PyAny>,
        host: Option<String>,
        port: u16,
        fd: Option<i32>,
        threads: Option<usize>,
    ) -> PyResult<ServerHandle> {
        let listen = match fd {
            Some(fd) => Listen::Inherited(fd),
            None => Listen::Address { host: host.as_deref().unwrap_or("127.0.0.1"), port },
        };
        let serving = py
            .detach(|| self.host.serve(listen, threads, Wake::Doorbell, "the Python event loop"))
            .map_err(host_error)?;
        let dispatcher = Dispatcher::new(py, serving.inbox(), self.types.clone(), event_loop, registry, false);
        let dispatcher = match dispatcher {
            Ok(dispatcher) => dispatcher,
            Err(error) => {
                serving.stop();
                return Err(error);
            }
        };
        Ok(ServerHandle::new(serving, dispatcher, stopped))
    }

    /// The routes declared so far, served without a socket for a test client whose calls run
    /// on `event_loop` (which watches the returned handle's doorbell).
    fn in_process(&self, py: Python<'_>, event_loop: Py<PyAny>, registry: Py<PyAny>) -> PyResult<InProcessHandle> {
        let client = py.detach(|| self.host.in_process(Wake::Doorbell)).map_err(host_error)?;
        let dispatcher = Dispatcher::new(py, client.inbox(), self.types.clone(), event_loop, registry, true)?;
        Ok(InProcessHandle::new(client, dispatcher))
    }
}

/// A group's number as Python holds it.
fn group_id(index: usize) -> GroupId {
    GroupId::from_index(index)
}
