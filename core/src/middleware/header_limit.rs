//! 431 as a problem document when the request's header section is too large.
//!
//! hyper itself refuses header sections beyond its own buffer (~400 KB) or 100 headers with a
//! bare 431 before any routing; this limit sits well below that so clients get a readable answer.

use crate::problem::Problem;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use http::StatusCode;

pub(crate) async fn reject_oversized_headers(max_bytes: usize, request: Request, next: Next) -> Response {
    // Each header line costs `name: value\r\n`.
    let size: usize = request.headers().iter().map(|(n, v)| n.as_str().len() + v.len() + 4).sum();
    if size > max_bytes {
        return Problem::status(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE)
            .with_detail(format!("The request headers total {size} bytes; the limit is {max_bytes}."))
            .into_http();
    }
    next.run(request).await
}
