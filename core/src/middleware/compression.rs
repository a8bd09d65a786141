//! Response compression (gzip, brotli, zstd) above a minimum size.

use crate::spec::CompressionConfig;
use tower_http::compression::predicate::{And, NotForContentType, Predicate, SizeAbove};
use tower_http::compression::CompressionLayer;

pub(crate) type Compression = CompressionLayer<CompressWhen>;
pub(crate) type CompressWhen = And<And<And<WholeBody, SizeAbove>, NotForContentType>, NotForContentType>;

pub(crate) fn compression_layer(config: &CompressionConfig) -> Compression {
    // Streams, already-compressed images and never-ending event streams are left alone.
    let when = WholeBody.and(SizeAbove::new(u64::from(config.min_size))).and(NotForContentType::IMAGES).and(NotForContentType::SSE);
    CompressionLayer::new()
        .gzip(config.gzip)
        .br(config.br)
        .zstd(config.zstd)
        .compress_when(when)
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
        response.body().size_hint().exact().is_some() || response.headers().contains_key(http::header::CONTENT_LENGTH)
    }
}
