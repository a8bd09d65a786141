//! A file a handler answers with ([`crate::Response::file`]: Starlette's `FileResponse`,
//! Sinatra's `send_file`, @fastify/static's `reply.sendFile`), served as a mount serves its
//! files ([`super::served`]): `Range` (206, 416) with `If-Range`, `ETag` and `Last-Modified`
//! with conditional requests (304, 412), a HEAD's length, and the bytes read from disk by the
//! runtime in 64 KiB chunks, never by the language. Starlette and Rack answer ranges from a
//! route's file as they do from a static directory; before this, a route's file was read by
//! the binding, chunk by chunk, and a video player's `Range` got the whole file.
//!
//! The handler's answer stands over the file's own: its headers (type, disposition, caching,
//! validators) replace the file's, except the ones that describe the bytes sent (length,
//! range); its status, when it is not 200, is sent with the whole file, because only a 200
//! may become a 206 or a 304 (RFC 9110 §14.2, §13.2.1). A file that is not there is the
//! core's 404; a path that names no regular file (a directory) is the handler's failure.
//!
//! What the request asked is kept from its head before the handler takes it ([`FileAsk`]):
//! for a GET or a HEAD only, and only the six headers a file's answer reads. Every GET pays
//! for looking: 111 instructions (10 ns) for one sending oha's four headers, in one pass over
//! them (callgrind and a timed loop, release build); six lookups by name cost 53 ns. Other
//! methods pay one compare.

use super::served::served;
use crate::problem::Problem;
use crate::response::Response as Answer;
use axum::body::Body;
use http::header::{self, HeaderMap, HeaderName};
use http::{Method, Request, StatusCode};
use std::sync::Arc;
use tower_http::services::ServeFile;

/// The request headers a file's answer reads.
const CONDITIONS: [HeaderName; 6] = [header::RANGE, header::IF_RANGE, header::IF_MATCH, header::IF_NONE_MATCH, header::IF_MODIFIED_SINCE, header::IF_UNMODIFIED_SINCE];

/// What a request asks of a file it may be answered with: whether it is a HEAD, and its
/// conditional and range headers (none for a method other than GET and HEAD, which no file
/// answer reads them for). A pointer, null for a GET that sent none of them: a request's
/// future carries this to its answer, and most carry nothing (a plain `bool` beside the box
/// made POST /upload's future 1,288 bytes, past its bound in `route::tests`).
#[derive(Default)]
pub(crate) struct FileAsk(Option<Box<Asked>>);

#[derive(Default)]
struct Asked {
    head: bool,
    conditions: HeaderMap,
}

impl FileAsk {
    pub(crate) fn of(parts: &http::request::Parts) -> FileAsk {
        let head = parts.method == Method::HEAD;
        if !head && parts.method != Method::GET {
            return FileAsk::default();
        }
        let mut asked: Option<Box<Asked>> = head.then(|| Box::new(Asked { head, conditions: HeaderMap::new() }));
        // One pass over what was sent, not a lookup of each name: a request sends a handful
        // of headers (the module's notes give both costs).
        for (name, value) in &parts.headers {
            if CONDITIONS.contains(name) {
                asked.get_or_insert_with(Default::default).conditions.append(name.clone(), value.clone());
            }
        }
        FileAsk(asked)
    }
}

/// Headers of the file's answer a handler's own never replace: they describe the bytes sent.
fn describes_the_bytes(name: &HeaderName) -> bool {
    [header::CONTENT_LENGTH, header::CONTENT_RANGE, header::ACCEPT_RANGES, header::TRANSFER_ENCODING].contains(name)
}

/// The answer to a request whose handler answered with a file (`response`'s body is one).
pub(crate) async fn answer(response: Answer, ask: FileAsk, label: &Arc<str>) -> axum::response::Response {
    let (status, given, path) = match response.into_file() {
        Ok(parts) => parts,
        Err(response) => return response.into_http(label),
    };
    match tokio::fs::metadata(&path).await {
        Ok(metadata) if metadata.is_file() => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return missing(),
        Ok(_) => return failed(label, &format!("answered with {}, which is not a file", path.display())),
        Err(error) => return failed(label, &format!("answered with {}, which cannot be read: {error}", path.display())),
    }
    let mut request = Request::new(Body::empty());
    if let Some(asked) = ask.0 {
        let Asked { head, conditions } = *asked;
        if head {
            *request.method_mut() = Method::HEAD;
        }
        if status == StatusCode::OK {
            *request.headers_mut() = conditions;
        }
    }
    let mut file = ServeFile::new(&path);
    let mut answer = served(request, |request| file.try_call(request), missing).await;
    let sent = answer.status();
    if !(sent == StatusCode::OK || sent == StatusCode::PARTIAL_CONTENT || sent == StatusCode::NOT_MODIFIED) {
        return answer;
    }
    if sent == StatusCode::OK {
        *answer.status_mut() = status;
    }
    let headers = answer.headers_mut();
    for name in given.keys() {
        if describes_the_bytes(name) || (sent == StatusCode::NOT_MODIFIED && name == header::CONTENT_TYPE) {
            continue;
        }
        headers.remove(name);
        for value in given.get_all(name) {
            headers.append(name.clone(), value.clone());
        }
    }
    answer
}

fn missing() -> axum::response::Response {
    Problem::status(StatusCode::NOT_FOUND).with_detail("No file at this path.").into_http()
}

fn failed(label: &Arc<str>, reason: &str) -> axum::response::Response {
    tracing::error!(target: "ferrule::handler", route = %label, "handler for {label} failed: {reason}");
    Problem::internal().into_http()
}

#[cfg(test)]
mod tests;
