//! A shape applied to a JSON tree: the reference every binding's writer must agree with, and
//! how a Rust handler's already-written JSON is filtered (parsed, filtered, written again: a
//! Rust handler that wants none of that cost returns a type with only the fields it means to
//! send).

use super::{Fill, Incomplete, Shape};
use serde_json::Value as Json;

/// Removes from `value` whatever `shape` leaves out and adds the defaults it fills in, in
/// place; an object that lacks a property its schema requires is the error.
pub fn filter_json(value: &mut Json, shape: Shape<'_>) -> Result<(), Incomplete> {
    if shape.keeps_everything() {
        return Ok(());
    }
    match value {
        Json::Object(members) => {
            // Required before anything is left out: a required name the schema does not
            // declare is present, though not sent.
            if let Some(missing) = shape.completion().into_iter().flatten().find(|field| matches!(field.fill, Fill::Required) && !members.contains_key(&*field.name)) {
                return Err(Incomplete::Missing(missing.name.clone()));
            }
            let mut failed = Ok(());
            members.retain(|key, member| match shape.field(key) {
                Some(inner) => {
                    if failed.is_ok() {
                        failed = filter_json(member, inner);
                    }
                    true
                }
                None => false,
            });
            failed?;
            for field in shape.completion().into_iter().flatten() {
                if let Fill::Default { written, .. } = &field.fill {
                    if !members.contains_key(&*field.name) {
                        members.insert(field.name.to_string(), written.clone());
                    }
                }
            }
        }
        Json::Array(items) => {
            for (position, item) in items.iter_mut().enumerate() {
                filter_json(item, shape.item(position))?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// How deep defaults may bring in defaults, and how many values they may add in all (a
/// default holding an object whose own default holds it again would otherwise never end, and
/// two such properties per level would double at each).
const MAX_DEFAULT_DEPTH: usize = 64;
const MAX_DEFAULTS_FILLED: usize = 10_000;

/// A property's default as it is written when a result lacks the property: what its shape
/// leaves out left out, and its own objects' defaults filled (as declared: this runs while
/// the shape is compiled). Written as declared otherwise: a required property it lacks is no
/// error (fast-json-stringify writes a default as it is).
pub(super) fn shape_default(value: &mut Json, shape: Shape<'_>) -> Result<(), String> {
    expand(value, shape, 1, &mut 0)
}

fn expand(value: &mut Json, shape: Shape<'_>, depth: usize, filled: &mut usize) -> Result<(), String> {
    if shape.keeps_everything() {
        return Ok(());
    }
    match value {
        Json::Object(members) => {
            members.retain(|key, _| shape.field(key).is_some());
            for (key, member) in members.iter_mut() {
                if let Some(inner) = shape.field(key) {
                    expand(member, inner, depth, filled)?;
                }
            }
            for field in shape.completion().into_iter().flatten() {
                let Fill::Default { value: default, .. } = &field.fill else { continue };
                if members.contains_key(&*field.name) {
                    continue;
                }
                *filled += 1;
                if depth == MAX_DEFAULT_DEPTH || *filled > MAX_DEFAULTS_FILLED {
                    return Err(format!("defaults that bring in defaults past {MAX_DEFAULT_DEPTH} levels or {MAX_DEFAULTS_FILLED} values (a default that holds itself?)"));
                }
                let mut default = default.clone();
                if let Some(inner) = shape.field(&field.name) {
                    expand(&mut default, inner, depth + 1, filled)?;
                }
                members.insert(field.name.to_string(), default);
            }
        }
        Json::Array(items) => {
            for (position, item) in items.iter_mut().enumerate() {
                expand(item, shape.item(position), depth, filled)?;
            }
        }
        _ => {}
    }
    Ok(())
}
