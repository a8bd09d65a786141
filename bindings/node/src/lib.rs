//! `ferrule.node`: the native addon of the `ferrule` npm package.
//!
//! The JavaScript side (index.js) turns route declarations into core `RouteSpec`s and calls
//! the handlers; everything else — HTTP, routing, parsing, coercion, validation, errors — is
//! the Rust core's. Requests reach JavaScript as objects built from Rust values; results are
//! serialised to bytes here, directly from the JavaScript values.

mod app;
mod raw;
mod shapes;
mod to_js;
mod to_json;

use napi_derive::napi;

/// Rust's allocations in this addon (request parsing, JSON trees, response bytes).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The version of the Rust crates this addon was built from.
#[napi]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// The media type of Ferrule's error responses (from the shared core).
#[napi]
pub fn problem_json() -> String {
    ferrule_core::PROBLEM_JSON.to_string()
}
