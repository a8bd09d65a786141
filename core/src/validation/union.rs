//! A failed union's issues (`anyOf`, `oneOf`), as pydantic reports a union's.
//!
//! - `Optional[X]` (a union whose only other branch is `null`): `X`'s own issues, at the value.
//! - A tagged union (with a `discriminator`): its tag's branch's issues, under the tag
//!   ([`super::tagged_union`]).
//! - Any other union: every branch's issues, branch by branch in the union's order, each under
//!   the branch's name as pydantic names a union's members (`int`, `str`, `Cat`, `list[int]`,
//!   `literal['a','b']`): `[1]` against `int | str` is `int_type` at `x.int` and `string_type`
//!   at `x.str`. jsonschema reports one error for the union, with each branch's errors inside
//!   it; its text ("… is not valid under any of the schemas listed in the 'anyOf' keyword")
//!   says nothing a client can act on.
//!
//! Only a refused value pays for any of this: the union's schema is found again from the
//! error's keyword location, and each branch's errors by their evaluation path.

use super::tagged_union::{TaggedUnion, Verdict};
use super::{error_issues, in_declaration_order, to_issues, type_issue};
use crate::problem::{Issue, LocSegment};
use jsonschema::error::{TypeKind, ValidationErrorKind, ValidationErrorParts};
use jsonschema::ValidationError;
use serde_json::Value as Json;

/// How deep a branch's name follows arrays' items and maps' values (`list[list[int]]`).
const NAME_DEPTH: usize = 8;

/// The issues of a failed `anyOf` or `oneOf` (`parts`), at `loc`. `message` is jsonschema's,
/// said only when no branch's issues can be found.
pub(super) fn issues(parts: ValidationErrorParts<'_>, loc: Vec<LocSegment>, instance: &Json, loc_prefix: &[LocSegment], root: &Json, message: &str) -> Vec<Issue> {
    let value = parts.instance.into_owned();
    let context = match parts.kind {
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => context,
        other => return to_issues(&other, loc, value, message),
    };
    let keyword_location = parts.schema_path.as_str();
    let branches = keyword_location.rsplit_once('/').and_then(|(parent, keyword)| root.pointer(parent)?.get(keyword)?.as_array());
    let Some(branches) = branches else { return one_issue(loc, value, message) };
    // Each branch's errors: those evaluated below its place in the union (`…/anyOf/1/…`),
    // whether jsonschema grouped them by branch or, dispatching on a member's value, in one group.
    let mut by_branch: Vec<Vec<ValidationError<'static>>> = branches.iter().map(|_| Vec::new()).collect();
    let union_at = parts.evaluation_path.as_str();
    for error in context.into_iter().flatten() {
        let index = error.evaluation_path().as_str().strip_prefix(union_at).and_then(|rest| rest.strip_prefix('/')).and_then(|rest| rest.split('/').next()).and_then(|step| step.parse::<usize>().ok());
        if let Some(errors) = index.and_then(|index| by_branch.get_mut(index)) {
            errors.push(error);
        }
    }
    let branch_issues = |index: usize, errors: Vec<ValidationError<'static>>| {
        let found: Vec<Issue> = errors.into_iter().flat_map(|error| error_issues(error, instance, loc_prefix, root)).collect();
        in_declaration_order(root, &branches[index], loc.len(), found)
    };

    if let Some(union) = TaggedUnion::at(root, keyword_location) {
        let one = |(kind, msg, ctx): (&'static str, String, Json)| vec![Issue::new(kind, loc.clone(), msg, value.clone()).with_ctx(ctx)];
        return match union.judge(&value) {
            Verdict::TagInvalid(tag) => one(union.tag_invalid(&tag)),
            Verdict::TagNotFound => one(union.tag_not_found()),
            Verdict::NotAnObject => {
                let (kind, msg) = type_issue(&TypeKind::Single(jsonschema::JsonType::Object), &value);
                vec![Issue::new(kind, loc, msg, value)]
            }
            Verdict::Branch(index, tag) => {
                let errors = std::mem::take(&mut by_branch[index]);
                under(&loc, &tag, branch_issues(index, errors)).unwrap_or_else(|| one_issue(loc.clone(), value, message))
            }
        };
    }

    let members: Vec<usize> = (0..branches.len()).filter(|&index| !is_null(&branches[index])).collect();
    if let [only] = members[..] {
        // `Optional[X]`: a value that is not null is judged as `X` judges it, with no name.
        let found = branch_issues(only, std::mem::take(&mut by_branch[only]));
        return if found.is_empty() || value.is_null() { one_issue(loc, value, message) } else { found };
    }
    // A union of constraints rather than of types (`oneOf: [{required: [a]}, {required: [b]}]`,
    // as a JSON Schema author writes "a or b") has no members to name: one issue at the value.
    let Some(names) = members.iter().map(|&index| name(root, &branches[index], 0)).collect::<Option<Vec<_>>>() else {
        return one_issue(loc, value, message);
    };
    let mut found = Vec::new();
    for (index, named) in members.into_iter().zip(names) {
        let errors = std::mem::take(&mut by_branch[index]);
        found.extend(under(&loc, &named, branch_issues(index, errors)).unwrap_or_default());
    }
    if found.is_empty() {
        return one_issue(loc, value, message);
    }
    found
}

/// `issues`, each put under `step` right after `loc` (where the union's value is), or `None`
/// when there are none.
fn under(loc: &[LocSegment], step: &str, mut issues: Vec<Issue>) -> Option<Vec<Issue>> {
    for issue in &mut issues {
        if issue.loc.starts_with(loc) {
            issue.loc.insert(loc.len(), LocSegment::Key(step.to_owned()));
        }
    }
    (!issues.is_empty()).then_some(issues)
}

/// The one issue for a union whose branches' errors cannot be told apart (never expected: a
/// failed branch has errors of its own).
fn one_issue(loc: Vec<LocSegment>, value: Json, message: &str) -> Vec<Issue> {
    to_issues(&ValidationErrorKind::AnyOf { context: Vec::new() }, loc, value, message)
}

/// A branch that accepts only `null`: what `Optional[X]` adds to `X`.
fn is_null(branch: &Json) -> bool {
    branch.get("type").and_then(Json::as_str) == Some("null")
}

/// A branch's name as pydantic names a union's member: `int`, `constrained-int`, `float`,
/// `str`, `constrained-str`, `bool`, `none`, `date`, `datetime`, `uuid`, `list[X]`,
/// `dict[str,X]`, `literal['a','b']`, a model's (or `TypedDict`'s) name, `enum[Color]`; `None`
/// for a branch that names no type (only constraints, as `{"required": ["email"]}`).
fn name(root: &Json, branch: &Json, depth: usize) -> Option<String> {
    if let Some(reference) = branch.get("$ref").and_then(Json::as_str) {
        let named = reference.rsplit('/').next().unwrap_or(reference).to_owned();
        let target = reference.strip_prefix('#').and_then(|pointer| root.pointer(pointer));
        return Some(match target {
            Some(target) if target.get("enum").is_some() => format!("enum[{named}]"),
            _ => named,
        });
    }
    if let Some(value) = branch.get("const") {
        return Some(format!("literal[{}]", literal(value)));
    }
    if let Some(values) = branch.get("enum").and_then(Json::as_array) {
        return Some(format!("literal[{}]", values.iter().map(literal).collect::<Vec<_>>().join(",")));
    }
    let constrained = |plain: &str, keywords: &[&str]| match keywords.iter().any(|keyword| branch.get(*keyword).is_some()) {
        true => format!("constrained-{plain}"),
        false => plain.to_owned(),
    };
    let bounds = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"];
    let inner = |schema: Option<&Json>| match schema {
        Some(schema) if depth < NAME_DEPTH => name(root, schema, depth + 1).unwrap_or_else(|| "any".to_owned()),
        _ => "any".to_owned(),
    };
    let named = match branch.get("type").and_then(Json::as_str) {
        Some("integer") => constrained("int", &bounds),
        Some("number") => constrained("float", &bounds),
        Some("boolean") => "bool".to_owned(),
        Some("null") => "none".to_owned(),
        Some("string") => match branch.get("format").and_then(Json::as_str) {
            Some("date") => "date".to_owned(),
            Some("date-time") => "datetime".to_owned(),
            Some("time") => "time".to_owned(),
            Some("uuid") => "uuid".to_owned(),
            _ => constrained("str", &["minLength", "maxLength", "pattern"]),
        },
        Some("array") => format!("list[{}]", inner(branch.get("items"))),
        Some("object") if branch.get("properties").is_none() => format!("dict[str,{}]", inner(branch.get("additionalProperties"))),
        // An inline model: its title is its class's name, as `$defs` would have it.
        Some(_) => branch.get("title").and_then(Json::as_str).unwrap_or("dict[str,any]").to_owned(),
        None => return branch.get("title").and_then(Json::as_str).map(str::to_owned),
    };
    Some(named)
}

/// A literal's value as Python's `repr` writes it: `'a'`, `1`, `True`, `None`.
fn literal(value: &Json) -> String {
    match value {
        Json::String(text) => format!("'{text}'"),
        Json::Bool(true) => "True".to_owned(),
        Json::Bool(false) => "False".to_owned(),
        Json::Null => "None".to_owned(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn branches_are_named_as_pydantic_names_a_unions_members() {
        // Each schema as pydantic 2.14 writes it, and the name it gives the member.
        let root = json!({"$defs": {"Cat": {"type": "object", "properties": {}}, "Color": {"enum": ["red"], "type": "string"}}});
        let cases = [
            (json!({"type": "integer"}), "int"),
            (json!({"type": "integer", "minimum": 1}), "constrained-int"),
            (json!({"type": "number"}), "float"),
            (json!({"type": "string"}), "str"),
            (json!({"type": "string", "maxLength": 2}), "constrained-str"),
            (json!({"type": "boolean"}), "bool"),
            (json!({"type": "string", "format": "date"}), "date"),
            (json!({"type": "string", "format": "uuid"}), "uuid"),
            (json!({"type": "array", "items": {"type": "integer"}}), "list[int]"),
            (json!({"type": "array", "items": {"$ref": "#/$defs/Cat"}}), "list[Cat]"),
            (json!({"type": "object", "additionalProperties": {"type": "integer"}}), "dict[str,int]"),
            (json!({"enum": ["a", "b"], "type": "string"}), "literal['a','b']"),
            (json!({"const": 1}), "literal[1]"),
            (json!({"$ref": "#/$defs/Cat"}), "Cat"),
            (json!({"$ref": "#/$defs/Color"}), "enum[Color]"),
        ];
        for (branch, expected) in cases {
            assert_eq!(name(&root, &branch, 0).as_deref(), Some(expected), "{branch}");
        }
        assert_eq!(name(&root, &json!({"required": ["email"]}), 0), None);
    }

    #[test]
    fn a_name_of_nested_lists_ends_at_its_depth() {
        let mut branch = json!({"type": "integer"});
        for _ in 0..20 {
            branch = json!({"type": "array", "items": branch});
        }
        let named = name(&json!({}), &branch, 0).unwrap();
        assert!(named.ends_with("[any]]]]]]]]]") && named.matches("list[").count() == NAME_DEPTH + 1, "{named}");
    }
}
