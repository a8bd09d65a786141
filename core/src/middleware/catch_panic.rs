//! A panic anywhere under the app's layers (the router, a mount, a hook, a layer of the core's
//! own) is answered as a 500 problem document, and the connection and the server carry on.
//! Route handlers catch their own panics (`route::answer`, which also logs them); this is the
//! net under everything else.
//!
//! Ours, not tower-http's `CatchPanic`: that one gives every response a boxed body of its own
//! type (so that a caught panic's body and the app's are one type), and axum boxed that box
//! again into its `Body`. Two allocations a request, freed again, and two virtual calls for
//! each of hyper's reads of the body, for a net that almost never catches anything. Here the
//! answer is an axum `Response` already, so bodies go through as they came. On json-small
//! (`ferrule-bench serve ferrule-rust`, callgrind, 3,000 requests) the connection's task took
//! 28,674 instructions a request with tower-http's layer and 28,239 with this one.

use axum::extract::Request;
use axum::response::Response;
use std::convert::Infallible;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};
use tower::{Layer, Service};

use crate::problem::Problem;

#[derive(Clone, Copy, Default)]
pub(crate) struct CatchPanicLayer;

impl<S> Layer<S> for CatchPanicLayer {
    type Service = PanicsCaught<S>;

    fn layer(&self, inner: S) -> PanicsCaught<S> {
        PanicsCaught { inner }
    }
}

#[derive(Clone)]
pub(crate) struct PanicsCaught<S> {
    inner: S,
}

impl<S> Service<Request> for PanicsCaught<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Caught<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Caught<S::Future> {
        // A panic in `call` answered nothing yet: it is answered here. Whatever state the
        // service was left in is the app's bug, which the panic hook has logged; this layer
        // cannot repair it (tower-http's cannot either).
        match catch_unwind(AssertUnwindSafe(|| self.inner.call(request))) {
            Ok(future) => Caught::Running { future },
            Err(_) => Caught::Panicked,
        }
    }
}

pin_project_lite::pin_project! {
    /// The inner service's answer, or a 500 once it panicked.
    #[project = CaughtProj]
    pub(crate) enum Caught<F> {
        Running { #[pin] future: F },
        Panicked,
    }
}

impl<F> Future for Caught<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            // A future that panicked is never polled again: it is answered for here, and hyper
            // does not poll an answered request's future.
            CaughtProj::Running { future } => match catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
                Ok(answered) => answered,
                Err(_) => Poll::Ready(Ok(internal_error())),
            },
            CaughtProj::Panicked => Poll::Ready(Ok(internal_error())),
        }
    }
}

/// What a caught panic answers: a plain 500 problem. The panic's message stays in the log
/// (Rust's panic hook writes it), never in the response.
fn internal_error() -> Response {
    Problem::internal().into_http()
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::StatusCode;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    async fn answer<S>(service: S) -> (StatusCode, String)
    where
        S: Service<Request, Response = Response, Error = Infallible>,
    {
        let response = CatchPanicLayer.layer(service).oneshot(Request::new(axum::body::Body::empty())).await.unwrap();
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn a_panic_while_called_is_a_500_that_does_not_say_why() {
        let service = tower::service_fn(|_: Request| -> std::future::Ready<Result<Response, Infallible>> { panic!("secret detail") });
        let (status, body) = answer(service).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert!(body.contains("\"status\":500"), "{body}");
        assert!(!body.contains("secret detail"), "{body}");
    }

    #[tokio::test]
    async fn a_panic_while_polled_is_a_500_too() {
        let service = tower::service_fn(|_: Request| async {
            tokio::task::yield_now().await;
            if true {
                panic!("secret detail");
            }
            Ok::<Response, Infallible>(Response::new(axum::body::Body::empty()))
        });
        let (status, body) = answer(service).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert!(!body.contains("secret detail"), "{body}");
    }

    #[tokio::test]
    async fn an_answer_goes_through_as_it_came() {
        let service = tower::service_fn(|_: Request| async {
            Ok::<Response, Infallible>(Response::builder().status(StatusCode::CREATED).header("x-kept", "1").body(axum::body::Body::from("made")).unwrap())
        });
        let response = CatchPanicLayer.layer(service).oneshot(Request::new(axum::body::Body::empty())).await.unwrap();
        assert_eq!(response.status(), StatusCode::CREATED);
        assert_eq!(response.headers()["x-kept"], "1");
        // The body keeps its exact size (no box in between that forgets it), which is what gives
        // the response its `Content-Length`.
        assert_eq!(axum::body::HttpBody::size_hint(response.body()).exact(), Some(4));
        assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "made");
    }
}
