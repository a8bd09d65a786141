//! A shape applied to a JSON tree: the reference every binding's writer must agree with, and
//! how a Rust handler's already-written JSON is filtered (parsed, filtered, written again: a
//! Rust handler that wants none of that cost returns a type with only the fields it means to
//! send).

use super::Shape;
use serde_json::Value as Json;

/// Removes from `value` whatever `shape` leaves out, in place.
pub fn filter_json(value: &mut Json, shape: Shape<'_>) {
    if shape.keeps_everything() {
        return;
    }
    match value {
        Json::Object(members) => members.retain(|key, member| match shape.field(key) {
            Some(inner) => {
                filter_json(member, inner);
                true
            }
            None => false,
        }),
        Json::Array(items) => {
            for (position, item) in items.iter_mut().enumerate() {
                filter_json(item, shape.item(position));
            }
        }
        _ => {}
    }
}
