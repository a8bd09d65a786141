//! 431 as a problem document when the request's header section is too large.
//!
//! hyper itself refuses header sections beyond its own buffer (~400 KB) or 100 headers with a
//! bare 431 before any routing; this limit sits well below that so clients get a readable answer.
//! Checked by the app's routing service (`route_table::Routed`) before it routes, not by a layer
//! of its own: a layer was a service and a future around everything under it, on every request.

use crate::problem::Problem;
use axum::extract::Request;
use axum::response::Response;
use http::StatusCode;

/// The answer to a request past `max_bytes` of header lines; `None` for every other.
pub(crate) fn refusal(request: &Request, max_bytes: usize) -> Option<Response> {
    // Each header line costs `name: value\r\n`.
    let size: usize = request.headers().iter().map(|(n, v)| n.as_str().len() + v.len() + 4).sum();
    (size > max_bytes).then(|| {
        Problem::status(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE)
            .with_detail(format!("The request headers total {size} bytes; the limit is {max_bytes}."))
            .into_http()
    })
}
