//! # ferrule-fuzz
//!
//! Coverage-guided fuzzing of every part of the core that parses bytes a client chose: path
//! matching and typed coercion, query strings, url-encoded and multipart bodies, cookies, JSON
//! bodies with schema validation, header values. Each [`target`] serves the routes of some
//! fixture categories (`fixtures/conformance/`), starts from those categories' cases as seeds,
//! and sends every mutated request through the whole router in process — the code a request
//! meets after hyper has parsed it — then checks what must hold of any answer ([`harness`]).
//!
//! The engine is libFuzzer (the `libfuzzer-sys` crate compiles it from source with the system
//! C++ compiler). Coverage comes from LLVM's SanitizerCoverage pass, switched on with stable
//! `-C` flags (`-Cpasses=sancov-module` plus `-Cllvm-args=-sanitizer-coverage-*`), which is
//! what nightly-only tooling does too; no AddressSanitizer (that needs `-Zsanitizer`), so a
//! finding is a panic (with debug assertions and overflow checks on), an abort, a hang or a
//! broken invariant. `//core/fuzz:cargo` builds it; `ferrule-bench fuzz` runs campaigns.

// The instrumented unit tests need the coverage callbacks that libFuzzer defines; the fuzz
// binary gets them through `fuzz_target!`.
#[cfg(test)]
extern crate libfuzzer_sys;

pub mod harness;
pub mod input;
pub mod target;

pub use harness::Harness;
pub use target::{Target, TARGETS};
