//! What a handler returns, in a form every binding can build without going through JSON text.

use crate::handler::HandlerError;
use crate::problem::Problem;
use crate::stream::BodyStream;
use bytes::Bytes;
use http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use serde::Serialize;

/// A status a handler may send: a final status, 200–599. Anything else (a 1xx, which is
/// never a final answer; 0; 65736, which a 16-bit cast would wrap to 200) is the handler's
/// mistake, decided here once for every language.
pub(crate) fn status_code(code: i64) -> Result<StatusCode, String> {
    u16::try_from(code)
        .ok()
        .filter(|c| (200..=599).contains(c))
        .and_then(|c| StatusCode::from_u16(c).ok())
        .ok_or_else(|| format!("{code} is not an HTTP status a response can have (200-599)"))
}

/// The status of a response a handler built explicitly: a final status ([`status_code`]), or
/// 101, the answer that admits a WebSocket handshake (see
/// [`crate::socket::SocketHandler::admission`]). An HTTP route's handler that answers 101 is
/// refused where its answer is sent (`route::answer`), with the message [`status_code`] gives.
fn explicit_status(code: i64) -> Result<StatusCode, String> {
    match code {
        101 => Ok(StatusCode::SWITCHING_PROTOCOLS),
        code => status_code(code),
    }
}

/// Room for headers in a response's map, sized for the map's second life: once HTTP/1 has
/// written the response, hyper empties the map and parses the connection's next request into
/// it, reserving only what that request sent, and the request-id layer then adds one more.
/// A map made by its first insert holds 6 (maps hold three quarters of a power of two: 3, 6,
/// 12, 24), so a client sending 6 headers (oha does) made every request re-hash its map into
/// one twice the size: json-small cost 35,412 instructions a request in Rust, 34,684 with
/// this room (callgrind, 3,000 requests). Requests of up to 11 headers now never grow the
/// map, and those of 7 to 11 no longer make hyper allocate a larger one before parsing.
const RECYCLED_HEADER_ROOM: usize = 12;

/// A response: status, headers, and a body that is whole or streamed.
#[derive(Debug)]
pub struct Response {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: ResponseBody,
    /// Whether the body is JSON a binding's writer wrote through the route's response shape
    /// ([`Response::shaped_json`]); any other JSON body of a route that declares a response
    /// is filtered by the core (`shape::ResponseRules`).
    shaped: bool,
}

/// All of a body at once, chunks as a producer makes them (see [`crate::stream`]), or a file
/// the core reads and answers ranges of ([`Response::file`]).
#[derive(Debug)]
pub enum ResponseBody {
    Full(Bytes),
    Stream(BodyStream),
    File(std::path::PathBuf),
}

impl ResponseBody {
    /// The bytes of a whole body; `None` for a stream.
    pub fn bytes(&self) -> Option<&Bytes> {
        match self {
            ResponseBody::Full(bytes) => Some(bytes),
            ResponseBody::Stream(_) | ResponseBody::File(_) => None,
        }
    }
}

impl Response {
    pub fn new(status: StatusCode) -> Self {
        Response { status, headers: HeaderMap::with_capacity(RECYCLED_HEADER_ROOM), body: ResponseBody::Full(Bytes::new()), shaped: false }
    }

    /// The file at `path`, sent as a static mount sends its files: its type guessed from its
    /// name, its length, `ETag` and `Last-Modified`, a range when the request asks one, 304 to
    /// a request whose validators match (`static_files::file_answer`). Headers set on it
    /// (a type, `content-disposition`) replace the file's own; a status other than 200 sends
    /// the whole file with it. Read when the answer is sent: a file that is not there then is
    /// a 404.
    pub fn file(path: impl Into<std::path::PathBuf>) -> Self {
        let mut response = Response::new(StatusCode::OK);
        response.body = ResponseBody::File(path.into());
        response
    }

    /// Whether the body is a file ([`Response::file`]), which is answered once the file is read.
    pub(crate) fn is_file(&self) -> bool {
        matches!(self.body, ResponseBody::File(_))
    }

    /// A file's answer as (status, headers, path); any other response as it is.
    pub(crate) fn into_file(self) -> Result<(StatusCode, HeaderMap, std::path::PathBuf), Response> {
        match self.body {
            ResponseBody::File(path) => Ok((self.status, self.headers, path)),
            body => Err(Response { body, ..self }),
        }
    }

    /// A streamed body (`application/octet-stream` unless a `content-type` is set after).
    pub fn stream(body: BodyStream) -> Self {
        let mut response = Response::new(StatusCode::OK).with_header(header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"));
        response.body = ResponseBody::Stream(body);
        response
    }

    /// A stream of Server-Sent Events ([`BodyStream::events`], or encoded events from a
    /// binding), with the headers an event stream needs: its content type, `no-cache` (a
    /// cache must not replay a live feed), and `x-accel-buffering: no`, so a proxy in front
    /// (nginx) passes each event on instead of buffering the response.
    pub fn events(body: BodyStream) -> Self {
        Response::stream(body)
            .with_header(header::CONTENT_TYPE, HeaderValue::from_static(EVENT_STREAM))
            .with_header(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"))
            .with_header(HeaderName::from_static("x-accel-buffering"), HeaderValue::from_static("no"))
    }

    /// Already-serialised JSON text. On a route that declares its response, the core parses
    /// it and leaves out what the schema does not declare, as it does for a Rust handler's
    /// [`Response::json`]: text a handler made itself (`json.dumps`, `JSON.stringify`,
    /// `to_json`) is filtered like any other result.
    pub fn json_bytes(body: impl Into<Bytes>) -> Self {
        Response::new(StatusCode::OK)
            .with_body(body)
            .with_header(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))
    }

    /// JSON a binding's writer wrote from its language's objects while asking the route's
    /// response shape (`HostRoute::response_shape`), so the core does not filter it again.
    /// Only such a writer may say so: text from anywhere else is [`Response::json_bytes`].
    pub fn shaped_json(body: impl Into<Bytes>) -> Self {
        Response { shaped: true, ..Response::json_bytes(body) }
    }

    /// See [`Response::shaped_json`].
    pub fn is_shaped(&self) -> bool {
        self.shaped
    }

    /// `value` as JSON, written by the core's own writer ([`crate::json_text::to_vec`]): the
    /// same text serde_json writes, with the escaping every binding's answers get.
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<Self, HandlerError> {
        let bytes = crate::json_text::to_vec(value).map_err(|e| HandlerError::new(format!("response is not JSON-serialisable: {e}")))?;
        Ok(Response::json_bytes(bytes))
    }

    pub fn text(body: impl Into<String>) -> Self {
        Response::new(StatusCode::OK)
            .with_body(body.into())
            .with_header(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"))
    }

    pub fn bytes(body: impl Into<Bytes>) -> Self {
        Response::new(StatusCode::OK)
            .with_body(body)
            .with_header(header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"))
    }

    pub fn problem(problem: &Problem) -> Self {
        Response::new(problem.status_code())
            .with_body(problem.body())
            .with_header(header::CONTENT_TYPE, HeaderValue::from_static(crate::problem::PROBLEM_JSON))
    }

    pub fn with_status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }

    pub fn with_body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = ResponseBody::Full(body.into());
        self
    }

    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.insert(name, value);
        self
    }

    /// JSON labelled `application/json; charset=utf-8` where it says `application/json` and no
    /// parameter: what Fastify and Express send, for a type the app set itself too
    /// (`reply.type('application/json')`), and what a Node app's tests compare whole. Any other
    /// type, one with a parameter, or none is left as it is.
    ///
    /// Cost, measured on a loop of `json_bytes` answers made in another crate, as Node's are
    /// (callgrind, release, 200,000 answers): 512 instructions an answer as a `get` then an
    /// `insert`; 133 as one lookup that replaces the value in place, compares the exact
    /// spelling before any other and is inlined, so the response is not copied in and out.
    #[inline]
    pub fn with_json_charset(mut self) -> Self {
        if let Some(value) = self.headers.get_mut(header::CONTENT_TYPE) {
            let bytes = value.as_bytes();
            if bytes == b"application/json" || bytes.eq_ignore_ascii_case(b"application/json") {
                *value = HeaderValue::from_static("application/json; charset=utf-8");
            }
        }
        self
    }

    /// Adds a header given as text, refusing names or values HTTP cannot carry.
    pub fn try_header(mut self, name: &str, value: &str) -> Result<Self, HandlerError> {
        let name = HeaderName::try_from(name).map_err(|_| HandlerError::new(format!("invalid header name {name:?}")))?;
        let value = HeaderValue::try_from(value).map_err(|_| HandlerError::new(format!("invalid value for header {name}")))?;
        self.headers.append(name, value);
        Ok(self)
    }

    /// A response a handler built explicitly (`Response(...)`, a Rack triplet, `new Response`),
    /// from plain parts: the status as the language gave it, the body already converted (or
    /// none), and header pairs in order. What every language's parts mean is decided here:
    /// a status outside 200–599 (but 101: see [`explicit_status`]) or a header HTTP cannot
    /// carry makes the whole response unsendable (the client gets a bare 500, the log says
    /// why); a name may repeat (lists of values arrive as repeated pairs); a `content-type`
    /// pair replaces the body's own.
    pub fn from_parts<N: AsRef<str>, V: AsRef<str>>(
        status: i64,
        body: Option<Response>,
        headers: impl IntoIterator<Item = (N, V)>,
    ) -> Result<Response, HandlerError> {
        let status = explicit_status(status).map_err(|reason| HandlerError::new(format!("returned a response that cannot be sent: {reason}")))?;
        let mut response = body.unwrap_or_else(|| Response::new(status)).with_status(status);
        response.extend_headers(headers)?;
        Ok(response)
    }

    /// A handler's HTTP error (`HTTPException`, `HttpError`, `Ferrule::HTTPError`): its problem
    /// response, with the same rules for status and headers as [`Response::from_parts`] — an
    /// error that cannot be sent as given is a bare 500 in every language, never a partial one.
    pub fn http_error<N: AsRef<str>, V: AsRef<str>>(
        status: i64,
        detail: Option<String>,
        headers: impl IntoIterator<Item = (N, V)>,
    ) -> Result<Response, HandlerError> {
        let status = status_code(status).map_err(|reason| HandlerError::new(format!("raised an HTTP error that cannot be sent: {reason}")))?;
        let mut problem = Problem::status(status);
        if let Some(detail) = detail {
            problem = problem.with_detail(detail);
        }
        let mut response = Response::problem(&problem);
        response.extend_headers(headers).map_err(|e| HandlerError::new(format!("raised an HTTP error that cannot be sent: {e}")))?;
        Ok(response)
    }

    /// [`Response::http_error`] with a detail that is any JSON value, given as its text (see
    /// [`Problem::body_with_detail_json`]).
    pub fn http_error_json<N: AsRef<str>, V: AsRef<str>>(
        status: i64,
        detail: &[u8],
        headers: impl IntoIterator<Item = (N, V)>,
    ) -> Result<Response, HandlerError> {
        let status = status_code(status).map_err(|reason| HandlerError::new(format!("raised an HTTP error that cannot be sent: {reason}")))?;
        let mut response = Response::problem(&Problem::status(status)).with_body(Problem::status(status).body_with_detail_json(detail));
        response.extend_headers(headers).map_err(|e| HandlerError::new(format!("raised an HTTP error that cannot be sent: {e}")))?;
        Ok(response)
    }

    fn extend_headers<N: AsRef<str>, V: AsRef<str>>(&mut self, headers: impl IntoIterator<Item = (N, V)>) -> Result<(), HandlerError> {
        // The handler's first `cache-control` and `x-accel-buffering` replace the ones an event
        // stream comes with (`Response::events`); more of the same name add to them. Appended,
        // `no-store` went out beside the stream's `no-cache` (found by a probe; sse-starlette
        // lets the app's win).
        let mut replaced = [false; 2];
        for (name, value) in headers {
            let (name, value) = (name.as_ref(), value.as_ref());
            let name = HeaderName::try_from(name).map_err(|_| HandlerError::new(format!("invalid header name {name:?}")))?;
            let value = HeaderValue::try_from(value).map_err(|_| HandlerError::new(format!("invalid value for header {name}")))?;
            match name {
                // The core frames the body it sends: a length or coding from the handler that
                // did not match it would end the response early or run it into the next one
                // on a kept-alive connection. A stream's declared length is kept, and the
                // stream held to it (`BodyStream::declare_length`): a download's progress.
                header::CONTENT_LENGTH => {
                    if let ResponseBody::Stream(stream) = &mut self.body {
                        if let Some(length) = value.to_str().ok().and_then(|v| v.trim().parse::<u64>().ok()) {
                            stream.declare_length(length);
                        }
                    }
                }
                header::TRANSFER_ENCODING => {}
                // One body has one type: the handler's last word replaces the body's own.
                header::CONTENT_TYPE => {
                    self.headers.insert(name, value);
                }
                _ => {
                    let first = match name.as_str() {
                        "cache-control" => Some(&mut replaced[0]),
                        "x-accel-buffering" => Some(&mut replaced[1]),
                        _ => None,
                    };
                    match first {
                        Some(seen) if !*seen => {
                            *seen = true;
                            self.headers.insert(name, value);
                        }
                        _ => {
                            self.headers.append(name, value);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The response a route's handler gave, as axum sends it; a stream's failure is logged
    /// with `route`.
    pub(crate) fn into_http(self, route: &std::sync::Arc<str>) -> http::Response<axum::body::Body> {
        // 204, 205 and 304 never carry a body (RFC 9110 §15.3.5, §15.3.6, §15.4.5), so nor a
        // type for one (Rack::Lint refuses a 204 or 304 that names one).
        let mut headers = self.headers;
        let body = match self.body {
            _ if matches!(self.status, StatusCode::NO_CONTENT | StatusCode::RESET_CONTENT | StatusCode::NOT_MODIFIED) => {
                headers.remove(header::CONTENT_TYPE);
                axum::body::Body::empty()
            }
            ResponseBody::Full(bytes) => axum::body::Body::from(bytes),
            // Answered by `route::answer`, which reads the file (`static_files::file_answer`);
            // a file that reaches here has no request to be answered for.
            ResponseBody::File(path) => {
                tracing::error!(target: "ferrule::handler", route = %route, "handler for {route} failed: answered with the file {} where no file can be sent", path.display());
                return crate::problem::Problem::internal().into_http();
            }
            // Only a stream asks its content type (a header lookup a whole body does not pay).
            ResponseBody::Stream(stream) => {
                let keep_alive = stream.keep_alive();
                let body = stream.logged(route.clone(), is_event_stream(&headers)).into_body();
                let mut response = http::Response::new(body);
                // Never compressed, its length declared or not (`middleware::compression`).
                response.extensions_mut().insert(crate::stream::Streamed);
                if let Some(every) = keep_alive {
                    response.extensions_mut().insert(crate::stream::KeepAlive(every));
                }
                *response.status_mut() = self.status;
                *response.headers_mut() = headers;
                return response;
            }
        };
        let mut response = http::Response::new(body);
        *response.status_mut() = self.status;
        *response.headers_mut() = headers;
        response
    }
}

pub(crate) const EVENT_STREAM: &str = "text/event-stream";

/// Whether `headers` say the body is an event stream (`text/event-stream`, any parameters).
pub(crate) fn is_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case(EVENT_STREAM))
}

/// Anything a Rust handler may return.
pub trait IntoResponse {
    fn into_response(self) -> Result<Response, HandlerError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_gets_a_charset_only_where_it_has_no_parameter() {
        let type_of = |response: Response| response.headers.get(header::CONTENT_TYPE).map(|v| v.to_str().unwrap().to_owned());
        assert_eq!(type_of(Response::json_bytes("{}").with_json_charset()).as_deref(), Some("application/json; charset=utf-8"));
        let given = |value: &str| Response::from_parts(200, Some(Response::text("{}")), [("content-type", value)]).unwrap().with_json_charset();
        assert_eq!(type_of(given("Application/JSON")).as_deref(), Some("application/json; charset=utf-8"));
        for kept in ["application/json; charset=latin1", "application/problem+json", "text/plain; charset=utf-8", "application/jsonl"] {
            assert_eq!(type_of(given(kept)).as_deref(), Some(kept));
        }
        assert_eq!(type_of(Response::new(StatusCode::NO_CONTENT).with_json_charset()), None);
    }

    /// Replays what hyper's HTTP/1 server does with a response's map (1.x, `proto/h1`): it
    /// keeps the map once the head is written, empties it, reserves room for the headers the
    /// connection's next request sent and parses them into it; the request-id layer then adds
    /// its own. None of that may re-hash the map, for any client sending up to 11 headers.
    #[test]
    fn a_responses_map_takes_the_next_requests_headers_and_id_without_growing() {
        use crate::middleware::request_id::X_REQUEST_ID;
        for sent in 0..RECYCLED_HEADER_ROOM {
            let mut map = Response::json_bytes("{}").headers;
            map.insert(X_REQUEST_ID, HeaderValue::from_static("the response's id"));
            map.clear();
            let room = map.capacity();
            map.reserve(sent);
            for i in 0..sent {
                map.append(HeaderName::try_from(format!("x-sent-{i}")).unwrap(), HeaderValue::from_static("v"));
            }
            map.insert(X_REQUEST_ID, HeaderValue::from_static("the request's id"));
            assert_eq!(map.capacity(), room, "a request with {sent} headers grew the map");
        }
    }

    fn header_values(response: &Response, name: &str) -> Vec<String> {
        response.headers.get_all(name).iter().map(|v| v.to_str().unwrap().to_owned()).collect()
    }

    #[test]
    fn parts_keep_repeated_headers_and_a_content_type_replaces_the_bodys() {
        let pairs = [("set-cookie", "a=1"), ("Content-Type", "text/html"), ("set-cookie", "b=2")];
        let response = Response::from_parts(201, Some(Response::text("<p>")), pairs).unwrap();
        assert_eq!(response.status, StatusCode::CREATED);
        assert_eq!(header_values(&response, "set-cookie"), ["a=1", "b=2"]);
        assert_eq!(header_values(&response, "content-type"), ["text/html"]);
        let empty = Response::from_parts(204, None, [("x", "y")]).unwrap();
        assert!(empty.body.bytes().is_some_and(|b| b.is_empty()) && empty.headers.get("content-type").is_none());
    }

    // Found by a probe: an event stream's `no-cache` and `x-accel-buffering: no` went out
    // beside the app's own, two conflicting lines each.
    #[test]
    fn the_handlers_cache_control_replaces_an_event_streams_own() {
        let events = || Response::events(crate::stream::BodyStream::new(futures_util::stream::empty::<Result<Bytes, crate::stream::BoxError>>()));
        let pairs = [("Cache-Control", "no-store"), ("x-accel-buffering", "yes"), ("cache-control", "private")];
        let response = Response::from_parts(200, Some(events()), pairs).unwrap();
        assert_eq!(header_values(&response, "cache-control"), ["no-store", "private"], "the first replaces, the rest add");
        assert_eq!(header_values(&response, "x-accel-buffering"), ["yes"]);
        let kept = Response::from_parts(200, Some(events()), [("x-other", "1")]).unwrap();
        assert_eq!((header_values(&kept, "cache-control"), header_values(&kept, "x-accel-buffering")), (vec!["no-cache".to_owned()], vec!["no".to_owned()]));
    }

    #[test]
    fn the_core_frames_the_body_whatever_the_handler_says() {
        let pairs = [("content-length", "99"), ("transfer-encoding", "chunked"), ("content-type", "text/html"), ("content-type", "text/csv")];
        let response = Response::from_parts(200, Some(Response::text("hello")), pairs).unwrap();
        assert!(response.headers.get("content-length").is_none() && response.headers.get("transfer-encoding").is_none());
        assert_eq!(header_values(&response, "content-type"), ["text/csv"], "one body, one type: the last given");
        let sent = Response::from_parts(204, Some(Response::json_bytes("{}")), [("x", "y")]).unwrap().into_http(&"GET /".into());
        assert!(sent.headers().get("content-type").is_none(), "a 204 names no type");
        let reset = Response::from_parts(205, Some(Response::bytes("body")), [("x", "y")]).unwrap().into_http(&"GET /".into());
        assert_eq!(axum::body::HttpBody::size_hint(reset.body()).exact(), Some(0), "a 205 has no content");
    }

    #[test]
    fn a_status_or_header_that_cannot_be_sent_refuses_the_whole_response() {
        let none: [(&str, &str); 0] = [];
        for status in [65736, 0, -200, 100, 600] {
            assert!(Response::from_parts(status, None, none).is_err(), "{status}");
            assert!(Response::http_error(status, None, none).is_err(), "{status}");
        }
        assert!(Response::from_parts(200, None, [("bad name", "v")]).is_err());
        let error = Response::http_error(404, Some("gone".into()), [("x-ok", "1"), ("x-bad", "a\nb")]).unwrap_err();
        assert!(error.message().contains("invalid value for header x-bad"), "{}", error.message());
        let problem = Response::http_error(418, Some("short and stout".into()), [("retry-after", "5")]).unwrap();
        assert_eq!((problem.status.as_u16(), header_values(&problem, "retry-after")), (418, vec!["5".to_owned()]));
        assert_eq!(header_values(&problem, "content-type"), [crate::problem::PROBLEM_JSON]);
    }
}

impl IntoResponse for Response {
    fn into_response(self) -> Result<Response, HandlerError> {
        Ok(self)
    }
}

impl IntoResponse for serde_json::Value {
    fn into_response(self) -> Result<Response, HandlerError> {
        Response::json(&self)
    }
}

/// A serialisable Rust value sent as JSON.
pub struct Json<T>(pub T);

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Result<Response, HandlerError> {
        Response::json(&self.0)
    }
}

impl IntoResponse for String {
    fn into_response(self) -> Result<Response, HandlerError> {
        Ok(Response::text(self))
    }
}

impl IntoResponse for &'static str {
    fn into_response(self) -> Result<Response, HandlerError> {
        Ok(Response::text(self))
    }
}

impl IntoResponse for Bytes {
    fn into_response(self) -> Result<Response, HandlerError> {
        Ok(Response::bytes(self))
    }
}

impl IntoResponse for StatusCode {
    fn into_response(self) -> Result<Response, HandlerError> {
        Ok(Response::new(self))
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Result<Response, HandlerError> {
        Ok(Response::problem(&self))
    }
}

impl<T: IntoResponse> IntoResponse for (StatusCode, T) {
    fn into_response(self) -> Result<Response, HandlerError> {
        Ok(self.1.into_response()?.with_status(self.0))
    }
}

impl<T: IntoResponse, E: Into<HandlerError>> IntoResponse for Result<T, E> {
    fn into_response(self) -> Result<Response, HandlerError> {
        self.map_err(Into::into)?.into_response()
    }
}
