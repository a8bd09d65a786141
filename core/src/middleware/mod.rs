//! Tower layers built from [`crate::spec`] settings, applied per app and per route.

mod access_log;
mod catch_panic;
mod compression;
mod cors;
mod gate;
pub(crate) mod header_limit;
mod metrics;
mod trusted_host;
pub(crate) mod request_id;

pub(crate) use access_log::AccessLogLayer;
pub(crate) use catch_panic::CatchPanicLayer;
pub(crate) use compression::{check_level, compression_layer};
pub(crate) use cors::cors_layer;
pub(crate) use metrics::{Metrics, MetricsLayer, RouteLabel, OPENMETRICS};
pub use metrics::InterpreterStats;
pub(crate) use request_id::{request_id_in, RequestIdLayer};
pub(crate) use trusted_host::{trusted_host_layer, AllowedHosts};
