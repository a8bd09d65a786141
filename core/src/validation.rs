//! JSON Schema 2020-12 validation (compiled once per route) and the mapping of its errors to
//! pydantic-style issue types.

use crate::problem::{Issue, LocSegment};
use crate::document::schema::Tape;
use crate::document::walk_validator::WalkValidator;
use crate::document::Document;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{Draft, Validator};
use serde_json::{json, Value as Json};
use std::collections::HashMap;
mod tagged_union;
mod union;

/// A schema that could not be compiled; reported when the app is built, never per request.
#[derive(Debug, Clone)]
pub struct SchemaError {
    pub message: String,
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

fn invalid(error: jsonschema::ValidationError<'_>) -> SchemaError {
    SchemaError { message: format!("invalid JSON Schema: {error}") }
}

/// A compiled schema; cheap to share across requests.
pub struct CompiledSchema {
    validator: Validator,
    /// The same schema for a parsed body, validated in place (`document::schema`); compiled
    /// only for the schemas of JSON bodies ([`CompiledSchema::compile_for_documents`]).
    document_validator: Option<Validator<Tape>>,
    /// The same again as one walk of the document, when the schema's keywords allow it
    /// (`document::walk_validator`): asked first, as it answers a valid body for less.
    walk_validator: Option<WalkValidator>,
    /// The schema as declared: read only to put a refused value's issues in its order.
    schema: Json,
}

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompiledSchema")
    }
}

impl CompiledSchema {
    pub fn compile(schema: &Json) -> Result<Self, SchemaError> {
        let validator = route_options::<jsonschema::json::SerdeJson>().build(schema).map_err(invalid)?;
        Ok(CompiledSchema { validator, document_validator: None, walk_validator: None, schema: schema.clone() })
    }

    /// For a JSON body's schema: compiled for its documents as well as for trees.
    pub fn compile_for_documents(schema: &Json) -> Result<Self, SchemaError> {
        let mut compiled = Self::compile(schema)?;
        compiled.walk_validator = WalkValidator::compile(schema, &|keywords| compile_for_tape(keywords).ok());
        if compiled.walk_validator.is_none() {
            compiled.document_validator = Some(compile_for_tape(schema).map_err(invalid)?);
        }
        Ok(compiled)
    }

    /// Every failure of a parsed body, as [`CompiledSchema::issues`] reports them. A valid body
    /// is judged in place; only a failing one is turned into a tree, to locate its issues.
    pub fn document_issues(&self, document: &Document, loc_prefix: &[LocSegment]) -> Vec<Issue> {
        match (&self.walk_validator, &self.document_validator) {
            (Some(walk), _) if walk.is_valid(document.root()) => return Vec::new(),
            // Refused by the walk: jsonschema below is the judge, and finds the issues.
            (Some(_), _) => {}
            (None, Some(validator)) if validator.is_valid(document.root()) => return Vec::new(),
            (None, Some(_)) => {}
            // Compiled for trees only: judged as a tree (correct, at a tree's cost).
            (None, None) if self.validator.is_valid(&document.to_tree()) => return Vec::new(),
            (None, None) => {}
        }
        self.issues(&document.to_tree(), loc_prefix)
    }

    pub fn is_valid(&self, instance: &Json) -> bool {
        self.validator.is_valid(instance)
    }

    /// Every failure, each located under `loc_prefix` (e.g. `["body"]`).
    pub fn issues(&self, instance: &Json, loc_prefix: &[LocSegment]) -> Vec<Issue> {
        if self.validator.is_valid(instance) {
            return Vec::new();
        }
        let issues = self.validator.iter_errors(instance).flat_map(|error| error_issues(error, instance, loc_prefix, &self.schema)).collect();
        in_declaration_order(&self.schema, &self.schema, loc_prefix.len(), issues)
    }
}

/// One jsonschema error as pydantic's issues; a failed union as [`union`] reports it. `root` is
/// the schema the error's keyword location points into.
fn error_issues(error: jsonschema::ValidationError<'_>, instance: &Json, loc_prefix: &[LocSegment], root: &Json) -> Vec<Issue> {
    let mut loc = loc_prefix.to_vec();
    loc.extend(pointer_segments(instance, error.instance_path().as_str()));
    let message = error.to_string();
    let parts = error.into_parts();
    if matches!(parts.kind, ValidationErrorKind::AnyOf { .. } | ValidationErrorKind::OneOfNotValid { .. }) {
        return union::issues(parts, loc, instance, loc_prefix, root, &message);
    }
    to_issues(&parts.kind, loc, parts.instance.into_owned(), &message)
}

/// A schema compiled for documents, with the options every route's schema has.
fn compile_for_tape(schema: &Json) -> Result<Validator<Tape>, jsonschema::ValidationError<'_>> {
    route_options::<Tape>().build(schema)
}

/// The options every route's schema is compiled with, for trees or documents: draft 2020-12,
/// formats asserted, and `date-time` and `time` read as pydantic reads them
/// (`params::is_date_time`, `params::is_time`: the offset, and a time's seconds, may be left
/// out; RFC 3339 alone would refuse a naive one), a `duration` as pydantic reads a `timedelta`
/// (`params::is_duration`: signed, fractions, `01:00:00`), and a `date` from year 1, as a
/// parameter's (`params::is_date`).
pub(crate) fn route_options<'i, F: jsonschema::json::Json>() -> jsonschema::ValidationOptions<'i, std::sync::Arc<dyn jsonschema::Retrieve>, F> {
    jsonschema::options_for::<F>()
        .with_draft(Draft::Draft202012)
        .should_validate_formats(true)
        .with_format("date", crate::params::is_date)
        .with_format("date-time", crate::params::is_date_time)
        .with_format("time", crate::params::is_time)
        .with_format("duration", crate::params::is_duration)
        .with_format("decimal", crate::params::is_decimal)
}

/// Puts issues in the order pydantic reports a model's, which is the order a client reads its
/// form or its model in: field by field as the schema declares them (`properties`, then names
/// only `required` lists, then what the schemas it applies to the same value declare, in the
/// order it applies them), at every depth; members the schema does not declare after those, in
/// the order they were sent; array items by index. Issues at one place keep the order they
/// were found in. jsonschema's own order says nothing to a client: it reports `required` before
/// `properties`, and members in the order they were sent.
///
/// Only a refused value pays for this, never a valid one, and each issue costs a few lookups
/// per step of its location: each value schema's names are counted once ([`DeclaredOrder`]),
/// and an undeclared member is found again by its parent's place, not by its whole path, so a
/// body of many wrong or undeclared members costs no more per step of an issue's location
/// against a schema of a thousand properties than against one of three, nor at depth 50 than
/// at depth 2.
///
/// `start` is the schema of the value at `prefix` steps into each issue's location: `root`
/// for a body, a union's branch for that branch's issues. `$ref`s point into `root`.
fn in_declaration_order(root: &Json, start: &Json, prefix: usize, issues: Vec<Issue>) -> Vec<Issue> {
    if issues.len() < 2 {
        return issues;
    }
    let mut order = DeclaredOrder::new(root, start);
    let places: Vec<_> = issues.iter().enumerate().map(|(index, issue)| order.place(issue.loc.get(prefix..).unwrap_or_default(), index)).collect();
    let mut placed: Vec<_> = places.into_iter().zip(issues).collect();
    // Stable: issues at the same place keep the order jsonschema found them in.
    placed.sort_by(|a, b| a.0.cmp(&b.0));
    placed.into_iter().map(|(_, issue)| issue).collect()
}

/// Where issues stand in a schema's declared order (see [`in_declaration_order`]).
struct DeclaredOrder<'s, 'l> {
    root: &'s Json,
    /// Each set of schemas that judge one value, numbered when first met: a body's schema, or
    /// every declaration of a member among the schemas its parent applies (`owner` declared
    /// beside an `allOf` branch that declares it again, with fields).
    judges: HashMap<Vec<*const Json>, usize>,
    /// What each set applies to its value, and the names declared there.
    values: Vec<ValueSchema<'s>>,
    /// Each place issues have reached, as (its parent's place, the step to it): a number that
    /// stands for the path, so a step costs one lookup however deep it is.
    places: HashMap<(usize, &'l LocSegment), usize>,
    /// A member no schema declares stands where it first came among the issues: jsonschema
    /// reports a value's members in the order they were sent.
    first_seen: HashMap<usize, usize>,
}

/// The schemas that judge one value, with everything they apply to it ([`applied_to_the_value`])
/// and the names declared there, in one numbering: each schema's own `properties`, then names
/// only its `required` lists, then those of what it applies, depth first, in the order it
/// applies them. So a field declared in a `$ref`'d base never takes the place of one declared
/// beside it.
struct ValueSchema<'s> {
    applied: Vec<&'s Json>,
    names: HashMap<&'s str, usize>,
}

/// Past this many schemas applied to one value, the rest are not searched: no real schema comes
/// near it, and a document written to make the search explode stops here.
const APPLIED_LIMIT: usize = 256;

impl<'s, 'l> DeclaredOrder<'s, 'l> {
    /// The value at `start` (a body, a union's branch), numbered first (in `new`), so each
    /// issue starts from it without a lookup.
    const ROOT_VALUE: usize = 0;

    fn new(root: &'s Json, start: &'s Json) -> Self {
        let mut order = DeclaredOrder { root, judges: HashMap::new(), values: Vec::new(), places: HashMap::new(), first_seen: HashMap::new() };
        let root_value = order.value(vec![start]);
        debug_assert_eq!(root_value, Self::ROOT_VALUE);
        order
    }

    /// For each step of `loc`: a declared member's position or an item's index (`false`), or
    /// for an undeclared member (`true`) the index of the first issue that reached it.
    fn place(&mut self, loc: &'l [LocSegment], index: usize) -> Vec<(bool, usize)> {
        let mut value = Some(Self::ROOT_VALUE);
        let mut parent = 0;
        let mut place = Vec::with_capacity(loc.len());
        for segment in loc {
            let next = self.places.len() + 1;
            let here = *self.places.entry((parent, segment)).or_insert(next);
            match segment {
                LocSegment::Key(key) => {
                    match value.and_then(|value| self.values[value].names.get(key.as_str()).copied()) {
                        Some(position) => place.push((false, position)),
                        None => place.push((true, *self.first_seen.entry(here).or_insert(index))),
                    }
                    value = value.and_then(|value| self.member(value, key));
                }
                LocSegment::Index(item) => {
                    place.push((false, *item));
                    value = value.and_then(|value| self.item(value, *item));
                }
            }
            parent = here;
        }
        place
    }

    /// The number of the value `judges` judge, its names counted the first time.
    fn value(&mut self, judges: Vec<&'s Json>) -> usize {
        let key: Vec<*const Json> = judges.iter().map(|schema| *schema as *const Json).collect();
        if let Some(&known) = self.judges.get(&key) {
            return known;
        }
        let applied = applied_to_the_value(self.root, &judges);
        let mut names = HashMap::new();
        for schema in &applied {
            let properties = schema.get("properties").and_then(Json::as_object).into_iter().flat_map(|p| p.keys().map(String::as_str));
            let required = schema.get("required").and_then(Json::as_array).into_iter().flatten().filter_map(Json::as_str);
            for name in properties.chain(required) {
                let next = names.len();
                names.entry(name).or_insert(next);
            }
        }
        self.values.push(ValueSchema { applied, names });
        self.judges.insert(key, self.values.len() - 1);
        self.values.len() - 1
    }

    /// The value member `key` of `value` is: judged by every `properties` entry for it among
    /// the schemas applied to `value`, else by their `additionalProperties`
    /// (`dict[str, Model]`). A name only `required` lists takes its schema from a branch that
    /// declares it.
    fn member(&mut self, value: usize, key: &str) -> Option<usize> {
        let applied = &self.values[value].applied;
        let mut judges: Vec<&'s Json> = applied.iter().filter_map(|schema| schema.get("properties").and_then(|p| p.get(key))).collect();
        if judges.is_empty() {
            judges = applied.iter().filter_map(|schema| schema.get("additionalProperties")).collect();
        }
        (!judges.is_empty()).then(|| self.value(judges))
    }

    /// The value item `index` of array `value` is.
    fn item(&mut self, value: usize, index: usize) -> Option<usize> {
        let applied = &self.values[value].applied;
        let judges: Vec<&'s Json> = applied.iter().filter_map(|schema| schema.get("prefixItems").and_then(|p| p.get(index)).or_else(|| schema.get("items"))).collect();
        (!judges.is_empty()).then(|| self.value(judges))
    }
}

/// `schemas` and every schema they apply to the same value, depth first in the order they apply
/// them: a local `$ref`'s target, then its `allOf`, `anyOf` and `oneOf` branches
/// (`Optional[Model]` is `anyOf: [{$ref}, {type: null}]`). Each schema comes once, so `$ref`s that
/// point at each other end instead of looping, and a branch shared twice is read once.
fn applied_to_the_value<'s>(root: &'s Json, schemas: &[&'s Json]) -> Vec<&'s Json> {
    let mut seen: Vec<&'s Json> = Vec::new();
    let mut visited = std::collections::HashSet::new();
    let mut pending: Vec<&'s Json> = schemas.iter().rev().copied().collect();
    while let Some(next) = pending.pop() {
        if seen.len() >= APPLIED_LIMIT || !visited.insert(next as *const Json) {
            continue;
        }
        seen.push(next);
        let referenced = next.get("$ref").and_then(Json::as_str).and_then(|reference| reference.strip_prefix('#')).and_then(|pointer| root.pointer(pointer));
        let branches = ["allOf", "anyOf", "oneOf"].into_iter().filter_map(|keyword| next.get(keyword).and_then(Json::as_array)).flatten();
        let children: Vec<&'s Json> = referenced.into_iter().chain(branches).collect();
        // Reversed onto the stack, so they are read in the order the schema applies them.
        pending.extend(children.into_iter().rev());
    }
    seen
}

/// A JSON pointer into `instance` as location segments; array positions become indices.
fn pointer_segments(instance: &Json, pointer: &str) -> Vec<LocSegment> {
    let mut segments = Vec::new();
    let mut node = Some(instance);
    for raw in pointer.split('/').skip(1) {
        let key = raw.replace("~1", "/").replace("~0", "~");
        match node {
            Some(Json::Array(items)) => {
                let index = key.parse::<usize>().unwrap_or(0);
                node = items.get(index);
                segments.push(LocSegment::Index(index));
            }
            Some(Json::Object(map)) => {
                node = map.get(&key);
                segments.push(LocSegment::Key(key));
            }
            _ => {
                node = None;
                segments.push(LocSegment::Key(key));
            }
        }
    }
    segments
}

fn limit_json(limit: &Json) -> Json {
    limit.clone()
}

/// pydantic's names and messages for the JSON Schema keyword that failed.
fn to_issues(kind: &ValidationErrorKind, loc: Vec<LocSegment>, input: Json, fallback: &str) -> Vec<Issue> {
    let one = |kind: &'static str, msg: String, ctx: Option<Json>| {
        let issue = Issue::new(kind, loc.clone(), msg, input.clone());
        vec![match ctx {
            Some(ctx) => issue.with_ctx(ctx),
            None => issue,
        }]
    };
    match kind {
        ValidationErrorKind::Required { property } => {
            let mut loc = loc.clone();
            loc.push(LocSegment::Key(property.as_str().unwrap_or_default().to_owned()));
            vec![Issue::new("missing", loc, "Field required", input.clone())]
        }
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => unexpected
            .iter()
            .map(|name| {
                let mut loc = loc.clone();
                loc.push(LocSegment::Key(name.clone()));
                let value = input.get(name).cloned().unwrap_or(Json::Null);
                Issue::new("extra_forbidden", loc, "Extra inputs are not permitted", value)
            })
            .collect(),
        ValidationErrorKind::Minimum { limit } => one(
            "greater_than_equal",
            format!("Input should be greater than or equal to {limit}"),
            Some(json!({"ge": limit_json(limit)})),
        ),
        ValidationErrorKind::ExclusiveMinimum { limit } => one(
            "greater_than",
            format!("Input should be greater than {limit}"),
            Some(json!({"gt": limit_json(limit)})),
        ),
        ValidationErrorKind::Maximum { limit } => one(
            "less_than_equal",
            format!("Input should be less than or equal to {limit}"),
            Some(json!({"le": limit_json(limit)})),
        ),
        ValidationErrorKind::ExclusiveMaximum { limit } => one(
            "less_than",
            format!("Input should be less than {limit}"),
            Some(json!({"lt": limit_json(limit)})),
        ),
        ValidationErrorKind::MultipleOf { multiple_of } => one(
            "multiple_of",
            format!("Input should be a multiple of {multiple_of}"),
            Some(json!({"multiple_of": multiple_of})),
        ),
        ValidationErrorKind::MinLength { limit } => one(
            "string_too_short",
            format!("String should have at least {limit} character{}", plural(*limit)),
            Some(json!({"min_length": limit})),
        ),
        ValidationErrorKind::MaxLength { limit } => one(
            "string_too_long",
            format!("String should have at most {limit} character{}", plural(*limit)),
            Some(json!({"max_length": limit})),
        ),
        ValidationErrorKind::Pattern { pattern } => one(
            "string_pattern_mismatch",
            format!("String should match pattern '{pattern}'"),
            Some(json!({"pattern": pattern})),
        ),
        ValidationErrorKind::MinItems { limit } => one(
            "too_short",
            format!("List should have at least {limit} item{}", plural(*limit)),
            Some(json!({"min_length": limit})),
        ),
        ValidationErrorKind::MaxItems { limit } => one(
            "too_long",
            format!("List should have at most {limit} item{}", plural(*limit)),
            Some(json!({"max_length": limit})),
        ),
        ValidationErrorKind::Enum { options } => {
            let expected = expected_list(options);
            one("enum", format!("Input should be {expected}"), Some(json!({"expected": expected})))
        }
        ValidationErrorKind::Constant { expected_value } => {
            let expected = expected_list(&json!([**expected_value]));
            one("literal_error", format!("Input should be {expected}"), Some(json!({"expected": expected})))
        }
        ValidationErrorKind::Type { kind } => {
            let (kind, msg) = type_issue(kind, &input);
            one(kind, msg.to_owned(), None)
        }
        ValidationErrorKind::Format { format } => {
            let (kind, msg) = match format.as_str() {
                "uuid" => ("uuid_parsing", "Input should be a valid UUID"),
                "decimal" => ("decimal_parsing", "Input should be a valid decimal"),
                "date" => ("date_parsing", "Input should be a valid date in the format YYYY-MM-DD"),
                "date-time" => ("datetime_parsing", "Input should be a valid datetime"),
                "time" => ("time_parsing", "Input should be in a valid time format"),
                "duration" => ("time_delta_parsing", "Input should be a valid timedelta"),
                "ipv4" => ("ip_v4_address", "Input is not a valid IPv4 address"),
                "ipv6" => ("ip_v6_address", "Input is not a valid IPv6 address"),
                "uri" => ("url_parsing", "Input should be a valid URL"),
                "email" => ("value_error", "value is not a valid email address"),
                _ => ("value_error", "Input is not in the expected format"),
            };
            one(kind, msg.to_owned(), Some(json!({"format": format})))
        }
        ValidationErrorKind::UniqueItems => one("unique_items", "List items should be unique".into(), None),
        // A name `propertyNames` refused is located as pydantic locates a dict's refused key:
        // the name, then `[key]` (it was one `value_error` at the object, naming neither).
        // jsonschema stops at an object's first refused name, so that one is reported.
        ValidationErrorKind::PropertyNames { error } => {
            let name = error.instance().as_str().unwrap_or_default().to_owned();
            let mut loc = loc.clone();
            loc.extend([LocSegment::Key(name), LocSegment::Key("[key]".to_owned())]);
            to_issues(error.kind(), loc, error.instance().clone().into_owned(), &error.to_string())
        }
        _ => one("value_error", fallback.to_owned(), None),
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// pydantic's `'a', 'b' or 'c'` rendering of allowed values.
fn expected_list(options: &Json) -> String {
    let items: Vec<String> = options
        .as_array()
        .map(|a| a.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|o| match o {
            Json::String(s) => format!("'{s}'"),
            other => other.to_string(),
        })
        .collect();
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

fn type_issue(kind: &TypeKind, input: &Json) -> (&'static str, &'static str) {
    use jsonschema::JsonType;
    let first = match kind {
        TypeKind::Single(t) => Some(*t),
        TypeKind::Multiple(set) => set.iter().find(|t| *t != JsonType::Null),
    };
    match first {
        // pydantic's name for `2.5` where an int is declared (a whole `2.0` is an integer).
        Some(JsonType::Integer) if input.is_f64() => ("int_from_float", "Input should be a valid integer, got a number with a fractional part"),
        Some(JsonType::Integer) => ("int_type", "Input should be a valid integer"),
        Some(JsonType::Number) => ("float_type", "Input should be a valid number"),
        Some(JsonType::Boolean) => ("bool_type", "Input should be a valid boolean"),
        Some(JsonType::String) => ("string_type", "Input should be a valid string"),
        Some(JsonType::Array) => ("list_type", "Input should be a valid list"),
        Some(JsonType::Object) => ("dict_type", "Input should be a valid dictionary"),
        Some(JsonType::Null) | None => ("none_required", "Input should be None"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(schema: Json, instance: Json) -> Vec<(&'static str, Json)> {
        let compiled = CompiledSchema::compile(&schema).unwrap();
        compiled
            .issues(&instance, &["body".into()])
            .into_iter()
            .map(|i| (i.kind, serde_json::to_value(&i.loc).unwrap()))
            .collect()
    }

    #[test]
    fn a_document_gets_the_issues_its_tree_would() {
        let schema = json!({"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}}});
        let prefix = ["body".into()];
        for compiled in [CompiledSchema::compile_for_documents(&schema).unwrap(), CompiledSchema::compile(&schema).unwrap()] {
            for instance in [json!({"id": 1, "tags": ["a"]}), json!({"tags": ["a", 3]}), json!({"id": "x"}), json!([1])] {
                let as_tree = serde_json::to_value(compiled.issues(&instance, &prefix)).unwrap();
                let as_document = serde_json::to_value(compiled.document_issues(&Document::from_tree(&instance), &prefix)).unwrap();
                assert_eq!(as_document, as_tree, "{instance}");
            }
        }
    }

    // Found by FastAPI's corpus: `datetime` fields sent without an offset (pydantic's usual
    // input, and what `datetime.isoformat()` writes for a naive one) were refused in a body,
    // while the same text in a query was accepted.
    #[test]
    fn a_date_time_may_leave_out_its_offset_in_a_body_as_in_a_query() {
        let schema = json!({"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}}});
        let prefix = ["body".into()];
        for compiled in [CompiledSchema::compile_for_documents(&schema).unwrap(), CompiledSchema::compile(&schema).unwrap()] {
            for at in ["2018-12-22T14:00:00", "2018-12-22 14:00:00", "2018-12-22T14:00", "2018-12-22T14:00:00.5", "2018-12-22T14:00:00Z", "2018-12-22T14:00:00+02:00", "2024-01-15t10:30:00.5z"] {
                assert!(compiled.document_issues(&Document::from_tree(&json!({"at": at})), &prefix).is_empty(), "{at}");
            }
            // Found on review: chrono's lenient numbers took the shapes on the second line, which
            // Python's datetime.fromisoformat then refused (a 500).
            for at in ["2018-12-22", "2018-12-22T25:00:00", " 2018-12-22T14:00:00", "yesterday", "2018-12-22T14:00:00+0200x",
                       "2018-1-2T3:4:5", "2018-12-22T 1:00:00", "+2018-12-22T14:00:00", "2018-12-22T14:00:00.", "2018-12-22 14:00Z0", "2018", "",
                       "2018-12-22T14:00:60", "0000-01-01T00:00:00"] {
                let issues = compiled.document_issues(&Document::from_tree(&json!({"at": at})), &prefix);
                assert_eq!(issues.iter().map(|i| i.kind).collect::<Vec<_>>(), ["datetime_parsing"], "{at}");
            }
        }
    }

    // Found beside FastAPI: `dict[UUID, int]`'s `propertyNames` refused `{"nope": 1}` with one
    // `value_error` at the body; pydantic says `uuid_parsing` at `["body", "nope", "[key]"]`.
    #[test]
    fn a_refused_property_name_is_located_at_the_name_as_a_key() {
        let schema = json!({"type": "object", "properties": {"by": {"type": "object", "propertyNames": {"format": "uuid"}, "additionalProperties": {"type": "integer"}}}});
        let sent = json!({"by": {"12345678-1234-5678-1234-567812345678": 1, "nope": 2}});
        assert_eq!(kinds(schema.clone(), sent.clone()), vec![("uuid_parsing", json!(["body", "by", "nope", "[key]"]))]);
        let compiled = CompiledSchema::compile_for_documents(&schema).unwrap();
        let issues = compiled.document_issues(&Document::from_tree(&sent), &["body".into()]);
        assert_eq!(issues[0].input, json!("nope"));
        let short = json!({"type": "object", "propertyNames": {"minLength": 2}});
        assert_eq!(kinds(short, json!({"ab": 1, "a": 2})), vec![("string_too_short", json!(["body", "a", "[key]"]))]);
    }

    #[test]
    fn nested_locations_use_indices_for_arrays() {
        let schema = json!({"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}});
        assert_eq!(kinds(schema, json!({"tags": ["a", 3]})), vec![("string_type", json!(["body", "tags", 1]))]);
    }

    // Found by a README-driven probe: an Optional field's bad item was one `value_error` at the
    // field with jsonschema's own wording ("… not valid under any of the schemas listed …").
    #[test]
    fn an_optional_value_is_judged_as_its_type_and_a_real_union_at_the_value() {
        let optional = json!({"type": "object", "properties": {"tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]}}});
        assert_eq!(kinds(optional.clone(), json!({"tags": ["a", 1]})), vec![("string_type", json!(["body", "tags", 1]))]);
        assert_eq!(kinds(optional.clone(), json!({"tags": 5})), vec![("list_type", json!(["body", "tags"]))]);
        assert!(kinds(optional, json!({"tags": null})).is_empty());
        // A real union's issues are every branch's, each under the branch's name (pydantic's
        // answer for `int | str`, and for `Optional[int | str]`, whose `null` gets no name).
        let union = json!({"anyOf": [{"type": "integer"}, {"type": "string"}]});
        let both = vec![("int_type", json!(["body", "int"])), ("string_type", json!(["body", "str"]))];
        assert_eq!(kinds(union, json!([1])), both);
        let optional_union = json!({"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]});
        assert_eq!(kinds(optional_union, json!([1])), both);        // A union of constraints ("email or phone") has no members to name: one issue.
        let either = json!({"type": "object", "oneOf": [{"required": ["email"]}, {"required": ["phone"]}]});
        assert_eq!(kinds(either, json!({"name": "ada"})), vec![("value_error", json!(["body"]))]);
    }

    /// pydantic's `Owner` with `pet: Annotated[Union[Cat, Dog], Field(discriminator="pet_type")]`,
    /// its schema as pydantic 2.14 writes it, reached through a list and a `$ref`.
    fn owners() -> Json {
        json!({
            "$defs": {
                "Cat": {"properties": {"pet_type": {"const": "cat", "type": "string"}, "meows": {"type": "integer"}}, "required": ["pet_type", "meows"], "type": "object"},
                "Dog": {"properties": {"pet_type": {"const": "dog", "type": "string"}, "barks": {"type": "number"}}, "required": ["pet_type", "barks"], "type": "object"},
                "Owner": {"properties": {"pet": {"discriminator": {"mapping": {"cat": "#/$defs/Cat", "dog": "#/$defs/Dog"}, "propertyName": "pet_type"}, "oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]}}, "required": ["pet"], "type": "object"},
            },
            "type": "object",
            "properties": {"owners": {"type": "array", "items": {"$ref": "#/$defs/Owner"}}},
        })
    }

    #[test]
    fn a_tagged_union_is_judged_by_its_tags_branch_as_pydantic_judges_it() {
        // pydantic's own answers for the same values (`Owner.model_validate`), with `body.owners.N`
        // before them; `meows: "x"` is `int_type` here, as a JSON body's string is never an int.
        let compiled = CompiledSchema::compile(&owners()).unwrap();
        let body = json!({"owners": [
            {"pet": {"pet_type": "cat", "meows": 3}},
            {"pet": {"pet_type": "cat", "meows": "x"}},
            {"pet": {"pet_type": "fish"}},
            {"pet": {"meows": 1}},
            {"pet": 5},
            {"pet": {"pet_type": 3}},
            {"pet": {"pet_type": "dog"}},
        ]});
        let issues: Vec<Json> = compiled.issues(&body, &["body".into()]).iter().map(|i| serde_json::to_value(i).unwrap()).collect();
        assert_eq!(issues, vec![
            json!({"type": "int_type", "loc": ["body", "owners", 1, "pet", "cat", "meows"], "msg": "Input should be a valid integer", "input": "x"}),
            json!({"type": "union_tag_invalid", "loc": ["body", "owners", 2, "pet"], "msg": "Input tag 'fish' found using 'pet_type' does not match any of the expected tags: 'cat', 'dog'", "input": {"pet_type": "fish"}, "ctx": {"discriminator": "'pet_type'", "tag": "fish", "expected_tags": "'cat', 'dog'"}}),
            json!({"type": "union_tag_not_found", "loc": ["body", "owners", 3, "pet"], "msg": "Unable to extract tag using discriminator 'pet_type'", "input": {"meows": 1}, "ctx": {"discriminator": "'pet_type'"}}),
            json!({"type": "dict_type", "loc": ["body", "owners", 4, "pet"], "msg": "Input should be a valid dictionary", "input": 5}),
            json!({"type": "union_tag_invalid", "loc": ["body", "owners", 5, "pet"], "msg": "Input tag '3' found using 'pet_type' does not match any of the expected tags: 'cat', 'dog'", "input": {"pet_type": 3}, "ctx": {"discriminator": "'pet_type'", "tag": "3", "expected_tags": "'cat', 'dog'"}}),
            json!({"type": "missing", "loc": ["body", "owners", 6, "pet", "dog", "barks"], "msg": "Field required", "input": {"pet_type": "dog"}}),
        ]);
    }

    #[test]
    fn a_tagged_union_in_a_tagged_union_and_an_optional_one_are_located_tag_by_tag() {
        let mut schema = owners();
        // A cat's toy is a tagged union of its own; an owner's second pet may be null.
        schema["$defs"]["Cat"]["properties"]["toy"] = json!({"oneOf": [{"$ref": "#/$defs/Ball"}, {"$ref": "#/$defs/Mouse"}], "discriminator": {"propertyName": "kind"}});
        schema["$defs"]["Ball"] = json!({"type": "object", "properties": {"kind": {"const": "ball"}, "size": {"type": "integer"}}, "required": ["kind", "size"]});
        schema["$defs"]["Mouse"] = json!({"type": "object", "properties": {"kind": {"const": "mouse"}}, "required": ["kind"]});
        schema["$defs"]["Owner"]["properties"]["second"] = json!({"anyOf": [schema["$defs"]["Owner"]["properties"]["pet"].clone(), {"type": "null"}]});
        let body = json!({"owners": [{"pet": {"pet_type": "cat", "meows": 1, "toy": {"kind": "ball"}}, "second": {"pet_type": "dog", "barks": "loud"}}, {"pet": {"pet_type": "dog", "barks": 1}, "second": null}]});
        assert_eq!(kinds(schema, body), vec![
            ("missing", json!(["body", "owners", 0, "pet", "cat", "toy", "ball", "size"])),
            ("float_type", json!(["body", "owners", 0, "second", "dog", "barks"])),
        ]);
    }

    #[test]
    fn a_tagged_union_of_many_branches_that_jsonschema_dispatches_on_is_judged_the_same() {
        // From three branches up jsonschema picks the candidates by the tag itself.
        let branch = |tag: &str, field: &str| json!({"type": "object", "properties": {"t": {"const": tag}, field: {"type": "integer"}}, "required": ["t", field]});
        let schema = json!({"oneOf": [branch("a", "x"), branch("b", "y"), branch("c", "z"), branch("d", "w")], "discriminator": {"propertyName": "t"}});
        assert_eq!(kinds(schema.clone(), json!({"t": "c", "z": "no"})), vec![("int_type", json!(["body", "c", "z"]))]);
        assert_eq!(kinds(schema.clone(), json!({"t": "d"})), vec![("missing", json!(["body", "d", "w"]))]);
        assert_eq!(kinds(schema, json!({"t": "e"})), vec![("union_tag_invalid", json!(["body"]))]);
    }

    #[test]
    fn a_union_of_models_without_a_discriminator_reports_each_models_issues_under_its_name() {
        // pydantic's answer for `Union[Cat, Dog]` and `{"pet_type": "dog"}`, each model's issues
        // in its declared order; and for `Union[list[Cat], int]` and `[{"pet_type": "cat"}]`.
        let mut schema = owners();
        schema["$defs"]["Owner"]["properties"]["pet"].as_object_mut().unwrap().remove("discriminator");
        schema["$defs"]["Owner"]["properties"]["pets"] = json!({"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/Cat"}}, {"type": "integer"}]});
        assert_eq!(kinds(schema.clone(), json!({"owners": [{"pet": {"pet_type": "dog"}}]})), vec![
            ("literal_error", json!(["body", "owners", 0, "pet", "Cat", "pet_type"])),
            ("missing", json!(["body", "owners", 0, "pet", "Cat", "meows"])),
            ("missing", json!(["body", "owners", 0, "pet", "Dog", "barks"])),
        ]);
        let pets = json!({"owners": [{"pet": {"pet_type": "cat", "meows": 1}, "pets": [{"pet_type": "cat"}]}]});
        assert_eq!(kinds(schema, pets), vec![
            ("missing", json!(["body", "owners", 0, "pets", "list[Cat]", 0, "meows"])),
            ("int_type", json!(["body", "owners", 0, "pets", "int"])),
        ]);
    }

    #[test]
    fn missing_property_is_located_at_the_property() {
        let schema = json!({"type": "object", "required": ["name"]});
        assert_eq!(kinds(schema, json!({})), vec![("missing", json!(["body", "name"]))]);
    }

    #[test]
    fn enum_message_lists_options_like_pydantic() {
        let compiled = CompiledSchema::compile(&json!({"enum": ["a", "b", "c"]})).unwrap();
        let issue = &compiled.issues(&json!("d"), &[])[0];
        assert_eq!(issue.msg, "Input should be 'a', 'b' or 'c'");
    }

    // What pydantic answers for the model (FastAPI 0.165, checked here): field by field in the
    // order it declares them, whatever order the client sent them in and whichever keyword
    // failed; members it does not declare after them, as sent. jsonschema alone reported `zip`
    // first (it was sent first) and the missing names last.
    #[test]
    fn issues_follow_the_declared_order_of_fields_at_every_depth() {
        let schema = json!({
            "type": "object",
            "properties": {
                "username": {"type": "string", "minLength": 3},
                "age": {"type": "integer", "minimum": 18},
                "zip": {"type": "string"},
                "inner": {"$ref": "#/$defs/Inner"},
                "maybe": {"anyOf": [{"$ref": "#/$defs/Inner"}, {"type": "null"}]},
                "tags": {"type": "array", "items": {"type": "integer"}}
            },
            "required": ["username", "age", "zip", "inner"],
            "additionalProperties": false,
            "$defs": {"Inner": {"type": "object", "properties": {"k": {"type": "integer"}, "j": {"type": "string"}}, "required": ["k", "j"]}}
        });
        let sent = json!({"extra": 1, "tags": [1, "b", "c"], "maybe": {"j": 2}, "inner": {"j": 1}, "zip": 5, "another": 2, "username": "x"});
        assert_eq!(
            kinds(schema, sent),
            vec![
                ("string_too_short", json!(["body", "username"])),
                ("missing", json!(["body", "age"])),
                ("string_type", json!(["body", "zip"])),
                ("missing", json!(["body", "inner", "k"])),
                ("string_type", json!(["body", "inner", "j"])),
                ("missing", json!(["body", "maybe", "k"])),
                ("string_type", json!(["body", "maybe", "j"])),
                ("int_type", json!(["body", "tags", 1])),
                ("int_type", json!(["body", "tags", 2])),
                ("extra_forbidden", json!(["body", "extra"])),
                ("extra_forbidden", json!(["body", "another"])),
            ]
        );
    }

    #[test]
    fn a_recursive_schema_is_ordered_at_every_level_and_a_cycle_of_refs_ends() {
        let tree = json!({"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}}});
        let sent = json!({"children": [{"children": [{"name": 2}], "name": 1}], "name": 3});
        assert_eq!(
            kinds(tree, sent),
            vec![
                ("string_type", json!(["body", "name"])),
                ("string_type", json!(["body", "children", 0, "name"])),
                ("string_type", json!(["body", "children", 0, "children", 0, "name"])),
            ]
        );
        // Refs that only point at each other declare nothing, and the search for a declaration ends.
        let cycle = json!({"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}, "$ref": "#/$defs/A"});
        assert_eq!(DeclaredOrder::new(&cycle, &cycle).place(&["q".into()], 0), vec![(true, 0)]);
    }

    // Found on review: a `dict[str, Model]`'s members were placed as if nothing declared them
    // at any depth, so `y` came before `x.a` and each member's `missing` before its fields.
    #[test]
    fn the_members_of_a_map_keep_the_order_sent_and_their_own_fields_order() {
        let schema = json!({
            "type": "object",
            "properties": {"first": {"type": "string"}},
            "additionalProperties": {"$ref": "#/$defs/Item"},
            "$defs": {"Item": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["b"]}}
        });
        assert_eq!(
            kinds(schema, json!({"x": {"a": "s"}, "first": 1, "y": 5})),
            vec![
                ("string_type", json!(["body", "first"])),
                ("int_type", json!(["body", "x", "a"])),
                ("missing", json!(["body", "x", "b"])),
                ("dict_type", json!(["body", "y"])),
            ]
        );
    }

    // Found on review: each schema's names were numbered from 0, so a field a branch declares
    // tied with the first field declared beside it (`id, created, name`), and a name only
    // `required` lists lost the schema a branch gives it, so its own fields came as sent.
    #[test]
    fn the_names_of_every_applied_schema_share_one_order() {
        // Own properties, then names only own `required` lists, then each branch's, in order.
        let schema = json!({
            "type": "object",
            "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
            "required": ["meta"],
            "allOf": [{"$ref": "#/$defs/Stamped"}, {"properties": {"meta": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}}}],
            "$defs": {"Stamped": {"properties": {"created": {"type": "string"}, "updated": {"type": "string"}}}}
        });
        assert_eq!(
            kinds(schema.clone(), json!({"updated": 2, "created": 1, "name": 3, "id": "x", "meta": {"b": "s", "a": "t"}})),
            vec![
                ("int_type", json!(["body", "id"])),
                ("string_type", json!(["body", "name"])),
                ("int_type", json!(["body", "meta", "a"])),
                ("int_type", json!(["body", "meta", "b"])),
                ("string_type", json!(["body", "created"])),
                ("string_type", json!(["body", "updated"])),
            ]
        );
        // A schema applied twice, or through a `$ref` to its parent, is read once: the root, its
        // three branches and `S`.
        let shared = json!({"allOf": [{"$ref": "#"}, {"$ref": "#/$defs/S"}, {"$ref": "#/$defs/S"}], "$defs": {"S": {"properties": {"s": {"type": "string"}}}}});
        assert_eq!(applied_to_the_value(&shared, &[&shared]).len(), 5);
    }

    // Found on review: a member declared by the value's own schema and again by a branch, with
    // its fields there, was judged by the first declaration alone, so its fields came in the
    // order jsonschema found them.
    #[test]
    fn a_member_declared_twice_is_ordered_by_both_declarations() {
        let schema = json!({
            "type": "object",
            "properties": {"owner": {"type": "object", "required": ["id"]}},
            "allOf": [{"properties": {"owner": {"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}}}]
        });
        assert_eq!(
            kinds(schema, json!({"owner": {"b": "x", "a": "y"}})),
            vec![
                ("missing", json!(["body", "owner", "id"])),
                ("int_type", json!(["body", "owner", "a"])),
                ("int_type", json!(["body", "owner", "b"])),
            ]
        );
        // Items judged by two declarations are ordered by both too.
        let items = json!({"type": "array", "items": {"required": ["z"]}, "allOf": [{"items": {"properties": {"y": {"type": "string"}}}}]});
        assert_eq!(kinds(items, json!([{"y": 1}])), vec![("missing", json!(["body", 0, "z"])), ("string_type", json!(["body", 0, "y"]))]);
    }

    #[test]
    fn names_only_required_follow_the_declared_properties() {
        let schema = json!({
            "type": "object",
            "required": ["a", "z"],
            "properties": {"m": {"type": "object", "required": ["k"], "properties": {"n": {"minimum": 1}}}, "p": {"type": "string"}}
        });
        assert_eq!(
            kinds(schema, json!({"m": {"n": 0}, "p": 1})),
            vec![
                ("greater_than_equal", json!(["body", "m", "n"])),
                ("missing", json!(["body", "m", "k"])),
                ("string_type", json!(["body", "p"])),
                ("missing", json!(["body", "a"])),
                ("missing", json!(["body", "z"])),
            ]
        );
    }

    #[test]
    fn formats_are_checked() {
        assert_eq!(kinds(json!({"format": "uuid"}), json!("nope")), vec![("uuid_parsing", json!(["body"]))]);
        assert_eq!(kinds(json!({"format": "decimal"}), json!("1.2.3")), vec![("decimal_parsing", json!(["body"]))]);
    }

    /// The formats pydantic's types are described with (`time`, `timedelta`, `IPv4Address`,
    /// `IPv6Address`, `HttpUrl`) refused with pydantic's error types, not a bare `value_error`.
    #[test]
    fn pydantic_formats_are_refused_with_pydantic_types() {
        for (format, refused, kind) in [
            ("time", "25:00", "time_parsing"),
            ("duration", "3600", "time_delta_parsing"),
            ("ipv4", "256.1.1.1", "ip_v4_address"),
            ("ipv6", "::g", "ip_v6_address"),
            ("uri", "no scheme", "url_parsing"),
        ] {
            assert_eq!(kinds(json!({"format": format}), json!(refused)), vec![(kind, json!(["body"]))], "{format}");
        }
        // A duration as pydantic writes and reads one, not only RFC 3339's.
        for taken in ["-PT1S", "PT0.5S", "01:00:00", "1 day, 01:00:00"] {
            assert!(kinds(json!({"format": "duration"}), json!(taken)).is_empty(), "{taken}");
        }
    }

    #[test]
    fn a_decimal_is_text_python_reads_as_a_finite_decimal() {
        for taken in ["1", "-1", "+1.10", " 12345678901234567.89 ", ".5", "5.", "1e3", "1E-3", "1_000.000_1", "0007"] {
            assert!(crate::params::is_decimal(taken), "{taken:?}");
        }
        for refused in ["", " ", ".", "+", "-.", "abc", "1.2.3", "1e", "1e+", "_1", "1_", "1__0", "1._5", "nan", "Infinity", "1 2", "0x10"] {
            assert!(!crate::params::is_decimal(refused), "{refused:?}");
        }
    }
}
