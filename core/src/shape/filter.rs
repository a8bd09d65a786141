//! A shape applied to a JSON tree: the reference every binding's writer must agree with; and
//! applied to a document ([`ShapedNode`]), which is how a Rust handler's already-written JSON
//! is filtered (read again and written again: a Rust handler that wants none of that cost
//! returns a type with only the fields it means to send).

use super::{Container, Fill, Incomplete, Shape, Written};
use crate::document::{NodeRef, View};
use serde::ser::{Error as _, SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::Value as Json;

/// Removes from `value` whatever `shape` leaves out and adds the defaults it fills in, in
/// place; an object that lacks a property its schema requires is the error.
pub fn filter_json(value: &mut Json, shape: Shape<'_>) -> Result<(), Incomplete> {
    if shape.keeps_everything() {
        return Ok(());
    }
    match value {
        Json::Object(members) => {
            shape.admits(Container::Object)?;
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
            shape.admits(Container::Array)?;
            for (position, item) in items.iter_mut().enumerate() {
                filter_json(item, shape.item(position))?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// A document's value with a shape applied, for serde to write: the same JSON as
/// [`filter_json`] on the value's tree and `serde_json::to_vec` after it, without the tree.
/// What the core does with a Rust handler's JSON under a declared response
/// (`rules::ResponseRules`), whose text it reads into a [`Document`](crate::document::Document)
/// first: a `serde_json::Value` costs an allocation and a SipHash per key, and was most of what
/// declaring a response cost a Rust route (numbers in `rules.rs`). A shape's refusal
/// ([`Incomplete`]) is the serializer's error, with its message; a required member is found
/// missing after the members are written, where [`filter_json`] looks first (either way the
/// response is a 500).
pub(crate) struct ShapedNode<'a> {
    pub(crate) node: NodeRef<'a>,
    pub(crate) shape: Shape<'a>,
}

impl Serialize for ShapedNode<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let shape = self.shape;
        if shape.keeps_everything() {
            return self.node.serialize(serializer);
        }
        match self.node.view() {
            View::Object(members) => {
                shape.admits(Container::Object).map_err(S::Error::custom)?;
                let mut map = serializer.serialize_map(None)?;
                let mut written = Written::default();
                for (key, value) in members {
                    if let Some(inner) = shape.member(key, &mut written) {
                        map.serialize_entry(key, &ShapedNode { node: value, shape: inner })?;
                    }
                }
                for (name, default, _) in shape.unwritten_defaults(&written).map_err(S::Error::custom)? {
                    map.serialize_entry(name, default)?;
                }
                map.end()
            }
            View::Array(items) => {
                shape.admits(Container::Array).map_err(S::Error::custom)?;
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for (position, item) in items.enumerate() {
                    seq.serialize_element(&ShapedNode { node: item, shape: shape.item(position) })?;
                }
                seq.end()
            }
            _ => self.node.serialize(serializer),
        }
    }
}

/// A property's default as it is written when a result lacks the property: what its shape
/// leaves out left out, and its own objects' defaults filled (as declared: this runs while
/// the shape is compiled). Written as declared otherwise: a required property it lacks is no
/// error (fast-json-stringify writes a default as it is). A default met again inside its own
/// expansion (a model whose default holds the model), or past [`MAX_DEFAULTS_FILLED`], is
/// written there as declared, so every default ends.
pub(super) fn shape_default(value: &mut Json, shape: Shape<'_>, owner: (usize, usize)) {
    expand(value, shape, &mut vec![owner], &mut 0);
}

/// How many defaults one default may bring in (each `k` defaults of a model that hold the
/// model could otherwise nest `k!` ways before every path met itself).
const MAX_DEFAULTS_FILLED: usize = 1_000;

fn expand(value: &mut Json, shape: Shape<'_>, expanding: &mut Vec<(usize, usize)>, filled: &mut usize) {
    if shape.keeps_everything() {
        return;
    }
    match value {
        Json::Object(members) => {
            members.retain(|key, _| shape.field(key).is_some());
            for (key, member) in members.iter_mut() {
                if let Some(inner) = shape.field(key) {
                    expand(member, inner, expanding, filled);
                }
            }
            for field in shape.completion().into_iter().flatten() {
                let Fill::Default { value: default, .. } = &field.fill else { continue };
                if members.contains_key(&*field.name) {
                    continue;
                }
                let mut default = default.clone();
                let this = (shape.at, field.bit);
                *filled += 1;
                if !expanding.contains(&this) && *filled <= MAX_DEFAULTS_FILLED {
                    if let Some(inner) = shape.field(&field.name) {
                        expanding.push(this);
                        expand(&mut default, inner, expanding, filled);
                        expanding.pop();
                    }
                }
                members.insert(field.name.to_string(), default);
            }
        }
        Json::Array(items) => {
            for (position, item) in items.iter_mut().enumerate() {
                expand(item, shape.item(position), expanding, filled);
            }
        }
        _ => {}
    }
}
