//! A Python route: the handler, how to fill its arguments from the core's request data, and
//! how its result becomes a response.

use crate::convert::body_plan::BodyPlan;
use crate::convert::to_python;
use crate::dispatch::ClientWatch;
use crate::request::Request;
use ferrule_core::{Body, RequestData};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Source {
    Path,
    Query,
    Header,
    Cookie,
    /// The whole body.
    Body,
    /// One field of a form or multipart body.
    Form,
    /// The `Request` object itself.
    Request,
    /// The `WebSocket` of a WebSocket route.
    Socket,
}

impl Source {
    fn parse(name: &str) -> PyResult<Source> {
        Ok(match name {
            "path" => Source::Path,
            "query" => Source::Query,
            "header" => Source::Header,
            "cookie" => Source::Cookie,
            "body" => Source::Body,
            "form" => Source::Form,
            "request" => Source::Request,
            "socket" => Source::Socket,
            other => return Err(pyo3::exceptions::PyValueError::new_err(format!("unknown argument source {other:?}"))),
        })
    }

    /// Where a value came from, as a validation error's `loc` begins (a form field is `body`).
    fn location(self) -> &'static str {
        match self {
            Source::Path => "path",
            Source::Query => "query",
            Source::Header => "header",
            Source::Cookie => "cookie",
            Source::Body | Source::Form | Source::Request | Source::Socket => "body",
        }
    }
}

/// One handler argument (built from `ferrule.signature.Argument`).
pub struct ArgumentPlan {
    name: Py<PyString>,
    positional: bool,
    source: Source,
    key: String,
    convert: Option<Py<PyAny>>,
    default: Py<PyAny>,
    /// A body's conversion, done as the body is built (then `convert` is `None`).
    native: Option<BodyPlan>,
}

impl ArgumentPlan {
    pub fn from_python(argument: &Bound<'_, PyAny>) -> PyResult<Self> {
        let (name, positional, source, key, convert, default, native): (Bound<'_, PyString>, bool, String, String, Option<Py<PyAny>>, Py<PyAny>, Option<Bound<'_, PyAny>>) =
            argument.extract()?;
        let source = Source::parse(&source)?;
        // Only a body is built from JSON; its plan replaces its converter.
        let native = native.filter(|_| source == Source::Body).map(|plan| BodyPlan::from_python(&plan)).transpose()?;
        let convert = if native.is_some() { None } else { convert };
        Ok(ArgumentPlan { name: name.unbind(), positional, source, key, convert, default, native })
    }
}

pub struct PyRoute {
    pub func: Py<PyAny>,
    pub arguments: Vec<ArgumentPlan>,
    pub is_async: bool,
    /// An `async def` whose code has no `await`, `async for` or `async with`: it runs to its
    /// end at once (`crate::inline_run`).
    pub cannot_wait: bool,
    /// Its requests run through `ferrule.hooks` even without hooks (its dependencies' code
    /// after `yield` runs there, once the response has gone).
    pub chained: bool,
    takes_request: bool,
    /// The name of its requests' asyncio tasks: the route's label (`GET /items/{item_id}`).
    task_name: PyOnceLock<Py<PyString>>,
    /// The app's weak reference, for its requests' `request.app`.
    pub owner: Option<Py<PyAny>>,
    /// Makes a result into the route's response model (`ferrule.response_model.remaking`),
    /// for one that holds a scalar the model does not declare (`crate::response`); none
    /// without a model pydantic reads.
    pub remake: Option<Py<PyAny>>,
}

impl PyRoute {
    pub fn new(func: Py<PyAny>, arguments: Vec<ArgumentPlan>, is_async: bool, cannot_wait: bool, chained: bool, owner: Option<Py<PyAny>>) -> Self {
        let takes_request = arguments.iter().any(|a| a.source == Source::Request);
        PyRoute { func, arguments, is_async, cannot_wait: is_async && cannot_wait, chained, takes_request, task_name: PyOnceLock::new(), owner, remake: None }
    }

    /// With [`Self::remake`].
    pub fn remaking(self, remake: Option<Py<PyAny>>) -> Self {
        PyRoute { remake, ..self }
    }
}

impl PyRoute {
    /// The name of its requests' tasks, `label` (the core's, for logs) as a Python string made once.
    pub fn task_name<'py>(&self, py: Python<'py>, label: &str) -> Bound<'py, PyString> {
        self.task_name.get_or_init(py, || PyString::new(py, label).unbind()).bind(py).clone()
    }

    /// Calls the handler with its arguments built from `request`; its `Request` argument, if it
    /// takes one, tells through `watch` whether the client has gone (a handler run at once,
    /// which cannot await, has none).
    pub fn call<'py>(&self, py: Python<'py>, request: RequestData, watch: Option<ClientWatch>) -> PyResult<Bound<'py, PyAny>> {
        // A `Request` argument owns the data; the other arguments read it from there.
        if self.takes_request {
            let mut object = Request::new(request, self.owner.as_ref().map(|owner| owner.clone_ref(py)));
            if let Some(watch) = watch {
                object = object.watched(watch);
            }
            let object = Bound::new(py, object)?;
            return self.call_from(py, object.get().data(), Some(&object), None);
        }
        self.call_from(py, &request, None, None)
    }

    /// A WebSocket route's handler, its arguments read from the `Request` its socket carries
    /// (`ws.headers`, `ws.url`, … read the same one).
    pub fn call_on_socket<'py>(&self, py: Python<'py>, request: &Bound<'py, Request>, socket: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        self.call_from(py, request.get().data(), Some(request), Some(socket))
    }

    /// Calls the handler with arguments read from a `Request` object that hooks have already
    /// seen (the handler's own `Request` argument is that same object).
    pub fn call_on<'py>(&self, py: Python<'py>, request: &Bound<'py, Request>) -> PyResult<Bound<'py, PyAny>> {
        self.call_from(py, request.get().data(), Some(request), None)
    }

    fn call_from<'py>(&self, py: Python<'py>, data: &RequestData, request_object: Option<&Bound<'py, Request>>, socket: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let mut positional = Vec::with_capacity(self.arguments.len());
        let mut keywords: Option<Bound<'py, PyDict>> = None;
        // Each argument's refusal, joined: FastAPI reports every body member a model refused,
        // not only the first (`item` and `user` both, each at its place).
        let mut refused: Option<PyErr> = None;
        for argument in &self.arguments {
            let value = match (&argument.source, request_object) {
                (Source::Request, Some(object)) => object.clone().into_any(),
                (Source::Socket, _) => socket.map_or_else(|| py.None().into_bound(py), |s| s.clone()),
                _ => match self.value(py, argument, data) {
                    Ok(value) => value,
                    Err(error) => {
                        refused = Some(match refused.take() {
                            None => error,
                            Some(earlier) => refusals_joined(py, earlier, error),
                        });
                        continue;
                    }
                },
            };
            if argument.positional && keywords.is_none() {
                positional.push(value);
            } else {
                keywords.get_or_insert_with(|| PyDict::new(py)).set_item(argument.name.bind(py), value)?;
            }
        }
        if let Some(error) = refused {
            return Err(error);
        }
        let args = PyTuple::new(py, positional)?;
        self.func.bind(py).call(args, keywords.as_ref())
    }

    fn value<'py>(&self, py: Python<'py>, argument: &ArgumentPlan, data: &RequestData) -> PyResult<Bound<'py, PyAny>> {
        let found = match argument.source {
            Source::Path => data.path_params.get(&argument.key).map(|v| to_python::value(py, v)).transpose()?,
            Source::Query => data.query.get(&argument.key).map(|v| to_python::value(py, v)).transpose()?,
            Source::Header => data.headers.get(&argument.key).map(|v| to_python::value(py, v)).transpose()?,
            Source::Cookie => data.cookies.get(&argument.key).map(|v| to_python::value(py, v)).transpose()?,
            // An embedded body parameter (`key`: its member of the body, FastAPI's `embed`).
            Source::Body if !argument.key.is_empty() => match &data.body {
                Body::Json(json) => match (json.root().get(&argument.key), &argument.native) {
                    (None, _) => None,
                    (Some(member), Some(plan)) => Some(to_python::node_planned(py, member, plan)?),
                    (Some(member), None) => Some(to_python::node(py, member)?),
                },
                _ => None,
            },
            Source::Body => match (&data.body, &argument.native) {
                (Body::None, _) => None,
                (body, Some(plan)) => Some(to_python::body_planned(py, body, plan)?),
                (body, None) => Some(to_python::body(py, body)?),
            },
            Source::Form => match &data.body {
                Body::Form(fields) => fields.get(&argument.key).map(|v| to_python::value(py, v)).transpose()?,
                _ => None,
            },
            Source::Request | Source::Socket => None,
        };
        match found {
            Some(value) if !value.is_none() => match &argument.convert {
                Some(convert) => convert.bind(py).call1((&value,)).map_err(|error| refused_conversion(py, error, argument, &value)),
                None => Ok(value),
            },
            _ => Ok(argument.default.bind(py).clone()),
        }
    }
}

/// Two arguments' refusals as one (`ferrule.signature.refusals_joined`): both 422s' errors in
/// one, or whichever failure is the app's (a 500) as it is.
fn refusals_joined(py: Python<'_>, earlier: PyErr, later: PyErr) -> PyErr {
    static JOINED: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    match JOINED.import(py, "ferrule.signature", "refusals_joined").and_then(|joined| joined.call1((earlier.value(py), later.value(py)))) {
        Ok(exception) => PyErr::from_value(exception),
        Err(_) => earlier,
    }
}

/// A converter's failure as the client sees it (`ferrule.signature.refused_conversion`): a
/// model's own validation (a pydantic validator's `ValueError`, say) is a 422 located at the
/// argument, as FastAPI answers; anything else stays the app's failure, a 500.
fn refused_conversion(py: Python<'_>, error: PyErr, argument: &ArgumentPlan, value: &Bound<'_, PyAny>) -> PyErr {
    static REFUSED: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let location = argument.source.location();
    match REFUSED.import(py, "ferrule.signature", "refused_conversion").and_then(|refused| refused.call1((error.value(py), location, &argument.key, value))) {
        Ok(exception) => PyErr::from_value(exception),
        Err(_) => error,
    }
}
