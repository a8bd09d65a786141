//! OpenAPI 3.1 from the route table, built once here for every language: each route's typed
//! path, query, header and cookie parameters, its body per content type, and the problem
//! responses the core itself sends, with named schemas as `components`. The app serves it at
//! `openapi_url` (`/openapi.json` by default, as FastAPI does; `None` switches it off), and
//! every binding can print it without starting a server, so CI can diff it.
//!
//! The document is made when the app starts and served as the same bytes every time: nothing
//! on any request path pays for it.

mod components;
pub(crate) mod security;

use crate::path::PathTemplate;
use crate::problem::PROBLEM_JSON;
use crate::spec::{AppConfig, BodyKind, ParamSpec, RouteSpec};
use components::Components;
use serde_json::{json, Map, Value as Json};

/// The document for `routes`, each with the status its plain results are sent with (WebSocket
/// routes and those with `include_in_schema: false` are left out, as FastAPI leaves them out).
pub fn document<'a>(config: &AppConfig, routes: impl IntoIterator<Item = (&'a RouteSpec, u16)>) -> Result<Json, String> {
    let mut components = Components::default();
    components.insert_fixed("Problem", problem_schema());
    let mut schemes = security::Schemes::of_app(config);
    let mut paths = Map::new();
    let routes: Vec<(&RouteSpec, u16)> = routes.into_iter().collect();
    // A route matched by an expression of its own has no OpenAPI path to be written at.
    let documented = |spec: &RouteSpec| spec.websocket.is_none() && spec.include_in_schema && spec.pattern.is_none();
    // Every scheme first: a requirement may name one a later route brings.
    for (spec, _) in routes.iter().filter(|(spec, _)| documented(spec)) {
        schemes.add_route(spec)?;
    }
    // The ids routes chose are theirs: a made-up one is numbered past them too. Two routes may
    // not choose the same one: OpenAPI wants each unique (§4.8.10.1), and a client generated
    // from the document would have two methods of one name (found by a probe: written twice,
    // silently; FastAPI warns).
    let mut operation_ids: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for (spec, _) in routes.iter().filter(|(spec, _)| documented(spec)) {
        if let Some(id) = &spec.operation_id {
            let route = format!("{} {}", spec.method.to_ascii_uppercase(), spec.path);
            if let Some(first) = operation_ids.insert(id.clone(), route.clone()) {
                return Err(format!("operation_id {id:?} is given to two routes ({first} and {route}); each needs its own"));
            }
        }
    }
    let mut operation_ids: std::collections::HashSet<String> = operation_ids.into_keys().collect();
    for (spec, status) in routes {
        if !documented(spec) {
            continue;
        }
        schemes.check_requirements(spec)?;
        check_documented_responses(spec)?;
        let template = PathTemplate::of_route(spec)?;
        let path = template.axum_path.replace("{*", "{");
        let method = spec.method.to_ascii_lowercase();
        let mut operation = operation(spec, status, &template, &path, &method, &mut components);
        // OpenAPI wants every operationId unique: a made-up one that another took (`/a-b` and
        // `/a_b` both read `get_a_b`) is numbered; one the route chose is its own to keep.
        if let Some(id) = operation.get("operationId").and_then(Json::as_str).map(str::to_owned) {
            let mut unique = id.clone();
            let mut number = 1;
            while spec.operation_id.is_none() && operation_ids.contains(&unique) {
                number += 1;
                unique = format!("{id}_{number}");
            }
            operation["operationId"] = json!(unique);
            operation_ids.insert(unique);
        }
        if let Some(security) = &spec.security {
            operation["security"] = json!(security);
        }
        let item = paths.entry(path).or_insert_with(|| Json::Object(Map::new()));
        if let Json::Object(item) = item {
            item.insert(method, operation);
        }
    }
    let mut info = Map::new();
    info.insert("title".into(), json!(config.title));
    info.insert("version".into(), json!(config.version));
    if let Some(description) = &config.description {
        info.insert("description".into(), json!(description));
    }
    let mut document = Map::new();
    document.insert("openapi".into(), json!("3.1.0"));
    document.insert("info".into(), Json::Object(info));
    if !config.servers.is_empty() {
        document.insert("servers".into(), json!(config.servers));
    }
    document.insert("paths".into(), Json::Object(paths));
    let mut all_components = json!({ "schemas": components.into_json() });
    if !schemes.is_empty() {
        all_components["securitySchemes"] = schemes.into_json();
    }
    document.insert("components".into(), all_components);
    if !config.openapi_tags.is_empty() {
        document.insert("tags".into(), json!(config.openapi_tags));
    }
    Ok(Json::Object(document))
}

fn operation(spec: &RouteSpec, status: u16, template: &PathTemplate, path: &str, method: &str, components: &mut Components) -> Json {
    let mut operation = Map::new();
    if !spec.tags.is_empty() {
        operation.insert("tags".into(), json!(spec.tags));
    }
    if let Some(summary) = &spec.summary {
        operation.insert("summary".into(), json!(summary));
    }
    if let Some(description) = &spec.description {
        operation.insert("description".into(), json!(description));
    }
    operation.insert("operationId".into(), json!(spec.operation_id.clone().unwrap_or_else(|| default_operation_id(method, path))));
    if spec.deprecated {
        operation.insert("deprecated".into(), json!(true));
    }
    let path_params = crate::path::param_specs(template, &spec.path_params);
    let mut parameters = Vec::new();
    for (location, params) in [("path", &path_params), ("query", &spec.query), ("header", &spec.headers), ("cookie", &spec.cookies)] {
        parameters.extend(params.iter().map(|param| parameter(location, param, components)));
    }
    if !parameters.is_empty() {
        operation.insert("parameters".into(), Json::Array(parameters));
    }
    if let Some(body) = &spec.body {
        let schema = body.schema.as_ref().map_or_else(|| default_body_schema(body.kind), |schema| components.body_schema(schema));
        let mut content = Map::new();
        for media_type in media_types(body.kind) {
            let mut entry = json!({ "schema": schema });
            if let Some(encoding) = body.schema.as_ref().filter(|_| body.kind == BodyKind::Multipart).and_then(file_encodings) {
                entry["encoding"] = encoding;
            }
            content.insert((*media_type).to_owned(), entry);
        }
        operation.insert("requestBody".into(), json!({ "required": body.required, "content": content }));
    }
    let problem = json!({ PROBLEM_JSON: { "schema": { "$ref": "#/components/schemas/Problem" } } });
    let mut responses = Map::new();
    for (status, declared) in &spec.responses {
        let description = declared.description.clone().unwrap_or_else(|| default_description(status).to_owned());
        let content = json!({ "application/json": { "schema": components.body_schema(&declared.schema) } });
        let key = response_key(status);
        // A 204 or 304 has no content (RFC 9110 §15.3.5, §15.4.5), whatever schema names its
        // nothing (`{ type: 'null' }`): documented with one, clients looked for a JSON body the
        // server rightly never sent (found by Schemathesis in a probe; @fastify/swagger writes
        // the description alone).
        if matches!(key.as_str(), "204" | "205" | "304") || key.starts_with('1') {
            responses.insert(key, json!({ "description": description }));
            continue;
        }
        responses.insert(key, json!({ "description": description, "content": content }));
    }
    let documented_success = spec.documented_responses.keys().any(|status| status.starts_with('2'));
    if !documented_success && !responses.keys().any(|status| status.starts_with('2')) {
        responses.insert(status.to_string(), json!({ "description": default_description(&status.to_string()) }));
    }
    if validates(spec, &path_params) && !responses.contains_key("422") {
        responses.insert("422".into(), json!({ "description": "The request failed validation: each error says where and why", "content": problem }));
    }
    responses.entry("4XX").or_insert_with(|| json!({ "description": "A client error", "content": problem }));
    responses.entry("5XX").or_insert_with(|| json!({ "description": "A server error (nothing of the handler's own leaks)", "content": problem }));
    // Last, so that what the app documents adds to the problem responses the core sends, as
    // it does to a declared one, rather than taking their place.
    for (status, documented) in &spec.documented_responses {
        let key = response_key(status);
        let mut written = documented.clone();
        if let Some(Json::Object(content)) = written.get_mut("content") {
            for media in content.values_mut() {
                if let Some(schema) = media.get_mut("schema") {
                    *schema = components.body_schema(schema);
                }
            }
        }
        let entry = responses.entry(key.clone()).or_insert_with(|| json!({ "description": default_description(&key) }));
        merge_into(entry, written);
    }
    // By status, the success first, as FastAPI and @fastify/swagger list them.
    responses.sort_keys();
    operation.insert("responses".into(), Json::Object(responses));
    Json::Object(operation)
}

fn parameter(location: &str, param: &ParamSpec, components: &mut Components) -> Json {
    let mut out = Map::new();
    out.insert("name".into(), json!(param.name));
    out.insert("in".into(), json!(location));
    // A path parameter is required by the path itself (OpenAPI insists on `true`).
    out.insert("required".into(), json!(location == "path" || param.is_required()));
    if let Some(description) = param.schema.get("description") {
        out.insert("description".into(), description.clone());
    }
    if param.schema.get("deprecated") == Some(&Json::Bool(true)) {
        out.insert("deprecated".into(), json!(true));
    }
    if let Some(style) = param.style {
        out.insert("style".into(), json!(style));
    }
    match (param.explode, param.style) {
        (Some(explode), _) => {
            out.insert("explode".into(), json!(explode));
        }
        // OpenAPI's default `explode` is false for every style but form; deepObject is only
        // defined exploded.
        (None, Some(crate::spec::ParamStyle::DeepObject)) => {
            out.insert("explode".into(), json!(true));
        }
        _ => {}
    }
    out.insert("schema".into(), components.param_schema(&param.schema));
    Json::Object(out)
}

/// Whether the core may answer 422: something of the request is validated.
fn validates(spec: &RouteSpec, path_params: &[ParamSpec]) -> bool {
    let typed_path = path_params.iter().any(|p| p.schema != json!({"type": "string"}));
    typed_path || !spec.query.is_empty() || !spec.headers.is_empty() || !spec.cookies.is_empty() || spec.body.is_some()
}

/// A multipart body's `encoding`: the content types each file field accepts (its schema's
/// `contentMediaType`, which the core checks).
fn file_encodings(schema: &Json) -> Option<Json> {
    let encodings: Map<String, Json> = schema
        .get("properties")?
        .as_object()?
        .iter()
        .filter_map(|(name, property)| {
            let accepted = property.get("items").unwrap_or(property).get("contentMediaType")?;
            Some((name.clone(), json!({ "contentType": accepted })))
        })
        .collect();
    (!encodings.is_empty()).then_some(Json::Object(encodings))
}

fn media_types(kind: BodyKind) -> &'static [&'static str] {
    match kind {
        BodyKind::Json => &["application/json"],
        BodyKind::Form => &["application/x-www-form-urlencoded"],
        BodyKind::Multipart => &["multipart/form-data"],
        BodyKind::Bytes => &["application/octet-stream"],
        BodyKind::Text => &["text/plain"],
    }
}

fn default_body_schema(kind: BodyKind) -> Json {
    match kind {
        BodyKind::Bytes => json!({ "type": "string", "contentMediaType": "application/octet-stream" }),
        BodyKind::Text => json!({ "type": "string" }),
        BodyKind::Form | BodyKind::Multipart => json!({ "type": "object" }),
        BodyKind::Json => json!({}),
    }
}

/// The words OpenAPI requires for a declared response that brought none.
/// `2xx` is written `2XX`, as OpenAPI spells a range; `default` stays lower case.
fn response_key(status: &str) -> String {
    if status.eq_ignore_ascii_case("default") {
        "default".to_owned()
    } else {
        status.to_ascii_uppercase()
    }
}

/// A documented response is keyed as a declared one is, and is an OpenAPI Response Object
/// whose `content` holds one object per media type: said at start, in one line, rather than
/// written into a document that validators and generated clients then refuse.
fn check_documented_responses(spec: &RouteSpec) -> Result<(), String> {
    let route = || format!("{} {}", spec.method.to_ascii_uppercase(), spec.path);
    for (status, response) in &spec.documented_responses {
        crate::shape::status_key(status).map_err(|message| format!("{}: documented {message}", route()))?;
        let Json::Object(fields) = response else {
            return Err(format!("{}: the documented response {status:?} is not an object (an OpenAPI Response Object)", route()));
        };
        match fields.get("content") {
            None => {}
            Some(Json::Object(content)) if content.values().all(Json::is_object) => {}
            Some(_) => return Err(format!("{}: the documented response {status:?} has a `content` that is not an object of media types, each an object", route())),
        }
    }
    Ok(())
}

/// `extra` over `base`: an object into an object key by key, anything else replacing what
/// was there (FastAPI's merge of a route's `responses=` into the response it writes itself).
fn merge_into(base: &mut Json, extra: Json) {
    match (base, extra) {
        (Json::Object(base), Json::Object(extra)) => {
            for (key, value) in extra {
                match base.get_mut(&key) {
                    Some(existing) => merge_into(existing, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, extra) => *base = extra,
    }
}

fn default_description(status: &str) -> &'static str {
    match status.as_bytes().first() {
        Some(b'2') => "Successful response",
        Some(b'3') => "Redirection",
        Some(b'4') => "Client error",
        Some(b'5') => "Server error",
        _ => "Response",
    }
}

/// `get` + `/users/{id}/posts` → `get_users_id_posts`: unique per method and path.
fn default_operation_id(method: &str, path: &str) -> String {
    let mut id = String::from(method);
    for word in path.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()) {
        id.push('_');
        id.push_str(word);
    }
    id
}

/// RFC 9457's members and the validation errors the core adds (`crate::problem`).
fn problem_schema() -> Json {
    json!({
        "title": "Problem",
        "type": "object",
        "description": "An RFC 9457 problem: every error the server sends has this shape.",
        "properties": {
            "type": { "type": "string", "format": "uri-reference", "default": "about:blank" },
            "title": { "type": "string" },
            "status": { "type": "integer", "minimum": 100, "maximum": 599 },
            "detail": { "description": "What went wrong, for the client: text, or any JSON value a Python `HTTPException` gives (`detail={\"code\": ...}`)." },
            "instance": { "type": "string", "format": "uri-reference" },
            "errors": {
                "type": "array",
                "description": "Validation failures, in FastAPI's shape.",
                "items": {
                    "type": "object",
                    "properties": {
                        "type": { "type": "string", "description": "What failed (pydantic's names: `missing`, `int_parsing`, …)." },
                        "loc": { "type": "array", "items": { "type": ["string", "integer"] }, "description": "Where: the source, then field names and indexes." },
                        "msg": { "type": "string" },
                        "input": {},
                        "ctx": { "type": "object" }
                    },
                    "required": ["type", "loc", "msg"]
                }
            }
        },
        "required": ["title", "status"]
    })
}

#[cfg(test)]
mod tests;
