//! `NativeApp`: the routes the Python `App` declared, compiled into a core app when served.

use crate::response::ResultTypes;
use crate::route::{ArgumentPlan, PyRoute};
use crate::server::{PyHandler, ServerHandle};
use ferrule_core::bridge::Mailbox;
use ferrule_core::{App, AppConfig, RouteSpec};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::sync::{Arc, Mutex};

struct Declared {
    spec: RouteSpec,
    route: Arc<PyRoute>,
}

#[pyclass(module = "ferrule._ferrule", frozen)]
pub struct NativeApp {
    config: AppConfig,
    types: Arc<ResultTypes>,
    routes: Mutex<Vec<Declared>>,
}

#[pymethods]
impl NativeApp {
    /// `config_json`: the core's `AppConfig` as JSON (read once, at startup).
    #[new]
    fn new(config_json: &str, response_type: Py<PyAny>, http_exception_type: Py<PyAny>) -> PyResult<Self> {
        let config: AppConfig = serde_json::from_str(config_json).map_err(|e| PyValueError::new_err(format!("app settings: {e}")))?;
        config.check().map_err(|e| PyValueError::new_err(format!("app settings: {e}")))?;
        Ok(NativeApp {
            config,
            types: Arc::new(ResultTypes { response: response_type, http_exception: http_exception_type }),
            routes: Mutex::new(Vec::new()),
        })
    }

    /// Declares a route. `spec_json` is a core `RouteSpec`; `arguments` lists
    /// `ferrule.signature.Argument`s in call order.
    fn add_route(&self, spec_json: &str, handler: Py<PyAny>, arguments: &Bound<'_, PyList>, is_async: bool, status: u16) -> PyResult<()> {
        let spec: RouteSpec = serde_json::from_str(spec_json).map_err(|e| PyValueError::new_err(format!("route: {e}")))?;
        App::with_config(self.config.clone()).check_route(&spec).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let plans = arguments.iter().map(|a| ArgumentPlan::from_python(&a)).collect::<PyResult<Vec<_>>>()?;
        let label = format!("{} {}", spec.method, spec.path);
        let route = Arc::new(PyRoute::new(label, handler, plans, is_async, status));
        self.routes.lock().map_err(|_| PyRuntimeError::new_err("route table poisoned"))?.push(Declared { spec, route });
        Ok(())
    }

    /// Starts serving on `fd` (an inherited listening socket) or on `host:port`, with the
    /// runtime on `threads` threads. Handlers run on `event_loop`'s thread when it calls
    /// `dispatch()` (registered with `add_reader` on the returned handle's doorbell);
    /// `stopped` (an asyncio Future) is resolved once a `stop()` has drained every request.
    #[pyo3(signature = (event_loop, stopped, host = None, port = 0, fd = None, threads = None))]
    #[allow(clippy::too_many_arguments)]
    fn start(
        &self,
        py: Python<'_>,
        event_loop: Py<PyAny>,
        stopped: Py<PyAny>,
        host: Option<String>,
        port: u16,
        fd: Option<i32>,
        threads: Option<usize>,
    ) -> PyResult<ServerHandle> {
        let mailbox = Arc::new(Mailbox::with_doorbell().map_err(|e| PyOSError::new_err(format!("eventfd: {e}")))?);
        let mut app = App::with_config(self.config.clone());
        for declared in self.routes.lock().map_err(|_| PyRuntimeError::new_err("route table poisoned"))?.iter() {
            let handler = PyHandler::new(declared.route.clone(), mailbox.clone());
            app.add_route(declared.spec.clone(), Arc::new(handler));
        }
        let listener = match fd {
            Some(fd) => ferrule_core::listener_from_fd(fd).map_err(|e| PyOSError::new_err(format!("listening socket {fd}: {e}")))?,
            None => {
                let addr = format!("{}:{port}", host.as_deref().unwrap_or("127.0.0.1"));
                ferrule_core::bind(&addr, false).map_err(|e| PyOSError::new_err(format!("cannot listen on {addr}: {e}")))?
            }
        };
        py.detach(|| ServerHandle::start(app, listener, threads, mailbox, self.types.clone(), event_loop, stopped))
            .map_err(PyRuntimeError::new_err)
    }
}
