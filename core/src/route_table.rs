//! The app's routes matched once, in front of axum's router, for the requests a route answers
//! as it is.
//!
//! Why: a request through axum's router pays for what only some routes use. The router notes
//! the URI as sent (`OriginalUri`: a clone into the request's extensions), names the matched
//! template (`MatchedPath`: another entry) and copies every path parameter into a vector of
//! `Arc<str>` names and percent-decoded `Arc<str>` values, each one allocated; the method
//! router, the route's boxed service and the handler adapter then add four futures, each
//! moved whole as it is first polled. Ferrule's routes read their parameters once, from the
//! path, and use none of the rest. On path-simple (`ferrule-bench serve ferrule-rust`, one
//! core, cpu-clock samples with call stacks) the router's call was 5.5 % of the server's CPU
//! (the parameters 2.8 %), the extensions map's drop 1.9 %, and the futures' copies most of
//! `memmove`'s 4.9 % (hyper alone: 1.3 %).
//!
//! So the table holds the same templates as the router, in the same matcher, and answers a
//! request itself only where nothing but the route would act on it: its method is one the
//! template's routes declare (never HEAD, whose body axum's router drops, nor CONNECT, whose
//! successful answer it empties), and the path has neither CORS nor compression (layers on the
//! path's method router). Everything else — 404, 405, static files, the core's own documents, redirects —
//! goes on to the router, which matches it again. The table holds every template the router
//! does (static mounts included), so a path matches the same template in both: matchit picks
//! by what is inserted, not by who asks.
//!
//! The parameters are handed to the route as spans of the path ([`Captured::Spans`]): no copy
//! and no allocation beyond one vector, decoded where the route reads them.

use crate::route::{Captured, CompiledRoute};
use axum::response::Response;
use futures_util::future::{BoxFuture, Either, FutureExt};
use http::{header, HeaderValue, Method, StatusCode};
use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

/// A template's routes the table answers itself, by method.
pub(crate) type DirectRoutes = Arc<[(Method, Arc<CompiledRoute>)]>;

enum Entry {
    /// Answered here: the routes, and the template's parameter names in the order matchit
    /// yields their values.
    Direct { routes: DirectRoutes, names: Arc<[Arc<str>]>, claim: Claim },
    /// Left to the router (a path with CORS or compression, a static mount, a document).
    Router(Claim),
}

/// What a template's routes take, for the routes matched by expression (`pattern_routes`):
/// each method with where its route was declared among the app's routes; `None` for the
/// core's own paths and static mounts, which take every method before any route of the app's.
#[derive(Clone)]
pub(crate) struct Claim {
    pub(crate) methods: Option<Arc<[(Method, usize)]>>,
}

impl Claim {
    pub(crate) const CORE: Claim = Claim { methods: None };

    /// Where the route that takes `method` was declared (a GET's takes HEAD), if one does.
    fn order_for(&self, method: &Method) -> Option<usize> {
        match &self.methods {
            None => Some(0),
            Some(methods) => crate::pattern_routes::order_for(methods, method),
        }
    }
}

/// The templates, as the router holds them (see the module doc).
#[derive(Default)]
pub(crate) struct RouteTable {
    matcher: matchit::Router<Entry>,
    /// Set when a template could not be inserted as the router took it: then every request
    /// goes to the router, which stays the judge.
    off: bool,
    /// The routes matched by expression, when the app has any: one declared before the
    /// template route that matches a path and takes the method, or where none does, answers
    /// (Sinatra and Starlette try routes in the order they were declared). Asked here, before
    /// the router, so a static mount at `/` (the router's fallback) does not take their paths.
    pub(crate) patterns: Option<Arc<crate::pattern_routes::PatternRoutes>>,
}

impl RouteTable {
    /// `template`, as given to the router's `route`; `routes` are answered here (`None`: left
    /// to the router).
    pub(crate) fn insert(&mut self, template: &str, routes: Option<DirectRoutes>, claim: Claim) {
        let entry = match routes {
            Some(routes) => match param_names(template) {
                Some(names) => Entry::Direct { routes, names: names.into(), claim },
                None => Entry::Router(claim),
            },
            None => Entry::Router(claim),
        };
        self.off |= self.matcher.insert(template, entry).is_err();
    }

    /// The templates axum's `nest_service` inserts for a mount at `prefix` (no trailing `/`).
    pub(crate) fn insert_mount(&mut self, prefix: &str) {
        // The router's own name for the rest; any name matches alike.
        self.insert(&format!("{prefix}/{{*__private__axum_nest_tail_param}}"), None, Claim::CORE);
        self.insert(prefix, None, Claim::CORE);
        self.insert(&format!("{prefix}/"), None, Claim::CORE);
    }

    /// Who answers `method` at `path`: a route here, with its parameters' spans in `path`; a
    /// route matched by expression that comes first (see [`RouteTable::patterns`]); or the
    /// router. One walk of the tree for all three.
    fn find(&self, method: &Method, path: &str) -> Found {
        let matched = if self.off { None } else { self.matcher.at(path).ok() };
        if let Some(patterns) = &self.patterns {
            let answering = match &matched {
                Some(matched) => {
                    let (Entry::Direct { claim, .. } | Entry::Router(claim)) = matched.value;
                    patterns.taking(method, path, claim.order_for(method).unwrap_or(usize::MAX))
                }
                // No template: the first that takes the method, else the first that matches
                // (its 405).
                None => patterns.find(method, path),
            };
            if let Some((routes, found)) = answering {
                return Found::Expression(Box::new((routes, found)));
            }
        }
        if *method == Method::HEAD || *method == Method::CONNECT {
            return Found::Router;
        }
        let Some(matched) = matched else { return Found::Router };
        let Entry::Direct { routes, names, .. } = matched.value else { return Found::Router };
        let Some((_, route)) = routes.iter().find(|(declared, _)| declared == method) else { return Found::Router };
        if matched.params.len() != names.len() {
            return Found::Router;
        }
        let start = path.as_ptr() as usize;
        let spans = matched.params.iter().map(|(_, value)| (value.as_ptr() as usize - start, value.len())).collect();
        Found::Direct(route.clone(), Captured::Spans { names: names.clone(), spans })
    }
}

/// Who answers a request ([`RouteTable::find`]).
enum Found {
    Direct(Arc<CompiledRoute>, Captured),
    /// Boxed: a method router is large, and every request's `Found` would be moved whole.
    Expression(Box<(axum::routing::MethodRouter, crate::pattern_routes::PatternMatch)>),
    Router,
}

/// The parameter names of a matchit template, in order (`/u/{id}/{*rest}` → `id`, `rest`);
/// `None` for one this reading does not know (escaped braces), which the router then answers.
fn param_names(template: &str) -> Option<Vec<Arc<str>>> {
    if template.contains("{{") || template.contains("}}") {
        return None;
    }
    let (captures, _) = crate::path::router_captures(template);
    Some(captures.into_iter().map(|(_, capture)| Arc::from(capture.trim_start_matches('*'))).collect())
}

/// The app's routes: answered from the table where it can, else by axum's `router`.
///
/// It also does the three things every request gets on its way to a route and back: the
/// header section's size limit (a 431), the path in the spelling routes are written in, and no
/// `Content-Length` without content. They were three layers (a gate, a request map and a
/// response map), each a service and a future around the rest: on json-small
/// (`ferrule-bench serve ferrule-rust`, callgrind, 3,000 requests) the connection's task took
/// 28,239 instructions a request with the three layers and 28,094 without them.
#[derive(Clone)]
pub(crate) struct Routed {
    pub(crate) table: Arc<RouteTable>,
    pub(crate) router: axum::Router,
    /// The largest header section answered ([`crate::middleware::header_limit`]).
    pub(crate) max_header_bytes: usize,
}

type Answered = Result<Response, Infallible>;

impl tower::Service<axum::extract::Request> for Routed {
    type Response = Response;
    type Error = Infallible;
    type Future = Either<BoxFuture<'static, Answered>, futures_util::future::Map<axum::routing::future::RouteFuture<Infallible>, fn(Answered) -> Answered>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: axum::extract::Request) -> Self::Future {
        if let Some(refusal) = crate::middleware::header_limit::refusal(&request, self.max_header_bytes) {
            // Boxed, as a route's answer is: rare, and the future type stays two-way.
            return Either::Left(futures_util::future::ready(Ok(refusal)).boxed());
        }
        let mut request = routes_spelling(request);
        match self.table.find(request.method(), request.uri().path()) {
            Found::Direct(route, captured) => Either::Left(route.handle(request, captured).map(|response| Ok(with_length(response))).boxed()),
            Found::Expression(answering) => {
                let (routes, found) = *answering;
                request.extensions_mut().insert(found);
                Either::Left(tower::ServiceExt::oneshot(routes, request).map(as_routed).boxed())
            }
            Found::Router => Either::Right(tower::Service::call(&mut self.router, request).map(as_routed as fn(Answered) -> Answered)),
        }
    }
}

/// What the router answered, with two of its habits undone. No `Content-Length` where there is
/// no content ([`no_length_without_content`]). And when a route of another path's method
/// answered the request (`by_method`), axum's router still adds the path's own `Allow` to what
/// its method router's fallback returns, so a 200 went out naming only the other route's
/// methods (found by a probe): taken off again, unless the route set one itself. An extension
/// lookup per response the router answers.
fn as_routed(answered: Answered) -> Answered {
    let mut response = answered?;
    if response.extensions().get::<crate::by_method::AnsweredByMethod>().is_some() {
        response.headers_mut().remove(header::ALLOW);
    }
    Ok(no_length_without_content(response))
}

/// A body of known size gets its `Content-Length`, as axum's router gives every response it
/// routes (the access log and the compression layer read it); but see
/// [`no_length_without_content`].
fn with_length(mut response: Response) -> Response {
    if matches!(response.status(), StatusCode::NO_CONTENT | StatusCode::NOT_MODIFIED) {
        return no_length_without_content(response);
    }
    if !response.headers().contains_key(header::CONTENT_LENGTH) {
        if let Some(size) = axum::body::HttpBody::size_hint(response.body()).exact() {
            response.headers_mut().insert(header::CONTENT_LENGTH, HeaderValue::from(size));
        }
    }
    response
}

/// The request with its path in the spelling routes are written in (`canonical_path`), so
/// `/%65ncoded` or `/caf%c3%a9` reaches the route declared as `/encoded` or `/café`. Inside
/// the access log and request id, which keep the path as it was sent.
fn routes_spelling(mut request: axum::extract::Request) -> axum::extract::Request {
    let Some(path) = crate::canonical_path::canonical(request.uri().path()) else { return request };
    let path_and_query = match request.uri().query() {
        Some(query) => format!("{path}?{query}"),
        None => path,
    };
    let mut parts = request.uri().clone().into_parts();
    if let Ok(path_and_query) = http::uri::PathAndQuery::try_from(path_and_query) {
        parts.path_and_query = Some(path_and_query);
        if let Ok(uri) = http::Uri::from_parts(parts) {
            // A router outside this one (`App::into_router`, the in-process client) noted the
            // URI as sent; the not-found way judges that one under a static mount.
            if let Some(original) = request.extensions_mut().get_mut::<axum::extract::OriginalUri>() {
                original.0 = uri.clone();
            }
            *request.uri_mut() = uri;
        }
    }
    request
}

/// A 204 or 304 has no content, so no `Content-Length` either (RFC 9110 §8.6: a server MUST
/// NOT send one in a 204; a 304's would describe the representation). axum gives an empty
/// body one when answering a HEAD, which hyper then sends.
fn no_length_without_content(mut response: Response) -> Response {
    if matches!(response.status(), StatusCode::NO_CONTENT | StatusCode::NOT_MODIFIED) {
        response.headers_mut().remove(http::header::CONTENT_LENGTH);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::RequestData;
    use crate::spec::{CorsConfig, RouteSpec};
    use crate::App;
    use tower::ServiceExt;

    fn routes(methods: &[Method]) -> DirectRoutes {
        let handler: Arc<dyn crate::handler::Handler> = Arc::new(|_: RequestData| async { "x" });
        let template = crate::path::PathTemplate::parse("/items/{id}").unwrap();
        let spec = RouteSpec::get("/items/{id}");
        let route = Arc::new(CompiledRoute::compile(&spec, &template, &Default::default(), crate::route::Handlers::Http(handler)).unwrap());
        methods.iter().map(|method| (method.clone(), route.clone())).collect()
    }

    fn spans(found: Found) -> Option<Vec<(String, (usize, usize))>> {
        let Found::Direct(_, Captured::Spans { names, spans }) = found else { return None };
        Some(names.iter().map(|name| name.to_string()).zip(spans).collect())
    }

    #[test]
    fn a_declared_method_is_answered_here_with_its_parameters_as_spans_of_the_path() {
        let mut table = RouteTable::default();
        table.insert("/items/{id}", Some(routes(&[Method::GET, Method::DELETE])), Claim::CORE);
        table.insert("/files/{*rest}", Some(routes(&[Method::GET])), Claim::CORE);
        assert_eq!(spans(table.find(&Method::GET, "/items/4%202")), Some(vec![("id".into(), (7, 5))]));
        assert_eq!(spans(table.find(&Method::DELETE, "/items/7")), Some(vec![("id".into(), (7, 1))]));
        assert_eq!(spans(table.find(&Method::GET, "/files/a/b")), Some(vec![("rest".into(), (7, 3))]));
        // What the route did not declare, and what axum's router answers its own way.
        for (method, path) in [(Method::POST, "/items/7"), (Method::HEAD, "/items/7"), (Method::CONNECT, "/items/7"), (Method::GET, "/nothing")] {
            assert!(matches!(table.find(&method, path), Found::Router), "{method} {path}");
        }
    }

    #[test]
    fn a_path_the_router_would_give_to_a_mount_or_a_document_is_left_to_it() {
        let mut table = RouteTable::default();
        table.insert("/items/{id}", Some(routes(&[Method::GET])), Claim::CORE);
        table.insert("/items/openapi.json", None, Claim::CORE);
        table.insert_mount("/items/static");
        for path in ["/items/openapi.json", "/items/static", "/items/static/", "/items/static/app.css"] {
            assert!(matches!(table.find(&Method::GET, path), Found::Router), "{path}");
        }
        assert!(matches!(table.find(&Method::GET, "/items/42"), Found::Direct(..)));
        // A template matchit refuses as the router would have: the router judges everything.
        table.insert("/items/{other}", Some(routes(&[Method::GET])), Claim::CORE);
        assert!(matches!(table.find(&Method::GET, "/items/42"), Found::Router));
    }

    #[test]
    fn parameter_names_are_read_in_order_and_escaped_braces_are_left_to_the_router() {
        assert_eq!(param_names("/u/{id}/x/{*rest}").unwrap(), vec![Arc::from("id"), Arc::from("rest")]);
        assert_eq!(param_names("/plain").unwrap(), Vec::<Arc<str>>::new());
        assert!(param_names("/literal/{{brace}}").is_none());
    }

    /// The same requests to a route the table answers and to one it leaves to the router (a
    /// path with CORS): the same status, headers and body, whatever the path's spelling (but
    /// the CORS layer's own headers and the random request id).
    #[tokio::test]
    async fn the_table_answers_as_the_router_does() {
        let app = |cors: bool| {
            let echo = |request: RequestData| async move {
                let params = format!("{:?}", request.path_params);
                crate::Response::json(&serde_json::json!({ "params": params, "path": request.path }))
            };
            let mut items = RouteSpec::get("/items/{id}");
            let mut files = RouteSpec::get("/files/{rest:path}");
            let mut pairs = RouteSpec::get("/pairs/{a}/{b}");
            if cors {
                items.cors = Some(CorsConfig { allow_origins: vec!["*".into()], ..Default::default() });
                files.cors = items.cors.clone();
                pairs.cors = items.cors.clone();
            }
            App::new().route(items, echo).route(files, echo).route(pairs, echo).into_router().unwrap()
        };
        let (direct, routed) = (app(false), app(true));
        for path in ["/items/42", "/items/caf%C3%A9", "/items/a%20b", "/items/%FF", "/items/%zz", "/files/", "/files/a/b%2Fc", "/items/42/", "/pairs/x/y", "/pairs/x%20y/z", "/pairs/x/%7Ez"] {
            let mut answers = Vec::new();
            for router in [&direct, &routed] {
                let request = http::Request::get(path).body(axum::body::Body::empty()).unwrap();
                let response = router.clone().oneshot(request).await.unwrap();
                let status = response.status();
                let mut headers: Vec<(String, HeaderValue)> = response
                    .headers()
                    .iter()
                    .filter(|(name, _)| *name != header::VARY && *name != "x-request-id" && !name.as_str().starts_with("access-control-"))
                    .map(|(name, value)| (name.to_string(), value.clone()))
                    .collect();
                headers.sort_by(|a, b| a.0.cmp(&b.0));
                assert!(headers.iter().any(|(name, _)| name == "content-length"), "{path}: {headers:?}");
                let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
                answers.push((status, headers, body));
            }
            assert_eq!(answers[0], answers[1], "{path}");
        }
    }
}
