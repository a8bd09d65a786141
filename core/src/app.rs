//! The app: routes plus settings, compiled into one axum router, with the route table
//! (`route_table`) in front of it for the requests a route answers as declared.

use crate::by_method::ByMethod;
use crate::handler::{Handler, Rejection};
use crate::middleware::{compression_layer, cors_layer, trusted_host_layer, AccessLogLayer, CatchPanicLayer, RequestIdLayer};
use crate::path::PathTemplate;
use crate::pattern_routes::{PatternMatch, PatternRoutes};
use crate::problem::Problem;
use crate::route::{Captured, CompiledRoute, Handlers};
use crate::route_table::{Claim, DirectRoutes, RouteTable, Routed};
use crate::socket::SocketHandler;
use crate::server::Server;
use crate::slash_redirect::SlashRedirect;
use crate::spec::{AppConfig, CompressionConfig, CorsConfig, RouteSpec, StaticSpec};
use crate::static_files::StaticDir;
use axum::routing::{MethodFilter, MethodRouter};
use axum::Router;
use http::{header, HeaderValue, Method, StatusCode};
use std::sync::Arc;
use tower::util::Either;
use tower::{Layer, ServiceBuilder};

/// A Ferrule application.
///
/// ```no_run
/// use ferrule_core::{App, Json, RequestData, RouteSpec};
/// use serde_json::json;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let app = App::new().route(
///     RouteSpec::get("/users/{id:int}").query("verbose", json!({"type": "boolean", "default": false})),
///     |req: RequestData| async move {
///         Json(json!({"id": req.path_param("id"), "verbose": req.query_param("verbose")}))
///     },
/// );
/// app.run("127.0.0.1:8000").await?;
/// # Ok(()) }
/// ```
#[derive(Default)]
pub struct App {
    config: AppConfig,
    routes: Vec<(RouteSpec, Handlers)>,
    /// Takes the requests no route takes (404, 405) when it wants them
    /// ([`Handler::takes_rejection`]); the core answers the rest.
    fallback: Option<Arc<dyn Handler>>,
    /// Directories served under a prefix (see [`crate::static_files`]).
    statics: Vec<StaticDir>,
    /// What the metrics read from the language's interpreter.
    interpreter: Option<crate::InterpreterStats>,
}

/// A route table or setting that cannot work; found when the app is built, never per request.
#[derive(Debug)]
pub struct AppError(pub String);

impl std::fmt::Display for AppError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AppError {}

struct PathGroup {
    template: String,
    axum_path: String,
    /// The expression of a path the router cannot hold (`PathTemplate::pattern`): its routes
    /// are matched in `pattern_routes`, and it is no router path.
    pattern: Option<String>,
    /// Where each of its routes was declared among the app's, by method (see
    /// `route_table::Claim`).
    orders: Vec<(Method, usize)>,
    routes: Vec<(Method, Arc<CompiledRoute>)>,
    cors: Option<CorsConfig>,
    compression: Option<CompressionConfig>,
}

impl App {
    pub fn new() -> Self {
        App::default()
    }

    pub fn with_config(config: AppConfig) -> Self {
        App { config, routes: Vec::new(), fallback: None, statics: Vec::new(), interpreter: None }
    }

    /// How the metrics (`metrics_url`) read the interpreter's queue depth and calls: a
    /// binding's host sets them to its mailbox's counts of requests handed over.
    pub fn set_interpreter_stats(&mut self, stats: crate::InterpreterStats) {
        self.interpreter = Some(stats);
    }

    /// Serves a directory under a prefix ([`crate::static_files`]): refused here when the
    /// directory cannot be opened or the prefix is taken by another directory.
    ///
    /// ```no_run
    /// use ferrule_core::{App, StaticSpec};
    /// # fn main() -> Result<(), ferrule_core::AppError> {
    /// let mut app = App::new();
    /// app.mount_static(StaticSpec { cache_control: Some("public, max-age=3600".into()), ..StaticSpec::new("/assets", "public") })?;
    /// # Ok(()) }
    /// ```
    pub fn mount_static(&mut self, spec: StaticSpec) -> Result<(), AppError> {
        let dir = StaticDir::open(&spec).map_err(AppError)?;
        if self.statics.iter().any(|d| d.prefix() == dir.prefix()) {
            return Err(AppError(format!("static files: {} is mounted twice", spec.prefix)));
        }
        self.statics.push(dir);
        Ok(())
    }

    /// Hands the requests no route takes — 404, and 405 with its `Allow` — to `handler`'s
    /// [`Handler::rejected`], for the statuses and paths its [`Handler::takes_rejection`]
    /// accepts (a binding's custom not-found handler, or hooks that see every request).
    pub fn set_fallback(&mut self, handler: Arc<dyn Handler>) {
        self.fallback = Some(handler);
    }

    pub fn config(&self) -> &AppConfig {
        &self.config
    }

    pub fn config_mut(&mut self) -> &mut AppConfig {
        &mut self.config
    }

    pub fn route(mut self, spec: RouteSpec, handler: impl Handler) -> Self {
        self.add_route(spec, Arc::new(handler));
        self
    }

    /// For bindings, which hold their handlers behind their own reference counting.
    pub fn add_route(&mut self, spec: RouteSpec, handler: Arc<dyn Handler>) {
        self.routes.push((spec, Handlers::Http(handler)));
    }

    /// A WebSocket route ([`RouteSpec::websocket`]): `handler` is handed each connection once
    /// the request has passed its checks and been upgraded.
    ///
    /// ```no_run
    /// use ferrule_core::{App, RequestData, RouteSpec, socket::{Message, Socket}};
    ///
    /// let app = App::new().websocket(RouteSpec::websocket("/echo", &[]), |_: RequestData, ws: Socket| async move {
    ///     while let Some(message) = ws.recv().await {
    ///         if ws.send(message).is_err() {
    ///             break;
    ///         }
    ///     }
    /// });
    /// ```
    pub fn websocket(mut self, spec: RouteSpec, handler: impl SocketHandler) -> Self {
        self.add_socket_route(spec, Arc::new(handler));
        self
    }

    pub fn add_socket_route(&mut self, spec: RouteSpec, handler: Arc<dyn SocketHandler>) {
        self.routes.push((spec, Handlers::Socket(handler)));
    }

    /// Compiles one route description (path template, method, schemas) without keeping it, so
    /// a binding can refuse a bad route where it is declared rather than when the app starts.
    pub fn check_route(&self, spec: &RouteSpec) -> Result<(), AppError> {
        let template = PathTemplate::of_route(spec).map_err(AppError)?;
        Method::from_bytes(spec.method.to_ascii_uppercase().as_bytes())
            .map_err(|_| AppError(format!("{} {}: invalid method", spec.method, spec.path)))?;
        let nothing = if spec.websocket.is_some() {
            Handlers::Socket(Arc::new(|_: crate::request::RequestData, _: crate::socket::Socket| async {}))
        } else {
            Handlers::Http(Arc::new(|_: crate::request::RequestData| async { StatusCode::NO_CONTENT }))
        };
        CompiledRoute::compile(spec, &template, &self.config, nothing).map(drop).map_err(|e| AppError(e.message))
    }

    /// The app's OpenAPI 3.1 document (see [`crate::openapi`]), as served at `openapi_url`.
    pub fn openapi(&self) -> Result<serde_json::Value, AppError> {
        let documented = |handlers: &Handlers| match handlers {
            Handlers::Http(handler) => handler.documented_status().map_or(200, |status| status.as_u16()),
            Handlers::Socket(_) => 101,
        };
        crate::openapi::document(&self.config, self.routes.iter().map(|(spec, handlers)| (spec, documented(handlers)))).map_err(AppError)
    }

    /// Compiles every route (paths, schemas, middleware) into an axum [`Router`].
    pub fn into_router(self) -> Result<Router, AppError> {
        Ok(Router::new().fallback_service(self.into_service()?))
    }

    /// The app as one service: its routes inside the app-wide layers, as the server calls it.
    ///
    /// Not boxed into a [`Router`] as [`App::into_router`] returns it: a router whose only
    /// service is a fallback clones that service behind a fresh box on every request and adds
    /// a route lookup and two futures around it. The server holds this stack by its own type
    /// and clones it per request without an allocation (the clones are of `Arc`s and small
    /// copies). Measured on json-small-unvalidated, interleaved with plain axum doing the same
    /// work: Ferrule ÷ axum went from 1.11 to 1.06 in CPU per request.
    pub(crate) fn into_service(self) -> Result<impl AppService, AppError> {
        self.config.check().map_err(AppError)?;
        let metrics = self.config.metrics_url.as_ref().map(|_| crate::middleware::Metrics::new(self.interpreter.clone()));
        let served = self.served_by_core(metrics.clone())?;
        let config = self.config;
        let fallback = self.fallback;
        let statics = self.statics;
        let mut groups: Vec<PathGroup> = Vec::new();
        for (declared, (spec, handler)) in self.routes.into_iter().enumerate() {
            let template = PathTemplate::of_route(&spec).map_err(AppError)?;
            let method = Method::from_bytes(spec.method.to_ascii_uppercase().as_bytes())
                .map_err(|_| AppError(format!("{} {}: invalid method", spec.method, spec.path)))?;
            let route = CompiledRoute::compile(&spec, &template, &config, handler).map_err(|e| AppError(e.message))?;
            let group = match groups.iter_mut().find(|g| g.pattern == template.pattern && (g.pattern.is_some() || g.axum_path == template.axum_path)) {
                Some(group) => group,
                None => {
                    groups.push(PathGroup {
                        template: spec.path.clone(),
                        axum_path: template.axum_path.clone(),
                        pattern: template.pattern.clone(),
                        orders: Vec::new(),
                        routes: Vec::new(),
                        cors: None,
                        compression: None,
                    });
                    groups.last_mut().expect("just pushed")
                }
            };
            if group.routes.iter().any(|(m, _)| *m == method) {
                return Err(AppError(format!("{method} {} is declared twice", spec.path)));
            }
            // CORS and compression act on the path (preflight has no method of its own), so
            // routes sharing a path share the first declared setting.
            group.cors = group.cors.take().or(spec.cors.clone());
            group.compression = group.compression.take().or(spec.compression.clone());
            group.orders.push((method.clone(), declared));
            group.routes.push((method, Arc::new(route)));
        }

        let (patterned, mut groups): (Vec<PathGroup>, Vec<PathGroup>) = groups.into_iter().partition(|group| group.pattern.is_some());

        // `/files/{rest:path}` takes `/files/` too, with `rest` empty, as Starlette's `path`
        // and Fastify's `*` do; the router's catch-all needs a character, so that path is routed
        // to the same methods, unless a route of its own takes it.
        //
        // A route of its own there keeps its methods, and the wildcard's others are routed
        // beside them, as Starlette and Fastify route them (found on review: `POST /files/`
        // beside `GET /files/{rest:path}` made `GET /files/` a 405). Only where the two spell
        // the path alike: under other names (`/u/{user}/` beside `/u/{id}/{rest:path}`) the
        // wildcard's handler would miss its own parameters, and the route of its own takes the
        // path whole.
        //
        // The path's CORS and compression stay its own route's, or, where it has none, become
        // the wildcard's: as for routes that share a path, the first declared setting is the
        // path's. A GET there takes HEAD too, so the wildcard's HEAD is not lent beside it.
        for wildcard in 0..groups.len() {
            let Some(path) = empty_rest(&groups[wildcard].axum_path) else { continue };
            let Some(own) = groups.iter().position(|group| group.axum_path == path) else { continue };
            let mut lent = false;
            for (method, route) in groups[wildcard].routes.clone() {
                let taken = groups[own].routes.iter().any(|(m, _)| *m == method || (method == Method::HEAD && *m == Method::GET));
                if !taken {
                    let order = groups[wildcard].orders.iter().find(|(m, _)| *m == method).map_or(0, |(_, order)| *order);
                    groups[own].orders.push((method.clone(), order));
                    groups[own].routes.push((method, route));
                    lent = true;
                }
            }
            if lent {
                let (cors, compression) = (groups[wildcard].cors.clone(), groups[wildcard].compression.clone());
                groups[own].cors = groups[own].cors.take().or(cors);
                groups[own].compression = groups[own].compression.take().or(compression);
            }
        }
        let empty_rests: Vec<(usize, String)> = groups
            .iter()
            .enumerate()
            .filter_map(|(index, group)| Some((index, empty_rest(&group.axum_path)?)))
            // By shape: the router holds `/u/{id}/` and `/u/{user}/` for one route, and would
            // refuse the second (found on review: the app failed to start).
            .filter(|(_, path)| {
                let shape = route_shape(path);
                !groups.iter().any(|g| route_shape(&g.axum_path) == shape) && !served.iter().any(|(p, _)| route_shape(p) == shape)
            })
            .collect();
        let routed: Vec<String> = served
            .iter()
            .map(|(path, _)| path.clone())
            .chain(groups.iter().map(|g| g.axum_path.clone()))
            .chain(empty_rests.iter().map(|(_, path)| path.clone()))
            .collect();
        let mut router = Router::new();
        let mut table = RouteTable::default();
        for (path, mut served) in served {
            // Found by the fuzzer (`static`: `G /openapi.json`): a method these paths do not take
            // was axum's bare 405, with no problem document and past the app's error handlers.
            served = not_allowed(served, HeaderValue::from_static("GET, HEAD"), fallback.clone(), config.body_limit, config.timeout_ms, None, None);
            // The app's own compression and CORS, as its routes get them: a docs page or client
            // generator on another origin reads the document too.
            if let Some(compression) = config.compression.as_ref().filter(|c| c.enabled) {
                served = served.layer(compression_layer(compression));
            }
            if let Some(cors) = &config.cors {
                served = served.layer(cors_layer(cors).map_err(AppError)?);
            }
            table.insert(&path, None, Claim::CORE);
            router = router.route(&path, served);
        }
        // Each route again, in a router of its method: a method a path does not take is asked
        // of the routes of that method before it is a 405 (see `by_method`).
        let mut of_method = Vec::new();
        for (index, group) in groups.iter().enumerate() {
            let empty_rest = empty_rests.iter().find(|(of, _)| *of == index).map(|(_, path)| path.as_str());
            for (method, route) in &group.routes {
                for path in std::iter::once(group.axum_path.as_str()).chain(empty_rest) {
                    let Some(methods) = ByMethod::method_router(method, path, route.clone()) else { continue };
                    of_method.push((method.clone(), path.to_owned(), with_path_layers(methods, group, &config)?));
                }
            }
        }
        let by_method = Arc::new(ByMethod::new(of_method));
        // The expression routes, for every 405's `Allow`; built after the method routers.
        let expressions = LaterExpressions::default();
        for (index, group) in groups.iter().enumerate() {
            let methods = build_method_router(group, &config, fallback.clone(), Some(by_method.clone()), &expressions)?;
            let direct = answered_as_declared(group, &config).then(|| group.routes.iter().cloned().collect::<DirectRoutes>());
            let empty_rest = empty_rests.iter().find(|(of, _)| *of == index).map(|(_, path)| path.as_str());
            for path in std::iter::once(group.axum_path.as_str()).chain(empty_rest) {
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| router.clone().route(path, methods.clone())));
                router = result.map_err(|panic| {
                    let reason = panic.downcast_ref::<String>().cloned().unwrap_or_default();
                    AppError(format!("route {} conflicts with another route: {reason}", group.template))
                })?;
                table.insert(path, direct.clone(), Claim { methods: Some(group.orders.as_slice().into()) });
            }
        }

        let mut pattern_routes = PatternRoutes::default();
        for group in &patterned {
            let methods = build_method_router(group, &config, fallback.clone(), None, &expressions)?;
            let expression = group.pattern.as_deref().expect("a patterned group");
            pattern_routes.push(expression, group.orders.clone(), methods).map_err(|e| AppError(format!("{}: {e}", group.template)))?;
        }
        let pattern_routes = Arc::new(pattern_routes);
        if !pattern_routes.is_empty() {
            table.patterns = Some(pattern_routes.clone());
            let _ = expressions.set(pattern_routes.clone());
        }

        let body_limit = config.body_limit;
        // `any`, not a fallback: a MethodRouter answers from its fallback with an `Allow` header
        // listing its methods, which for no route at all is an empty one.
        let timeout = config.timeout_ms.filter(|ms| *ms > 0).map(std::time::Duration::from_millis);
        let slashes = config.redirect_slashes.then(|| Arc::new(SlashRedirect::new(routed.iter().map(String::as_str))));
        let mut not_found = axum::routing::any(move |mut request: axum::extract::Request| {
            let fallback = fallback.clone();
            // Under a static mount the URI has lost the mount's prefix: the redirect, the hooks
            // and the handler judge the path as the router saw it.
            if let Some(original) = request.extensions().get::<axum::extract::OriginalUri>() {
                *request.uri_mut() = original.0.clone();
            }
            let location = slashes.as_ref().and_then(|slashes| slashes.target(request.uri()));
            async move {
                if let Some(location) = location {
                    return redirected(request, location, body_limit).await;
                }
                let problem = Problem::status(StatusCode::NOT_FOUND).with_detail("No route matches this path.");
                unrouted(request, Rejection::new(problem), fallback, body_limit, timeout).await
            }
        });
        // Compression is layered per path, never around the whole router: a router-wide layer
        // would compress again what a route's own setting left uncompressed (switched off,
        // other algorithms, a higher min_size).
        if let Some(compression) = config.compression.as_ref().filter(|c| c.enabled) {
            not_found = not_found.layer(compression_layer(compression));
        }
        if let Some(cors) = &config.cors {
            not_found = not_found.layer(cors_layer(cors).map_err(AppError)?);
        }
        // Each directory's missing files go the app's own not-found way (its hooks and
        // handlers included); one served at `/` answers first for what no route takes.
        let mut root = None;
        for dir in statics {
            let service = dir.service(not_found.clone(), config.metrics_url.is_some());
            if dir.prefix() == "/" {
                root = Some(service);
                continue;
            }
            let prefix = dir.prefix().trim_end_matches('/');
            let prefix = crate::canonical_path::canonical(prefix).unwrap_or_else(|| prefix.to_owned());
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| router.clone().nest_service(&prefix, service)));
            router = result.map_err(|_| AppError(format!("static files at {prefix}: the prefix clashes with a route")))?;
            table.insert_mount(&prefix);
        }
        router = match root {
            Some(root) => router.fallback_service(root),
            None => router.fallback_service(not_found),
        };
        // App-wide layers wrap the router once. `Router::layer` would wrap every route in each
        // of them, each time behind a box that is cloned and allocated again per request.
        let routed = CatchPanicLayer.layer(Routed { table: Arc::new(table), router, max_header_bytes: config.max_header_bytes });
        let allowed_hosts = config.allowed_hosts().map_err(AppError)?;
        if config.request_id && !config.access_log && metrics.is_none() && allowed_hosts.is_none() {
            // The default app: request ids and nothing else. A layer that is off is not in the
            // stack (`option_layer`), but its place is: an `Either` to call and to poll on every
            // request. With the three that are off by default, the app's part of a json-small
            // request (its service's call and its future's polls; `ferrule-bench serve
            // ferrule-rust`, callgrind, 3,000 requests) was 16,181 instructions; with this one
            // `Either` in their place, 15,961.
            return Ok(Either::Left(RequestIdLayer.layer(routed)));
        }
        // The access log outermost, so a line has the final status and the request id; the
        // metrics outside the panic catcher, so a caught panic counts as the 500 it became.
        Ok(Either::Right(
            ServiceBuilder::new()
                .option_layer(config.access_log.then_some(AccessLogLayer))
                .option_layer(config.request_id.then_some(RequestIdLayer))
                .option_layer(metrics.map(crate::middleware::MetricsLayer))
                // Before anything reads `Host` (a hook, a handler, CORS, the router); inside the
                // request ID and the metrics, so a refusal carries an ID and is logged and
                // counted.
                .option_layer(allowed_hosts.map(trusted_host_layer))
                .service(routed),
        ))
    }

    /// What the core serves itself, made once: the OpenAPI document at `openapi_url` and the
    /// docs page with its assets at `docs_url` (see [`crate::docs`]), except where a route of
    /// the app's own is at the same path (it wins) or the setting is `None`.
    fn served_by_core(&self, metrics: Option<Arc<crate::middleware::Metrics>>) -> Result<Vec<(String, MethodRouter)>, AppError> {
        let taken = |path: &str| self.routes.iter().any(|(spec, _)| PathTemplate::of_route(spec).is_ok_and(|t| t.pattern.is_none() && t.axum_path == path));
        // In the spelling routes are matched in, before a route of the app's is looked for there.
        let spelled = |url: String| crate::canonical_path(&url).unwrap_or(url);
        let mut served = Vec::new();
        if let Some(url) = self.config.openapi_url.clone().map(spelled).filter(|url| !taken(url)) {
            let document = serde_json::to_vec(&self.openapi()?).map_err(|e| AppError(format!("cannot write the OpenAPI document: {e}")))?;
            let document = bytes::Bytes::from(document);
            let route = axum::routing::get(move || std::future::ready(([(header::CONTENT_TYPE, "application/json")], document.clone())));
            served.push((url, route));
        }
        served.extend(crate::docs::routes(&self.config).into_iter().map(|(path, route)| (spelled(path), route)).filter(|(path, _)| !taken(path)));
        if let (Some(url), Some(metrics)) = (self.config.metrics_url.clone().map(spelled).filter(|url| !taken(url)), metrics) {
            let scrape = axum::routing::get(move || {
                let text = metrics.render();
                std::future::ready(([(header::CONTENT_TYPE, crate::middleware::OPENMETRICS)], text))
            });
            served.push((url, scrape));
        }
        Ok(served)
    }

    /// Starts serving on `listener` and returns a handle for graceful shutdown.
    pub async fn serve(self, listener: tokio::net::TcpListener) -> Result<Server, AppError> {
        let drain = std::time::Duration::from_millis(self.config.shutdown_timeout_ms);
        let limits = crate::server::ConnectionLimits::from_config(&self.config);
        let app = self.into_service()?;
        Server::start(listener, app, limits, drain).map_err(|e| AppError(format!("cannot serve: {e}")))
    }

    /// Serves on an already bound standard listener (see [`crate::bind`], [`crate::listener_from_fd`]);
    /// must be called inside a tokio runtime.
    pub async fn serve_std(self, listener: std::net::TcpListener) -> Result<Server, AppError> {
        let listener = listener
            .set_nonblocking(true)
            .and_then(|()| tokio::net::TcpListener::from_std(listener))
            .map_err(|e| AppError(format!("cannot serve: {e}")))?;
        self.serve(listener).await
    }

    /// Binds `addr`, serves until SIGINT or SIGTERM, then drains in-flight requests.
    pub async fn run(self, addr: &str) -> Result<(), AppError> {
        // A Rust program that installed a `tracing` subscriber gets the core's records
        // (`ferrule::*` targets) there; one that did not gets them as lines on stderr.
        if !tracing::dispatcher::has_been_set() {
            let _ = tracing::dispatcher::set_global_default(crate::log::Logs::stderr(self.config.log_level).dispatch().clone());
        }
        // The core's own bind (backlog 1,024), not tokio's: tokio's listens with std's 128, and
        // a burst of connections past it loses SYNs that clients retry a second later (10,000
        // WebSockets took 16.8 s to open on the Rust API against 4 s on the bindings).
        let listener = crate::server::bind(addr).map_err(|e| AppError(format!("cannot listen on {addr}: {e}")))?;
        let server = self.serve_std(listener).await?;
        crate::server::shutdown_signal().await;
        server.shutdown().await.map_err(|e| AppError(e.to_string()))
    }
}

/// A request no route takes (404, or 405 with `Allow`): answered by the core, or by the app's
/// fallback when it takes the refusal. A body sent anyway is read to its end first, as on any
/// route (`read_unwanted`), and kept for the fallback.
async fn unrouted(
    request: axum::extract::Request,
    rejection: Rejection,
    fallback: Option<Arc<dyn Handler>>,
    body_limit: usize,
    timeout: Option<std::time::Duration>,
) -> axum::response::Response {
    let (parts, body) = request.into_parts();
    let status = rejection.problem.status_code();
    let fallback = fallback.filter(|f| f.takes_rejection(status, parts.uri.path()));
    // Refused without asking for the body (see `expects_continue`): the connection's last answer.
    let unread = fallback.is_none() && !axum::body::HttpBody::is_end_stream(&body) && crate::body::expects_continue(&parts.headers);
    let raw_body = match crate::body::read_unwanted(body, body_limit, fallback.is_some(), &parts.headers).await {
        Ok(kept) => kept.unwrap_or_default(),
        Err(problem) => return problem.into_http(),
    };
    let Some(fallback) = fallback else {
        let mut response = rejection.problem.closing_if(unread).into_http();
        response.headers_mut().extend(rejection.headers);
        return response;
    };
    let label: Arc<str> = format!("{} {} ({})", parts.method, parts.uri.path(), status.as_u16()).into();
    let ask = crate::static_files::file_answer::FileAsk::of(&parts);
    let request = crate::request::RequestData::refused(parts, raw_body);
    let started = crate::route::start(timeout, |_| fallback.rejected(request, rejection));
    crate::route::answer(&label, None, started, crate::route::Answering::Request(ask)).await
}

/// 307 to `location` (`redirect_slashes`), after reading a body sent anyway, as a 404 would.
async fn redirected(request: axum::extract::Request, location: String, body_limit: usize) -> axum::response::Response {
    let (parts, body) = request.into_parts();
    let unread = !axum::body::HttpBody::is_end_stream(&body) && crate::body::expects_continue(&parts.headers);
    if let Err(problem) = crate::body::read_unwanted(body, body_limit, false, &parts.headers).await {
        return problem.into_http();
    }
    let mut response = match HeaderValue::try_from(location) {
        Ok(location) => axum::response::IntoResponse::into_response((StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, location)])),
        Err(_) => Problem::status(StatusCode::NOT_FOUND).with_detail("No route matches this path.").into_http(),
    };
    if unread {
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// The path a wildcard route also takes for an empty rest: `/files/{*rest}` → `/files/`.
fn empty_rest(axum_path: &str) -> Option<String> {
    let start = axum_path.rfind("{*")?;
    axum_path.ends_with('}').then(|| axum_path[..start].to_owned())
}

/// A router path with its parameters' names left out (`/u/{id}/{*rest}` → `/u/{}/{*}`): two
/// paths of one shape are one route to the router, whatever their parameters are called.
fn route_shape(axum_path: &str) -> String {
    let (captures, tail) = crate::path::router_captures(axum_path);
    let mut shape = String::with_capacity(axum_path.len());
    for (literal, capture) in captures {
        shape.push_str(literal);
        shape.push_str(if capture.starts_with('*') { "{*}" } else { "{}" });
    }
    shape.push_str(tail);
    shape
}

/// The app's expression routes (`pattern_routes`), set once they are built, after the method
/// routers whose 405s read them; unset when the app has none.
type LaterExpressions = Arc<std::sync::OnceLock<Arc<PatternRoutes>>>;

/// `methods` answering any other method with a 405 problem that names the `allow`ed ones, and
/// those of the expression routes that match the path too, by way of the app's own handlers for
/// what no route takes (`unrouted`).
#[allow(clippy::too_many_arguments)]
fn not_allowed(
    methods: MethodRouter,
    allow: HeaderValue,
    fallback: Option<Arc<dyn Handler>>,
    body_limit: usize,
    timeout_ms: Option<u64>,
    by_method: Option<Arc<ByMethod>>,
    expressions: Option<LaterExpressions>,
) -> MethodRouter {
    let timeout = timeout_ms.filter(|ms| *ms > 0).map(std::time::Duration::from_millis);
    methods.fallback(move |request: axum::extract::Request| {
        let (fallback, by_method) = (fallback.clone(), by_method.clone());
        let allow = match expressions.as_ref().and_then(|later| later.get()) {
            Some(expressions) => allowed_with(&allow, &expressions.methods_at(request.uri().path())),
            None => allow.clone(),
        };
        async move {
            // A route of the request's method whose template also matches the path answers it.
            let request = match by_method {
                Some(by_method) => match by_method.answer(request).await {
                    Ok(answer) => return answer,
                    Err(request) => request,
                },
                None => request,
            };
            let problem = Problem::status(StatusCode::METHOD_NOT_ALLOWED).with_detail("This path does not accept the request's method.");
            let mut rejection = Rejection::new(problem);
            rejection.headers.insert(header::ALLOW, allow);
            unrouted(request, rejection, fallback, body_limit, timeout).await
        }
    })
}

/// Whether `group`'s routes answer their own methods with nothing around them: no CORS and no
/// compression on the path (see `route_table`).
fn answered_as_declared(group: &PathGroup, config: &AppConfig) -> bool {
    let compressed = group.compression.as_ref().or(config.compression.as_ref()).is_some_and(|c| c.enabled);
    !compressed && group.cors.as_ref().or(config.cors.as_ref()).is_none()
}

/// `allow` and `more` in one `Allow`, each method once, a GET's HEAD beside it. Found on
/// review: where a template and an expression route both match a path (Sinatra's `/a/:x`, then
/// `/a/*` declared as an expression), the 405 named only the template's methods.
fn allowed_with(allow: &HeaderValue, more: &[Method]) -> HeaderValue {
    if more.is_empty() {
        return allow.clone();
    }
    let mut names: Vec<&str> = allow.to_str().unwrap_or_default().split(", ").filter(|name| !name.is_empty()).collect();
    for method in more {
        let with_head = [method.as_str()].into_iter().chain((*method == Method::GET).then_some("HEAD"));
        for name in with_head {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    HeaderValue::from_str(&names.join(", ")).unwrap_or_else(|_| allow.clone())
}

fn build_method_router(group: &PathGroup, config: &AppConfig, fallback: Option<Arc<dyn Handler>>, by_method: Option<Arc<ByMethod>>, expressions: &LaterExpressions) -> Result<MethodRouter, AppError> {
    let mut methods = MethodRouter::new();
    let mut allow: Vec<&str> = Vec::new();
    for (method, route) in &group.routes {
        let filter = MethodFilter::try_from(method.clone())
            .map_err(|_| AppError(format!("{method} {}: method not supported", group.template)))?;
        let route = route.clone();
        methods = if group.pattern.is_some() {
            // Matched by `pattern_routes`, which hands the parameters over with the request.
            methods.on(filter, move |mut request: axum::extract::Request| {
                let captured = request.extensions_mut().remove::<PatternMatch>().map_or(Captured::Extensions, PatternMatch::captured);
                route.clone().handle(request, captured)
            })
        } else {
            methods.on(filter, move |request: axum::extract::Request| route.clone().handle(request, Captured::Extensions))
        };
        allow.push(method.as_str());
        if *method == Method::GET {
            allow.push("HEAD");
        }
    }
    // A GET's HEAD beside a HEAD of its own, or lent (see `into_router`), is named once.
    let mut named = std::collections::HashSet::new();
    allow.retain(|method| named.insert(*method));
    let allow = HeaderValue::from_str(&allow.join(", ")).unwrap_or(HeaderValue::from_static("GET"));
    methods = not_allowed(methods, allow, fallback, config.body_limit, config.timeout_ms, by_method, Some(expressions.clone()));
    with_path_layers(methods, group, config)
}

/// `methods` with the path's compression and CORS around them.
fn with_path_layers(mut methods: MethodRouter, group: &PathGroup, config: &AppConfig) -> Result<MethodRouter, AppError> {
    // A route's own compression setting replaces the app's (it may switch compression off).
    if let Some(compression) = group.compression.as_ref().or(config.compression.as_ref()).filter(|c| c.enabled) {
        methods = methods.layer(compression_layer(compression));
    }
    if let Some(cors) = group.cors.as_ref().or(config.cors.as_ref()) {
        methods = methods.layer(cors_layer(cors).map_err(|e| AppError(format!("{}: {e}", group.template)))?);
    }
    Ok(methods)
}

/// What [`App::into_service`] returns: a service of the whole app that the server can clone
/// per request and call from any thread.
pub(crate) trait AppService:
    tower::Service<axum::extract::Request, Response = axum::response::Response, Error = std::convert::Infallible, Future: Send + 'static>
    + Clone
    + Send
    + Sync
    + 'static
{
}

impl<S> AppService for S where
    S: tower::Service<axum::extract::Request, Response = axum::response::Response, Error = std::convert::Infallible, Future: Send + 'static>
        + Clone
        + Send
        + Sync
        + 'static
{
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::RequestData;
    use tower::ServiceExt;

    async fn encoding(router: &Router, path: &str) -> Option<String> {
        let request = http::Request::get(path).header("accept-encoding", "gzip").body(axum::body::Body::empty()).unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        response.headers().get(header::CONTENT_ENCODING).map(|v| v.to_str().unwrap().to_owned())
    }

    #[test]
    fn a_bad_route_is_refused_where_it_is_declared() {
        let app = App::new();
        assert!(app.check_route(&RouteSpec::get("/users/{id:int}")).is_ok());
        let bad_type = app.check_route(&RouteSpec::get("/users/{id:integer}")).unwrap_err();
        assert!(bad_type.0.contains("unknown type `integer`"), "{bad_type}");
        let bad_schema = app.check_route(&RouteSpec::get("/q").query("n", serde_json::json!({"type": "integer", "minimum": "one"})));
        assert!(bad_schema.is_err());
    }

    // Found by a core-HTTP probe: a HEAD of a route answering 204 (or 304) got
    // `Content-Length: 0` from axum, which RFC 9110 §8.6 forbids in a 204.
    #[tokio::test]
    async fn a_head_of_a_204_or_304_says_no_length() {
        for status in [StatusCode::NO_CONTENT, StatusCode::NOT_MODIFIED] {
            let app = App::new().route(RouteSpec::get("/empty"), move |_: RequestData| async move { status });
            let service = app.into_service().unwrap();
            for method in [Method::GET, Method::HEAD] {
                let request = http::Request::builder().method(method.clone()).uri("/empty").body(axum::body::Body::empty()).unwrap();
                let response = service.clone().oneshot(request).await.unwrap();
                assert_eq!(response.status(), status);
                assert!(response.headers().get(header::CONTENT_LENGTH).is_none(), "{method} {status}");
            }
        }
    }

    // Found running find-my-way's and Starlette's tests and Sinatra's Regexp routes: each of
    // these paths was refused at declaration.
    #[tokio::test]
    async fn a_route_matched_by_expression_answers_after_the_templates_with_its_own_methods() {
        let params = |req: RequestData| async move {
            let mut said: Vec<String> = req.path_params.iter().map(|(name, value)| format!("{name}={}", serde_json::to_string(value).unwrap())).collect();
            said.sort();
            format!("{} {}", req.method, said.join(","))
        };
        let cors = CorsConfig { allow_origins: vec!["https://a.example".into()], ..CorsConfig::default() };
        let app = App::with_config(AppConfig { cors: Some(cors), ..AppConfig::default() })
            .route(RouteSpec::get("/files/{name}.{ext}").path_param("name", serde_json::json!({"maxLength": 5})), params)
            .route(RouteSpec::post("/files/{name}.{ext}"), params)
            .route(RouteSpec::get("/files/{id}"), |_: RequestData| async { "template" })
            .route(RouteSpec::get("/orders/{id}"), |_: RequestData| async { "order" })
            .route(RouteSpec::post("/orders/{id}.json"), params)
            .route(RouteSpec::post("/orders/{id}"), |_: RequestData| async { "posted order" })
            .route(RouteSpec::get("/docs/{page}"), |_: RequestData| async { "page" })
            .route(RouteSpec::get("/docs/{name}.{ext}"), params)
            .route(RouteSpec::delete("/docs/{name}.{ext}"), params)
            .route(RouteSpec::get("/at/:hour(^\\d{2})h").path_param("hour", serde_json::json!({"type": "integer"})), params)
            .route(RouteSpec::get("%r{/hello/(\\w+)}").with_pattern(r"/hello/(\w+)(\.json)?"), params);
        let router = app.into_router().unwrap();
        let send = |method: &str, path: &str| {
            let request = http::Request::builder().method(method).uri(path).header("origin", "https://a.example").body(axum::body::Body::empty()).unwrap();
            let router = router.clone();
            async move {
                let response = router.oneshot(request).await.unwrap();
                let (status, headers) = (response.status(), response.headers().clone());
                let body = response.into_body().collect().await.unwrap().to_bytes();
                (status, headers, String::from_utf8(body.to_vec()).unwrap())
            }
        };
        use http_body_util::BodyExt;
        let (status, headers, body) = send("GET", "/files/a.b.c").await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, "GET ext=\"c\",name=\"a.b\""));
        assert_eq!(headers.get_all(header::ACCESS_CONTROL_ALLOW_ORIGIN).iter().count(), 1, "the app's CORS once");
        assert_eq!(send("POST", "/files/a.txt").await.2, "POST ext=\"txt\",name=\"a\"");
        assert_eq!(send("GET", "/files/a").await.2, "template");
        // The route declared first answers where both match, for the request's method.
        assert_eq!(send("GET", "/docs/a.txt").await.2, "page");
        assert_eq!(send("HEAD", "/docs/a.txt").await.0, StatusCode::OK);
        assert_eq!(send("DELETE", "/docs/a.txt").await.2, "DELETE ext=\"txt\",name=\"a\"");
        // By the route of the request's method, not the path's first (found on review).
        assert_eq!(send("POST", "/orders/7.json").await.2, "POST id=\"7\"");
        assert_eq!(send("POST", "/orders/7").await.2, "posted order");
        let (status, headers, _) = send("DELETE", "/hello/bob").await;
        assert_eq!((status, headers.get(header::ALLOW).map(|v| v.to_str().unwrap())), (StatusCode::METHOD_NOT_ALLOWED, Some("GET, HEAD")));
        // A 405 names the methods of every route that matches the path, a template's and an
        // expression's alike (it named the template's alone).
        for (path, allowed) in [("/docs/a.txt", "GET, HEAD, DELETE"), ("/files/a.txt", "GET, HEAD, POST"), ("/docs/a", "GET, HEAD")] {
            let (status, headers, _) = send("PUT", path).await;
            assert_eq!((status, headers.get(header::ALLOW).map(|v| v.to_str().unwrap())), (StatusCode::METHOD_NOT_ALLOWED, Some(allowed)), "{path}");
        }
        let (status, _, body) = send("HEAD", "/files/a.txt").await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, ""));
        assert_eq!(send("GET", "/files/toolong.txt").await.0, StatusCode::UNPROCESSABLE_ENTITY, "its parameters are validated");
        assert_eq!(send("GET", "/files/a%2Fb.txt").await.0, StatusCode::NOT_FOUND, "a decoded slash is no part of a segment");
        assert_eq!(send("GET", "/at/09h").await.2, "GET hour=9");
        assert_eq!(send("GET", "/at/9h").await.0, StatusCode::NOT_FOUND);
        assert_eq!(send("GET", "/hello/bob").await.2, "GET 1=\"bob\",2=null", "a group that took no part is null");
        assert_eq!(send("GET", "/hello/bob.json").await.2, "GET 1=\"bob\",2=\".json\"");
        assert_eq!(send("GET", "/hello/").await.0, StatusCode::NOT_FOUND);
        let document = App::new().route(RouteSpec::get("/files/{name}.{ext}"), params).route(RouteSpec::get("%r{/x}").with_pattern("/x"), params).openapi().unwrap();
        assert_eq!(document["paths"].as_object().unwrap().keys().collect::<Vec<_>>(), ["/files/{name}.{ext}"]);
    }

    #[tokio::test]
    async fn a_404_carries_no_allow_header_and_a_405_names_the_methods() {
        let router = App::new().route(RouteSpec::get("/here"), |_: RequestData| async { "x" }).into_router().unwrap();
        let send = |method: &str, path: &str| {
            let request = http::Request::builder().method(method).uri(path).body(axum::body::Body::empty()).unwrap();
            router.clone().oneshot(request)
        };
        let missing = send("GET", "/nowhere").await.unwrap();
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
        assert_eq!(missing.headers().get(header::ALLOW), None);
        let wrong = send("DELETE", "/here").await.unwrap();
        assert_eq!(wrong.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(wrong.headers().get(header::ALLOW).unwrap(), "GET, HEAD");
    }

    // Found comparing with FastAPI: `/files/` was a 404 for `/files/{rest:path}`, where
    // Starlette (and Fastify, for `/files/*`) hand over an empty rest.
    #[tokio::test]
    async fn a_wildcard_takes_an_empty_rest_unless_a_route_of_its_own_takes_that_path() {
        let rest = |req: RequestData| async move { format!("rest={}", req.path_param("rest").and_then(|v| v.as_str()).unwrap_or("?")) };
        let router = App::new()
            .route(RouteSpec::get("/files/{rest:path}"), rest)
            .route(RouteSpec::get("/{rest:path}"), rest)
            .route(RouteSpec::get("/docs/{rest:path}"), rest)
            .route(RouteSpec::get("/docs/"), |_: RequestData| async { "the docs' own" })
            .into_router()
            .unwrap();
        for (path, status, body) in [
            ("/files/", StatusCode::OK, "rest="),
            ("/files/a/b", StatusCode::OK, "rest=a/b"),
            ("/", StatusCode::OK, "rest="),
            ("/docs/", StatusCode::OK, "the docs' own"),
            ("/docs/x", StatusCode::OK, "rest=x"),
        ] {
            let response = router.clone().oneshot(http::Request::get(path).body(axum::body::Body::empty()).unwrap()).await.unwrap();
            assert_eq!(response.status(), status, "{path}");
            let text = http_body_util::BodyExt::collect(response.into_body()).await.unwrap().to_bytes();
            assert_eq!(&text[..], body.as_bytes(), "{path}");
        }
        assert_eq!(empty_rest("/files/{*rest}").as_deref(), Some("/files/"));
        assert_eq!(route_shape("/u/{id}/x/{*rest}"), "/u/{}/x/{*}");
        assert_eq!(empty_rest("/files/{rest}"), None);
    }

    // Found on review: `POST /files/` beside `GET /files/{rest:path}` made `GET /files/` a
    // 405, where Starlette and Fastify hand it to the wildcard.
    #[tokio::test]
    async fn a_route_at_the_empty_rest_leaves_the_wildcards_other_methods_to_it() {
        let router = App::new()
            .route(RouteSpec::get("/files/{rest:path}"), |req: RequestData| async move { format!("rest={}", req.path_param("rest").and_then(|v| v.as_str()).unwrap_or("?")) })
            .route(RouteSpec::post("/files/"), |_: RequestData| async { "posted" })
            .into_router()
            .unwrap();
        for (method, status, body) in [("GET", StatusCode::OK, "rest="), ("POST", StatusCode::OK, "posted"), ("HEAD", StatusCode::OK, "")] {
            let request = http::Request::builder().method(method).uri("/files/").body(axum::body::Body::empty()).unwrap();
            let response = router.clone().oneshot(request).await.unwrap();
            assert_eq!(response.status(), status, "{method}");
            let text = http_body_util::BodyExt::collect(response.into_body()).await.unwrap().to_bytes();
            assert_eq!(&text[..], body.as_bytes(), "{method}");
        }
        let request = http::Request::builder().method("DELETE").uri("/files/").body(axum::body::Body::empty()).unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(response.headers()[header::ALLOW], "POST, GET, HEAD");

        // Found on review: a GET of its own takes HEAD too, so the wildcard's HEAD is not lent
        // beside it, and no method is named twice in `Allow`.
        let who = |name: &'static str| move |_: RequestData| async move { crate::response::Response::text(name).with_header(http::HeaderName::from_static("x-who"), HeaderValue::from_static(name)) };
        let router = App::new()
            .route(RouteSpec::get("/docs/{rest:path}"), who("wildcard"))
            .route(RouteSpec::new("HEAD", "/docs/{rest:path}"), who("wildcard"))
            .route(RouteSpec::get("/docs/"), who("own"))
            .into_router()
            .unwrap();
        for method in ["GET", "HEAD"] {
            let request = http::Request::builder().method(method).uri("/docs/").body(axum::body::Body::empty()).unwrap();
            let response = router.clone().oneshot(request).await.unwrap();
            assert_eq!(response.headers()["x-who"], "own", "{method}");
        }
        let request = http::Request::builder().method("PUT").uri("/docs/").body(axum::body::Body::empty()).unwrap();
        assert_eq!(router.clone().oneshot(request).await.unwrap().headers()[header::ALLOW], "GET, HEAD");
    }

    // Found on review: with `/u/{user}/` declared, the empty rest of `/u/{id}/{rest:path}` was
    // the same route to the router under other names, and the app failed to start.
    #[tokio::test]
    async fn an_empty_rest_yields_to_a_route_of_the_same_shape_under_other_names() {
        let router = App::new()
            .route(RouteSpec::get("/u/{user}/"), |req: RequestData| async move { format!("user={}", req.path_param("user").and_then(|v| v.as_str()).unwrap_or("?")) })
            .route(RouteSpec::get("/u/{id}/{rest:path}"), |req: RequestData| async move { format!("rest={}", req.path_param("rest").and_then(|v| v.as_str()).unwrap_or("?")) })
            .into_router()
            .expect("the app starts");
        for (path, body) in [("/u/7/", "user=7"), ("/u/7/a", "rest=a")] {
            let response = router.clone().oneshot(http::Request::get(path).body(axum::body::Body::empty()).unwrap()).await.unwrap();
            let text = http_body_util::BodyExt::collect(response.into_body()).await.unwrap().to_bytes();
            assert_eq!(&text[..], body.as_bytes(), "{path}");
        }
    }

    // Found by the fuzzer: `DELETE /openapi.json` (or any method but GET and HEAD on the paths
    // the core serves itself) was axum's bare 405, not a problem document.
    #[tokio::test]
    async fn a_method_the_documents_url_does_not_take_is_a_405_problem() {
        let router = App::new().route(RouteSpec::get("/here"), |_: RequestData| async { "x" }).into_router().unwrap();
        for method in ["DELETE", "G"] {
            let request = http::Request::builder().method(method).uri("/openapi.json").body(axum::body::Body::empty()).unwrap();
            let response = router.clone().oneshot(request).await.unwrap();
            assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED, "{method}");
            assert_eq!(response.headers()[header::CONTENT_TYPE], crate::problem::PROBLEM_JSON, "{method}");
            assert_eq!(response.headers()[header::ALLOW], "GET, HEAD", "{method}");
        }
    }

    #[tokio::test]
    async fn whitespace_around_a_header_value_is_not_part_of_it_without_a_parser_too() {
        let spec = RouteSpec::get("/h").header("x-token", serde_json::json!({"type": "string"}));
        let router = App::new().route(spec, |req: RequestData| async move { req.headers.get("x-token").and_then(|v| v.as_str()).unwrap_or_default().to_owned() }).into_router().unwrap();
        let request = http::Request::get("/h").header("x-token", " \tabc  ").body(axum::body::Body::empty()).unwrap();
        let response = router.oneshot(request).await.unwrap();
        let body = http_body_util::BodyExt::collect(response.into_body()).await.unwrap().to_bytes();
        assert_eq!(&body[..], b"abc");
    }

    #[tokio::test]
    async fn metrics_count_each_route_and_are_served_only_when_asked_for() {
        let app = |metrics_url: Option<&str>| {
            App::with_config(AppConfig { metrics_url: metrics_url.map(str::to_owned), ..Default::default() })
                .route(RouteSpec::get("/users/{id:int}"), |_: RequestData| async { "user" })
                .into_router()
                .unwrap()
        };
        let send = |router: &Router, path: &str| {
            let request = http::Request::get(path).body(axum::body::Body::empty()).unwrap();
            router.clone().oneshot(request)
        };
        let router = app(Some("/metrics"));
        for path in ["/users/1", "/users/2", "/users/x", "/nowhere"] {
            send(&router, path).await.unwrap();
        }
        let scraped = send(&router, "/metrics").await.unwrap();
        assert_eq!(scraped.headers()[header::CONTENT_TYPE], crate::middleware::OPENMETRICS);
        let text = String::from_utf8(http_body_util::BodyExt::collect(scraped.into_body()).await.unwrap().to_bytes().to_vec()).unwrap();
        assert!(text.contains(r#"ferrule_requests_total{route="/users/{id:int}",method="GET",status="200"} 2"#), "{text}");
        assert!(text.contains(r#"ferrule_requests_total{route="/users/{id:int}",method="GET",status="422"} 1"#), "{text}");
        assert!(text.contains(r#"ferrule_requests_total{route="unmatched",method="GET",status="404"} 1"#), "{text}");
        assert!(text.contains(r#"ferrule_request_duration_seconds_count{route="/users/{id:int}",method="GET"} 3"#), "{text}");

        let quiet = app(None);
        let response = send(&quiet, "/users/1").await.unwrap();
        assert!(response.extensions().get::<crate::middleware::RouteLabel>().is_none(), "off: routes do not label");
        assert_eq!(send(&quiet, "/metrics").await.unwrap().status(), StatusCode::NOT_FOUND);
    }

    #[test]
    fn a_metrics_url_must_be_its_own_path() {
        let clash = AppConfig { metrics_url: Some("/docs".into()), ..Default::default() };
        assert!(clash.check().unwrap_err().contains("already the OpenAPI document's or the docs page's path"));
        let relative = AppConfig { metrics_url: Some("metrics".into()), ..Default::default() };
        assert!(relative.check().unwrap_err().contains("starting with `/`"));
    }

    #[tokio::test]
    async fn a_route_compression_setting_replaces_the_apps() {
        let mut app = App::with_config(AppConfig {
            compression: Some(CompressionConfig { min_size: 10, ..Default::default() }),
            ..Default::default()
        });
        let big = |_: RequestData| async { "x".repeat(1000) };
        app = app.route(RouteSpec::get("/app"), big);
        app = app.route(RouteSpec::get("/off").with_compression(CompressionConfig { enabled: false, ..Default::default() }), big);
        app = app.route(RouteSpec::get("/high").with_compression(CompressionConfig { min_size: 5000, ..Default::default() }), big);
        let router = app.into_router().unwrap();
        assert_eq!(encoding(&router, "/app").await.as_deref(), Some("gzip"));
        assert_eq!(encoding(&router, "/off").await, None);
        assert_eq!(encoding(&router, "/high").await, None);
    }

    #[tokio::test]
    async fn a_compression_level_is_the_codings_own() {
        // Text that compresses, but not to nothing: level 1 and level 9 write different sizes.
        let text: String = (0..4000u32).map(|i| char::from(b'a' + (i.wrapping_mul(2_654_435_761) >> 29) as u8)).collect();
        let mut sizes = Vec::new();
        for level in [1, 9] {
            let config = AppConfig { compression: Some(CompressionConfig { min_size: 10, br: false, zstd: false, level: Some(level), ..Default::default() }), ..Default::default() };
            let body = text.clone();
            let router = App::with_config(config).route(RouteSpec::get("/t"), move |_: RequestData| std::future::ready(body.clone())).into_router().unwrap();
            let request = http::Request::get("/t").header("accept-encoding", "gzip").body(axum::body::Body::empty()).unwrap();
            let response = router.oneshot(request).await.unwrap();
            assert_eq!(response.headers()[header::CONTENT_ENCODING], "gzip");
            let coded = http_body_util::BodyExt::collect(response.into_body()).await.unwrap().to_bytes();
            assert_eq!(coded[..2], [0x1f, 0x8b], "a gzip member");
            sizes.push(coded.len());
        }
        assert!(sizes[1] < sizes[0], "level 9 is smaller than level 1: {sizes:?}");
        let too_high = AppConfig { compression: Some(CompressionConfig { level: Some(23), ..Default::default() }), ..Default::default() };
        assert!(too_high.check().unwrap_err().contains("compression level must be between 0 and 22"));
    }

    // Found on review: a stream with a declared length has an exact size, which the
    // compression layer took for a whole body: a download was gzipped and lost its length.
    #[tokio::test]
    async fn a_stream_with_a_declared_length_is_not_compressed() {
        let app = App::with_config(AppConfig { compression: Some(CompressionConfig { min_size: 10, ..Default::default() }), ..Default::default() });
        let file = |_: RequestData| async {
            let chunks = futures_util::stream::iter([Ok::<_, std::io::Error>(bytes::Bytes::from("x".repeat(1000)))]);
            crate::Response::from_parts(200, Some(crate::Response::stream(crate::stream::BodyStream::new(chunks))), [("content-length", "1000")]).unwrap()
        };
        let router = app.route(RouteSpec::get("/file"), file).into_router().unwrap();
        assert_eq!(encoding(&router, "/file").await, None);
        let request = http::Request::get("/file").header("accept-encoding", "gzip").body(axum::body::Body::empty()).unwrap();
        let response = router.oneshot(request).await.unwrap();
        assert_eq!(hyper::body::Body::size_hint(response.body()).exact(), Some(1000));
    }
}
