//! A shape applied to a JSON tree: the reference every binding's writer must agree with, and
//! how a Rust handler's already-written JSON is filtered (parsed, filtered, written again: a
//! Rust handler that wants none of that cost returns a type with only the fields it means to
//! send).

use super::{Fill, Incomplete, Shape};
use serde_json::Value as Json;

/// Removes from `value` whatever `shape` leaves out and adds what it fills in, in place; an
/// object that lacks a property its schema requires is the error.
pub fn filter_json(value: &mut Json, shape: Shape<'_>) -> Result<(), Incomplete> {
    shaped(value, shape, 0)
}

/// How deep defaults may bring in defaults (a schema whose default holds an object whose own
/// default holds it again would otherwise never end).
const MAX_DEFAULT_DEPTH: usize = 64;

/// A property's default, shaped as it is when a result lacks the property: counted as one
/// default deep already, so a schema whose defaults compile never meets the limit when served.
pub(super) fn filter_default(value: &mut Json, shape: Shape<'_>) -> Result<(), Incomplete> {
    shaped(value, shape, 1)
}

fn shaped(value: &mut Json, shape: Shape<'_>, defaults_in: usize) -> Result<(), Incomplete> {
    if shape.keeps_everything() {
        return Ok(());
    }
    match value {
        Json::Object(members) => {
            let mut failed = Ok(());
            members.retain(|key, member| match shape.field(key) {
                Some(inner) => {
                    if failed.is_ok() {
                        failed = shaped(member, inner, defaults_in);
                    }
                    true
                }
                None => false,
            });
            failed?;
            for field in shape.completion().into_iter().flatten() {
                if members.contains_key(&*field.name) {
                    continue;
                }
                let Fill::Default { value: default, .. } = &field.fill else { return Err(Incomplete::Missing(field.name.clone())) };
                if defaults_in == MAX_DEFAULT_DEPTH {
                    return Err(Incomplete::Endless);
                }
                let mut default = default.clone();
                if let Some(inner) = shape.field(&field.name) {
                    shaped(&mut default, inner, defaults_in + 1)?;
                }
                members.insert(field.name.to_string(), default);
            }
        }
        Json::Array(items) => {
            for (position, item) in items.iter_mut().enumerate() {
                shaped(item, shape.item(position), defaults_in)?;
            }
        }
        _ => {}
    }
    Ok(())
}
