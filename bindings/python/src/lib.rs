//! `ferrule._ferrule`: the compiled half of the `ferrule` Python package.
//!
//! Later issues add the handler bridge; for now the module proves the build graph: it is
//! compiled in the one cargo workspace action, packed by maturin into an abi3 wheel, and
//! imported by the wheel test.

use pyo3::prelude::*;

/// The version of the Rust crates this module was built from.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

#[pymodule]
#[pyo3(name = "_ferrule")]
fn ferrule_ext(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", VERSION)?;
    // Linked against the shared core so the whole graph is one crate graph.
    m.add("PROBLEM_JSON", ferrule_core::PROBLEM_JSON)?;
    Ok(())
}
