//! A route compiled once at startup, and the per-request pipeline: extract, coerce, validate,
//! call the handler, turn failures into problems.

use crate::body::{BodyReader, InputLimits};
use crate::handler::{Handler, HandlerErrorKind, HandlerFuture, Rejection};
use crate::socket::{SocketHandler, SocketRoute};
use crate::params::{FormatValues, ParamSet, RawPairs, RawValue, WholeSources};
use crate::path::PathTemplate;
use crate::problem::{Issue, Problem};
use crate::request::{Body, RequestData};
use crate::shape::ResponseRules;
use crate::spec::{AppConfig, ParamSpec, RouteSpec};
use crate::static_files::file_answer::FileAsk;
use crate::validation::SchemaError;
use axum::extract::{FromRequestParts, RawPathParams};
use futures_util::future::{BoxFuture, Either};
use futures_util::FutureExt;
use http::{header, request::Parts, StatusCode};
use std::borrow::Cow;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) struct CompiledRoute {
    pub(crate) label: std::sync::Arc<str>,
    path: ParamSet,
    query: ParamSet,
    /// The query's undeclared parameters are kept beside the declared ones
    /// ([`RouteSpec::keep_undeclared_query`]).
    keep_undeclared_query: bool,
    /// What the route asks of its query, headers and cookies taken together
    /// ([`RouteSpec::refuse_undeclared`], [`RouteSpec::object_rules`]).
    whole: WholeSources,
    headers: ParamSet,
    cookies: ParamSet,
    body: Option<BodyReader>,
    /// How much of a body is read on a route that takes none (see `body::read_unwanted`).
    body_limit: usize,
    timeout: Option<Duration>,
    handler: Target,
    /// What the core does with the declared responses (see `shape::rules`); `None` for most
    /// routes, which then pay nothing.
    responses: Option<ResponseRules>,
    /// Its responses carry its template for the metrics (only when they are on).
    labeled: bool,
    /// The name of its `{name:path}` parameter, which is empty when the router matched the
    /// path without it (`/files/` for `/files/{rest:path}`; `app::empty_rest`).
    wildcard: Option<Arc<str>>,
}

/// Where a route's path parameters are: left by axum's router in the request's extensions, or
/// matched by the app's route table (`route_table`) as spans of the path, with the template's
/// names in the same order.
pub(crate) enum Captured {
    Extensions,
    /// The last `n` of the parameters in the extensions: a request routed a second time
    /// (`by_method`) carries the first match's parameters before the route's own, and one of
    /// the same name there would be read in place of the route's.
    LastInExtensions(usize),
    Spans { names: Arc<[Arc<str>]>, spans: Vec<(usize, usize)> },
}

/// What a route runs once its request has passed: a handler that answers it, or (a WebSocket
/// route) one that is handed the upgraded connection.
pub(crate) enum Target {
    Http(Arc<dyn Handler>),
    Socket(SocketRoute),
}

impl CompiledRoute {
    pub(crate) fn compile(
        spec: &RouteSpec,
        template: &PathTemplate,
        config: &AppConfig,
        handler: Handlers,
    ) -> Result<Self, SchemaError> {
        let label = format!("{} {}", spec.method, spec.path);
        let in_route = |e: SchemaError| SchemaError { message: format!("{label}: {e}") };
        let responses = ResponseRules::compile(spec, config).map_err(in_route)?;
        let handler = match (handler, &spec.websocket) {
            (Handlers::Http(handler), None) => Target::Http(handler),
            (Handlers::Socket(handler), Some(socket)) if spec.method.eq_ignore_ascii_case("GET") && spec.body.is_none() => {
                Target::Socket(SocketRoute::new(handler, socket, config))
            }
            (Handlers::Socket(_), Some(_)) => {
                return Err(SchemaError { message: format!("{label}: a WebSocket route is a GET without a body") })
            }
            (Handlers::Http(_), Some(_)) => return Err(SchemaError { message: format!("{label}: a WebSocket route needs a socket handler") }),
            (Handlers::Socket(_), None) => return Err(SchemaError { message: format!("{label}: a socket handler needs a WebSocket route") }),
        };
        let path_specs = crate::path::param_specs(template, &spec.path_params);
        let limit = spec.body_limit.unwrap_or(config.body_limit);
        let formats = if spec.formats_as_sent { FormatValues::AsSent } else { FormatValues::Typed };
        let whole = WholeSources::compile(spec).map_err(in_route)?;
        Ok(CompiledRoute {
            path: ParamSet::compile_as("path", &path_specs, formats).map_err(in_route)?,
            query: ParamSet::compile_as("query", &spec.query, formats).map_err(in_route)?,
            keep_undeclared_query: spec.keep_undeclared_query,
            whole,
            headers: ParamSet::compile_as("header", &lowercase_names(&spec.headers), formats).map_err(in_route)?,
            cookies: ParamSet::compile_as("cookie", &spec.cookies, formats).map_err(in_route)?,
            body: spec.body.as_ref().map(|b| BodyReader::compile(b, limit, InputLimits::from_config(config), formats)).transpose().map_err(in_route)?,
            body_limit: limit,
            // A route's own 0 switches the app's deadline off for it, as 0 does for every timeout.
            timeout: spec.timeout_ms.or(config.timeout_ms).filter(|ms| *ms > 0).map(Duration::from_millis),
            handler,
            responses,
            labeled: config.metrics_url.is_some(),
            wildcard: template.params.iter().find(|p| p.wildcard).map(|p| Arc::from(p.name.as_str())),
            label: label.into(),
        })
    }

    /// The request's answer. A plain function that returns the future, not an `async fn`:
    /// what can be done before the first wait is done here, so the future holds only what
    /// lives across one (see [`Started`] for why its size is paid on every request).
    pub(crate) fn handle(self: Arc<Self>, request: axum::extract::Request, captured: Captured) -> impl Future<Output = axum::response::Response> + Send + 'static {
        if let Target::Socket(_) = &self.handler {
            // Boxed: an upgrade comes once per connection, and its state would otherwise sit in
            // every request's future.
            return Either::Left(Box::pin(async move {
                let Target::Socket(socket) = &self.handler else { unreachable!("checked above") };
                let response = self.upgrade(socket, request, captured).await;
                self.labeled(response)
            }) as BoxFuture<'static, axum::response::Response>);
        }
        let (mut parts, body) = request.into_parts();
        // Read before the handler takes the headers: what a file's answer needs of them.
        let ask = FileAsk::of(&parts);
        let mut issues = Vec::new();
        let path_params = match self.path_params(&mut parts, captured, &mut issues) {
            Ok(path_params) => path_params,
            // Boxed, as rare: a path refused as it is sent (an escape that is not one, a value
            // that is no Unicode, a `/` decoded into a segment).
            Err(problem) => {
                let refused = self.refuse(parts, bytes::Bytes::new(), problem);
                return Either::Left(Box::pin(self.answer_refused(refused, ask)));
            }
        };
        Either::Right(async move {
            // The body is read before the query, headers and cookies are typed, so that their
            // values are not kept while it arrives; its issues still come after theirs in a 422.
            let mut body_issues = Vec::new();
            // Matched in the `let`, so that the `Result` is gone before the answer is awaited:
            // a local taken apart keeps its place in the future.
            let started = match self.read_body(&parts.headers, body, &mut body_issues).await {
                Ok((body, raw_body)) => {
                    let data = self.request_data(&mut parts, path_params, body, raw_body, &mut issues);
                    issues.append(&mut body_issues);
                    if issues.is_empty() {
                        self.call(data)
                    } else {
                        // What was sent stays; the typed values of a request that failed are
                        // not handed on.
                        parts.headers = data.raw_headers;
                        match self.refuse(parts, data.raw_body, Problem::validation(issues)) {
                            Ok(started) => started,
                            Err(refused) => return self.labeled(refused),
                        }
                    }
                }
                Err(problem) => match self.refuse(parts, bytes::Bytes::new(), problem) {
                    Ok(started) => started,
                    Err(refused) => return self.labeled(refused),
                },
            };
            let response = answer(&self.label, self.responses.as_ref(), started, Answering::Request(ask)).await;
            self.labeled(response)
        })
    }

    /// A request refused before its body was read: answered by the core, or by the handler
    /// that takes such refusals ([`Self::refuse`]).
    async fn answer_refused(self: Arc<Self>, refused: Result<Started, axum::response::Response>, ask: FileAsk) -> axum::response::Response {
        let response = match refused {
            Ok(started) => answer(&self.label, self.responses.as_ref(), started, Answering::Request(ask)).await,
            Err(refused) => refused,
        };
        self.labeled(response)
    }

    /// A WebSocket route's request: checked as any other, then upgraded.
    async fn upgrade(&self, socket: &SocketRoute, mut request: axum::extract::Request, captured: Captured) -> axum::response::Response {
        let accepted = match socket.check(request.version(), request.headers()) {
            Ok(accepted) => accepted,
            Err(refused) => return refused,
        };
        let on_upgrade = request.extensions_mut().remove::<hyper::upgrade::OnUpgrade>();
        let slot = request.extensions_mut().remove::<crate::server::UpgradeSlot>();
        let (mut parts, body) = request.into_parts();
        let mut issues = Vec::new();
        let data = match self.extract(&mut parts, body, captured, &mut issues).await {
            Ok(data) if issues.is_empty() => data,
            Ok(_) => return Problem::validation(issues).into_http(),
            Err(problem) => return problem.into_http(),
        };
        let Some(on_upgrade) = on_upgrade else { return SocketRoute::no_connection() };
        // The app's hooks see the handshake before it is answered, as @fastify/websocket's
        // and Sinatra's `before` filters do: one that answers (a 401) refuses the upgrade.
        let mut kept = None;
        if let Some(admission) = socket.admission(&data) {
            let answered = answer(&self.label, None, start(self.timeout, |_| admission.answer), Answering::Handshake).await;
            if answered.status() != StatusCode::SWITCHING_PROTOCOLS {
                return answered;
            }
            kept = admission.kept;
        }
        socket.upgrade(accepted, on_upgrade, slot, data, self.label.clone(), kept)
    }

    /// A request this route's checks refused: answered with `problem` by the core (`Err`),
    /// unless the handler takes such refusals (its language's hooks or exception handlers must
    /// see it), which is then called.
    fn refuse(&self, parts: Parts, raw_body: bytes::Bytes, problem: Problem) -> Result<Started, axum::response::Response> {
        let Target::Http(handler) = &self.handler else { return Err(problem.into_http()) };
        // A refusal that ends the connection or resets the stream is the connection's business.
        if problem.close_connection || problem.stream_error.is_some() || !handler.takes_rejection(problem.status_code(), parts.uri.path()) {
            return Err(problem.into_http());
        }
        let request = RequestData::refused(parts, raw_body);
        Ok(start(self.timeout, |_| handler.rejected(request, Rejection::new(problem))))
    }

    /// `response` with this route's template, for the metrics, when they are on.
    fn labeled(&self, mut response: axum::response::Response) -> axum::response::Response {
        if self.labeled {
            let template = self.label.split_once(' ').map_or(&*self.label, |(_, path)| path);
            response.extensions_mut().insert(crate::middleware::RouteLabel(template.into()));
        }
        response
    }

    /// The request checked and read, in [`Self::handle`]'s steps: for an upgrade.
    async fn extract(&self, parts: &mut Parts, body: axum::body::Body, captured: Captured, issues: &mut Vec<Issue>) -> Result<RequestData, Problem> {
        let path_params = self.path_params(parts, captured, issues)?;
        let mut body_issues = Vec::new();
        let (body, raw_body) = self.read_body(&parts.headers, body, &mut body_issues).await?;
        let data = self.request_data(parts, path_params, body, raw_body, issues);
        issues.append(&mut body_issues);
        Ok(data)
    }

    /// The path's parameters, typed (issues to `issues`); `Err` for a path refused as it is
    /// sent.
    fn path_params(&self, parts: &mut Parts, captured: Captured, issues: &mut Vec<Issue>) -> Result<crate::Params, Problem> {
        if self.path.is_empty() {
            return Ok(Default::default());
        }
        // Nearly every path carries no escape. Then each value is a slice of the path as it
        // is: no decoding pass, and no UTF-8 check of its own (the path is a `str`). On
        // path-deep's five values that took the whole server (`ferrule-bench serve
        // ferrule-rust`, callgrind) from 28,683 to 27,465 instructions a request.
        let escaped = parts.uri.path().as_bytes().contains(&b'%');
        if escaped && !escapes_are_whole(parts.uri.path()) {
            // axum would hand `%zz` over as it is, and `%zz%22` half decoded; Fastify
            // answers such a path 400, as it does here.
            return Err(Problem::status(StatusCode::BAD_REQUEST)
                .with_detail("The request path is not valid percent-encoding: a % must be followed by two hex digits."));
        }
        let not_unicode = |path: &str| {
            Problem::validation(vec![Issue::new(
                "string_unicode",
                vec!["path".into()],
                "Input should be a valid string, unable to parse raw data as a unicode string",
                serde_json::Value::String(path.to_owned()),
            )])
        };
        // A segment's value is one segment: `%2F` decoded into `{name}` made it a path
        // (`/files/..%2Fsecret.txt` gave `../secret.txt`), which a handler building a file
        // path from it followed out of its folder (found by a probe). Starlette matches the
        // decoded path, so `{name}` never holds a `/` there: a 404, as here. Only `{rest:path}`
        // takes one. Looked at only in a path that carries an escape.
        // The rest of a path may hold a `/`, but no `..` step: the path has none left
        // (`canonical_path`), and one decoded from `%2F` (`/dl/..%2F..%2Fetc%2Fhostname`)
        // would lead a handler's `File.join(dir, rest)` out of its folder as well; there is
        // no such resource, as Sinatra answers too.
        // `decoded_slash`: whether the value holds a `/` decoded from `%2F`. A route matched by
        // expression may take a `/` as sent (`%r{/files/(.+)}`), which is no escape (found
        // on review: such a value was a 404 whenever the path held any escape).
        let one_segment = |name: &str, value: &str, decoded_slash: bool| {
            let wildcard = Some(name) == self.wildcard.as_deref();
            if decoded_slash && (!wildcard || value.split('/').any(|step| step == "..")) {
                return Err(Problem::status(StatusCode::NOT_FOUND).with_detail("No route matches this path."));
            }
            Ok(())
        };
        let routed;
        // One more for a wildcard's empty rest.
        let mut pairs = RawPairs::with_capacity(self.path.len() + 1);
        match &captured {
            Captured::Extensions | Captured::LastInExtensions(_) => {
                // axum's extractor only reads what its router left in the extensions: ready at
                // its first poll, so read here, with no future kept.
                routed = match RawPathParams::from_request_parts(parts, &()).now_or_never() {
                    Some(Ok(routed)) => routed,
                    Some(Err(_)) => return Err(not_unicode(parts.uri.path())),
                    None => {
                        tracing::error!(target: "ferrule::handler", "axum's path parameters were not ready at once: every such request is a 500");
                        return Err(Problem::internal());
                    }
                };
                let before = match captured {
                    Captured::LastInExtensions(own) => routed.iter().count().saturating_sub(own),
                    _ => 0,
                };
                for (name, value) in routed.iter().skip(before) {
                    one_segment(name, value, escaped && value.contains('/'))?;
                    pairs.push(Cow::Borrowed(name), RawValue::Text(Cow::Borrowed(value)));
                }
            }
            Captured::Spans { names, spans } => {
                let path = parts.uri.path();
                for (name, &(start, len)) in names.iter().zip(spans) {
                    let sent = &path[start..start + len];
                    let value = if escaped { percent_encoding::percent_decode_str(sent).decode_utf8().map_err(|_| not_unicode(path))? } else { Cow::Borrowed(sent) };
                    // The path is in its canonical spelling: a `%2F` stays `%2F` there.
                    one_segment(name, &value, escaped && sent.contains("%2F"))?;
                    pairs.push(Cow::Borrowed(&**name), RawValue::Text(value));
                }
            }
        }
        if let Some(wildcard) = self.wildcard.as_deref().filter(|name| pairs.values(name).next().is_none()) {
            pairs.push(Cow::Borrowed(wildcard), RawValue::Text(Cow::Borrowed("")));
        }
        Ok(self.path.extract(&pairs, issues))
    }

    /// The body, parsed and as sent. A route that declares none still keeps what was sent (413
    /// past the body limit), so a handler can read it raw; a declared body is kept as sent
    /// beside its parsed form.
    ///
    /// The one reading's own future, no `async fn` around it: that would add its arguments to
    /// every request's future.
    fn read_body<'a>(&'a self, headers: &'a http::HeaderMap, body: axum::body::Body, issues: &'a mut Vec<Issue>) -> impl Future<Output = Result<(Body, bytes::Bytes), Problem>> + Send + 'a {
        match &self.body {
            Some(reader) => Either::Left(reader.read(headers, body, issues)),
            None => Either::Right(crate::body::read_unwanted(body, self.body_limit, true, headers).map(|read| Ok((Body::None, read?.unwrap_or_default())))),
        }
    }

    /// The request handed to the handler: the rest of its parameters, read beside its path's
    /// and its body.
    fn request_data(&self, parts: &mut Parts, path_params: crate::Params, body: Body, raw_body: bytes::Bytes, issues: &mut Vec<Issue>) -> RequestData {
        let query = self.whole.query.extract(&self.query, || RawPairs::from_urlencoded(parts.uri.query().unwrap_or("").as_bytes()), self.keep_undeclared_query, issues);
        let headers = self.whole.header.extract(&self.headers, || header_pairs(parts), false, issues);
        let cookies = self.whole.cookie.extract(&self.cookies, || cookie_pairs(parts), false, issues);
        RequestData {
            method: parts.method.clone(),
            path: parts.uri.path().to_owned(),
            path_params,
            query,
            headers,
            cookies,
            body,
            raw_query: parts.uri.query().unwrap_or("").to_owned(),
            raw_body,
            client: crate::request::client_of(parts),
            forwarded: crate::forwarded::forwarded_of(parts),
            raw_headers: std::mem::take(&mut parts.headers),
            deadline: None,
        }
    }

    /// Calls the handler with a request that passed its checks.
    fn call(&self, mut data: RequestData) -> Started {
        let Target::Http(handler) = &self.handler else { unreachable!("socket routes are not called") };
        start(self.timeout, |deadline| {
            data.deadline = deadline;
            handler.call(data)
        })
    }
}

/// A handler called, its future not yet polled: what [`answer`] runs.
///
/// Why the handler is called in a plain function and not inside the future that awaits it:
/// every future is copied whole as it is first polled (into its caller's state, then into its
/// box), and an async fn keeps its arguments for all its life. A `RequestData` (416 bytes)
/// passed down into `answer` sat in every future around it, beside the multipart parser's
/// state and the WebSocket upgrade's: a route's future was 3,784 bytes. Called here, with the
/// parser and the upgrade boxed, it was 1,240 (`size_of`). On path-simple (`ferrule-bench
/// serve ferrule-rust`, cpu-clock samples) `memmove` went from 4.7–4.9 % of the server's CPU
/// to 4.1–4.3 %.
///
/// The same rule made it 560: what is read without waiting (the path's parameters, the
/// checks on a body's head) is read before the future is made, and the futures on every
/// request (`handle`'s, `answer`, `BodyReader::read`) are `async` blocks returned by plain
/// functions. An `async fn` keeps each argument twice, as passed and as bound; a value taken
/// apart (a `Result` matched by value) keeps its place while a later wait runs; and the
/// request kept its place beside the parts it was split into.
pub(crate) struct Started {
    /// `Err` when the call itself panicked.
    future: std::thread::Result<HandlerFuture>,
    /// When the route's time limit runs out, counted from the call; `None`: no limit.
    deadline: Option<Instant>,
    timeout: Option<Duration>,
}

/// Calls a handler (`call`, given the request's deadline) within the route's `timeout`; a
/// panic while building its future is caught as one while polling it is.
pub(crate) fn start(timeout: Option<Duration>, call: impl FnOnce(Option<Instant>) -> HandlerFuture) -> Started {
    let deadline = timeout.map(|limit| Instant::now() + limit);
    let future = std::panic::catch_unwind(AssertUnwindSafe(|| call(deadline)));
    Started { future, deadline, timeout }
}

/// What a handler's answer is for: a request (with what it asks of a file it may be answered
/// with), or a WebSocket's handshake (`upgrade`), the one thing a 101 may answer.
pub(crate) enum Answering {
    Request(FileAsk),
    Handshake,
}

/// Runs a handler's future to its response: within its deadline (504 past it), a panic or a
/// failure turned into a bare 500 (logged under `label`), the declared `responses` applied.
///
/// One function for both kinds, the check a compare: split into a future that settles the
/// handler and one that answers, json-small cost about 110 instructions a request more
/// (`ferrule-bench serve ferrule-rust`, callgrind), the response moved between them.
/// A plain function that returns an `async` block, not an `async fn`: an `async fn` keeps its
/// arguments twice in its future, as they were passed and as it binds them.
pub(crate) fn answer<'a>(label: &'a Arc<str>, responses: Option<&'a ResponseRules>, started: Started, answering: Answering) -> impl Future<Output = axum::response::Response> + Send + 'a {
    async move {
        // `started`'s fields are read where they are: taken apart into locals, they sat in this
        // future twice.
        let deadline = started.deadline;
        // In a block of its own: the outcome (152 bytes) is gone before a file's answer is awaited.
        let file = {
            let outcome = match started.future {
                // A panic while polling the handler's future must not reach the connection either.
                Ok(future) => {
                    let run = AssertUnwindSafe(future).catch_unwind();
                    match deadline {
                        // Dropping the handler's future at the deadline is what cancels it: a Rust
                        // future stops there; an interpreter's job sees its reply channel closed and
                        // is skipped if it has not started (see `bridge`). Boxed: the timer (112
                        // bytes) would otherwise sit in every request's future, limit or none, and a
                        // limit already pays for a timer's registration.
                        Some(deadline) => match Box::pin(tokio::time::timeout_at(deadline.into(), run)).await {
                            Ok(outcome) => outcome,
                            Err(_) => return too_late(started.timeout.unwrap_or_default()),
                        },
                        None => run.await,
                    }
                }
                Err(panic) => Err(panic),
            };
            match outcome {
                // An HTTP handler's 101 would leave the client waiting for a protocol that never
                // comes.
                Ok(Ok(response)) if response.status == StatusCode::SWITCHING_PROTOCOLS && matches!(answering, Answering::Request(_)) => {
                    let reason = crate::response::status_code(101).unwrap_err();
                    tracing::error!(target: "ferrule::handler", route = %label, "handler for {label} failed: returned a response that cannot be sent: {reason}");
                    return Problem::internal().into_http();
                }
                // Boxed: only a file's answer carries its state (a `ServeFile` call) in this future.
                Ok(Ok(response)) if response.is_file() => match answering {
                    Answering::Request(ask) => Box::pin(crate::static_files::file_answer::answer(response, ask, label)),
                    Answering::Handshake => return response.into_http(label),
                },
                Ok(Ok(response)) => {
                    return match responses {
                        Some(rules) => rules.apply(response, label).into_http(label),
                        None => response.into_http(label),
                    }
                }
                Ok(Err(error)) if error.kind() == HandlerErrorKind::Overloaded => {
                    let mut response = Problem::status(StatusCode::SERVICE_UNAVAILABLE)
                        .with_detail("The server is busy; try again shortly.")
                        .into_http();
                    response.headers_mut().insert(header::RETRY_AFTER, http::HeaderValue::from_static("1"));
                    return response;
                }
                // A binding that cancels its handler at the deadline (a Python task) may drop the
                // request a moment before the timer above fires: that is still the deadline.
                Ok(Err(_)) if deadline.is_some_and(|d| Instant::now() >= d) => return too_late(started.timeout.unwrap_or_default()),
                Ok(Err(error)) => {
                    if !error.is_reported() {
                        tracing::error!(target: "ferrule::handler", route = %label, "handler for {label} failed: {}", error.message());
                    }
                    return Problem::internal().into_http();
                }
                Err(_) => {
                    tracing::error!(target: "ferrule::handler", route = %label, "handler for {label} panicked");
                    return Problem::internal().into_http();
                }
            }
        };
        file.await
    }
}

fn too_late(limit: Duration) -> axum::response::Response {
    Problem::status(StatusCode::GATEWAY_TIMEOUT)
        .with_detail(format!("The handler did not finish within {} ms.", limit.as_millis()))
        .into_http()
}

/// The handler a route was declared with, before it is compiled.
pub(crate) enum Handlers {
    Http(Arc<dyn Handler>),
    Socket(Arc<dyn SocketHandler>),
}

/// Header names are case-insensitive; declared names are matched in lower case.
fn lowercase_names(specs: &[ParamSpec]) -> Vec<ParamSpec> {
    specs.iter().map(|s| ParamSpec { name: s.name.to_ascii_lowercase(), ..s.clone() }).collect()
}

/// Declared headers as pairs. Whitespace around a value is not part of it (RFC 9110 §5.5): an
/// HTTP/1 parser drops it, and so does this, for requests that never met one (in process).
fn header_pairs(parts: &Parts) -> RawPairs<'_> {
    let mut pairs = RawPairs::case_insensitive_with_capacity(parts.headers.len());
    for (name, value) in &parts.headers {
        let value = match std::str::from_utf8(value.as_bytes()) {
            Ok(text) => RawValue::Text(Cow::Borrowed(text.trim_matches([' ', '\t']))),
            Err(_) => RawValue::Invalid(value.as_bytes().to_vec()),
        };
        pairs.push(Cow::Borrowed(name.as_str()), value);
    }
    pairs
}

/// `Cookie: a=1; b="two"` → pairs; quotes around a value are removed as browsers send them
/// (and the escapes inside undone: `request::cookie_items`).
fn cookie_pairs(parts: &Parts) -> RawPairs<'_> {
    let mut pairs = RawPairs::new();
    for (name, value) in crate::request::cookie_items(&parts.headers) {
        pairs.push(Cow::Borrowed(name), RawValue::Text(value));
    }
    pairs
}

/// Whether every `%` in `path` starts an escape (`%` and two hex digits), as RFC 3986 writes
/// them: one pass over a path's bytes.
fn escapes_are_whole(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.iter().enumerate().filter(|(_, byte)| **byte == b'%').all(|(at, _)| bytes.get(at + 1..at + 3).is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_percent_must_start_an_escape() {
        for whole in ["/a/b", "/caf%C3%A9", "/a%2fb", "/%25"] {
            assert!(super::escapes_are_whole(whole), "{whole}");
        }
        for broken in ["/hello/%world", "/%zz", "/ok%", "/ok%2", "/a%2g"] {
            assert!(!super::escapes_are_whole(broken), "{broken}");
        }
    }
    use super::*;
    use crate::spec::{BodyKind, BodySpec};

    fn route(spec: RouteSpec) -> Arc<CompiledRoute> {
        let template = PathTemplate::parse(&spec.path).unwrap();
        let handler: Arc<dyn Handler> = Arc::new(|_: RequestData| async { StatusCode::NO_CONTENT });
        Arc::new(CompiledRoute::compile(&spec, &template, &AppConfig::default(), Handlers::Http(handler)).unwrap())
    }

    /// Each request's future is copied whole when it is first polled (see [`Started`]): it was
    /// 3,784 bytes while it carried the request into `answer` and the multipart parser inline,
    /// and 1,240 while it kept the request beside its parts, and `async fn`s their arguments.
    #[test]
    fn a_request_future_carries_neither_the_request_nor_a_body_parser() {
        let mut multipart = RouteSpec::post("/upload");
        multipart.body = Some(BodySpec::of_kind(BodyKind::Multipart, None));
        let json = RouteSpec::post("/items/{id:int}").query("q", serde_json::json!({"type": "string"})).json_body(serde_json::json!({"type": "object"}));
        let item = || Captured::Spans { names: Arc::from([Arc::from("id")]), spans: vec![(7, 1)] };
        for (spec, path, captured) in [(multipart, "/upload", Captured::Extensions), (json, "/items/7?q=a", item()), (RouteSpec::get("/"), "/", Captured::Extensions)] {
            let label = format!("{} {}", spec.method, spec.path);
            let request = axum::extract::Request::builder().method(spec.method.as_str()).uri(path).body(axum::body::Body::empty()).unwrap();
            // A type's size: the same whichever way `handle` goes; a request it takes, so its
            // path is read as a route's is.
            let future = route(spec).handle(request, captured);
            let size = std::mem::size_of_val(&future);
            assert!(size <= 600, "{label}: {size} bytes");
        }
        // What waits for the handler: it was 464 bytes, with a timer in it, limit or none.
        let started = start(None, |_| Box::pin(async { Ok(crate::response::Response::new(StatusCode::OK)) }));
        let label: Arc<str> = "GET /".into();
        let size = std::mem::size_of_val(&answer(&label, None, started, Answering::Handshake));
        assert!(size <= 160, "answer: {size} bytes");
    }
}
