//! The native addon of the `ferrule` npm package (`ferrule.node`).
//!
//! Later issues add the handler bridge; for now it proves the build graph: compiled in the
//! one cargo workspace action, packed by `npm pack`, required by the package test.

use napi_derive::napi;

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
