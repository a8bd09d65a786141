//! The two directions of the crossing, both without JSON text: Rust values → Python objects
//! (request data) and Python objects → JSON bytes (responses).

pub mod body_plan;
pub mod iso_text;
pub mod written_keys;
pub mod to_json;
pub mod to_python;
pub mod uuid;
