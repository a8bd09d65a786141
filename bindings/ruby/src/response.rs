//! A handler's result (or exception) → the core's `Response`.
//!
//! String → text/plain (a binary String → application/octet-stream), `Ferrule::Response` and
//! Rack's `[status, headers, body]` → as given (a body's default Content-Type as for a plain
//! String), a `Ferrule::Stream`, an Enumerator or any other object that answers `each` and is
//! no Hash, Array or Struct → streamed as text unless typed ([`crate::stream`]), anything else
//! → JSON serialised by Rust. `Ferrule::HTTPError` → its problem
//! response. What a status or a header may be is the core's decision (`Response::from_parts`).
//! Any other exception (but a signal), or a result that cannot be serialised, is logged with its
//! backtrace and becomes a bare 500 (or the answer the exception carries: [`carried_answer`]).

use crate::to_json;
use crate::types::Types;
use ferrule_core::bridge::Outcome;
use ferrule_core::log::Logs;
use ferrule_core::http::StatusCode;
use ferrule_core::shape::Shape;
use ferrule_core::stream::BodyStream;
use ferrule_core::{HandlerError, Response};
use magnus::error::ErrorType;
use magnus::{prelude::*, Error, RArray, RHash, RObject, RString, Ruby, Value};

/// Opens a streamed body: the producer (anything answering `each`) and whether it is an event stream.
pub type Open<'a> = dyn Fn(Value, bool) -> BodyStream + 'a;

/// The shape a JSON result with a status is written with (`HostRoute::response_shape`).
pub type Shapes<'a> = dyn Fn(i64) -> Shape<'a> + 'a;

/// `shapes` gives the shape a JSON result with a status is written with (the route's
/// declared responses).
pub fn from_result(ruby: &Ruby, types: &Types, value: Value, status: StatusCode, shapes: &Shapes<'_>, open: &Open<'_>) -> Outcome {
    if value.is_kind_of(types.response(ruby)) {
        return explicit(ruby, types, value, shapes, open);
    }
    if let Some(triplet) = RArray::from_value(value).filter(|a| is_rack_triplet(ruby, *a)) {
        return rack(ruby, types, triplet, open);
    }
    if let Some(streamed) = streamed(ruby, types, value, open) {
        return Ok(streamed.with_status(status));
    }
    body(ruby, value, shapes(status.as_u16().into()))
        .map(|r| r.with_status(status))
        .map_err(|message| HandlerError::new(format!("returned a value that cannot be sent: {message}")))
}

fn unsendable(message: impl std::fmt::Display) -> HandlerError {
    HandlerError::new(format!("returned a response that cannot be sent: {message}"))
}

/// The bytes of a String, and whether they are text (UTF-8, not a binary String).
fn string_bytes(ruby: &Ruby, s: RString) -> (Vec<u8>, bool) {
    let bytes = crate::raw::string_bytes(s);
    let text = s.enc_get() != ruby.ascii8bit_encindex() && std::str::from_utf8(&bytes).is_ok();
    (bytes, text)
}

fn body(ruby: &Ruby, value: Value, shape: Shape<'_>) -> Result<Response, String> {
    if let Some(s) = RString::from_value(value) {
        if s.enc_get() == ruby.ascii8bit_encindex() {
            return Ok(Response::bytes(string_bytes(ruby, s).0));
        }
        // A String whose bytes are no UTF-8 goes out as the bytes it holds, as Rack sends any
        // String: `content_type :png; File.read(path)` reads a PNG into a UTF-8-tagged String,
        // which was refused, a 500 (found by a probe; Sinatra sends it).
        let (bytes, _) = string_bytes(ruby, s);
        return Ok(String::from_utf8(bytes).map_or_else(|invalid| Response::bytes(invalid.into_bytes()), Response::text));
    }
    Ok(Response::shaped_json(to_json::to_vec(ruby, value, shape)?))
}

/// A headers Hash as pairs in order. A value that is an Array gives one header line per item
/// (Rack 3, as `set-cookie` needs); a String with newlines one per line (Rack 2).
fn header_pairs(headers: Value) -> Result<Vec<(String, String)>, String> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    if headers.is_nil() {
        return Ok(pairs);
    }
    let hash = RHash::from_value(headers).ok_or("headers must be a Hash")?;
    hash.foreach(|name: Value, value: Value| {
        let name: String = name.funcall("to_s", ())?;
        match RArray::from_value(value) {
            Some(values) => {
                for item in values.into_iter() {
                    pairs.push((name.clone(), item.funcall("to_s", ())?));
                }
            }
            None => {
                let text: String = value.funcall("to_s", ())?;
                pairs.extend(text.split('\n').map(|line| (name.clone(), line.to_owned())));
            }
        }
        Ok(magnus::r_hash::ForEach::Continue)
    })
    .map_err(|e| e.to_string())?;
    Ok(pairs)
}

/// A body sent as it is produced: a `Ferrule::Stream` (an `EventStream`: Server-Sent Events),
/// an Enumerator, or any other object that answers `each` and is no JSON value (a Rack body,
/// as Sinatra streams one; a Hash, an Array and a Struct answer `each` too, and are JSON).
/// `None` for anything else.
fn streamed(ruby: &Ruby, types: &Types, value: Value, open: &Open<'_>) -> Option<Response> {
    if value.is_kind_of(types.event_stream(ruby)) {
        let mut body = open(value, true);
        // `sse(keep_alive: 5)`: its own keep-alive period (seconds; 0: none).
        let keep_alive = value.funcall::<_, _, Option<f64>>("keep_alive", ()).ok().flatten();
        if let Some(every) = keep_alive.and_then(|seconds| std::time::Duration::try_from_secs_f64(seconds).ok()) {
            body = body.keep_alive_every(every);
        }
        return Some(Response::events(body));
    }
    let json = RHash::from_value(value).is_some() || RArray::from_value(value).is_some() || value.is_kind_of(ruby.class_struct());
    if json {
        return None;
    }
    if let Some(file) = file_body(value) {
        return Some(file);
    }
    value.respond_to("each", false).unwrap_or(false).then(|| text_stream(open(value, false)))
}

/// A Rack body that names the file it is (`to_path`: `send_file`'s, `Rack::Files`'), sent by
/// the core from disk, ranges and validators answered as a static mount's files are
/// (`Response::file`); Rack lets a server send the file in place of calling `each`. `None`
/// for any other body.
fn file_body(value: Value) -> Option<Response> {
    if !value.respond_to("to_path", false).unwrap_or(false) {
        return None;
    }
    let path: String = value.funcall("to_path", ()).ok()?;
    if value.respond_to("close", false).unwrap_or(false) {
        // Rack's contract: the server closes the body it took, whether it called `each` or not.
        let _ = value.funcall::<_, _, Value>("close", ());
    }
    Some(Response::file(path))
}

/// A stream of Strings, typed as a plain String is (text/plain; UTF-8) unless the block names
/// its type: Sinatra's streams are text (text/html there), and the core's own default for a
/// stream, bytes (`application/octet-stream`), made a browser download them.
fn text_stream(body: BodyStream) -> Response {
    use ferrule_core::http::{header, HeaderValue};
    Response::stream(body).with_header(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"))
}

/// `Ferrule::Response.new(body, status:, headers:, type:)`.
fn explicit(ruby: &Ruby, types: &Types, value: Value, shapes: &Shapes<'_>, open: &Open<'_>) -> Outcome {
    let get = |name: &str| value.funcall::<_, _, Value>(name, ()).map_err(unsendable);
    let status: i64 = get("status")?.funcall("to_i", ()).map_err(unsendable)?;
    let content = get("body")?;
    let body = if content.is_nil() {
        None
    } else if let Some(streamed) = streamed(ruby, types, content, open) {
        Some(streamed)
    } else {
        // Written with the shape declared for its own status, as Fastify's `reply.code()`.
        Some(body(ruby, content, shapes(status)).map_err(unsendable)?)
    };
    let mut pairs = header_pairs(get("headers")?).map_err(unsendable)?;
    let media_type = get("type")?;
    if !media_type.is_nil() {
        pairs.push(("content-type".into(), media_type.funcall("to_s", ()).map_err(unsendable)?));
    }
    Response::from_parts(status, body, pairs)
}

/// Rack's `[status, headers, body]`: the body a String or an Array of Strings, sent whole (as
/// text when every part is UTF-8 text, else as bytes, unless the headers name a Content-Type),
/// or any other body that answers `each` with Strings, streamed as Puma streams it.
fn rack(ruby: &Ruby, types: &Types, triplet: RArray, open: &Open<'_>) -> Outcome {
    let entry = |i: isize| triplet.entry::<Value>(i).map_err(unsendable);
    let status: i64 = entry(0)?.funcall("to_i", ()).map_err(unsendable)?;
    let content = entry(2)?;
    let parts: Vec<Value> = if RString::from_value(content).is_some() {
        vec![content]
    } else if let Some(array) = RArray::from_value(content) {
        array.into_iter().collect()
    } else if let Some(file) = (status == 200).then(|| file_body(content)).flatten() {
        // Only a 200's body is the whole file: `Rack::Files` answers a range with a 206 whose
        // body names the file but yields the range, which is streamed as it yields.
        return Response::from_parts(status, Some(file), header_pairs(entry(1)?).map_err(unsendable)?);
    } else if content.respond_to("each", false).unwrap_or(false) {
        let events = content.is_kind_of(types.event_stream(ruby));
        let body = if events { Response::events(open(content, true)) } else { text_stream(open(content, false)) };
        return Response::from_parts(status, Some(body), header_pairs(entry(1)?).map_err(unsendable)?);
    } else {
        return Err(unsendable("a Rack body must be a String or answer `each` with Strings"));
    };
    let (mut all, mut text) = (Vec::new(), true);
    for part in parts {
        let part = RString::from_value(part).ok_or_else(|| unsendable("a Rack body must hold Strings"))?;
        let (bytes, is_text) = string_bytes(ruby, part);
        all.extend_from_slice(&bytes);
        text &= is_text;
    }
    if content.respond_to("close", false).unwrap_or(false) {
        // Rack's contract: a body that can be closed is closed once read.
        let _ = content.funcall::<_, _, Value>("close", ());
    }
    let body = match String::from_utf8(all) {
        Ok(string) if text => Response::text(string),
        Ok(string) => Response::bytes(string.into_bytes()),
        Err(e) => Response::bytes(e.into_bytes()),
    };
    Response::from_parts(status, Some(body), header_pairs(entry(1)?).map_err(unsendable)?)
}

/// Rack's `[status, headers, body]`: an Integer status and a Hash of headers (Rack 3 asks a
/// Hash), so a JSON array that merely starts with a number (`[1, 2, 3]`) stays one.
pub fn is_rack_triplet(ruby: &Ruby, array: RArray) -> bool {
    array.len() == 3
        && array.entry::<Value>(0).is_ok_and(|status| status.is_kind_of(ruby.class_integer()))
        && array.entry::<Value>(1).is_ok_and(|headers| RHash::from_value(headers).is_some())
}

/// An exception from a handler: (the outcome, an error to propagate). `HTTPError` → its
/// problem; any other exception → logged, bare 500, as Sinatra and Puma rescue `Exception`:
/// a `NotImplementedError` placeholder or an `exit` must not end the thread that runs
/// handlers (with every thread gone, the server would stop answering). A signal (`Interrupt`)
/// is propagated, after a bare 500, only on the main thread, the one Ruby delivers signals to
/// (a Rack call, a test: Ctrl-C stops the program); on a worker thread a block raised it, and
/// it is the app's error, as under Puma (found by an attack probe: five `raise Interrupt`
/// requests ended the five worker threads). A kill (not an exception) is always propagated.
pub fn from_error(ruby: &Ruby, types: &Types, logs: &Logs, label: &str, error: Error) -> (Outcome, Option<Error>) {
    if let ErrorType::Exception(exception) = error.error_type() {
        if exception.is_kind_of(types.http_error(ruby)) {
            return (http_error(exception.as_value()), None);
        }
        let on_main_thread = ruby.thread_current().as_value().equal(ruby.thread_main().as_value()).unwrap_or(true);
        if !exception.is_kind_of(ruby.exception_signal()) || !on_main_thread {
            // With its backtrace, where the app's records go (stderr, or the app's Logger).
            logs.handler_failed(label, &format!("{label}: the handler raised {exception:#?}"));
            let class = crate::raw::class_name(*exception);
            return (Err(HandlerError::reported(format!("{class} raised"))), None);
        }
    }
    if let ErrorType::Error(class, message) = error.error_type() {
        // Raised by the binding itself (a conversion that failed): an ordinary failure, never
        // a reason to stop the worker thread.
        if class.is_inherited(ruby.exception_standard_error()) {
            logs.handler_failed(label, &format!("{label}: {message}"));
            return (Err(HandlerError::new(format!("{} raised", crate::raw::class_name(*class)))), None);
        }
    }
    (Err(HandlerError::new("the handler was interrupted")), Some(error))
}

/// The answer an exception carries when `Context#run_chain` raised it again after the after
/// filters ran for it (`@__ferrule_answer`): what they made of its bare 500.
pub fn carried_answer(error: &Error) -> Option<Value> {
    let ErrorType::Exception(exception) = error.error_type() else {
        return None;
    };
    let carrier = RObject::from_value(exception.as_value())?;
    carrier.ivar_get::<_, Option<Value>>("@__ferrule_answer").ok().flatten()
}

fn http_error(exception: Value) -> Outcome {
    let unreadable = |e: Error| HandlerError::new(format!("raised an HTTPError that cannot be read: {e}"));
    let status: i64 = exception.funcall::<_, _, Value>("status", ()).and_then(|s| s.funcall("to_i", ())).map_err(unreadable)?;
    let detail: Value = exception.funcall("detail", ()).map_err(unreadable)?;
    let detail = if detail.is_nil() { None } else { Some(detail.funcall::<_, _, String>("to_s", ()).map_err(unreadable)?) };
    let headers: Value = exception.funcall("headers", ()).map_err(unreadable)?;
    let pairs = header_pairs(headers).map_err(|e| HandlerError::new(format!("raised an HTTPError whose {e}")))?;
    Response::http_error(status, detail, pairs)
}
