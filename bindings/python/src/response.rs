//! A handler's result (or exception) → the core's `Response`.
//!
//! str → text/plain, bytes → application/octet-stream, `ferrule.Response` → as given (a
//! `StreamingResponse` or `EventSourceResponse` streams its content, [`crate::stream`]), anything
//! else → JSON serialised by Rust. `ferrule.HTTPException` → its problem response. Any other
//! exception, or a result that cannot be serialised, is logged with its traceback and becomes a
//! bare 500: nothing of it reaches the client.

use crate::convert::to_json::{self, Unwritten};
use crate::dispatch::Dispatcher;
use crate::route::PyRoute;
use crate::stream::Streams;
use ferrule_core::host::HostRoute;
use ferrule_core::shape::Shape;
use ferrule_core::stream::BodyStream;
use ferrule_core::{HandlerError, Response};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyString};
use std::sync::Arc;

/// The Python classes the results are checked against (`ferrule.Response`, `ferrule.HTTPException`),
/// and the stream producers results have started.
pub struct ResultTypes {
    pub response: Py<PyAny>,
    pub http_exception: Py<PyAny>,
    pub streams: Arc<Streams>,
    /// A weak reference to the Python `App` (`request.app`); none for an app made without one.
    pub owner: Option<Py<PyAny>>,
}

pub fn from_result(py: Python<'_>, dispatcher: &Dispatcher, route: &Arc<HostRoute<PyRoute>>, result: &Bound<'_, PyAny>) -> Result<Response, HandlerError> {
    from_result_as(py, dispatcher, Some(route), route.status, result)
}

/// A result sent with `status` when it is a plain value, written with `route`'s response
/// shapes (none for a request no route took).
pub fn from_result_as(
    py: Python<'_>,
    dispatcher: &Dispatcher,
    route: Option<&Arc<HostRoute<PyRoute>>>,
    status: ferrule_core::http::StatusCode,
    result: &Bound<'_, PyAny>,
) -> Result<Response, HandlerError> {
    let types = dispatcher.types();
    let shape_for = |status: i64| route.map_or(Shape::any(), |route| route.response_shape(status));
    if result.is_instance(types.response.bind(py)).unwrap_or(false) {
        let start = |content: &Bound<'_, PyAny>, events| match route {
            Some(route) => types.streams.start(dispatcher.inbox(), dispatcher.tasks(), route, content, events, dispatcher.raised_slot()),
            None => Err("a stream answers a route's request, not a refused one".to_owned()),
        };
        return explicit(route, result, shape_for, start);
    }
    let shape = shape_for(status.as_u16().into());
    // Text where the schema filters JSON: FastAPI validates a returned str against the model
    // and answers 500; sent as text, a `json.dumps(user)` would carry what the schema leaves out.
    if !shape.keeps_everything() && (result.is_instance_of::<PyString>() || result.is_instance_of::<PyBytes>() || result.is_instance_of::<PyByteArray>()) {
        return Err(HandlerError::new(format!(
            "returned {} where its response schema declares JSON; return the object itself, or a Response to send text as it is",
            if result.is_instance_of::<PyString>() { "a str" } else { "bytes" }
        )));
    }
    // The core logs the message with the route; the client gets a bare 500.
    let body = body(route, result, shape).map_err(|message| HandlerError::new(format!("returned a value that cannot be sent: {message}")))?;
    Ok(body.with_status(status))
}

/// `value` as JSON, written as `route` writes a plain result with `status` (its response shape
/// for that status filters it), for middleware that reads a response's body before it is sent
/// (`Response.body_iterator`).
pub fn json_of(route: Option<&Arc<HostRoute<PyRoute>>>, value: &Bound<'_, PyAny>, status: i64) -> Result<Vec<u8>, String> {
    let shape = route.map_or(Shape::any(), |route| route.response_shape(status));
    to_json::to_vec(value, shape)
}

pub fn from_exception(py: Python<'_>, dispatcher: &Dispatcher, route: &HostRoute<PyRoute>, error: PyErr) -> Result<Response, HandlerError> {
    from_exception_in(py, dispatcher, &route.label, error)
}

/// [`from_exception`] for a request known by `label` in the log.
pub fn from_exception_in(py: Python<'_>, dispatcher: &Dispatcher, label: &str, error: PyErr) -> Result<Response, HandlerError> {
    let value = error.value(py);
    if value.is_instance(dispatcher.types().http_exception.bind(py)).unwrap_or(false) {
        return http_exception(value);
    }
    if let Some(answer) = validation_error(py, value) {
        return answer;
    }
    // On Python 3.11 a fetched error keeps its traceback beside the exception, not on it:
    // without this, the log (and a test client's re-raise) would show no frame of the handler.
    if let Some(traceback) = error.traceback(py) {
        if value.getattr(pyo3::intern!(py, "__traceback__")).is_ok_and(|kept| kept.is_none()) {
            let _ = value.setattr(pyo3::intern!(py, "__traceback__"), traceback);
        }
    }
    if !reported(py, dispatcher, label, value) {
        error.display(py);
    }
    let kind = value.get_type().name().map(|n| n.to_string()).unwrap_or_default();
    // Logged above, with its traceback: the core adds no line of its own.
    Err(HandlerError::reported(format!("{kind} raised")))
}

/// What happens to every exception that makes a 500, answered by the app's server-error
/// handler or not: its traceback goes to the `ferrule.handler` logger (the core logs the
/// summary of a bare 500), and an in-process test client raises it again in the test, as
/// Starlette's does. False when the logger could not be reached.
pub fn reported(py: Python<'_>, dispatcher: &Dispatcher, label: &str, exception: &Bound<'_, PyAny>) -> bool {
    dispatcher.keep_raised(py, exception);
    static HANDLER_RAISED: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
    HANDLER_RAISED.import(py, "ferrule._logging", "handler_raised").and_then(|log| log.call1((label, exception))).is_ok()
}

/// A plain value: str → text, bytes → octet-stream, anything else → JSON written with `shape`
/// ([`shaped_json`] for `route`'s result).
fn body(route: Option<&Arc<HostRoute<PyRoute>>>, result: &Bound<'_, PyAny>, shape: Shape<'_>) -> Result<Response, String> {
    Ok(if let Ok(text) = result.cast::<PyString>() {
        Response::text(text.to_str().map_err(|e| e.to_string())?.to_owned())
    } else if let Ok(bytes) = result.cast::<PyBytes>() {
        Response::bytes(bytes.as_bytes().to_vec())
    } else if let Ok(bytes) = result.cast::<PyByteArray>() {
        Response::bytes(bytes.to_vec())
    } else {
        Response::shaped_json(shaped_json(route, result, shape)?)
    })
}

/// A route's result as JSON with `shape`, made into its response model first (`PyRoute::
/// remake`) when it holds a scalar of a kind the model does not declare: FastAPI validates
/// every result against its model, so a `Decimal` or `"7"` for an `int` went out as 7 there
/// and as a string here, and `"x"` for an `int` was a 500 there and sent as it was here (found
/// by a differential run). A result of the declared kinds is written as it is, checked on the
/// way at a bit test a scalar; only one that is not pays for the model.
fn shaped_json(route: Option<&Arc<HostRoute<PyRoute>>>, value: &Bound<'_, PyAny>, shape: Shape<'_>) -> Result<Vec<u8>, String> {
    let Some(remake) = route.and_then(|route| route.data.remake.as_ref()) else { return to_json::to_vec(value, shape) };
    match to_json::to_vec_checked(value, shape) {
        Ok(written) => Ok(written),
        Err(Unwritten::Failed(message)) => Err(message),
        Err(Unwritten::Unadmitted(message)) => {
            let made = remake.bind(value.py()).call1((value,)).map_err(|e| format!("{message}, and its response model refuses it: {e}"))?;
            to_json::to_vec_made(&made, shape)
        }
    }
}

/// The `Content-Type` the core sends a `ferrule.Response` with when its headers name none
/// (`_ferrule.media_type_of`): its `media_type` as [`sent_media_type`] sends it, else what the
/// core's response for its kind of body carries, asked of the core with an empty body of that
/// kind (so no type is spelled twice); `None` for no body, a stream or a file. Python's
/// `call_next` names it on the response it gives, so a middleware copying those headers
/// keeps it.
pub fn media_type_of(response: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    let py = response.py();
    let media_type = response.getattr(pyo3::intern!(py, "media_type"))?;
    if !media_type.is_none() {
        return Ok(Some(sent_media_type(media_type.extract()?)));
    }
    let content = response.getattr(pyo3::intern!(py, "body"))?;
    if content.is_none() || !response.getattr(pyo3::intern!(py, "stream"))?.is_none() {
        return Ok(None);
    }
    let as_json = response.getattr(pyo3::intern!(py, "as_json"))?.is_truthy()?;
    let empty = if as_json {
        Response::json_bytes(Vec::new())
    } else if content.cast::<PyString>().is_ok() {
        Response::text(String::new())
    } else if content.cast::<PyBytes>().is_ok() || content.cast::<PyByteArray>().is_ok() {
        Response::bytes(Vec::new())
    } else {
        Response::json_bytes(Vec::new())
    };
    Ok(empty.headers.get(ferrule_core::http::header::CONTENT_TYPE).and_then(|kind| kind.to_str().ok()).map(str::to_owned))
}

/// Starlette's rule: a text type named without a charset is sent as UTF-8 (what a str body is
/// written in), so a browser does not guess another.
fn sent_media_type(mut media_type: String) -> String {
    if media_type.starts_with("text/") && !media_type.to_ascii_lowercase().contains("charset=") {
        media_type.push_str("; charset=utf-8");
    }
    media_type
}

fn unsendable(message: String) -> HandlerError {
    HandlerError::new(format!("returned a response that cannot be sent: {message}"))
}

static AFTER_RESPONSE: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();

/// `ferrule.Response(content, status_code, headers, media_type, background)`;
/// `start_stream(content, events)` takes a streamed response's producer. `route`'s result is
/// the content a `response: Response` parameter gave a status (`_answers_as`).
fn explicit<'s>(
    route: Option<&Arc<HostRoute<PyRoute>>>,
    result: &Bound<'_, PyAny>,
    shape_for: impl Fn(i64) -> Shape<'s>,
    start_stream: impl FnOnce(&Bound<'_, PyAny>, bool) -> Result<BodyStream, String>,
) -> Result<Response, HandlerError> {
    let attr = |name: &str| result.getattr(name).map_err(|e| unsendable(e.to_string()));
    let py = result.py();
    // Starlette's `background=`: set up first, since a streamed response's stream (and a
    // `FileResponse`'s file, then read by Python) is replaced by one that runs it at its end.
    // What starts a plain body's task, once that body has been made (one that cannot be sent
    // starts none, as Starlette's handler raises making it).
    let mut start_background = None;
    if !result.getattr(pyo3::intern!(py, "background")).map_err(|e| unsendable(e.to_string()))?.is_none() {
        let start = AFTER_RESPONSE.import(py, "ferrule.background", "after_response").and_then(|after| after.call1((result,))).map_err(|e| unsendable(e.to_string()))?;
        start_background = Some(start).filter(|start| !start.is_none());
    }
    let status: i64 = attr("status")?.extract().map_err(|_| unsendable("Response.status must be an int".into()))?;
    let content = attr("body")?;
    let as_json = attr("as_json")?.is_truthy().unwrap_or(false);
    // Its JSON is written with the shape declared for its own status, as Fastify's `reply.code()`;
    // a plain result that a `response: Response` parameter gave another status keeps the
    // route's own (`_answers_as`), as FastAPI applies `response_model` whatever the status
    // (found by a probe: a 201 set that way went out unfiltered).
    let answers_as = result.getattr(pyo3::intern!(py, "_answers_as")).ok().filter(|value| !value.is_none()).and_then(|value| value.extract::<i64>().ok());
    let shape = shape_for(answers_as.unwrap_or(status));
    let stream = attr("stream")?;
    let body = if !stream.is_none() {
        let events = attr("events")?.is_truthy().unwrap_or(false);
        let mut body = start_stream(&stream, events).map_err(unsendable)?;
        // `EventSourceResponse(..., ping=5)`: its own keep-alive period, as sse_starlette's.
        if let Some(seconds) = result.getattr("ping").ok().filter(|ping| !ping.is_none()).and_then(|ping| ping.extract::<f64>().ok()) {
            body = body.keep_alive_every(std::time::Duration::try_from_secs_f64(seconds).map_err(|e| unsendable(format!("ping: {e}")))?);
        }
        Some(if events { Response::events(body) } else { Response::stream(body) })
    } else if as_json {
        // A plain result given a status by a `response: Response` parameter is still the
        // handler's result; content the app put in a response itself is sent as given.
        let written = if answers_as.is_some() { shaped_json(route, &content, shape) } else { to_json::to_vec_as_given(&content, shape) };
        Some(Response::shaped_json(written.map_err(unsendable)?))
    } else if content.is_none() {
        // A `FileResponse`: the core reads the file and answers ranges of it.
        let file = attr("_file")?;
        if file.is_none() {
            None
        } else {
            Some(Response::file(file.extract::<std::path::PathBuf>().map_err(|_| unsendable("FileResponse.path must be a str".into()))?))
        }
    } else {
        // Content the app put in a response itself: sent as given, as FastAPI does.
        Some(body(None, &content, shape).map_err(unsendable)?)
    };
    let mut pairs = header_pairs(&attr("_headers")?).map_err(unsendable)?;
    let media_type = attr("media_type")?;
    if !media_type.is_none() {
        let text: String = media_type.extract().map_err(|_| unsendable("Response.media_type must be a str".into()))?;
        pairs.push(("content-type".into(), sent_media_type(text)));
    }
    let response = Response::from_parts(status, body, pairs)?;
    if let Some(start) = start_background {
        start.call0().map_err(|e| unsendable(e.to_string()))?;
    }
    Ok(response)
}

/// Headers as pairs in order: a dict of str to str or to a list of str (one header line per
/// item, as `set-cookie` needs), or a list of (name, value) pairs.
fn header_pairs(headers: &Bound<'_, PyAny>) -> Result<Vec<(String, String)>, String> {
    const SHAPE: &str = "headers must map str to str or to a list of str (a dict, or a list of pairs)";
    let mut pairs = Vec::new();
    if headers.is_none() {
        return Ok(pairs);
    }
    // `ferrule.MutableHeaders` (what hooks and middleware change): its lines, in order. Asked
    // only of what is neither a dict nor a list, so other responses pay no failed lookup.
    if headers.cast::<PyDict>().is_err() && headers.cast::<pyo3::types::PyList>().is_err() {
        if let Ok(raw) = headers.getattr(pyo3::intern!(headers.py(), "raw")) {
            return raw.extract::<Vec<(String, String)>>().map_err(|_| SHAPE.to_owned());
        }
    }
    let items: Vec<(String, Bound<'_, PyAny>)> = match headers.cast::<PyDict>() {
        Ok(dict) => dict.iter().map(|(k, v)| Ok((k.extract()?, v))).collect::<PyResult<_>>(),
        Err(_) => headers.try_iter().and_then(|items| items.map(|item| item?.extract()).collect::<PyResult<_>>()),
    }
    .map_err(|_| SHAPE.to_owned())?;
    for (name, value) in items {
        if let Ok(text) = value.extract::<String>() {
            pairs.push((name, text));
        } else {
            let values: Vec<String> = value.extract().map_err(|_| SHAPE.to_owned())?;
            pairs.extend(values.into_iter().map(|v| (name.clone(), v)));
        }
    }
    Ok(pairs)
}

/// `ferrule.HTTPException(status, detail, headers)` → its problem+json response.
fn http_exception(exception: &Bound<'_, PyAny>) -> Result<Response, HandlerError> {
    let fields = || -> PyResult<(i64, Bound<'_, PyAny>, Bound<'_, PyAny>)> {
        Ok((exception.getattr("status")?.extract()?, exception.getattr("_detail")?, exception.getattr("headers")?))
    };
    let (status, detail, headers) = fields().map_err(|e| HandlerError::new(format!("raised an HTTPException that cannot be read: {e}")))?;
    let pairs = header_pairs(&headers).map_err(|e| HandlerError::new(format!("raised an HTTPException whose {e}")))?;
    match Detail::of(&detail).map_err(|e| HandlerError::new(format!("raised an HTTPException whose detail {e}")))? {
        Detail::Text(text) => Response::http_error(status, text, pairs),
        Detail::Json(json) => Response::http_error_json(status, &json, pairs),
    }
}

/// A `RequestValidationError` raised by the app's code, or by a model's own validator as its
/// argument was converted (`ferrule.signature.refused_conversion`): the 422 problem, as
/// FastAPI answers it, and not logged (the request was wrong, not the app). `None`: another
/// exception.
fn validation_error(py: Python<'_>, exception: &Bound<'_, PyAny>) -> Option<Result<Response, HandlerError>> {
    static CLASS: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
    static BODY: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
    let class = CLASS.import(py, "ferrule.hooks", "RequestValidationError").ok()?;
    if !exception.is_instance(class).unwrap_or(false) {
        return None;
    }
    let body = BODY.import(py, "ferrule.hooks", "validation_problem_body").and_then(|write| write.call1((exception,))?.extract::<Vec<u8>>());
    Some(match body {
        Ok(body) => Ok(Response::problem(&ferrule_core::Problem::status(ferrule_core::http::StatusCode::UNPROCESSABLE_ENTITY)).with_body(body)),
        Err(error) => Err(HandlerError::new(format!("raised a RequestValidationError that cannot be sent: {error}"))),
    })
}

/// An `HTTPException`'s detail: text (a `str`, or none), or any other JSON-serialisable value
/// (FastAPI's `detail` may be a dict or a list), written as JSON.
pub enum Detail {
    Text(Option<String>),
    Json(Vec<u8>),
}

impl Detail {
    pub fn of(detail: &Bound<'_, PyAny>) -> Result<Detail, String> {
        if detail.is_none() {
            return Ok(Detail::Text(None));
        }
        if let Ok(text) = detail.cast::<pyo3::types::PyString>() {
            return Ok(Detail::Text(Some(text.to_string())));
        }
        to_json::to_vec(detail, Shape::any()).map(Detail::Json)
    }
}
