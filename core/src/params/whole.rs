//! What a route asks of one source's parameters taken together, beyond each one's own schema:
//! that it names nothing undeclared (FastAPI's parameter model with `extra="forbid"`), and the
//! keywords of a Fastify or Sinatra-style object schema that speak of the whole object
//! (`anyOf: [{required: [id]}, {required: [name]}]`, `minProperties`, `dependentRequired`).
//! Node's and Ruby's bindings split such a schema into its properties and dropped those, so
//! "either `id` or `name`" let a request with neither reach the handler (found by the
//! differential run beside Fastify 5).
//!
//! Only a route that asks pays: a scan of the undeclared names, or one object built and
//! validated per request.

use super::{ParamSet, RawPairs};
use crate::problem::{Issue, LocSegment};
use crate::spec::RouteSpec;
use crate::validation::{CompiledSchema, SchemaError};
use crate::value::Params;
use serde_json::Value as Json;

/// The sources whose parameters may be judged whole.
const SOURCES: [&str; 3] = ["query", "header", "cookie"];

/// The keywords of an object schema that speak of the object as a whole.
const WHOLE_OBJECT_KEYWORDS: [&str; 11] =
    ["anyOf", "oneOf", "allOf", "not", "if", "then", "else", "minProperties", "maxProperties", "dependentRequired", "dependentSchemas"];

/// What a source's object schema says of its parameters as one object: the keywords above,
/// and draft-07's `dependencies` (which Fastify's Ajv reads) as its two 2020-12 keywords; for
/// headers, the names it speaks of in lower case, as declared header names are matched.
/// `None` when it says nothing of the whole. Decided here once for every binding (Node's and
/// Ruby's each did it, in their own words).
fn whole_object_part(schema: &Json, lower_case: bool) -> Option<Json> {
    let object = schema.as_object()?;
    let mut rules: serde_json::Map<String, Json> =
        WHOLE_OBJECT_KEYWORDS.iter().filter_map(|keyword| Some((keyword.to_string(), object.get(*keyword)?.clone()))).collect();
    if let Some(dependencies) = object.get("dependencies").and_then(Json::as_object) {
        for (name, depends) in dependencies {
            let keyword = if depends.is_array() { "dependentRequired" } else { "dependentSchemas" };
            if let Json::Object(by_name) = rules.entry(keyword).or_insert_with(|| Json::Object(Default::default())) {
                by_name.insert(name.clone(), depends.clone());
            }
        }
    }
    if rules.is_empty() {
        return None;
    }
    let rules = Json::Object(rules);
    Some(if lower_case { lower_case_names(&rules) } else { rules })
}

/// `rules` with the property names it speaks of (`required`, `properties`, `dependent*`) in
/// lower case, in every subschema.
fn lower_case_names(rules: &Json) -> Json {
    let lower = |name: &Json| match name {
        Json::String(name) => Json::String(name.to_lowercase()),
        other => other.clone(),
    };
    match rules {
        Json::Array(items) => Json::Array(items.iter().map(lower_case_names).collect()),
        Json::Object(object) => Json::Object(
            object
                .iter()
                .map(|(keyword, value)| {
                    let value = match (keyword.as_str(), value) {
                        ("required", Json::Array(names)) => Json::Array(names.iter().map(lower).collect()),
                        ("dependentRequired", Json::Object(by_name)) => Json::Object(
                            by_name
                                .iter()
                                .map(|(name, names)| (name.to_lowercase(), names.as_array().map_or_else(|| names.clone(), |names| Json::Array(names.iter().map(lower).collect()))))
                                .collect(),
                        ),
                        ("properties" | "dependentSchemas", Json::Object(by_name)) => {
                            Json::Object(by_name.iter().map(|(name, inner)| (name.to_lowercase(), lower_case_names(inner))).collect())
                        }
                        (_, value) => lower_case_names(value),
                    };
                    (keyword.clone(), value)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// One source's whole-object rules.
#[derive(Debug, Default)]
pub struct WholeSource {
    refuse_undeclared: bool,
    rules: Option<CompiledSchema>,
}

impl WholeSource {
    /// Whether the source must be read even when the route declares none of its parameters.
    pub fn asks(&self) -> bool {
        self.refuse_undeclared || self.rules.is_some()
    }

    /// `set`'s parameters, from the pairs `raw` reads, each judged by its own schema and then
    /// all of them by these rules; with `keep_undeclared` (Node's query), the undeclared ones
    /// after them as sent. Nothing is read when none of that is asked.
    pub fn extract<'a>(&self, set: &ParamSet, raw: impl FnOnce() -> RawPairs<'a>, keep_undeclared: bool, issues: &mut Vec<Issue>) -> Params {
        if set.is_empty() && !self.asks() && !keep_undeclared {
            return Params::default();
        }
        let raw = raw();
        let before = issues.len();
        let mut params = set.extract(&raw, issues);
        self.judge(set, &raw, &params, before, issues);
        if keep_undeclared {
            set.push_undeclared(&raw, &mut params);
        }
        params
    }

    /// Judges what `set` extracted from `raw` as `params`. The rules are asked only when no
    /// parameter of the source was refused (from `before` on in `issues`): a value that did not
    /// coerce is absent from the object, and would be reported twice.
    pub fn judge(&self, set: &ParamSet, raw: &RawPairs<'_>, params: &Params, before: usize, issues: &mut Vec<Issue>) {
        if self.refuse_undeclared {
            set.refuse_undeclared(raw, issues);
        }
        if let Some(rules) = &self.rules {
            if issues.len() == before {
                let loc = [LocSegment::Key(set.source.to_owned())];
                issues.extend(rules.issues(&set.as_object(params, raw), &loc));
            }
        }
    }
}

/// The whole-object rules of a route's query, headers and cookies.
#[derive(Debug, Default)]
pub struct WholeSources {
    pub query: WholeSource,
    pub header: WholeSource,
    pub cookie: WholeSource,
}

impl WholeSources {
    pub fn compile(spec: &RouteSpec) -> Result<Self, SchemaError> {
        let mut sources = WholeSources::default();
        let unknown = |what: &str, name: &str| SchemaError { message: crate::spec::unknown_option(what, name, &SOURCES) };
        for name in &spec.refuse_undeclared {
            sources.get_mut(name).ok_or_else(|| unknown("refuse_undeclared source", name))?.refuse_undeclared = true;
        }
        for (name, schema) in &spec.object_rules {
            let source = sources.get_mut(name).ok_or_else(|| unknown("object_rules source", name))?;
            let Some(rules) = whole_object_part(schema, name == "header") else { continue };
            let compiled = CompiledSchema::compile(&rules).map_err(|e| SchemaError { message: format!("{name} object rules: {e}") })?;
            source.rules = Some(compiled);
        }
        Ok(sources)
    }

    fn get_mut(&mut self, name: &str) -> Option<&mut WholeSource> {
        match name {
            "query" => Some(&mut self.query),
            "header" => Some(&mut self.header),
            "cookie" => Some(&mut self.cookie),
            _ => None,
        }
    }
}

impl ParamSet {
    /// The parameters `raw` carries as one object, as a schema about all of them reads it: the
    /// declared ones that were sent (or have a default), typed, then the rest as sent (text, a
    /// repeated name's values an array).
    pub fn as_object(&self, params: &Params, raw: &RawPairs<'_>) -> Json {
        let mut object = serde_json::Map::new();
        for (name, value) in params.iter() {
            if !matches!(value, crate::value::Value::Null) {
                object.insert(name.to_string(), super::to_instance(value));
            }
        }
        for (name, mut values) in self.undeclared(raw) {
            let value = match values.len() {
                1 => Json::String(values.pop().expect("one value")),
                _ => Json::Array(values.into_iter().map(Json::String).collect()),
            };
            object.entry(name.to_owned()).or_insert(value);
        }
        Json::Object(object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::ParamSpec;
    use serde_json::json;

    fn judged(rules: Json, query: &str) -> Vec<(&'static str, Json)> {
        let spec = RouteSpec { object_rules: [("query".to_owned(), rules)].into(), ..RouteSpec::get("/") };
        let sources = WholeSources::compile(&spec).unwrap();
        let set = ParamSet::compile("query", &[ParamSpec::new("id", json!({"type": "integer"})).optional(), ParamSpec::new("name", json!({"type": "string"})).optional()]).unwrap();
        let raw = RawPairs::from_urlencoded(query.as_bytes());
        let mut issues = Vec::new();
        let params = set.extract(&raw, &mut issues);
        sources.query.judge(&set, &raw, &params, 0, &mut issues);
        issues.into_iter().map(|i| (i.kind, serde_json::to_value(&i.loc).unwrap())).collect()
    }

    #[test]
    fn either_of_two_parameters_is_required() {
        let either = json!({"anyOf": [{"required": ["id"]}, {"required": ["name"]}]});
        assert_eq!(judged(either.clone(), "id=1"), vec![]);
        assert!(judged(either.clone(), "name=x").is_empty());
        assert!(!judged(either.clone(), "other=1").is_empty());
        // A value that did not coerce is its own issue, not also the rule's.
        assert_eq!(judged(either, "id=x"), vec![("int_parsing", json!(["query", "id"]))]);
    }

    #[test]
    fn counts_and_dependencies_see_every_parameter_sent() {
        assert!(judged(json!({"minProperties": 2}), "id=1&extra=2").is_empty());
        assert!(!judged(json!({"minProperties": 2}), "id=1").is_empty());
        let both = json!({"dependentRequired": {"id": ["name"]}});
        assert!(judged(both.clone(), "id=1&name=a").is_empty());
        assert_eq!(judged(both, "id=1"), vec![("missing", json!(["query", "name"]))]);
    }

    #[test]
    fn only_what_speaks_of_the_whole_object_is_kept_and_header_names_are_lowered() {
        let schema = json!({
            "type": "object",
            "properties": {"X-Id": {"type": "integer"}},
            "required": ["X-Id"],
            "anyOf": [{"required": ["X-Id"]}, {"properties": {"X-Name": {"minLength": 1}}, "required": ["X-Name"]}],
            "dependencies": {"X-Id": ["X-Name"], "X-Other": {"required": ["X-Id"]}},
            "dependentRequired": {"X-A": ["X-B"]},
        });
        let kept = json!({
            "anyOf": [{"required": ["X-Id"]}, {"properties": {"X-Name": {"minLength": 1}}, "required": ["X-Name"]}],
            "dependentRequired": {"X-A": ["X-B"], "X-Id": ["X-Name"]},
            "dependentSchemas": {"X-Other": {"required": ["X-Id"]}},
        });
        assert_eq!(whole_object_part(&schema, false), Some(kept));
        let lowered = json!({
            "anyOf": [{"required": ["x-id"]}, {"properties": {"x-name": {"minLength": 1}}, "required": ["x-name"]}],
            "dependentRequired": {"x-a": ["x-b"], "x-id": ["x-name"]},
            "dependentSchemas": {"x-other": {"required": ["x-id"]}},
        });
        assert_eq!(whole_object_part(&schema, true), Some(lowered));
        // Properties and top-level `required` are each parameter's own: nothing of the whole.
        assert_eq!(whole_object_part(&json!({"type": "object", "properties": {"a": {}}, "required": ["a"]}), false), None);
        assert_eq!(whole_object_part(&json!(true), false), None);
    }

    #[test]
    fn an_unknown_source_is_named() {
        let spec = RouteSpec { object_rules: [("quer".to_owned(), json!({}))].into(), ..RouteSpec::get("/") };
        assert!(WholeSources::compile(&spec).unwrap_err().message.contains("quer"));
    }
}
