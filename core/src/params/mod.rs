//! Declared parameters: raw text → typed values → constraint validation, all before a handler
//! (and so before any interpreter lock) is touched.

mod coerce;
pub(crate) use coerce::{is_date, is_date_time, is_decimal, is_time};
mod datetime;
mod deep;
mod duration;
pub(crate) use duration::is_duration;
mod kind;
mod raw;
mod whole;
pub use whole::{WholeSource, WholeSources};
use raw::same_name;

pub use coerce::{coerce, to_instance};
pub use kind::{has_constraints, FieldType, ScalarKind};
pub use raw::{RawPairs, RawValue};

use crate::problem::{Issue, LocSegment};
use crate::spec::ParamSpec;
use crate::validation::{CompiledSchema, SchemaError};
use crate::value::{Params, Value};
use serde_json::Value as Json;
use std::sync::Arc;

#[derive(Debug)]
struct CompiledParam {
    name: Arc<str>,
    ty: FieldType,
    required: bool,
    default: Option<Value>,
    /// Its schema, when it says more than its type (`minimum`, `pattern`, a deepObject's
    /// keys): a value that coerced is checked against it, alone.
    validator: Option<CompiledSchema>,
    /// An array's name in the bracket convention (`tag[]`), read as the array too.
    bracketed: Option<Arc<str>>,
    /// An array's items are one value joined by this (`style`, `explode`).
    separator: Option<char>,
    /// An object sent in the `deepObject` style: how its keys are read.
    deep: Option<deep::DeepNode>,
    /// A uuid, date or date-time handed over as the text it was sent, once read
    /// ([`FormatValues::AsSent`]).
    as_sent: bool,
}

/// What a parameter declared with a format the core reads (`uuid`, `date`, `date-time`) is
/// handed over as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatValues {
    /// The value read: a `Value::Uuid`, `Value::Date`, `Value::DateTime` (Python's `UUID`,
    /// `date`, `datetime`).
    Typed,
    /// The text as sent, once it has been read as the format says (a uuid hyphenated, as Ajv's
    /// format has it): Fastify hands a handler its client's text, and Node's binding got
    /// `2024-01-01T00:00:00+00:00` for `…Z` and a uuid lowered (found beside Fastify 5).
    AsSent,
}

impl CompiledParam {
    /// One value of this parameter, coerced to `kind`, or its text as sent when it keeps that.
    fn read(&self, kind: ScalarKind, raw: &RawValue<'_>, loc: impl FnOnce() -> Vec<LocSegment>) -> Result<Value, Issue> {
        match raw {
            RawValue::Text(text) if self.as_sent => coerce::as_sent(kind, text, loc),
            _ => coerce_raw(kind, raw, loc),
        }
    }

    /// The value of a parameter that was not sent: its default, else `Null` (and `missing`
    /// when it is required).
    fn absent(&self, loc: impl FnOnce() -> Vec<LocSegment>, issues: &mut Vec<Issue>) -> Value {
        match (&self.default, self.required) {
            (Some(default), _) => default.clone(),
            (None, true) => {
                issues.push(Issue::missing(loc()));
                Value::Null
            }
            (None, false) => Value::Null,
        }
    }
}

/// The parameters one source (`"query"`, `"header"`, …) declares, compiled once per route.
#[derive(Debug)]
pub struct ParamSet {
    source: &'static str,
    params: Vec<CompiledParam>,
    /// An empty scalar value counts as not sent (form fields; see [`ParamSet::empty_as_missing`]).
    empty_is_missing: bool,
}

impl ParamSet {
    pub fn compile(source: &'static str, specs: &[ParamSpec]) -> Result<Self, SchemaError> {
        Self::compile_as(source, specs, FormatValues::Typed)
    }

    /// [`ParamSet::compile`], its formatted values handed over as `formats` says.
    pub fn compile_as(source: &'static str, specs: &[ParamSpec], formats: FormatValues) -> Result<Self, SchemaError> {
        let mut params = Vec::with_capacity(specs.len());
        for spec in specs {
            let ty = FieldType::from_schema(&spec.schema);
            let as_sent = formats == FormatValues::AsSent && matches!(ty.scalar(), ScalarKind::Uuid | ScalarKind::Date | ScalarKind::DateTime);
            let default = spec.schema.get("default").map(|d| match ty {
                FieldType::Array(_) | FieldType::Scalar(_) if as_sent => coerce::typed_default(ScalarKind::Str, d),
                FieldType::Array(kind) | FieldType::Scalar(kind) => coerce::typed_default(kind, d),
            });
            let is_array = matches!(ty, FieldType::Array(_));
            let deep_object = spec.style == Some(crate::spec::ParamStyle::DeepObject);
            if spec.style.is_some() || spec.explode.is_some() {
                if source != "query" {
                    return Err(SchemaError { message: format!("{source} parameter `{}`: style and explode are for query parameters", spec.name) });
                }
                if deep_object {
                    if deep::object_schema(&spec.schema).is_none() || spec.explode == Some(false) {
                        return Err(SchemaError { message: format!("query parameter `{}`: style deepObject is for objects (type object), exploded", spec.name) });
                    }
                } else if !is_array {
                    return Err(SchemaError { message: format!("query parameter `{}`: style and explode are for arrays", spec.name) });
                }
            }
            // A deepObject's keys are coerced one by one; the object is always checked whole.
            let constrained = deep_object || has_constraints(&spec.schema);
            // HTML forms and PHP, Rails and `qs` clients write `tag[]=a&tag[]=b`; never read
            // that as an empty `tag`.
            let bracketed = (is_array && matches!(source, "query" | "body")).then(|| Arc::from(format!("{}[]", spec.name).as_str()));
            let in_param = |e: SchemaError| SchemaError { message: format!("{source} parameter `{}`: {e}", spec.name) };
            let mut compiled = CompiledParam {
                name: Arc::from(spec.name.as_str()),
                ty,
                required: spec.is_required(),
                default,
                validator: None,
                bracketed,
                separator: spec.separator(),
                deep: deep::object_schema(&spec.schema).filter(|_| deep_object).map(deep::DeepNode::compile),
                as_sent,
            };
            if !constrained {
                // Coercion has already enforced everything its schema says; the schema is still
                // checked against JSON Schema's own (once, here), so a misspelt `{"type":
                // "intgr"}` is refused where it is declared instead of passing text along.
                CompiledSchema::compile(&spec.schema).map_err(in_param)?;
                params.push(compiled);
                continue;
            }
            let mut property = spec.schema.clone();
            if let Json::Object(map) = &mut property {
                // Defaults are not user input and are not validated (as in pydantic).
                map.shift_remove("default");
            }
            if ty.scalar() == ScalarKind::Binary {
                // A file is checked as a file; a list of files keeps its own keywords
                // (`maxItems`: how many files).
                property = match (ty, property) {
                    (FieldType::Array(_), Json::Object(mut list)) => {
                        list.insert("items".into(), Json::Bool(true));
                        Json::Object(list)
                    }
                    _ => Json::Bool(true),
                };
            }
            // Each value is checked alone: the parameters share no keyword, and a map of them
            // per request to check as one object cost more than the checks (query-few, two
            // constrained parameters: 690 instructions a request of a 4,700-instruction
            // extraction, once serde_json kept maps in order).
            compiled.validator = Some(CompiledSchema::compile(&property).map_err(in_param)?);
            params.push(compiled);
        }
        Ok(ParamSet { source, params, empty_is_missing: false })
    }

    /// Form fields: HTML forms submit every input, so an empty one means "not filled in" and
    /// gets the default (or `missing`), as FastAPI does for `Form()` parameters. Query strings
    /// keep `?n=` as an empty value, also as in FastAPI.
    pub fn empty_as_missing(mut self) -> Self {
        self.empty_is_missing = true;
        self
    }

    pub fn is_empty(&self) -> bool {
        self.params.is_empty()
    }

    /// How many parameters are declared.
    pub fn len(&self) -> usize {
        self.params.len()
    }

    /// Typed values for every declared parameter (missing optional ones are `Null`); problems
    /// are appended to `issues`.
    pub fn extract(&self, raw: &RawPairs<'_>, issues: &mut Vec<Issue>) -> Params {
        let mut out = Params::with_capacity(self.params.len());
        for param in &self.params {
            let loc = || vec![LocSegment::Key(self.source.to_owned()), LocSegment::Key(param.name.to_string())];
            if let Some(node) = &param.deep {
                let before = issues.len();
                let value = match deep::extract(&param.name, node, raw, &loc(), issues) {
                    // A leaf that did not coerce is reported; the rest is not validated again.
                    Some(_) if issues.len() > before => Value::Null,
                    Some(object) => {
                        if let Some(validator) = &param.validator {
                            issues.extend(validator.issues(&object, &loc()));
                        }
                        Value::Json(crate::document::Document::from_tree(&object))
                    }
                    None => param.absent(loc, issues),
                };
                out.push(param.name.clone(), value);
                continue;
            }
            let provided = match param.ty {
                FieldType::Scalar(kind) => raw
                    .last(&param.name)
                    .filter(|v| !(self.empty_is_missing && matches!(v, RawValue::Text(t) if t.is_empty())))
                    .map(|v| param.read(kind, v, loc)),
                FieldType::Array(kind) => {
                    let mut items = Vec::new();
                    let mut failed = None;
                    let mut index = 0;
                    let mut item = |value: &RawValue<'_>| {
                        let at = index;
                        index += 1;
                        let item_loc = move || {
                            let mut item_loc = loc();
                            item_loc.push(LocSegment::Index(at));
                            item_loc
                        };
                        match param.read(kind, value, item_loc) {
                            Ok(v) => items.push(v),
                            Err(issue) => {
                                issues.push(issue);
                                failed = Some(());
                            }
                        }
                    };
                    for value in raw.values_either(&param.name, param.bracketed.as_deref()) {
                        match (param.separator, value) {
                            (Some(separator), RawValue::Text(text)) => {
                                for piece in text.split(separator).filter(|_| !text.is_empty()) {
                                    item(&RawValue::Text(std::borrow::Cow::Borrowed(piece)));
                                }
                            }
                            _ => item(value),
                        }
                    }
                    match (items.is_empty() && failed.is_none(), failed) {
                        (true, _) => None,
                        (false, Some(())) => {
                            out.push(param.name.clone(), Value::Null);
                            continue;
                        }
                        (false, None) => Some(Ok(Value::Array(items))),
                    }
                }
            };
            let value = match provided {
                Some(Ok(value)) => {
                    if let Some(validator) = &param.validator {
                        let instance = coerce::instance_of(param.ty.scalar(), &value);
                        if !validator.is_valid(&instance) {
                            for mut issue in validator.issues(&instance, &loc()) {
                                self.as_sent(&mut issue, raw);
                                issues.push(issue);
                            }
                        }
                    }
                    value
                }
                Some(Err(issue)) => {
                    issues.push(issue);
                    Value::Null
                }
                None => param.absent(loc, issues),
            };
            out.push(param.name.clone(), value);
        }
        out
    }

    /// The parameters `raw` carries that none of these declares, appended to `out` as sent:
    /// text (not UTF-8: read lossily), a repeated name's values an array, in the order each
    /// name was first sent ([`crate::spec::RouteSpec::keep_undeclared_query`]). A declared
    /// array's other spelling (`tag[]`) and a deepObject's keys (`filter[price]`) are declared.
    pub fn push_undeclared(&self, raw: &RawPairs<'_>, out: &mut Params) {
        for (name, mut values) in self.undeclared(raw) {
            let value = match values.len() {
                1 => Value::Str(values.pop().expect("one value")),
                _ => Value::Array(values.into_iter().map(Value::Str).collect()),
            };
            out.push(Arc::from(name), value);
        }
    }

    /// An `extra_forbidden` issue for each name `raw` carries that none of these declares, its
    /// input the value (a repeated name's values an array), in the order each name was first
    /// sent: a pydantic parameter model with `extra="forbid"`, as FastAPI refuses one
    /// ([`crate::spec::RouteSpec::refuse_undeclared`]).
    pub fn refuse_undeclared(&self, raw: &RawPairs<'_>, issues: &mut Vec<Issue>) {
        for (name, mut values) in self.undeclared(raw) {
            let input = match values.len() {
                1 => Json::String(values.pop().expect("one value")),
                _ => Json::Array(values.into_iter().map(Json::String).collect()),
            };
            let loc = vec![LocSegment::Key(self.source.to_owned()), LocSegment::Key(name.to_owned())];
            issues.push(Issue::new("extra_forbidden", loc, "Extra inputs are not permitted", input));
        }
    }

    /// The names `raw` carries that none of these declares, with their values as text, in the
    /// order each name was first sent.
    fn undeclared<'r>(&self, raw: &'r RawPairs<'_>) -> Vec<(&'r str, Vec<String>)> {
        let mut sent: Vec<(&str, Vec<String>)> = Vec::new();
        // Where each name stands in `sent`, once there are many: looked for by a scan of all
        // the names before it, a query of thousands of distinct names (a 16 KiB request line
        // holds ~4,000) cost millions of comparisons, quadratic in what a client sends (found
        // on review). A few names stay a scan, which is cheaper than hashing them.
        let mut index: Option<std::collections::HashMap<&str, usize>> = None;
        // The parameter after the one the last declared pair was, where the next is looked for
        // first (see `declared_at`).
        let mut next = 0;
        for (name, value) in raw.iter() {
            if let Some(at) = self.declared_at(name, next) {
                next = at + 1;
                continue;
            }
            let text = match value {
                RawValue::Text(text) => text.to_string(),
                RawValue::Invalid(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                RawValue::File(_) => continue,
            };
            let known = match &index {
                Some(index) => index.get(name).copied(),
                None => sent.iter().position(|(seen, _)| *seen == name),
            };
            match known {
                Some(at) => sent[at].1.push(text),
                None => {
                    sent.push((name, vec![text]));
                    match &mut index {
                        Some(index) => {
                            index.insert(name, sent.len() - 1);
                        }
                        None if sent.len() == 32 => index = Some(sent.iter().enumerate().map(|(at, (seen, _))| (*seen, at)).collect()),
                        None => {}
                    }
                }
            }
        }
        sent
    }

    /// Which of these parameters `name` is, if any. Clients mostly send a query in the order
    /// its parameters are declared, a repeated name's values side by side, so the parameter
    /// `next` and the one before it are compared first, and a query of declared parameters
    /// costs about one comparison a pair. Looking at the pair's own place instead lost the
    /// order at a repeated name: on query-many (17 pairs, `tags` twice) this pass cost 1,226
    /// instructions a request that way and 918 this way (callgrind, the Node server).
    fn declared_at(&self, name: &str, next: usize) -> Option<usize> {
        let is = |at: usize| {
            self.params.get(at).is_some_and(|param| {
                same_name(&param.name, name)
                    || param.bracketed.as_deref().is_some_and(|other| same_name(other, name))
                    || (param.deep.is_some() && name.strip_prefix(&*param.name).is_some_and(|rest| rest.starts_with('[')))
            })
        };
        if is(next) {
            return Some(next);
        }
        if next > 0 && is(next - 1) {
            return Some(next - 1);
        }
        (0..self.params.len()).find(|&at| is(at))
    }

    /// Orders issues as pydantic does a function's parameters or a form model's fields: by the
    /// declaration of the parameter each one is about, whatever check found it (a value that
    /// did not coerce, a missing one, a failed constraint); names not declared after them.
    /// Issues about one parameter keep their order.
    pub fn in_declaration_order(&self, issues: &mut [Issue]) {
        if issues.len() < 2 {
            return;
        }
        // Stable, so the nested issues of one parameter keep the order they were found in.
        // Cached: each key is a scan of the parameters, and a form may bring many issues.
        issues.sort_by_cached_key(|issue| match issue.loc.get(1) {
            Some(LocSegment::Key(name)) => self.params.iter().position(|param| *param.name == **name).unwrap_or(usize::MAX),
            _ => usize::MAX,
        });
    }

    /// A failed constraint's `input` as the client sent it (`"0"` for `?size=0` below
    /// `minimum: 1`), as pydantic reports it, where the validator saw the coerced value. Read
    /// again from the request only for an issue, so a valid value costs nothing.
    fn as_sent(&self, issue: &mut Issue, raw: &RawPairs<'_>) {
        let [_, LocSegment::Key(name)] = issue.loc.as_slice() else { return };
        let scalar = self.params.iter().any(|param| &*param.name == name.as_str() && param.deep.is_none() && matches!(param.ty, FieldType::Scalar(_)));
        if let (true, Some(RawValue::Text(text))) = (scalar, raw.values(name).last()) {
            issue.input = Json::String(text.to_string());
        }
    }
}

fn coerce_raw(kind: ScalarKind, value: &RawValue<'_>, loc: impl FnOnce() -> Vec<LocSegment>) -> Result<Value, Issue> {
    match (kind, value) {
        (ScalarKind::Binary, RawValue::File(file)) => Ok(Value::File((**file).clone())),
        (ScalarKind::Binary, RawValue::Text(text)) => Err(Issue::new(
            "file_type",
            loc(),
            "Input should be a file",
            Json::String(text.to_string()),
        )),
        (_, RawValue::File(file)) => Err(Issue::new(
            "string_type",
            loc(),
            "Input should be a valid string",
            Json::String(file.filename.clone().unwrap_or_default()),
        )),
        (_, RawValue::Invalid(bytes)) => Err(Issue::new(
            "string_unicode",
            loc(),
            "Input should be a valid string, unable to parse raw data as a unicode string",
            Json::String(String::from_utf8_lossy(bytes).into_owned()),
        )),
        (kind, RawValue::Text(text)) => coerce(kind, text, loc),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(specs: Vec<ParamSpec>, query: &str) -> (Json, Vec<(&'static str, Json)>) {
        let set = ParamSet::compile("query", &specs).unwrap();
        let mut issues = Vec::new();
        let params = set.extract(&RawPairs::from_urlencoded(query.as_bytes()), &mut issues);
        let issues = issues.into_iter().map(|i| (i.kind, serde_json::to_value(&i.loc).unwrap())).collect();
        (serde_json::to_value(&params).unwrap(), issues)
    }

    /// Past 32 names the undeclared ones are found by an index, not a scan: the same names, in
    /// the order first sent, a repeated one's values together.
    #[test]
    fn many_undeclared_names_keep_their_order_and_values() {
        let set = ParamSet::compile("query", &[ParamSpec::new("a", json!({"type": "integer"}))]).unwrap();
        let query: Vec<String> = (0..100).map(|n| format!("n{n}={n}")).chain((0..100).rev().map(|n| format!("n{n}=again"))).collect();
        let query = query.join("&");
        let raw = RawPairs::from_urlencoded(query.as_bytes());
        let mut params = Params::with_capacity(1);
        set.push_undeclared(&raw, &mut params);
        let found: Vec<_> = params.iter().map(|(name, value)| (name.to_string(), value.to_json())).collect();
        assert_eq!(found.len(), 100);
        assert_eq!(found[0], ("n0".to_owned(), json!(["0", "again"])));
        assert_eq!(found[99], ("n99".to_owned(), json!(["99", "again"])));
    }

    /// FastAPI's parameter model with `extra="forbid"`: each name not declared is refused where
    /// it is, a repeated one's values together (FastAPI 0.165's answer to this query).
    #[test]
    fn undeclared_names_are_refused_each_once_in_the_order_sent() {
        let set = ParamSet::compile("query", &[ParamSpec::new("a", json!({"type": "integer"})), ParamSpec::new("b", json!({"type": "array", "items": {"type": "string"}}))]).unwrap();
        let mut issues = Vec::new();
        set.refuse_undeclared(&RawPairs::from_urlencoded(b"a=1&zz=2&b[]=x&yy=3&zz=4"), &mut issues);
        let found: Vec<_> = issues.iter().map(|i| (i.kind, serde_json::to_value(&i.loc).unwrap(), i.input.clone())).collect();
        assert_eq!(found, vec![("extra_forbidden", json!(["query", "zz"]), json!(["2", "4"])), ("extra_forbidden", json!(["query", "yy"]), json!("3"))]);
    }

    /// Found beside Fastify 5, which hands a handler its client's text: Node's binding got a
    /// date-time's `Z` as `+00:00` and a uuid lowered. Kept as sent, once read; a uuid must be
    /// hyphenated, as Ajv's format has it; a default stays the text it was declared as.
    #[test]
    fn formatted_values_kept_as_sent_are_read_first() {
        let specs = vec![
            ParamSpec::new("id", json!({"type": "string", "format": "uuid"})),
            ParamSpec::new("at", json!({"type": "string", "format": "date-time"})),
            ParamSpec::new("days", json!({"type": "array", "items": {"type": "string", "format": "date"}})),
            ParamSpec::new("since", json!({"type": "string", "format": "date-time", "default": "2024-01-01T00:00:00Z"})),
        ];
        let run_as = |formats, query: &str| {
            let set = ParamSet::compile_as("query", &specs, formats).unwrap();
            let mut issues = Vec::new();
            let params = set.extract(&RawPairs::from_urlencoded(query.as_bytes()), &mut issues);
            let issues: Vec<_> = issues.into_iter().map(|i| (i.kind, serde_json::to_value(&i.loc).unwrap())).collect();
            (serde_json::to_value(&params).unwrap(), issues)
        };
        let query = "id=A0B1C2D3-E4F5-4A6B-8C7D-9E0F1A2B3C4D&at=2024-05-06T07:08:09Z&days=2024-01-02";
        let (typed, _) = run_as(FormatValues::Typed, query);
        assert_eq!(typed["id"], json!("a0b1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d"));
        assert_eq!(typed["at"], json!("2024-05-06T07:08:09+00:00"));
        let (sent, issues) = run_as(FormatValues::AsSent, query);
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(sent, json!({"id": "A0B1C2D3-E4F5-4A6B-8C7D-9E0F1A2B3C4D", "at": "2024-05-06T07:08:09Z", "days": ["2024-01-02"], "since": "2024-01-01T00:00:00Z"}));
        let (_, issues) = run_as(FormatValues::AsSent, "id=a0b1c2d3e4f54a6b8c7d9e0f1a2b3c4d&at=2024-13-01T00:00:00Z&days=x");
        assert_eq!(issues, vec![("uuid_parsing", json!(["query", "id"])), ("datetime_parsing", json!(["query", "at"])), ("date_parsing", json!(["query", "days", 0]))]);
    }

    /// The declared parameters and, after them, what `push_undeclared` adds, as JSON with its
    /// keys in order.
    fn with_undeclared(specs: Vec<ParamSpec>, query: &str) -> Vec<(String, Json)> {
        let set = ParamSet::compile("query", &specs).unwrap();
        let raw = RawPairs::from_urlencoded(query.as_bytes());
        let mut params = set.extract(&raw, &mut Vec::new());
        set.push_undeclared(&raw, &mut params);
        params.iter().map(|(name, value)| (name.to_owned(), value.to_json())).collect()
    }

    // Fastify 5 on the same schema and query (checked): `{"debug": ["1", "2"], "page": 2,
    // "x": "", "tags": ["a"], "y": "€", "z": "%ZZ"}`, in the order sent.
    #[test]
    fn undeclared_parameters_are_kept_as_sent_after_the_declared_ones() {
        let specs = vec![
            ParamSpec::new("page", json!({"type": "integer"})),
            ParamSpec::new("tags", json!({"type": "array", "items": {"type": "string"}})),
            ParamSpec {
                style: Some(crate::spec::ParamStyle::DeepObject),
                ..ParamSpec::new("filter", json!({"type": "object", "properties": {"min": {"type": "integer"}}}))
            },
        ];
        let kept = with_undeclared(specs, "debug=1&page=2&debug=2&x&tags=a&tags[]=b&filter[min]=3&y=%E2%82%AC&z=%ZZ&bad=%FF");
        let expected = [
            ("page", json!(2)),
            ("tags", json!(["a", "b"])),
            ("filter", json!({"min": 3})),
            ("debug", json!(["1", "2"])),
            ("x", json!("")),
            ("y", json!("€")),
            ("z", json!("%ZZ")),
            ("bad", json!("\u{fffd}")),
        ];
        assert_eq!(kept, expected.map(|(name, value)| (name.to_owned(), value)).to_vec());
    }

    #[test]
    fn a_query_of_declared_parameters_only_adds_nothing_in_any_order() {
        let specs = vec![ParamSpec::new("a", json!({"type": "string"})), ParamSpec::new("b", json!({"type": "string"}))];
        let kept = with_undeclared(specs.clone(), "b=2&a=1&a=3");
        assert_eq!(kept, vec![("a".to_owned(), json!("3")), ("b".to_owned(), json!("2"))]);
        assert_eq!(with_undeclared(specs.clone(), "").len(), 2);
        // Out of order, repeated apart, with an undeclared name between.
        let kept = with_undeclared(specs, "a=1&x=9&b=2&a=3&b=4&x=8");
        assert_eq!(kept, vec![("a".to_owned(), json!("3")), ("b".to_owned(), json!("4")), ("x".to_owned(), json!(["9", "8"]))]);
    }

    #[test]
    fn defaults_required_and_optional() {
        let specs = vec![
            ParamSpec::new("page", json!({"type": "integer", "default": 1})),
            ParamSpec::new("q", json!({"type": "string"})),
            ParamSpec::new("tag", json!({"type": "string"})).optional(),
        ];
        let (values, issues) = run(specs, "");
        assert_eq!(values, json!({"page": 1, "q": null, "tag": null}));
        assert_eq!(issues, vec![("missing", json!(["query", "q"]))]);
    }

    // FastAPI (checked here) reports `z, a, m, b` for these: parameter by parameter. The core
    // put the values that did not coerce and the missing ones first (`z, b, a, m`).
    #[test]
    fn issues_follow_the_parameters_declaration_whatever_check_found_them() {
        let specs = vec![
            ParamSpec::new("z", json!({"type": "integer"})),
            ParamSpec::new("a", json!({"type": "integer", "minimum": 5})),
            ParamSpec::new("m", json!({"type": "string", "minLength": 3})),
            ParamSpec::new("b", json!({"type": "integer"})),
        ];
        let (_, issues) = run(specs, "a=1&m=x&z=q");
        let expected = [("int_parsing", "z"), ("greater_than_equal", "a"), ("string_too_short", "m"), ("missing", "b")];
        assert_eq!(issues, expected.map(|(kind, name)| (kind, json!(["query", name]))).to_vec());
    }

    // Found running Fastify's schema tests: every value of such a union was refused.
    #[test]
    fn a_union_of_an_integer_and_a_boolean_reads_either() {
        let union = |name: &str| ParamSpec::new(name, json!({"anyOf": [{"type": "integer"}, {"type": "boolean"}]})).optional();
        let optional = ParamSpec::new("maybe", json!({"anyOf": [{"type": "integer"}, {"type": "null"}]})).optional();
        let (values, issues) = run(vec![union("a"), union("b"), optional], "a=5&b=true&maybe=7");
        assert_eq!((values, issues), (json!({"a": 5, "b": true, "maybe": 7}), vec![]));
        let (_, issues) = run(vec![union("a")], "a=x");
        assert_eq!(issues, vec![("int_parsing", json!(["query", "a"]))]);
    }

    // Found by a differential run against FastAPI: a `Decimal` parameter went through a float,
    // so `12345678901234567.89` reached the handler as `…568` and `1.10` as `1.1`.
    #[test]
    fn a_decimal_is_handed_over_as_sent_and_judged_as_a_number() {
        let specs = vec![
            ParamSpec::new("price", json!({"type": "number", "format": "decimal", "minimum": 0})),
            ParamSpec::new("rates", json!({"type": "array", "items": {"type": "number", "format": "decimal", "maximum": 1}})).optional(),
        ];
        let (values, issues) = run(specs.clone(), "price=12345678901234567.89&rates=0.10&rates=1_0e-1");
        assert_eq!((values, issues), (json!({"price": "12345678901234567.89", "rates": ["0.10", "1_0e-1"]}), vec![]));
        let (_, issues) = run(specs.clone(), "price=-0.01&rates=1.5");
        assert_eq!(issues, vec![("greater_than_equal", json!(["query", "price"])), ("less_than_equal", json!(["query", "rates", 0]))]);
        let (_, issues) = run(specs, "price=1.2.3");
        assert_eq!(issues, vec![("decimal_parsing", json!(["query", "price"]))]);
    }

    #[test]
    fn last_value_wins_for_scalars_and_arrays_collect() {
        let specs = vec![
            ParamSpec::new("a", json!({"type": "integer"})),
            ParamSpec::new("ids", json!({"type": "array", "items": {"type": "integer"}})),
        ];
        let (values, issues) = run(specs, "a=1&a=2&ids=3&ids=4");
        assert_eq!(values, json!({"a": 2, "ids": [3, 4]}));
        assert!(issues.is_empty());
    }

    #[test]
    fn coercion_errors_are_not_reported_twice_by_constraints() {
        let specs = vec![ParamSpec::new("n", json!({"type": "integer", "minimum": 1}))];
        let (_, issues) = run(specs.clone(), "n=x");
        assert_eq!(issues, vec![("int_parsing", json!(["query", "n"]))]);
        let (_, issues) = run(specs, "n=0");
        assert_eq!(issues, vec![("greater_than_equal", json!(["query", "n"]))]);
    }

    #[test]
    fn empty_form_values_count_as_missing() {
        let specs = vec![
            ParamSpec::new("n", json!({"type": "integer", "default": 5})),
            ParamSpec::new("s", json!({"type": "string"})),
        ];
        let set = ParamSet::compile("body", &specs).unwrap().empty_as_missing();
        let mut issues = Vec::new();
        let params = set.extract(&RawPairs::from_urlencoded(b"n=&s="), &mut issues);
        assert_eq!(serde_json::to_value(&params).unwrap(), json!({"n": 5, "s": null}));
        assert_eq!(issues.iter().map(|i| i.kind).collect::<Vec<_>>(), ["missing"]);
        // Query strings keep the empty value (FastAPI): `?n=` is not an integer.
        let (_, issues) = run(specs, "n=&s=");
        assert_eq!(issues, vec![("int_parsing", json!(["query", "n"]))]);
    }

    #[test]
    fn a_format_coercion_does_not_prove_is_validated() {
        let specs = vec![
            ParamSpec::new("email", json!({"type": "string", "format": "email"})),
            ParamSpec::new("n", json!({"type": "integer"})),
        ];
        let (values, issues) = run(specs.clone(), "email=not-an-email&n=3");
        assert_eq!(values, json!({"email": "not-an-email", "n": 3}));
        assert_eq!(issues, vec![("value_error", json!(["query", "email"]))]);
        assert!(run(specs, "email=ann@example.org&n=3").1.is_empty());
    }

    #[test]
    fn arrays_in_brackets_and_in_each_style() {
        let ids = || ParamSpec::new("ids", json!({"type": "array", "items": {"type": "integer"}}));
        let styled = |style: crate::spec::ParamStyle, explode: Option<bool>| ParamSpec { style: Some(style), explode, ..ids() };
        use crate::spec::ParamStyle::*;
        // The bracket convention is read whatever the style, mixed with plain keys in order.
        assert_eq!(run(vec![ids()], "ids[]=1&ids=2&ids[]=3").0, json!({"ids": [1, 2, 3]}));
        assert_eq!(run(vec![ids()], "ids=1,2").1, vec![("int_parsing", json!(["query", "ids", 0]))], "form explodes by default");
        assert_eq!(run(vec![styled(Form, Some(false))], "ids=1,2,3").0, json!({"ids": [1, 2, 3]}));
        assert_eq!(run(vec![styled(PipeDelimited, None)], "ids=1|2&ids=3").0, json!({"ids": [1, 2, 3]}));
        assert_eq!(run(vec![styled(SpaceDelimited, None)], "ids=1%202+3").0, json!({"ids": [1, 2, 3]}));
        assert_eq!(run(vec![styled(PipeDelimited, Some(true))], "ids=1&ids=2").0, json!({"ids": [1, 2]}));
        assert_eq!(run(vec![styled(PipeDelimited, None)], "ids=").0, json!({"ids": null}), "an empty value is no items");
        assert_eq!(run(vec![styled(PipeDelimited, None)], "ids=1|x|3").1, vec![("int_parsing", json!(["query", "ids", 1]))]);
    }

    #[test]
    fn style_is_refused_where_it_means_nothing() {
        let scalar = ParamSpec { style: Some(crate::spec::ParamStyle::PipeDelimited), ..ParamSpec::new("n", json!({"type": "integer"})) };
        assert!(ParamSet::compile("query", &[scalar]).unwrap_err().message.contains("query parameter `n`: style and explode are for arrays"));
        // Found by a README-driven probe: a misspelt type was taken as a string.
        let misspelt = ParamSet::compile("query", &[ParamSpec::new("x", json!({"type": "intgr"}))]).unwrap_err().message;
        assert!(misspelt.starts_with("query parameter `x`: "), "{misspelt}");
        let header = ParamSpec { explode: Some(false), ..ParamSpec::new("x", json!({"type": "array"})) };
        assert!(ParamSet::compile("header", &[header]).unwrap_err().message.contains("header parameter `x`: style and explode are for query parameters"));
    }

    #[test]
    fn array_item_errors_carry_the_index() {
        let specs = vec![ParamSpec::new("ids", json!({"type": "array", "items": {"type": "integer"}}))];
        let (_, issues) = run(specs, "ids=1&ids=x");
        assert_eq!(issues, vec![("int_parsing", json!(["query", "ids", 1]))]);
    }
}
