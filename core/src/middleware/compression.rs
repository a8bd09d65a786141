//! Response compression (gzip, brotli, zstd) above a minimum size.
//!
//! tower-http's layer does the coding. Two things around it are the core's:
//! * a client that refuses every coding we have *and* the identity (`identity;q=0`,
//!   `*;q=0`) gets the response without a coding, as nginx and Starlette send it: tower-http
//!   would instead turn the handler's finished answer into a 406 that still carries the
//!   handler's headers and body, after a POST's side effects (RFC 9110 §12.5.3 lets a server
//!   send the identity);
//! * a compressed answer's strong `ETag` becomes weak: the coded bytes are another
//!   representation (RFC 9110 §8.8.1), as nginx's gzip marks it.
//!
//! Cost: one header lookup per request (`Accept-Encoding`), parsed only when it refuses
//! something; one per compressed response (`ETag`). The guard allocates nothing per request:
//! axum clones a route's service for each request, so what it offers is a `Copy` array (it
//! was a `Vec`, one allocation per clone), and its future is written out ([`Weakened`]) where
//! it was boxed.

use crate::spec::CompressionConfig;
use http::{header, HeaderValue, Request, Response};
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tower::layer::util::Stack;
use tower::{Layer, Service};
use tower_http::compression::predicate::{And, NotForContentType, Predicate, SizeAbove};
use tower_http::compression::{CompressionLayer, CompressionLevel};

pub(crate) type Compression = Stack<CompressionLayer<CompressWhen>, CodingGuard>;
pub(crate) type CompressWhen = And<And<And<And<WholeBody, SizeAbove>, NotForContentType>, NotForContentType>, NotCoded>;

pub(crate) fn compression_layer(config: &CompressionConfig) -> Compression {
    // Streams, already-compressed images, archives and media, and never-ending event streams
    // are left alone.
    let when = WholeBody.and(SizeAbove::new(u64::from(config.min_size))).and(NotForContentType::IMAGES).and(NotForContentType::SSE).and(NotCoded);
    let mut codings = CompressionLayer::new().gzip(config.gzip).br(config.br).zstd(config.zstd);
    if let Some(level) = config.level {
        codings = codings.quality(CompressionLevel::Precise(level));
    }
    let layer = codings.compress_when(when);
    let mut guard = CodingGuard { offered: [""; 3], count: 0 };
    for (name, on) in [("gzip", config.gzip), ("br", config.br), ("zstd", config.zstd)] {
        if on {
            guard.offered[guard.count] = name;
            guard.count += 1;
        }
    }
    Stack::new(layer, guard)
}

/// The levels a [`CompressionConfig`] may ask for: each coding clamps it to its own highest
/// (gzip 9, brotli 11, zstd 22), and none goes below 0.
pub(crate) fn check_level(level: i32) -> Result<(), String> {
    match level {
        0..=22 => Ok(()),
        _ => Err(format!("compression level must be between 0 and 22 (gzip takes 1 to 9, brotli 0 to 11, zstd 1 to 22), not {level}")),
    }
}

/// Only bodies whose size is known: a compressor holds a stream's chunks back until its
/// buffer fills, so a live stream (tokens, progress lines) would reach its client in lumps.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WholeBody;

impl Predicate for WholeBody {
    fn should_compress<B>(&self, response: &http::Response<B>) -> bool
    where
        B: hyper::body::Body,
    {
        let sized = response.body().size_hint().exact().is_some() || response.headers().contains_key(http::header::CONTENT_LENGTH);
        sized && response.extensions().get::<crate::stream::Streamed>().is_none()
    }
}

/// Not a body that is compressed already: an archive, a web font, audio or video. Coding one
/// again costs the CPU and gains nothing; found by a probe, a `.gz` file sent with gzip came out
/// 43 bytes larger. (tower-http leaves out images, but for SVG, and event streams.) One read
/// of `Content-Type`, for a response that is already big enough to compress.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NotCoded;

const CODED_TYPES: &[&str] = &[
    "application/gzip",
    "application/x-gzip",
    "application/zip",
    "application/x-compressed",
    "application/x-7z-compressed",
    "application/x-bzip2",
    "application/x-xz",
    "application/zstd",
    "application/x-rar-compressed",
    "application/vnd.rar",
    "application/java-archive",
    "application/vnd.android.package-archive",
    "application/font-woff",
    "font/woff",
    "font/woff2",
];

impl Predicate for NotCoded {
    fn should_compress<B>(&self, response: &http::Response<B>) -> bool
    where
        B: hyper::body::Body,
    {
        let Some(value) = response.headers().get(header::CONTENT_TYPE) else { return true };
        !is_coded(value.as_bytes())
    }
}

/// Whether a `Content-Type` value names a media type whose bytes are compressed already.
fn is_coded(content_type: &[u8]) -> bool {
    let essence = content_type.split(|&b| b == b';').next().unwrap_or_default().trim_ascii();
    let Ok(essence) = std::str::from_utf8(essence) else { return false };
    let wave = ["audio/wav", "audio/x-wav", "audio/wave"].iter().any(|t| essence.eq_ignore_ascii_case(t));
    let media = ["audio/", "video/"].iter().any(|top| essence.get(..top.len()).is_some_and(|p| p.eq_ignore_ascii_case(top)));
    (media && !wave) || CODED_TYPES.iter().any(|t| essence.eq_ignore_ascii_case(t))
}

/// The layer around tower-http's: see the module's notes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CodingGuard {
    /// The codings this route may send: the first `count`.
    offered: [&'static str; 3],
    count: usize,
}

impl CodingGuard {
    fn offered(&self) -> &[&'static str] {
        &self.offered[..self.count]
    }
}

impl<S> Layer<S> for CodingGuard {
    type Service = Guarded<S>;

    fn layer(&self, inner: S) -> Guarded<S> {
        Guarded { inner, guard: *self }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Guarded<S> {
    inner: S,
    guard: CodingGuard,
}

impl<S, B, R> Service<Request<B>> for Guarded<S>
where
    S: Service<Request<B>, Response = Response<R>>,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = Weakened<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        if let Some(accepted) = request.headers().get(header::ACCEPT_ENCODING) {
            if refuses_all(accepted.as_bytes(), self.guard.offered()) {
                // No preference left that can be met: the answer goes without a coding.
                request.headers_mut().remove(header::ACCEPT_ENCODING);
            }
        }
        Weakened { answered: self.inner.call(request) }
    }
}

pin_project_lite::pin_project! {
    /// The inner service's answer, with a weak `ETag` when it went out coded.
    pub(crate) struct Weakened<F> {
        #[pin]
        answered: F,
    }
}

impl<F, R, E> Future for Weakened<F>
where
    F: Future<Output = Result<Response<R>, E>>,
{
    type Output = Result<Response<R>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut response = ready!(self.project().answered.poll(cx))?;
        if response.headers().contains_key(header::CONTENT_ENCODING) {
            weaken_etag(response.headers_mut());
        }
        Poll::Ready(Ok(response))
    }
}

/// Whether an `Accept-Encoding` value accepts none of `offered` and not the identity either.
fn refuses_all(value: &[u8], offered: &[&str]) -> bool {
    let Ok(value) = std::str::from_utf8(value) else { return false };
    let (mut any, mut identity) = (None, None);
    let mut accepts_offered = false;
    for entry in value.split(',') {
        let mut parts = entry.split(';');
        let coding = parts.next().unwrap_or("").trim();
        if coding.is_empty() {
            continue;
        }
        let q = parts.find_map(|p| p.trim().strip_prefix("q=").or_else(|| p.trim().strip_prefix("Q="))).map_or(Some(1.0), |q| q.trim().parse::<f32>().ok());
        let Some(q) = q else { return false };
        if coding == "*" {
            any = Some(q);
        } else if coding.eq_ignore_ascii_case("identity") {
            identity = Some(q);
        } else if q > 0.0 && offered.iter().any(|o| coding.eq_ignore_ascii_case(o) || (*o == "gzip" && coding.eq_ignore_ascii_case("x-gzip"))) {
            accepts_offered = true;
        }
    }
    if accepts_offered || (any.is_some_and(|q| q > 0.0) && !offered.is_empty()) {
        return false;
    }
    identity.or(any).is_some_and(|q| q <= 0.0)
}

/// `"v1"` → `W/"v1"`; a weak tag stays as it is.
fn weaken_etag(headers: &mut http::HeaderMap) {
    let Some(tag) = headers.get(header::ETAG) else { return };
    if tag.as_bytes().starts_with(b"W/") {
        return;
    }
    let mut weak = b"W/".to_vec();
    weak.extend_from_slice(tag.as_bytes());
    if let Ok(weak) = HeaderValue::from_bytes(&weak) {
        headers.insert(header::ETAG, weak);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [&str; 3] = ["gzip", "br", "zstd"];

    // Found by a core-HTTP probe: tower-http answered these with a 406 over the handler's
    // finished response.
    #[test]
    fn a_client_refusing_the_identity_and_every_offered_coding_gets_the_identity() {
        for value in ["identity;q=0", "*;q=0", "gzip;q=0, identity;q=0", "deflate, identity;q=0", "compress, *;q=0"] {
            assert!(refuses_all(value.as_bytes(), &ALL), "{value}");
        }
        for value in ["gzip", "gzip, identity;q=0", "*", "*;q=0.5, identity;q=0", "identity", "deflate", "br;q=0", "x-gzip, identity;q=0", "", "gzip;q=x"] {
            assert!(!refuses_all(value.as_bytes(), &ALL), "{value}");
        }
        assert!(refuses_all(b"gzip, identity;q=0", &["br"]), "a route that offers only br");
    }

    #[test]
    fn archives_fonts_and_media_are_not_coded_again() {
        for coded in ["application/gzip", "application/x-gzip", "Application/Zip", "font/woff2", "video/mp4", "audio/mpeg; codecs=mp3", "application/x-7z-compressed"] {
            assert!(is_coded(coded.as_bytes()), "{coded}");
        }
        for plain in ["text/html; charset=utf-8", "application/json", "image/svg+xml", "audio/wav", "application/x-tar", "application/wasm", "", "audio"] {
            assert!(!is_coded(plain.as_bytes()), "{plain}");
        }
    }

    #[test]
    fn a_coded_answer_has_a_weak_tag() {
        let mut headers = http::HeaderMap::new();
        headers.insert(header::ETAG, HeaderValue::from_static("\"v1\""));
        weaken_etag(&mut headers);
        assert_eq!(headers[header::ETAG], "W/\"v1\"");
        weaken_etag(&mut headers);
        assert_eq!(headers[header::ETAG], "W/\"v1\"", "already weak");
    }
}
