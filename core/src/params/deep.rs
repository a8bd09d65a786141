//! OpenAPI's `deepObject` style: an object parameter sent as one key per leaf,
//! `filter[price][gte]=10&filter[tags][]=new` → `{"price": {"gte": 10}, "tags": ["new"]}`, as
//! Rails, PHP and `qs` write nested data in query strings. Each leaf is coerced by the type its
//! property's schema gives it (the same coercion as any query value); the object is then
//! validated against the whole schema, so a leaf the schema does not know stays text and meets
//! `additionalProperties` there.

use super::{coerce_raw, FieldType, RawPairs, RawValue, ScalarKind};
use crate::problem::{Issue, LocSegment};
use crate::value::Value;
use serde_json::{Map, Value as Json};

/// What each key of a deepObject parameter is coerced into, compiled from its schema.
#[derive(Debug)]
pub(crate) enum DeepNode {
    Scalar(ScalarKind),
    /// `name[key][]=a&name[key][]=b`, or the key repeated.
    Array(ScalarKind),
    Object { fields: Vec<(String, DeepNode)>, others: Option<Box<DeepNode>> },
}

/// The object schema of a deepObject parameter: the schema itself, or the one object branch
/// of an optional one (`anyOf: [object, {type: null}]`, Python's `Optional[Filter]`).
pub(crate) fn object_schema(schema: &Json) -> Option<&Json> {
    let schema = non_null(schema);
    is_object(schema).then_some(schema)
}

fn is_object(schema: &Json) -> bool {
    schema.get("type").and_then(Json::as_str) == Some("object") || schema.get("properties").is_some()
}

/// An optional value's schema without its `null` branch; any other schema as it is.
fn non_null(schema: &Json) -> &Json {
    let Some(branches) = schema.get("anyOf").or_else(|| schema.get("oneOf")).and_then(Json::as_array) else { return schema };
    let mut others = branches.iter().filter(|branch| branch.get("type").and_then(Json::as_str) != Some("null"));
    match (others.next(), others.next()) {
        (Some(only), None) => only,
        _ => schema,
    }
}

impl DeepNode {
    pub(crate) fn compile(schema: &Json) -> DeepNode {
        let schema = non_null(schema);
        if !is_object(schema) {
            return match FieldType::from_schema(schema) {
                FieldType::Array(kind) => DeepNode::Array(kind),
                FieldType::Scalar(kind) => DeepNode::Scalar(kind),
            };
        }
        let fields = schema
            .get("properties")
            .and_then(Json::as_object)
            .map(|properties| properties.iter().map(|(name, sub)| (name.clone(), DeepNode::compile(sub))).collect())
            .unwrap_or_default();
        let others = match schema.get("additionalProperties") {
            Some(sub @ Json::Object(_)) => Some(Box::new(DeepNode::compile(sub))),
            _ => None,
        };
        DeepNode::Object { fields, others }
    }

    /// The node of member `key`; one the schema does not describe is text.
    fn member(&self, key: &str) -> &DeepNode {
        const TEXT: DeepNode = DeepNode::Scalar(ScalarKind::Str);
        match self {
            DeepNode::Object { fields, others } => {
                fields.iter().find(|(name, _)| name == key).map(|(_, node)| node).or(others.as_deref()).unwrap_or(&TEXT)
            }
            _ => &TEXT,
        }
    }
}

/// The object parameter `name` from its `name[...]` keys; `None` when none was sent. Values
/// that do not coerce are reported at their full location and left out.
pub(crate) fn extract(name: &str, node: &DeepNode, raw: &RawPairs<'_>, loc: &[LocSegment], issues: &mut Vec<Issue>) -> Option<Json> {
    let mut root = Map::new();
    let mut sent = false;
    for (key, value) in raw.iter() {
        let Some(rest) = key.strip_prefix(name).and_then(|rest| rest.strip_prefix('[')) else { continue };
        let Some(path) = segments(rest) else { continue };
        sent = true;
        let mut at = loc.to_vec();
        insert(&mut root, node, &path, value, &mut at, issues);
    }
    sent.then_some(Json::Object(root))
}

/// `price][gte]` → `["price", "gte"]`; `tags][]` → `["tags", ""]`. `None` for a key that does
/// not close its brackets.
fn segments(rest: &str) -> Option<Vec<&str>> {
    let mut out = Vec::new();
    let mut rest = rest;
    loop {
        let end = rest.find(']')?;
        out.push(&rest[..end]);
        rest = &rest[end + 1..];
        if rest.is_empty() {
            return (!out[0].is_empty()).then_some(out);
        }
        rest = rest.strip_prefix('[')?;
    }
}

fn insert(object: &mut Map<String, Json>, node: &DeepNode, path: &[&str], value: &RawValue<'_>, loc: &mut Vec<LocSegment>, issues: &mut Vec<Issue>) {
    let (key, deeper) = (path[0], &path[1..]);
    let member = node.member(key);
    loc.push(LocSegment::Key(key.to_owned()));
    match (member, deeper) {
        (DeepNode::Array(kind), [] | [""]) => {
            let Json::Array(items) = object.entry(key).or_insert_with(|| Json::Array(Vec::new())) else { return };
            loc.push(LocSegment::Index(items.len()));
            match coerce_raw(*kind, value, || loc.to_vec()) {
                Ok(item) => items.push(instance(&item)),
                Err(issue) => issues.push(issue),
            }
        }
        (DeepNode::Object { .. }, [_, ..]) if !deeper[0].is_empty() => {
            if let Json::Object(inner) = object.entry(key).or_insert_with(|| Json::Object(Map::new())) {
                insert(inner, member, deeper, value, loc, issues);
            }
        }
        (DeepNode::Scalar(kind), []) => match coerce_raw(*kind, value, || loc.to_vec()) {
            Ok(item) => {
                // A repeated scalar key takes the last value, as every other parameter does.
                object.insert(key.to_owned(), instance(&item));
            }
            Err(issue) => issues.push(issue),
        },
        // A shape the schema does not have (`filter[price]=3` for an object, a scalar given
        // brackets): kept as text, for the validator to name the mismatch at this location.
        _ => {
            let text = match value {
                RawValue::Text(text) => text.to_string(),
                _ => String::new(),
            };
            object.insert(key.to_owned(), Json::String(text));
        }
    }
}

fn instance(value: &Value) -> Json {
    super::coerce::to_instance(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(schema: Json, query: &str) -> (Option<Json>, Vec<(&'static str, Json)>) {
        let node = DeepNode::compile(&schema);
        let mut issues = Vec::new();
        let raw = RawPairs::from_urlencoded(query.as_bytes());
        let loc = [LocSegment::Key("query".into()), LocSegment::Key("filter".into())];
        let out = extract("filter", &node, &raw, &loc, &mut issues);
        (out, issues.into_iter().map(|i| (i.kind, serde_json::to_value(&i.loc).unwrap())).collect())
    }

    fn filter() -> Json {
        json!({"type": "object", "properties": {
            "price": {"type": "object", "properties": {"gte": {"type": "number"}, "lte": {"type": "number"}}},
            "tags": {"type": "array", "items": {"type": "string"}},
            "in_stock": {"type": "boolean"}
        }})
    }

    #[test]
    fn nested_keys_build_the_object_with_typed_leaves() {
        let (out, issues) = run(filter(), "filter%5Bprice%5D%5Bgte%5D=10&filter[price][lte]=20.5&filter[tags][]=a&filter[tags][]=b&filter[in_stock]=yes&other=1");
        assert_eq!(out, Some(json!({"price": {"gte": 10.0, "lte": 20.5}, "tags": ["a", "b"], "in_stock": true})));
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(run(filter(), "filter[tags]=a&filter[tags]=b").0, Some(json!({"tags": ["a", "b"]})));
        assert_eq!(run(filter(), "filters[x]=1&filter=2&filter[").0, None, "only filter[...] keys that close their brackets");
    }

    #[test]
    fn a_leaf_that_does_not_coerce_is_located_by_its_whole_path() {
        let (out, issues) = run(filter(), "filter[price][gte]=cheap&filter[in_stock]=maybe");
        assert_eq!(out, Some(json!({"price": {}})));
        assert_eq!(issues, [("float_parsing", json!(["query", "filter", "price", "gte"])), ("bool_parsing", json!(["query", "filter", "in_stock"]))]);
    }

    #[test]
    fn optional_members_are_read_as_what_they_hold() {
        let schema = json!({"anyOf": [{"type": "object", "properties": {
            "price": {"anyOf": [{"type": "object", "properties": {"gte": {"type": "number"}}}, {"type": "null"}]},
            "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]}
        }}, {"type": "null"}]});
        assert!(object_schema(&schema).is_some());
        assert_eq!(run(schema, "filter[price][gte]=1&filter[tags][]=a").0, Some(json!({"price": {"gte": 1.0}, "tags": ["a"]})));
    }

    #[test]
    fn keys_the_schema_does_not_know_stay_text_for_the_validator() {
        let (out, _) = run(filter(), "filter[colour]=red&filter[price]=3");
        assert_eq!(out, Some(json!({"colour": "red", "price": "3"})));
        let mapping = json!({"type": "object", "additionalProperties": {"type": "integer"}});
        assert_eq!(run(mapping, "filter[a]=1&filter[b]=2").0, Some(json!({"a": 1, "b": 2})));
    }
}
