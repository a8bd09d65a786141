//! 431 as a problem document when the request's header section is too large.
//!
//! hyper itself refuses header sections beyond its own buffer (~400 KB) or 100 headers with a
//! bare 431 before any routing; this limit sits well below that so clients get a readable answer.
//!
//! A plain tower layer rather than `axum::middleware::from_fn`: `from_fn` boxes and clones the
//! rest of the stack on every request, which showed up in every small route's profile.

use crate::problem::Problem;
use axum::extract::Request;
use axum::response::Response;
use futures_util::future::{ready, Either, Ready};
use http::StatusCode;
use std::task::{Context, Poll};
use tower::{Layer, Service};

#[derive(Clone, Copy)]
pub(crate) struct HeaderLimitLayer {
    max_bytes: usize,
}

impl HeaderLimitLayer {
    pub(crate) fn new(max_bytes: usize) -> Self {
        HeaderLimitLayer { max_bytes }
    }
}

impl<S> Layer<S> for HeaderLimitLayer {
    type Service = HeaderLimit<S>;

    fn layer(&self, inner: S) -> HeaderLimit<S> {
        HeaderLimit { inner, max_bytes: self.max_bytes }
    }
}

#[derive(Clone)]
pub(crate) struct HeaderLimit<S> {
    inner: S,
    max_bytes: usize,
}

impl<S> Service<Request> for HeaderLimit<S>
where
    S: Service<Request, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Either<Ready<Result<Response, S::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // Each header line costs `name: value\r\n`.
        let size: usize = request.headers().iter().map(|(n, v)| n.as_str().len() + v.len() + 4).sum();
        if size > self.max_bytes {
            let problem = Problem::status(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE)
                .with_detail(format!("The request headers total {size} bytes; the limit is {}.", self.max_bytes));
            return Either::Left(ready(Ok(problem.into_http())));
        }
        Either::Right(self.inner.call(request))
    }
}
