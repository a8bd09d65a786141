//! A handler's result (or exception) → the core's `Response`.
//!
//! str → text/plain, bytes → application/octet-stream, `ferrule.Response` → as given, anything
//! else → JSON serialised by Rust. `ferrule.HTTPException` → its problem response. Any other
//! exception, or a result that cannot be serialised, is logged with its traceback and becomes a
//! bare 500: nothing of it reaches the client.

use crate::convert::to_json;
use crate::route::PyRoute;
use ferrule_core::http::{header, HeaderValue, StatusCode};
use ferrule_core::{HandlerError, Problem, Response};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyString};

/// The Python classes the results are checked against (`ferrule.Response`, `ferrule.HTTPException`).
pub struct ResultTypes {
    pub response: Py<PyAny>,
    pub http_exception: Py<PyAny>,
}

pub fn from_result(py: Python<'_>, types: &ResultTypes, route: &PyRoute, result: &Bound<'_, PyAny>) -> Result<Response, HandlerError> {
    let built = if result.is_instance(types.response.bind(py)).unwrap_or(false) {
        explicit(result)
    } else {
        body(result, route.status)
    };
    // The core logs the message with the route; the client gets a bare 500.
    built.map_err(|message| HandlerError::new(format!("returned a value that cannot be sent: {message}")))
}

pub fn from_exception(py: Python<'_>, types: &ResultTypes, route: &PyRoute, error: PyErr) -> Result<Response, HandlerError> {
    let value = error.value(py);
    if value.is_instance(types.http_exception.bind(py)).unwrap_or(false) {
        if let Ok(response) = http_exception(value) {
            return Ok(response);
        }
    }
    eprintln!("ferrule: {} raised an exception:", route.label);
    error.display(py);
    let kind = value.get_type().name().map(|n| n.to_string()).unwrap_or_default();
    Err(HandlerError::new(format!("{kind} raised")))
}

fn status_code(code: u16) -> Result<StatusCode, String> {
    StatusCode::from_u16(code).map_err(|_| format!("{code} is not an HTTP status code"))
}

/// A plain return value with the route's status.
fn body(result: &Bound<'_, PyAny>, status: u16) -> Result<Response, String> {
    let response = if let Ok(text) = result.cast::<PyString>() {
        Response::text(text.to_str().map_err(|e| e.to_string())?.to_owned())
    } else if let Ok(bytes) = result.cast::<PyBytes>() {
        Response::bytes(bytes.as_bytes().to_vec())
    } else if let Ok(bytes) = result.cast::<PyByteArray>() {
        Response::bytes(bytes.to_vec())
    } else {
        Response::json_bytes(to_json::to_vec(result)?)
    };
    Ok(response.with_status(status_code(status)?))
}

/// `ferrule.Response(status, headers, body, media_type=...)`.
fn explicit(result: &Bound<'_, PyAny>) -> Result<Response, String> {
    let attr = |name: &str| result.getattr(name).map_err(|e| e.to_string());
    let status: u16 = attr("status")?.extract().map_err(|_| "Response.status must be an int".to_owned())?;
    let content = attr("body")?;
    let mut response = if content.is_none() { Response::new(StatusCode::OK) } else { body(&content, 200)? };
    response = response.with_status(status_code(status)?);
    let media_type = attr("media_type")?;
    if !media_type.is_none() {
        let text: String = media_type.extract().map_err(|_| "Response.media_type must be a str".to_owned())?;
        let value = HeaderValue::try_from(text).map_err(|_| "Response.media_type is not a valid header value".to_owned())?;
        response = response.with_header(header::CONTENT_TYPE, value);
    }
    let headers = attr("headers")?;
    if !headers.is_none() {
        let pairs: Vec<(String, String)> = match headers.cast::<PyDict>() {
            Ok(dict) => dict.iter().map(|(k, v)| Ok((k.extract()?, v.extract()?))).collect::<PyResult<_>>(),
            Err(_) => headers.extract(),
        }
        .map_err(|_| "Response.headers must map str to str (a dict or a list of pairs)".to_owned())?;
        for (name, value) in pairs {
            if name.eq_ignore_ascii_case("content-type") {
                response.headers.remove(header::CONTENT_TYPE);
            }
            response = response.try_header(&name, &value).map_err(|e| e.to_string())?;
        }
    }
    Ok(response)
}

/// `ferrule.HTTPException(status, detail, headers)` → its problem+json response.
fn http_exception(exception: &Bound<'_, PyAny>) -> PyResult<Response> {
    let status: u16 = exception.getattr("status")?.extract()?;
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut problem = Problem::status(status);
    let detail = exception.getattr("detail")?;
    if !detail.is_none() {
        problem = problem.with_detail(detail.str()?.to_string());
    }
    let mut response = Response::problem(&problem);
    let headers = exception.getattr("headers")?;
    if !headers.is_none() {
        let headers = headers.cast::<PyDict>()?;
        for (name, value) in headers.iter() {
            let (name, value): (String, String) = (name.extract()?, value.extract()?);
            response = response.try_header(&name, &value).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        }
    }
    Ok(response)
}
