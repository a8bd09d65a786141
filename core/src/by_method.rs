//! A request whose path's routes do not take its method, given to a route that does before it
//! is a 405.
//!
//! The router matches the path first, then the method: with `POST /api/items` beside a
//! single-page app's `GET /{rest:path}`, `GET /api/items` matched the POST's path and was a 405,
//! and so was `OPTIONS /api/items` beside an `OPTIONS /{rest:path}` that answers preflights.
//! Starlette tries every route in turn and takes the first that matches path and method alike;
//! Fastify and Sinatra keep a table per method. All three serve the catch-all there (found by a
//! probe porting a Sinatra app). So the answer to a method a path does not take is asked, first,
//! of a router holding only the routes of that method: the most specific of them that matches
//! the path answers, as it would have without the other method's route. Only when none matches
//! is it the 405 it was.
//!
//! Cost: nothing for a request a route takes; a 405 is matched once more.

use crate::route::Captured;
use axum::extract::Request;
use axum::response::Response;
use axum::routing::{MethodFilter, MethodRouter};
use axum::Router;
use http::{Method, StatusCode};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tower::ServiceExt;

/// The app's routes, one router per method (a GET's takes HEAD too, as the main router's does).
#[derive(Default)]
pub(crate) struct ByMethod {
    routers: HashMap<Method, Router>,
}

/// Where a request no route of the method took is handed back, to be answered 405.
#[derive(Clone)]
struct HandedBack(Arc<Mutex<Option<Request>>>);

impl ByMethod {
    /// `routes`: each path as the router holds it, with a method router of that method's route
    /// alone (layers included), by method.
    pub(crate) fn new(routes: Vec<(Method, String, MethodRouter)>) -> Self {
        let mut routers: HashMap<Method, Router> = HashMap::new();
        for (method, path, methods) in routes {
            let router = routers.remove(&method).unwrap_or_default();
            routers.insert(method, router.route(&path, methods));
        }
        let routers = routers.into_iter().map(|(method, router)| (method, router.fallback(hand_back))).collect();
        ByMethod { routers }
    }

    /// A method router of `method` alone at `path` (as the router holds it), answered by
    /// `route` with the parameters this match adds (see [`ByMethod::new`]).
    pub(crate) fn method_router(method: &Method, path: &str, route: Arc<crate::route::CompiledRoute>) -> Option<MethodRouter> {
        let filter = MethodFilter::try_from(method.clone()).ok()?;
        let own = crate::path::router_captures(path).0.len();
        let methods = MethodRouter::new().on(filter, move |request: Request| route.clone().handle(request, Captured::LastInExtensions(own)));
        Some(methods.fallback(hand_back))
    }

    /// The answer of a route of `request`'s method whose template matches its path, or the
    /// request back when there is none.
    /// A HEAD is asked of the HEAD routes, then of the GET routes (which answer it too).
    pub(crate) async fn answer(&self, mut request: Request) -> Result<Response, Request> {
        let head = *request.method() == Method::HEAD;
        let methods = [Some(request.method().clone()), head.then_some(Method::GET)];
        for method in methods.into_iter().flatten() {
            let Some(router) = self.routers.get(&method) else { continue };
            let slot = HandedBack(Arc::new(Mutex::new(None)));
            request.extensions_mut().insert(slot.clone());
            let response = router.clone().oneshot(request).await.unwrap_or_else(|never| match never {});
            let returned = slot.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
            match returned {
                Some(back) => request = back,
                None => return Ok(marked(response)),
            }
        }
        Err(request)
    }
}

/// An answer of a route of another method, whose `Allow` the main router would otherwise name
/// (see `route_table::as_routed`); one the route set itself is kept.
#[derive(Clone, Copy)]
pub(crate) struct AnsweredByMethod;

fn marked(mut response: Response) -> Response {
    if !response.headers().contains_key(http::header::ALLOW) {
        response.extensions_mut().insert(AnsweredByMethod);
    }
    response
}

/// The fallback of the routers by method: no route of the method matched, so the request goes
/// back to the 405 it was headed for.
async fn hand_back(request: Request) -> StatusCode {
    if let Some(slot) = request.extensions().get::<HandedBack>().cloned() {
        *slot.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(request);
    }
    StatusCode::METHOD_NOT_ALLOWED
}
