//! Response compression (gzip, brotli, zstd) above a minimum size.

use crate::spec::CompressionConfig;
use tower_http::compression::predicate::{NotForContentType, Predicate, SizeAbove};
use tower_http::compression::CompressionLayer;

pub(crate) type Compression = CompressionLayer<CompressWhen>;
pub(crate) type CompressWhen = tower_http::compression::predicate::And<
    tower_http::compression::predicate::And<SizeAbove, NotForContentType>,
    NotForContentType,
>;

pub(crate) fn compression_layer(config: &CompressionConfig) -> Compression {
    // Already-compressed images and never-ending event streams are left alone.
    let when = SizeAbove::new(config.min_size).and(NotForContentType::IMAGES).and(NotForContentType::SSE);
    CompressionLayer::new()
        .gzip(config.gzip)
        .br(config.br)
        .zstd(config.zstd)
        .compress_when(when)
}
