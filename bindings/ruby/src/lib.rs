//! The native extension of the `ferrule` gem (`ferrule/ferrule.so`, `Init_ferrule`).
//!
//! Later issues add the handler bridge; for now it proves the build graph: compiled in the
//! one cargo workspace action against Debian's Ruby, packed by `gem build`, required by the
//! gem test.

use magnus::{prelude::*, Error, Ruby};

#[magnus::init(name = "ferrule")]
fn init(ruby: &Ruby) -> Result<(), Error> {
    let module = ruby.define_module("Ferrule")?;
    module.const_set("VERSION", env!("CARGO_PKG_VERSION"))?;
    module.const_set("PROBLEM_JSON", ferrule_core::PROBLEM_JSON)?;
    Ok(())
}
