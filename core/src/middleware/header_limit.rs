//! 431 as a problem document when the request's header section is too large.
//!
//! hyper itself refuses header sections beyond its own buffer (~400 KB) or 100 headers with a
//! bare 431 before any routing; this limit sits well below that so clients get a readable answer.

use super::gate::{Gate, GateLayer};
use crate::problem::Problem;
use axum::extract::Request;
use axum::response::Response;
use http::StatusCode;

#[derive(Clone, Copy)]
pub(crate) struct HeaderLimit {
    max_bytes: usize,
}

/// The layer that answers 431 past `max_bytes` of header lines.
pub(crate) fn header_limit_layer(max_bytes: usize) -> GateLayer<HeaderLimit> {
    GateLayer(HeaderLimit { max_bytes })
}

impl Gate for HeaderLimit {
    fn refusal(&self, request: &Request) -> Option<Response> {
        // Each header line costs `name: value\r\n`.
        let size: usize = request.headers().iter().map(|(n, v)| n.as_str().len() + v.len() + 4).sum();
        (size > self.max_bytes).then(|| {
            Problem::status(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE)
                .with_detail(format!("The request headers total {size} bytes; the limit is {}.", self.max_bytes))
                .into_http()
        })
    }
}
