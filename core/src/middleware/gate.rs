//! The shape of every check the app makes of a request before routing: a layer that answers
//! some requests itself and hands the rest on, unchanged (`trusted_host`).
//!
//! A plain tower layer rather than `axum::middleware::from_fn`: `from_fn` boxes and clones the
//! rest of the stack on every request, which showed up in every small route's profile. A gate's
//! answer is ready at once (`Either::Left`); the inner service's future is not wrapped.

use axum::extract::Request;
use axum::response::Response;
use futures_util::future::{ready, Either, Ready};
use std::task::{Context, Poll};
use tower::{Layer, Service};

/// A check: `Some` is the request's answer, and nothing after the gate sees the request.
pub(crate) trait Gate: Clone {
    fn refusal(&self, request: &Request) -> Option<Response>;
}

#[derive(Clone)]
pub(crate) struct GateLayer<G>(pub(crate) G);

impl<S, G: Gate> Layer<S> for GateLayer<G> {
    type Service = Gated<S, G>;

    fn layer(&self, inner: S) -> Gated<S, G> {
        Gated { inner, gate: self.0.clone() }
    }
}

#[derive(Clone)]
pub(crate) struct Gated<S, G> {
    inner: S,
    gate: G,
}

impl<S, G> Service<Request> for Gated<S, G>
where
    S: Service<Request, Response = Response>,
    G: Gate,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Either<Ready<Result<Response, S::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        match self.gate.refusal(&request) {
            Some(answer) => Either::Left(ready(Ok(answer))),
            None => Either::Right(self.inner.call(request)),
        }
    }
}
