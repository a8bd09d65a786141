//! What the core itself does with a route's declared responses once its handler has answered:
//! filter JSON that was written without asking the route's shape — a Rust handler's, or text
//! a handler in any language serialised itself (a binding's writer filters as it writes and
//! says so, [`Response::shaped_json`]) — and, with `validate_responses`, check the body
//! against its schema.

use super::{filter_json, ByStatus, Required, ResponseShapes, ShapedNode};
use crate::problem::{Issue, LocSegment, Problem};
use crate::response::{Response, ResponseBody};
use crate::spec::{AppConfig, RouteSpec};
use crate::validation::{CompiledSchema, SchemaError};
use http::{header, StatusCode};

pub(crate) struct ResponseRules {
    /// For bodies not written through them ([`Response::is_shaped`]).
    shapes: ResponseShapes,
    /// Only with `validate_responses`.
    schemas: Option<ByStatus<CompiledSchema>>,
}

impl ResponseRules {
    /// `None` when the route declares no response or nothing would be done with it.
    pub(crate) fn compile(spec: &RouteSpec, config: &AppConfig) -> Result<Option<Self>, SchemaError> {
        if spec.responses.is_empty() {
            return Ok(None);
        }
        let error = |message: String| SchemaError { message };
        let shapes = ResponseShapes::compile(spec, Required::for_config(config)).map_err(error)?;
        let schemas = if config.validate_responses {
            let declared = spec.responses.iter().map(|(key, response)| (key.as_str(), &response.schema));
            Some(ByStatus::compile(declared, |schema| CompiledSchema::compile(schema).map_err(|e| e.message)).map_err(error)?)
        } else {
            None
        };
        Ok(Some(ResponseRules { shapes, schemas }))
    }

    /// Applies the rules to a whole JSON body; anything else passes untouched. A body a
    /// binding's writer shaped costs one flag test here, unless `validate_responses` is on.
    pub(crate) fn apply(&self, mut response: Response, route: &str) -> Response {
        let status = response.status.as_u16();
        let shape = if response.is_shaped() { None } else { self.shapes.for_status(status) };
        let schema = self.schemas.as_ref().and_then(|schemas| schemas.get(status));
        if shape.is_none() && schema.is_none() || !is_json(&response) {
            return response;
        }
        // A streamed body is sent as it is made: nothing whole to filter (documented).
        let ResponseBody::Full(bytes) = &response.body else { return response };
        if let (Some(shape), None) = (shape, schema) {
            // Read into the core's document and written with the shape by serde, the same JSON
            // the tree's way below writes (`shape::tests` holds the two to it). JSON the
            // document refuses (a key repeated in an object, an integer past 64 bits) or none
            // at all takes the tree's way, which decides as it always has. Nothing to validate
            // here: `validate_responses` wants the tree. The tree's way was a `serde_json::Value`
            // (an allocation and a SipHash per key), filtered, then written: on
            // json-medium-response (`ferrule-bench serve ferrule-rust`, callgrind, a release
            // build without LTO, 2,000 requests) 278,268 instructions a request, 186,426 this
            // way; json-medium, whose route declares no response, is about 102,000.
            if let Ok(document) = crate::body::json::parse(bytes, crate::body::json::MAX_DEPTH) {
                match serde_json::to_vec(&ShapedNode { node: document.root(), shape }) {
                    Ok(written) => response.body = ResponseBody::Full(written.into()),
                    Err(incomplete) => {
                        tracing::error!(target: "ferrule::handler", route = %route, "handler for {route} failed: returned a value that cannot be sent: {incomplete}");
                        return Response::problem(&Problem::internal());
                    }
                }
                return response;
            }
        }
        let mut value = match serde_json::from_slice::<serde_json::Value>(bytes) {
            Ok(value) => value,
            // Text a handler serialised itself that is no JSON (Python's `json.dumps` writes
            // `NaN`) cannot be filtered; sent as it is, it would carry what the schema leaves out.
            Err(error) if shape.is_some_and(|shape| !shape.keeps_everything()) => {
                tracing::error!(target: "ferrule::handler", route = %route, "handler for {route} failed: returned JSON text its response schema cannot be applied to: {error}");
                return Response::problem(&Problem::internal());
            }
            Err(_) => return response,
        };
        if let Some(shape) = shape {
            if let Err(incomplete) = filter_json(&mut value, shape) {
                tracing::error!(target: "ferrule::handler", route = %route, "handler for {route} failed: returned a value that cannot be sent: {incomplete}");
                return Response::problem(&Problem::internal());
            }
            if let Ok(written) = serde_json::to_vec(&value) {
                response.body = ResponseBody::Full(written.into());
            }
        }
        if let Some(schema) = schema {
            let issues = schema.issues(&value, &[LocSegment::from("response")]);
            if !issues.is_empty() {
                return forbidden_response(route, status, issues);
            }
        }
        response
    }
}

/// `validate_responses`' report: logged, and a 500 that lists what is wrong (a development
/// setting: production leaves it off and sends nothing of the handler's own).
fn forbidden_response(route: &str, status: u16, issues: Vec<Issue>) -> Response {
    let list = issues.iter().map(|issue| format!("{} at {}", issue.msg, location(&issue.loc))).collect::<Vec<_>>().join("; ");
    tracing::error!(target: "ferrule::handler", route = %route, "handler for {route} returned a {status} response its schema forbids: {list}");
    let mut problem = Problem::status(StatusCode::INTERNAL_SERVER_ERROR)
        .with_detail(format!("The handler's {status} response does not match its declared schema (validate_responses)."));
    problem.errors = issues;
    Response::problem(&problem)
}

fn location(loc: &[LocSegment]) -> String {
    loc.iter().map(|segment| match segment {
        LocSegment::Key(key) => key.clone(),
        LocSegment::Index(index) => index.to_string(),
    }).collect::<Vec<_>>().join(".")
}

/// `application/json` or a `+json` type; not problem documents, which the core writes itself.
fn is_json(response: &Response) -> bool {
    let Some(essence) = response.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).and_then(|v| v.split(';').next()) else {
        return false;
    };
    let essence = essence.trim();
    essence.eq_ignore_ascii_case("application/json") || (essence.ends_with("+json") && !essence.eq_ignore_ascii_case(crate::problem::PROBLEM_JSON))
}

#[cfg(test)]
mod tests {
    use crate::{App, AppConfig, Json, RequestData, RouteSpec};
    use http_body_util::BodyExt;
    use serde_json::{json, Value};
    use tower::ServiceExt;

    fn user_out() -> Value {
        json!({"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}, "required": ["id", "name"]})
    }

    async fn get(app: App, path: &str) -> (u16, Value) {
        let router = app.into_router().unwrap();
        let response = router.oneshot(http::Request::get(path).body(axum::body::Body::empty()).unwrap()).await.unwrap();
        let status = response.status().as_u16();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    #[tokio::test]
    async fn a_rust_handlers_json_loses_what_its_response_schema_does_not_declare() {
        let handler = |_: RequestData| async { Json(json!({"id": 1, "name": "ada", "password": "hunter2"})) };
        let app = App::new().route(RouteSpec::get("/user").response("200", user_out()), handler);
        assert_eq!(get(app, "/user").await, (200, json!({"id": 1, "name": "ada"})));
        // Declared for another status only: sent as written.
        let app = App::new().route(RouteSpec::get("/user").response("201", user_out()), handler);
        assert_eq!(get(app, "/user").await.1["password"], "hunter2");
    }

    #[tokio::test]
    async fn json_text_is_filtered_unless_a_shaped_writer_made_it() {
        // Text a handler serialised itself (`to_json`, `JSON.stringify`) is filtered like any
        // result; a Ruby handler's `content_type :json; user.to_json` sent the password.
        let text = |_: RequestData| async { Ok::<_, crate::HandlerError>(crate::Response::json_bytes(r#"{"id":1,"name":"ada","password":"p"}"#)) };
        let app = App::new().route(RouteSpec::get("/user").response("200", user_out()), text);
        assert_eq!(get(app, "/user").await, (200, json!({"id": 1, "name": "ada"})));
        // Text that is no JSON cannot be filtered: a 500, never the text with its password.
        let not_json = |_: RequestData| async { Ok::<_, crate::HandlerError>(crate::Response::json_bytes(r#"{"id":1,"name":"ada","password":"p","score":NaN}"#)) };
        let router = App::new().route(RouteSpec::get("/user").response("200", user_out()), not_json).into_router().unwrap();
        let response = router.oneshot(http::Request::get("/user").body(axum::body::Body::empty()).unwrap()).await.unwrap();
        assert_eq!(response.status(), 500);
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        assert!(!String::from_utf8_lossy(&bytes).contains("password"));
        // What a binding's writer wrote while asking the shape is sent as it is, not parsed again.
        let shaped = |_: RequestData| async { Ok::<_, crate::HandlerError>(crate::Response::shaped_json(r#"{"id":1,"name":"ada","kept":true}"#)) };
        let app = App::new().route(RouteSpec::get("/user").response("200", user_out()), shaped);
        assert_eq!(get(app, "/user").await.1["kept"], true);
    }

    #[tokio::test]
    async fn a_rust_handlers_json_gets_its_defaults_and_fails_without_a_required_field() {
        let schema = json!({"type": "object", "properties": {"id": {"type": "integer"}, "tags": {"type": "array", "default": []}}, "required": ["id"]});
        let complete = |_: RequestData| async { Json(json!({"id": 1})) };
        let app = App::new().route(RouteSpec::get("/user").response("200", schema.clone()), complete);
        assert_eq!(get(app, "/user").await, (200, json!({"id": 1, "tags": []})));
        let lacking = |_: RequestData| async { Json(json!({"tags": ["a"]})) };
        let app = App::new().route(RouteSpec::get("/user").response("200", schema), lacking);
        let (status, problem) = get(app, "/user").await;
        assert_eq!(status, 500);
        assert!(!problem.to_string().contains("id"), "nothing of the handler's own is sent: {problem}");
    }

    #[tokio::test]
    async fn validate_responses_reports_a_result_its_schema_forbids() {
        let config = AppConfig { validate_responses: true, ..AppConfig::default() };
        let wrong = |_: RequestData| async { Json(json!({"id": "one", "secret": 1})) };
        let app = App::with_config(config.clone()).route(RouteSpec::get("/user").response("2XX", user_out()), wrong);
        let (status, problem) = get(app, "/user").await;
        assert_eq!(status, 500);
        let locations: Vec<&Value> = problem["errors"].as_array().unwrap().iter().map(|issue| &issue["loc"]).collect();
        assert_eq!(locations, [&json!(["response", "id"]), &json!(["response", "name"])], "{problem}");
        let right = |_: RequestData| async { Json(json!({"id": 1, "name": "ada", "secret": 1})) };
        let app = App::with_config(config).route(RouteSpec::get("/user").response("2XX", user_out()), right);
        assert_eq!(get(app, "/user").await, (200, json!({"id": 1, "name": "ada"})), "checked after filtering");
    }

    #[test]
    fn a_bad_response_declaration_is_refused_with_the_route() {
        let app = App::new();
        let error = app.check_route(&RouteSpec::get("/a").response("2XY", json!({}))).unwrap_err();
        assert!(error.0.contains("GET /a") && error.0.contains("2XY"), "{error}");
    }
}
