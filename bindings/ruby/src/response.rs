//! A handler's result (or exception) → the core's `Response`.
//!
//! String → text/plain (a binary String → application/octet-stream), `Ferrule::Response` and
//! Rack's `[status, headers, body]` → as given, anything else → JSON serialised by Rust.
//! `Ferrule::HTTPError` → its problem response. Any other `StandardError`, or a result that
//! cannot be serialised, is logged with its backtrace and becomes a bare 500.

use crate::to_json;
use crate::types::Types;
use ferrule_core::bridge::Outcome;
use ferrule_core::http::{header, HeaderValue, StatusCode};
use ferrule_core::{HandlerError, Problem, Response};
use magnus::error::ErrorType;
use magnus::{prelude::*, Error, RArray, RHash, RString, Ruby, Value};

fn status_code(code: i64) -> Result<StatusCode, String> {
    u16::try_from(code).ok().and_then(|c| StatusCode::from_u16(c).ok()).ok_or_else(|| format!("{code} is not an HTTP status"))
}

pub fn from_result(ruby: &Ruby, types: &Types, value: Value, status: u16) -> Outcome {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    let built = if value.is_kind_of(types.response(ruby)) {
        explicit(ruby, value)
    } else if let Some(triplet) = RArray::from_value(value).filter(|a| a.len() == 3 && a.entry::<Value>(0).map(|v| v.is_kind_of(ruby.class_integer())).unwrap_or(false)) {
        rack(ruby, triplet)
    } else {
        body(ruby, value).map(|r| r.with_status(status))
    };
    built.map_err(|message| HandlerError::new(format!("returned a value that cannot be sent: {message}")))
}

fn body(ruby: &Ruby, value: Value) -> Result<Response, String> {
    if let Some(s) = RString::from_value(value) {
        // SAFETY: the bytes are copied out at once.
        let bytes = unsafe { s.as_slice() }.to_vec();
        if s.enc_get() == ruby.ascii8bit_encindex() {
            return Ok(Response::bytes(bytes));
        }
        return String::from_utf8(bytes).map(Response::text).map_err(|_| "a String that is not valid UTF-8 (use a binary String for bytes)".into());
    }
    Ok(Response::json_bytes(to_json::to_vec(ruby, value)?))
}

fn add_headers(ruby: &Ruby, mut response: Response, headers: Value) -> Result<Response, String> {
    if headers.is_nil() {
        return Ok(response);
    }
    let hash = RHash::from_value(headers).ok_or("headers must be a Hash")?;
    let mut pairs: Vec<(String, String)> = Vec::new();
    hash.foreach(|name: Value, value: Value| {
        let name: String = name.funcall("to_s", ())?;
        let value: String = value.funcall("to_s", ())?;
        pairs.push((name, value));
        Ok(magnus::r_hash::ForEach::Continue)
    })
    .map_err(|e| e.to_string())?;
    let _ = ruby;
    for (name, value) in pairs {
        // Rack joins repeated headers with newlines.
        for line in value.split('\n') {
            if name.eq_ignore_ascii_case("content-type") {
                response.headers.remove(header::CONTENT_TYPE);
            }
            response = response.try_header(&name, line).map_err(|e| e.to_string())?;
        }
    }
    Ok(response)
}

/// `Ferrule::Response.new(body, status:, headers:, type:)`.
fn explicit(ruby: &Ruby, value: Value) -> Result<Response, String> {
    let get = |name: &str| value.funcall::<_, _, Value>(name, ()).map_err(|e| e.to_string());
    let status: i64 = get("status")?.funcall("to_i", ()).map_err(|e| e.to_string())?;
    let content = get("body")?;
    let mut response = if content.is_nil() { Response::new(StatusCode::OK) } else { body(ruby, content)? };
    response = response.with_status(status_code(status)?);
    let media_type = get("type")?;
    if !media_type.is_nil() {
        let text: String = media_type.funcall("to_s", ()).map_err(|e| e.to_string())?;
        let value = HeaderValue::try_from(text).map_err(|_| "type is not a valid header value".to_owned())?;
        response = response.with_header(header::CONTENT_TYPE, value);
    }
    add_headers(ruby, response, get("headers")?)
}

/// Rack's `[status, headers, body]`, body a String or an Array of Strings.
fn rack(ruby: &Ruby, triplet: RArray) -> Result<Response, String> {
    let entry = |i: isize| triplet.entry::<Value>(i).map_err(|e| e.to_string());
    let status: i64 = entry(0)?.funcall("to_i", ()).map_err(|e| e.to_string())?;
    let content = entry(2)?;
    let bytes = if let Some(parts) = RArray::from_value(content) {
        let mut all = Vec::new();
        for i in 0..parts.len() {
            let part = RString::from_value(parts.entry::<Value>(i as isize).map_err(|e| e.to_string())?).ok_or("a Rack body must hold Strings")?;
            // SAFETY: copied out at once.
            all.extend_from_slice(unsafe { part.as_slice() });
        }
        all
    } else if let Some(s) = RString::from_value(content) {
        // SAFETY: copied out at once.
        unsafe { s.as_slice() }.to_vec()
    } else {
        return Err("a Rack body must be a String or an Array of Strings".into());
    };
    let response = Response::new(status_code(status)?).with_body(bytes);
    add_headers(ruby, response, entry(1)?)
}

/// An exception from a handler: (the outcome, an error to propagate). `HTTPError` → its
/// problem; other `StandardError`s → logged, bare 500; anything else (a kill, `Interrupt`,
/// `SystemExit`) → bare 500 *and* propagated, so the worker thread stops as Ruby asked.
pub fn from_error(ruby: &Ruby, types: &Types, error: Error) -> (Outcome, Option<Error>) {
    if let ErrorType::Exception(exception) = error.error_type() {
        if exception.is_kind_of(types.http_error(ruby)) {
            if let Ok(response) = http_error(ruby, exception.as_value()) {
                return (Ok(response), None);
            }
        }
        if exception.is_kind_of(ruby.exception_standard_error()) {
            eprintln!("ferrule: the handler raised {exception:#?}");
            // SAFETY: reading the class name of a live exception.
            let class = unsafe { exception.classname() }.into_owned();
            return (Err(HandlerError::new(format!("{class} raised"))), None);
        }
    }
    (Err(HandlerError::new("the handler was interrupted")), Some(error))
}

fn http_error(ruby: &Ruby, exception: Value) -> Result<Response, String> {
    let status: i64 = exception.funcall::<_, _, Value>("status", ()).and_then(|s| s.funcall("to_i", ())).map_err(|e| e.to_string())?;
    let mut problem = Problem::status(status_code(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR));
    let detail: Value = exception.funcall("detail", ()).map_err(|e| e.to_string())?;
    if !detail.is_nil() {
        problem = problem.with_detail(detail.funcall::<_, _, String>("to_s", ()).map_err(|e| e.to_string())?);
    }
    let headers: Value = exception.funcall("headers", ()).map_err(|e| e.to_string())?;
    add_headers(ruby, Response::problem(&problem), headers)
}
