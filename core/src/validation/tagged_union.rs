//! A tagged union's issues, as pydantic reports them.
//!
//! A `oneOf` (or `anyOf`) with OpenAPI's `discriminator` names the branch a value means by one of
//! its members: pydantic writes one for `Field(discriminator="pet_type")`, and an OpenAPI or
//! JSON Schema author writes it by hand. jsonschema itself only says that no branch passed
//! ("… is not valid under any of the schemas listed in the 'oneOf' keyword"), which tells a
//! client neither which branch was meant nor what in it failed. Here a refused value is judged by
//! the branch its tag names, as pydantic judges it:
//!
//! - a tag that names a branch: that branch's issues, located under the tag (`pet.cat.meows`);
//! - no tag member: `union_tag_not_found`; a tag no branch has: `union_tag_invalid`, listing
//!   the tags there are; a value that is not an object: `dict_type`.
//!
//! A branch is named by the discriminator's `mapping` (tag → `$ref`), else by the `const` or
//! `enum` its tag member declares, else by its schema's name (OpenAPI's implicit mapping:
//! `Cat` for `#/components/schemas/Cat`). Only a refused value pays for any of this: the union
//! is found again from the error's keyword location.

use serde_json::{json, Value as Json};

/// How deep a branch's `$ref`s are followed to find its tag member's schema; a cycle ends here.
const REF_HOPS: usize = 8;

/// A failed union that carries a discriminator.
pub(super) struct TaggedUnion<'s> {
    /// The member that holds the tag.
    property: &'s str,
    /// Each tag and the branch (its index among the union's schemas) it names, in the order
    /// the union lists them: pydantic's order in `expected_tags`.
    tags: Vec<(Json, usize)>,
    /// The branches' `$ref`s, for OpenAPI's implicit mapping by schema name.
    refs: Vec<Option<&'s str>>,
}

/// What a refused value's tag says.
pub(super) enum Verdict {
    NotAnObject,
    TagNotFound,
    /// The tag's text: no branch has it.
    TagInvalid(String),
    /// The branch the tag names, and the tag's text (the location step pydantic adds).
    Branch(usize, String),
}

impl<'s> TaggedUnion<'s> {
    /// The union whose keyword (`oneOf` or `anyOf`) failed at `keyword_location`, a JSON pointer
    /// into `root` (jsonschema's schema path: where the keyword is written, `$ref`s resolved), if
    /// it has a discriminator.
    pub(super) fn at(root: &'s Json, keyword_location: &str) -> Option<Self> {
        let (parent, keyword) = keyword_location.rsplit_once('/')?;
        let union = root.pointer(parent)?;
        let branches = union.get(keyword)?.as_array()?;
        let discriminator = union.get("discriminator")?;
        let property = discriminator.get("propertyName")?.as_str()?;
        let refs: Vec<Option<&str>> = branches.iter().map(|branch| branch.get("$ref").and_then(Json::as_str)).collect();
        let mapping = discriminator.get("mapping").and_then(Json::as_object);
        let mut tags = Vec::new();
        for (index, branch) in branches.iter().enumerate() {
            let mapped: Vec<Json> = mapping
                .into_iter()
                .flatten()
                .filter(|(_, target)| refs[index].is_some() && target.as_str() == refs[index])
                .map(|(tag, _)| Json::String(tag.clone()))
                .collect();
            if mapped.is_empty() {
                tags.extend(declared_tags(root, branch, property).into_iter().map(|tag| (tag, index)));
            } else {
                tags.extend(mapped.into_iter().map(|tag| (tag, index)));
            }
        }
        Some(TaggedUnion { property, tags, refs })
    }

    /// Which branch `instance` means, or why it means none.
    pub(super) fn judge(&self, instance: &Json) -> Verdict {
        let Some(object) = instance.as_object() else { return Verdict::NotAnObject };
        let Some(tag) = object.get(self.property) else { return Verdict::TagNotFound };
        let text = tag_text(tag);
        let named = self.tags.iter().find(|(known, _)| known == tag).map(|&(_, index)| index);
        // OpenAPI's implicit mapping: a tag that is the name of a branch's schema.
        let by_name = || self.refs.iter().position(|r| matches!((r, tag), (Some(r), Json::String(t)) if r.rsplit('/').next() == Some(t)));
        match named.or_else(by_name) {
            Some(index) => Verdict::Branch(index, text),
            None => Verdict::TagInvalid(text),
        }
    }

    /// pydantic's `discriminator` context: the member's name, quoted.
    pub(super) fn discriminator(&self) -> String {
        format!("'{}'", self.property)
    }

    /// pydantic's `expected_tags`: `'cat', 'dog'`.
    pub(super) fn expected_tags(&self) -> String {
        self.tags.iter().map(|(tag, _)| quoted(tag)).collect::<Vec<_>>().join(", ")
    }

    /// The issue for a value whose tag names no branch.
    pub(super) fn tag_invalid(&self, tag: &str) -> (&'static str, String, Json) {
        let discriminator = self.discriminator();
        let expected = self.expected_tags();
        let msg = format!("Input tag '{tag}' found using {discriminator} does not match any of the expected tags: {expected}");
        ("union_tag_invalid", msg, json!({"discriminator": discriminator, "tag": tag, "expected_tags": expected}))
    }

    /// The issue for a value with no tag member.
    pub(super) fn tag_not_found(&self) -> (&'static str, String, Json) {
        let discriminator = self.discriminator();
        ("union_tag_not_found", format!("Unable to extract tag using discriminator {discriminator}"), json!({"discriminator": discriminator}))
    }
}

/// The tags a branch declares for `property`: its `const`, or its `enum`'s values, following
/// local `$ref`s (and `allOf`, where a model's fields may sit) to find them.
fn declared_tags(root: &Json, branch: &Json, property: &str) -> Vec<Json> {
    let mut pending = vec![(branch, 0)];
    while let Some((schema, hops)) = pending.pop() {
        if let Some(member) = schema.get("properties").and_then(|p| p.get(property)) {
            if let Some(value) = member.get("const") {
                return vec![value.clone()];
            }
            if let Some(values) = member.get("enum").and_then(Json::as_array) {
                return values.clone();
            }
        }
        if hops == REF_HOPS {
            continue;
        }
        let referenced = schema.get("$ref").and_then(Json::as_str).and_then(|r| r.strip_prefix('#')).and_then(|pointer| root.pointer(pointer));
        let parts = schema.get("allOf").and_then(Json::as_array).into_iter().flatten();
        pending.extend(referenced.into_iter().chain(parts).map(|next| (next, hops + 1)));
    }
    Vec::new()
}

/// A tag as text: a string as it is, anything else as its JSON (`3`, `true`).
fn tag_text(tag: &Json) -> String {
    match tag {
        Json::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn quoted(tag: &Json) -> String {
    match tag {
        Json::String(text) => format!("'{text}'"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pets(discriminator: Json) -> Json {
        json!({
            "$defs": {
                "Cat": {"type": "object", "properties": {"pet_type": {"const": "cat"}, "meows": {"type": "integer"}}, "required": ["pet_type", "meows"]},
                "Dog": {"type": "object", "properties": {"pet_type": {"enum": ["dog", "puppy"]}, "barks": {"type": "number"}}, "required": ["pet_type", "barks"]},
            },
            "properties": {"pet": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}], "discriminator": discriminator}},
        })
    }

    fn branch(union: &TaggedUnion<'_>, value: Json) -> Option<(usize, String)> {
        match union.judge(&value) {
            Verdict::Branch(index, tag) => Some((index, tag)),
            _ => None,
        }
    }

    #[test]
    fn the_mapping_names_the_branches_in_the_unions_order() {
        let schema = pets(json!({"propertyName": "pet_type", "mapping": {"dog": "#/$defs/Dog", "cat": "#/$defs/Cat"}}));
        let union = TaggedUnion::at(&schema, "/properties/pet/oneOf").unwrap();
        assert_eq!(union.expected_tags(), "'cat', 'dog'");
        assert_eq!(branch(&union, json!({"pet_type": "dog"})), Some((1, "dog".into())));
        // A tag the mapping leaves out is not found through the branch's `enum` either: the
        // mapping is the whole list of what a mapped branch is called.
        assert!(matches!(union.judge(&json!({"pet_type": "puppy"})), Verdict::TagInvalid(tag) if tag == "puppy"));
    }

    #[test]
    fn without_a_mapping_the_branches_declare_their_tags() {
        let schema = pets(json!({"propertyName": "pet_type"}));
        let union = TaggedUnion::at(&schema, "/properties/pet/oneOf").unwrap();
        assert_eq!(union.expected_tags(), "'cat', 'dog', 'puppy'");
        assert_eq!(branch(&union, json!({"pet_type": "puppy", "barks": 1})), Some((1, "puppy".into())));
        assert_eq!(branch(&union, json!({"pet_type": "cat"})), Some((0, "cat".into())));
    }

    #[test]
    fn a_tag_that_is_a_schemas_name_names_it() {
        let schema = json!({"$defs": {"Cat": {"type": "object"}, "Dog": {"type": "object"}}, "anyOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}], "discriminator": {"propertyName": "kind"}});
        let union = TaggedUnion::at(&schema, "/anyOf").unwrap();
        assert_eq!(branch(&union, json!({"kind": "Dog"})), Some((1, "Dog".into())));
    }

    #[test]
    fn a_value_without_its_tag_or_not_an_object_names_no_branch() {
        let schema = pets(json!({"propertyName": "pet_type"}));
        let union = TaggedUnion::at(&schema, "/properties/pet/oneOf").unwrap();
        assert!(matches!(union.judge(&json!({"meows": 1})), Verdict::TagNotFound));
        assert!(matches!(union.judge(&json!([1])), Verdict::NotAnObject));
        // A tag is matched as the JSON value it is: the number 3 is not the string "3".
        assert!(matches!(union.judge(&json!({"pet_type": 3})), Verdict::TagInvalid(tag) if tag == "3"));
        let (kind, msg, ctx) = union.tag_invalid("fish");
        assert_eq!(kind, "union_tag_invalid");
        assert_eq!(msg, "Input tag 'fish' found using 'pet_type' does not match any of the expected tags: 'cat', 'dog', 'puppy'");
        assert_eq!(ctx, json!({"discriminator": "'pet_type'", "tag": "fish", "expected_tags": "'cat', 'dog', 'puppy'"}));
        assert_eq!(union.tag_not_found().1, "Unable to extract tag using discriminator 'pet_type'");
    }

    #[test]
    fn a_union_without_a_discriminator_is_not_tagged() {
        let schema = json!({"oneOf": [{"type": "integer"}, {"type": "string"}]});
        assert!(TaggedUnion::at(&schema, "/oneOf").is_none());
        assert!(TaggedUnion::at(&schema, "/nowhere/oneOf").is_none());
    }
}
