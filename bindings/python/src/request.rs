//! `Request` and `UploadFile`: request data handed to Python as objects that convert their
//! parts on first access (a handler that reads only `path_params` pays only for those).

use crate::convert::to_python;
use crate::dispatch::ClientWatch;
use ferrule_core::{RequestData, UploadedFile};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

/// Everything the core parsed for one request: typed, validated, ready to use.
#[pyclass(module = "ferrule._ferrule", frozen)]
pub struct Request {
    data: RequestData,
    path_params: PyOnceLock<Py<PyDict>>,
    query: PyOnceLock<Py<PyDict>>,
    headers: PyOnceLock<Py<PyAny>>,
    cookies: PyOnceLock<Py<PyDict>>,
    declared_headers: PyOnceLock<Py<PyDict>>,
    declared_cookies: PyOnceLock<Py<PyDict>>,
    body: PyOnceLock<Py<PyAny>>,
    state: PyOnceLock<Py<PyAny>>,
    /// Starlette's `request.session`, once `SessionMiddleware`'s hook has loaded it.
    session: PyOnceLock<Py<PyAny>>,
    /// A weak reference to the app (`request.app`).
    owner: Option<Py<PyAny>>,
    /// Whether the client has gone (`request.is_disconnected()`), for a request answered later.
    watch: Option<ClientWatch>,
}

impl Request {
    /// Whether anything made `state` (a dependency with teardown keeps its generators there).
    pub fn has_state(&self, py: Python<'_>) -> bool {
        self.state.get(py).is_some()
    }

    /// Its `state`, when anything made it.
    pub fn state_if_made(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.state.get(py).map(|state| state.clone_ref(py))
    }

    /// With `state` as its `state` (a WebSocket's, made by its handshake's hooks).
    pub fn with_state(self, py: Python<'_>, state: Py<PyAny>) -> Self {
        let _ = self.state.set(py, state);
        self
    }

    pub fn new(data: RequestData, owner: Option<Py<PyAny>>) -> Self {
        Request {
            data,
            path_params: PyOnceLock::new(),
            query: PyOnceLock::new(),
            headers: PyOnceLock::new(),
            cookies: PyOnceLock::new(),
            declared_headers: PyOnceLock::new(),
            declared_cookies: PyOnceLock::new(),
            body: PyOnceLock::new(),
            state: PyOnceLock::new(),
            session: PyOnceLock::new(),
            owner,
            watch: None,
        }
    }

    /// The request, able to tell when its client has gone.
    pub fn watched(self, watch: ClientWatch) -> Self {
        Request { watch: Some(watch), ..self }
    }

    pub fn data(&self) -> &RequestData {
        &self.data
    }
}

#[pymethods]
impl Request {
    #[getter]
    fn method(&self) -> &str {
        self.data.method.as_str()
    }

    /// The path as sent (percent-encoded).
    #[getter]
    fn path(&self) -> &str {
        &self.data.path
    }

    /// Path parameters, typed as the template declares (`{id:int}` → int).
    #[getter]
    fn path_params(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        let dict = self.path_params.get_or_try_init(py, || to_python::params(py, &self.data.path_params).map(Bound::unbind))?;
        Ok(dict.clone_ref(py))
    }

    /// Declared query parameters, coerced and validated (missing optional ones are None).
    #[getter]
    fn query(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        let dict = self.query.get_or_try_init(py, || to_python::params(py, &self.data.query).map(Bound::unbind))?;
        Ok(dict.clone_ref(py))
    }

    /// Every header as sent, as Starlette's `request.headers`: a `MutableHeaders` (names in
    /// any case, `get`, `getlist`, `items()`), made on first read.
    #[getter]
    fn headers(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        static MUTABLE_HEADERS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let headers = self.headers.get_or_try_init(py, || {
            MUTABLE_HEADERS.import(py, "ferrule.responses", "MutableHeaders")?.call1((self.header_items(py)?,)).map(Bound::unbind)
        })?;
        Ok(headers.clone_ref(py))
    }

    /// Every cookie as sent, as Starlette's `request.cookies`: a dict, the last value of a
    /// repeated name.
    #[getter]
    fn cookies(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        let dict = self.cookies.get_or_try_init(py, || {
            let dict = PyDict::new(py);
            for (name, value) in self.data.cookie_pairs() {
                dict.set_item(name, value)?;
            }
            Ok::<_, PyErr>(dict.unbind())
        })?;
        Ok(dict.clone_ref(py))
    }

    /// The declared headers, typed, under their lower-case names (what `Header()` parameters
    /// and dependencies read).
    #[getter]
    fn _declared_headers(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        let dict = self.declared_headers.get_or_try_init(py, || to_python::params(py, &self.data.headers).map(Bound::unbind))?;
        Ok(dict.clone_ref(py))
    }

    /// The declared cookies, typed (what `Cookie()` parameters and dependencies read).
    #[getter]
    fn _declared_cookies(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        let dict = self.declared_cookies.get_or_try_init(py, || to_python::params(py, &self.data.cookies).map(Bound::unbind))?;
        Ok(dict.clone_ref(py))
    }

    /// The validated body (what body and form parameters read): dicts and lists for JSON
    /// (schema defaults filled in), a dict of fields for forms (files as `UploadFile`), bytes,
    /// str, or None.
    #[getter]
    fn _validated_body(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let body = self.body.get_or_try_init(py, || to_python::body(py, &self.data.body).map(Bound::unbind))?;
        Ok(body.clone_ref(py))
    }

    /// `await request.body()`, as Starlette's: the body as sent (read before the handler ran,
    /// within the body limit), whatever the route declares.
    fn body<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        static READY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        READY.import(py, "ferrule.request", "_Ready")?.call1((PyBytes::new(py, &self.data.raw_body),))
    }

    /// `await request.form()`, as Starlette's: a `FormData` of a declared form's fields (files
    /// as `UploadFile`), or of an url-encoded body as sent.
    fn form<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        static FORM_OF: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let content_type = ferrule_core::header_text(&self.data.raw_headers, "content-type");
        FORM_OF.import(py, "ferrule.request", "_form_of")?.call1((self._validated_body(py)?, content_type.as_deref(), PyBytes::new(py, &self.data.raw_body)))
    }

    /// `await request.is_disconnected()`, as Starlette's: whether the client has closed its
    /// connection while the handler works (a long poll's loop ends on it). Always `False` in a
    /// `def` handler, which cannot await, and once the response has begun.
    fn is_disconnected<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        static READY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let left = self.watch.as_ref().is_some_and(ClientWatch::client_left);
        READY.import(py, "ferrule.request", "_Ready")?.call1((left,))
    }

    /// `async for chunk in request.stream()`, as Starlette's: the body as sent, then `b""`.
    fn stream<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        static STREAM_OF: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        STREAM_OF.import(py, "ferrule.request", "_stream_of")?.call1((PyBytes::new(py, &self.data.raw_body),))
    }

    /// What hooks and middleware leave for the handler (Starlette's `request.state`): any
    /// attributes, set and read on this one request.
    /// The state if anything made it (`None` else): what runs after every request reads it
    /// without making one.
    #[getter]
    fn _state_if_made(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.state_if_made(py)
    }

    /// Starlette's `request.session`: the dict `ferrule.middleware.sessions.SessionMiddleware`
    /// loaded from the request's cookie; without that middleware, Starlette's AssertionError.
    #[getter]
    fn session(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.session.get(py) {
            Some(session) => Ok(session.clone_ref(py)),
            None => Err(pyo3::exceptions::PyAssertionError::new_err("SessionMiddleware must be installed to access request.session")),
        }
    }

    /// Gives the request its session (`SessionMiddleware`'s `on_request` hook), once.
    fn _load_session(&self, py: Python<'_>, session: Py<PyAny>) -> PyResult<()> {
        self.session.set(py, session).map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("the request's session is loaded already"))
    }

    #[getter]
    fn state(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        static STATE_OF: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let state = self.state.get_or_try_init(py, || STATE_OF.import(py, "ferrule.request", "_state_of")?.call1((self.app(py)?,)).map(Bound::unbind))?;
        Ok(state.clone_ref(py))
    }

    /// The app serving the request (Starlette's `request.app`), or `None` once it is gone.
    #[getter]
    fn app(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match &self.owner {
            Some(owner) => Ok(owner.bind(py).call0()?.unbind()),
            None => Ok(py.None()),
        }
    }

    #[getter]
    fn request_id(&self) -> Option<&str> {
        self.data.request_id()
    }

    /// The W3C trace id (32 hex digits) of the caller's `traceparent`, when it sent a valid one.
    #[getter]
    fn trace_id(&self) -> Option<String> {
        self.data.trace().map(|t| t.trace_id_hex())
    }

    /// The caller's `traceparent` (validated; `None` when absent or invalid), to send on to
    /// the services this handler calls, or to start a span under.
    #[getter]
    fn traceparent(&self) -> Option<String> {
        self.data.trace().map(|t| t.header())
    }

    /// The client that sent the request, as Starlette's `Address(host, port)`: the peer, or
    /// the client a proxy `forwarded_allow_ips` lists names in `X-Forwarded-For` (port 0, as
    /// uvicorn gives it); `127.0.0.1` (port 0) for a `TestClient`'s.
    #[getter]
    fn client<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        static ADDRESS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let Some(client) = self.data.client else { return Ok(None) };
        let address = ADDRESS.import(py, "ferrule.request", "Address")?;
        address.call1((client.ip().to_string(), client.port())).map(Some)
    }

    /// Every query parameter as sent, as Starlette's `QueryParams`.
    #[getter]
    fn query_params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        static QUERY_PARAMS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        QUERY_PARAMS.import(py, "ferrule.request", "QueryParams")?.call1((self.data.query_pairs(),))
    }

    /// The URL the request named, as Starlette's `URL`.
    #[getter]
    fn url<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        static URL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        // The Host, or what a trusted proxy says the client asked for (`RequestData::host`).
        let host = self.data.host().map(std::borrow::Cow::into_owned).unwrap_or_default();
        URL.import(py, "ferrule.request", "URL")?.call1((host, self.data.path.as_str(), self.data.raw_query.as_str(), self.data.scheme()))
    }

    /// The URL of the app's root, as Starlette's `request.base_url`: the scheme and host of
    /// `request.url`, path `/`, for links to the app's own routes.
    #[getter]
    fn base_url<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        static URL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let host = self.data.host().map(std::borrow::Cow::into_owned).unwrap_or_default();
        URL.import(py, "ferrule.request", "URL")?.call1((host, "/", "", self.data.scheme()))
    }

    /// Starlette's `request.url_for(name, **path_params)`: the app's `url_path_for` under
    /// this request's `base_url` (`ferrule.request._url_for`).
    #[pyo3(signature = (name, /, **path_params))]
    fn url_for<'py>(slf: &Bound<'py, Self>, name: &str, path_params: Option<&Bound<'py, pyo3::types::PyDict>>) -> PyResult<Bound<'py, PyAny>> {
        static URL_FOR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        URL_FOR.import(slf.py(), "ferrule.request", "_url_for")?.call1((slf, name, path_params))
    }

    /// `await request.json()`, as Starlette's: the body as sent, parsed.
    fn json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        static JSON_OF: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        JSON_OF.import(py, "ferrule.request", "_json_of")?.call1((PyBytes::new(py, &self.data.raw_body),))
    }

    /// Any request header by name (case-insensitive); repeated headers are joined with ", ".
    #[pyo3(signature = (name, default = None))]
    fn header(&self, py: Python<'_>, name: &str, default: Option<Py<PyAny>>) -> PyResult<Py<PyAny>> {
        Ok(match ferrule_core::header_text(&self.data.raw_headers, name) {
            Some(text) => PyString::new(py, &text).into_any().unbind(),
            None => default.unwrap_or_else(|| py.None()),
        })
    }

    /// Every request header as (name, value) pairs, in the order received.
    fn header_items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let pairs = self
            .data
            .raw_headers
            .iter()
            .map(|(name, value)| (name.as_str(), ferrule_core::header_value_text(value)));
        PyList::new(py, pairs)
    }

    /// The body as sent, on any route (within the body limit; `b""` when there was none or it
    /// was past the limit of a route that declares no body). Beside the parsed `body`.
    #[getter]
    fn raw_body<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.data.raw_body)
    }

    /// The query string as sent (percent-encoded, without `?`).
    #[getter]
    fn query_string(&self) -> &str {
        &self.data.raw_query
    }

    /// Every query parameter as (name, value) pairs, declared or not, decoded, in order.
    fn query_items(&self) -> Vec<(String, String)> {
        self.data.query_pairs()
    }

    /// Every cookie as (name, value) pairs, declared or not, in order.
    fn cookie_items(&self) -> Vec<(String, String)> {
        self.data.cookie_pairs()
    }

    fn __repr__(&self) -> String {
        format!("<Request {} {}>", self.data.method, self.data.path)
    }
}

/// An uploaded file from a multipart body, bytes kept exactly as sent.
#[pyclass(module = "ferrule._ferrule", frozen)]
pub struct UploadFile {
    #[pyo3(get)]
    field: String,
    #[pyo3(get)]
    filename: Option<String>,
    #[pyo3(get)]
    content_type: Option<String>,
    part_headers: Vec<(String, String)>,
    data: ferrule_core::bytes::Bytes,
    /// Where the next `read()` starts (Starlette's file position; `seek()` moves it).
    position: std::sync::atomic::AtomicUsize,
    /// `.file`: an `io.BytesIO` of the bytes, made on first use.
    file: PyOnceLock<Py<PyAny>>,
}

impl From<&UploadedFile> for UploadFile {
    fn from(file: &UploadedFile) -> Self {
        UploadFile {
            field: file.field.clone(),
            filename: file.filename.clone(),
            content_type: file.content_type.clone(),
            part_headers: file.headers.clone(),
            data: file.data.clone(),
            position: std::sync::atomic::AtomicUsize::new(0),
            file: PyOnceLock::new(),
        }
    }
}

/// What `seek()` and `close()` return: `None`, which may be awaited as Starlette's are.
fn awaitable_none(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    static READY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    READY.import(py, "ferrule.request", "_Ready")?.call1((py.None(),))
}

#[pymethods]
impl UploadFile {
    #[getter]
    fn size(&self) -> usize {
        self.data.len()
    }

    /// Every header of the file's part, names in lower case (Starlette's `UploadFile.headers`):
    /// `content-disposition`, `content-type` and any other the client sent. A repeated header's
    /// values are joined with `, `.
    #[getter]
    fn headers(&self) -> std::collections::BTreeMap<String, String> {
        let mut headers = std::collections::BTreeMap::new();
        for (name, value) in &self.part_headers {
            headers.entry(name.clone()).and_modify(|joined: &mut String| {
                joined.push_str(", ");
                joined.push_str(value);
            }).or_insert_with(|| value.clone());
        }
        headers
    }

    /// Up to `size` bytes (all when negative) from the file's position, which moves past them,
    /// as Starlette's `read(size=-1)`: `ferrule.request.AwaitableBytes`, so `await
    /// file.read()` works too. The bytes are in memory: nothing waits.
    #[pyo3(signature = (size = -1))]
    fn read<'py>(&self, py: Python<'py>, size: isize) -> PyResult<Bound<'py, PyAny>> {
        static AWAITABLE_BYTES: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        use std::sync::atomic::Ordering;
        let start = self.position.load(Ordering::Relaxed).min(self.data.len());
        let end = usize::try_from(size).map_or(self.data.len(), |size| start.saturating_add(size).min(self.data.len()));
        self.position.store(end, Ordering::Relaxed);
        AWAITABLE_BYTES.import(py, "ferrule.request", "AwaitableBytes")?.call1((PyBytes::new(py, &self.data[start..end]),))
    }

    /// Moves the position `read()` starts from (Starlette's `await file.seek(0)`).
    fn seek<'py>(&self, py: Python<'py>, offset: usize) -> PyResult<Bound<'py, PyAny>> {
        self.position.store(offset, std::sync::atomic::Ordering::Relaxed);
        awaitable_none(py)
    }

    /// Nothing to release (the bytes go with the request); there for Starlette's `await file.close()`.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        awaitable_none(py)
    }

    /// A file object of the bytes (Starlette's `file.file`): an `io.BytesIO`, its own position.
    #[getter]
    fn file(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.file
            .get_or_try_init(py, || Ok::<_, PyErr>(py.import("io")?.getattr("BytesIO")?.call1((PyBytes::new(py, &self.data),))?.unbind()))
            .map(|file| file.clone_ref(py))
    }

    fn __repr__(&self) -> String {
        format!("<UploadFile {:?} {} bytes>", self.filename.as_deref().unwrap_or(""), self.data.len())
    }
}
