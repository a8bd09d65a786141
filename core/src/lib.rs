//! # ferrule-core
//!
//! The HTTP core every Ferrule binding shares. It decides everything that can be decided
//! before a handler runs — route match, path/query/header/cookie parsing and coercion, JSON
//! Schema validation (compiled once per route), body limits and content types — so a bad
//! request never enters Python, Node or Ruby. It knows nothing of those languages: a binding
//! implements [`Handler`] and converts [`RequestData`] into native objects.
//!
//! Errors have one shape, RFC 9457 problem details ([`Problem`]), with FastAPI-style
//! `errors: [{type, loc, msg, input, ctx}]` for validation failures.

mod allocator;
pub use allocator::Allocator;
mod app;
mod body;
pub use body::multipart_parts;
pub mod bridge;
mod by_method;
mod canonical_path;
pub use canonical_path::canonical as canonical_path;
pub mod docs;
pub mod document;
mod handler;
pub mod host;
pub mod json_text;
pub mod kept_by_address;
mod key_cache;
pub mod lasting_keys;
pub mod log;
mod middleware;
mod nullable;
pub mod openapi;
pub mod params;
mod path;
mod path_expression;
mod pattern_routes;
mod problem;
pub mod reload;
mod request;
mod response;
mod route;
mod route_table;
mod server;
pub mod socket;
pub mod forwarded;
pub mod static_files;
pub mod shape;
mod slash_redirect;
pub mod spec;
pub mod stream;
pub mod trace;
pub mod validation;
mod value;

pub use app::{App, AppError};
pub use forwarded::Forwarded;
pub use handler::{Handler, HandlerError, HandlerErrorKind, HandlerFuture, Rejection};
pub use key_cache::KeyCache;
pub use middleware::InterpreterStats;
pub use path::{PathParam, PathTemplate};
pub use path_expression::PathExpression;
pub use problem::{Issue, LocSegment, Problem, PROBLEM_JSON, VALIDATION_PROBLEM_TYPE};
pub use request::{cookie_pairs, header_text, header_value_text, query_pairs, Body, ClientAddr, ExtractError, RequestData};
pub use response::{IntoResponse, Json, Response, ResponseBody};
pub use server::{bind, is_body_timeout, listener_from_fd, shutdown_signal, BodyTimeout, Closing, Server, ShutdownError};
pub use spec::{AppConfig, BodyKind, BodySpec, CompressionConfig, CorsConfig, ParamSpec, ParamStyle, RouteSpec, SocketSpec, StaticSpec};
pub use value::{DateTimeValue, Params, UploadedFile, Value};

/// Re-exported so bindings and users name the same versions (`futures` for building streams).
pub use {bytes, futures_util as futures, http, serde_json};
